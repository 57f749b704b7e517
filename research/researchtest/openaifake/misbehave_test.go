package openaifake_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/openai"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/llmroles"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/sources"
)

// fakeRoles are the five research roles played by srv through the real OpenAI adapter, retried with callTimeout
// per call (the misbehaving fake hangs) and metered into the ledger returned, searching with searcher.
func fakeRoles(t *testing.T, srv *openaifake.Server, searcher sources.Searcher, callTimeout time.Duration) (research.Roles, *llm.Ledger) {
	t.Helper()
	m, err := openai.New(openai.Config{Model: "fake-research", BaseURL: srv.BaseURL(), APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	ledger := &llm.Ledger{}
	model := llm.Metered(llm.WithRetry(m, llm.RetryConfig{CallTimeout: callTimeout,
		Sleep: func(context.Context, time.Duration) error { return nil }}), ledger, "fake")
	return llmroles.New(llmroles.Config{Planner: model, Searcher: model, Analyst: model, Verifier: model,
		Synthesizer: model, Sources: []sources.Searcher{searcher},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}), ledger
}

type siteSearcher struct{ *researchtest.Site }

func (siteSearcher) Name() string { return "site" }
func (s siteSearcher) Search(_ context.Context, q string, limit int) ([]sources.Result, error) {
	return s.Site.Search(q, limit), nil
}

// kilnPages is a small web about a kiln: every page long enough to be read in windows, every sentence a fact.
func kilnPages() []researchtest.Page {
	var pages []researchtest.Page
	topics := []struct{ path, title, fact string }{
		{"/design", "Kiln design", "Roof fans push the warm air through the stack of kiln number %d on test day %d."},
		{"/speed", "Kiln speed", "Kiln number %d dried a full load of timber in %d days during the trial."},
		{"/cost", "Kiln cost", "Kiln number %d cost %d euros to build, including the solar collector."},
	}
	for _, t := range topics {
		var b strings.Builder
		for i := 1; i <= 60; i++ {
			fmt.Fprintf(&b, t.fact+"\n\n", i, 100+i)
		}
		pages = append(pages, researchtest.Page{Path: t.path, Title: t.title, Body: b.String()})
	}
	return pages
}

var kilnPlan = []openaifake.SubQuestion{
	{Question: "How is the kiln designed?", Queries: []string{"kiln fans"}, Keywords: []string{"fans", "design"}},
	{Question: "How fast does it dry timber?", Queries: []string{"kiln days"}, Keywords: []string{"days", "speed"}},
	{Question: "What does it cost?", Queries: []string{"kiln euros"}, Keywords: []string{"euros", "cost"}},
}

// TestMisbehavingModel runs the whole graph — real OpenAI adapter, real HTTP, real fetcher — against the fake
// model under each fault and under all of them at once. Whatever the model does, the run finishes, every
// published citation is a grounded quote on its anchored lines, nothing unsupported is published, and the report
// says what went wrong.
func TestMisbehavingModel(t *testing.T) {
	all := openaifake.Misbehaviour{InventQuotes: true, WrongIDs: true, Unsupported: true, Truncate: true,
		CutBodies: 3, ContextLimit: 2500, Hang: 5 * time.Second, RateLimit: 2}
	for _, tc := range []struct {
		name  string
		mb    openaifake.Misbehaviour
		check func(t *testing.T, rep *research.Report, srv *openaifake.Server)
	}{
		{"honest", openaifake.Misbehaviour{}, func(t *testing.T, rep *research.Report, _ *openaifake.Server) {
			if rep.Stats.SentencesRemoved != 0 || rep.Stats.DraftsRefused != 0 || rep.Stats.Ungrounded != 0 {
				t.Errorf("an honest model lost something: %+v", rep.Stats)
			}
		}},
		{"invented quotes and URLs", openaifake.Misbehaviour{InventQuotes: true}, func(t *testing.T, rep *research.Report, _ *openaifake.Server) {
			if rep.Stats.Ungrounded == 0 || !strings.Contains(rep.Markdown, fmt.Sprintf("quotes dropped because they are not in their source: %d", rep.Stats.Ungrounded)) {
				t.Errorf("invented quotes not counted in the report: %+v", rep.Stats)
			}
		}},
		{"wrong citation ids", openaifake.Misbehaviour{WrongIDs: true}, func(t *testing.T, rep *research.Report, _ *openaifake.Server) {
			if strings.Contains(rep.Markdown, "fastest thing") || rep.Stats.SentencesRemoved == 0 {
				t.Errorf("a sentence citing a missing id was published or not counted: %+v", rep.Stats)
			}
		}},
		{"unsupported sentences in prose, lists, tables and code", openaifake.Misbehaviour{Unsupported: true}, func(t *testing.T, rep *research.Report, _ *openaifake.Server) {
			if rep.Stats.SentencesRemoved < 5 || rep.Stats.SynthAttempts != 2 {
				t.Errorf("unsupported statements: %d removed after %d drafts, want 5 removed after one revision", rep.Stats.SentencesRemoved, rep.Stats.SynthAttempts)
			}
		}},
		{"drafts cut by the output limit", openaifake.Misbehaviour{Truncate: true}, func(t *testing.T, rep *research.Report, srv *openaifake.Server) {
			for _, sq := range kilnPlan {
				if !strings.Contains(rep.Markdown, "## "+sq.Question) {
					t.Errorf("section %q lost to truncation", sq.Question)
				}
			}
		}},
		{"bodies cut off and streams dropped", openaifake.Misbehaviour{CutBodies: 4}, nil},
		{"context-length errors", openaifake.Misbehaviour{ContextLimit: 1400}, func(t *testing.T, rep *research.Report, srv *openaifake.Server) {
			overflows := 0
			for _, c := range srv.Calls() {
				if c.Error == "context length exceeded" {
					overflows++
				}
			}
			if overflows == 0 || overflows > 20 {
				t.Errorf("%d context-length errors; want a few, each followed by a smaller request", overflows)
			}
		}},
		{"context-length errors: every retry smaller, none the same", openaifake.Misbehaviour{ContextLimit: 1800}, func(t *testing.T, rep *research.Report, srv *openaifake.Server) {
			refused := map[string]bool{}
			last := map[string]int{} // role → prompt tokens of its last refused request
			for _, c := range srv.Calls() {
				if refused[c.Digest] {
					t.Errorf("%s: a refused request was sent again (%d tokens)", c.Role, c.PromptTokens)
				}
				if c.Role == openaifake.RoleVerifier || c.Role == openaifake.RoleSynthesizer {
					if n, ok := last[c.Role]; ok && !c.Reask && c.PromptTokens >= n {
						t.Errorf("%s: request of %d tokens after one of %d was refused", c.Role, c.PromptTokens, n)
					}
					delete(last, c.Role)
				}
				if c.Error == "context length exceeded" {
					refused[c.Digest] = true
					last[c.Role] = c.PromptTokens
				}
			}
		}},
		{"preamble and fence around the report", openaifake.Misbehaviour{PreambleFence: true}, func(t *testing.T, rep *research.Report, _ *openaifake.Server) {
			if strings.Contains(rep.Markdown, "Here is the research report") || strings.Contains(rep.Markdown, "Let me know") ||
				strings.Contains(rep.Markdown, "answer none of these sub-questions") || len(rep.Citations) < 3 {
				t.Errorf("the fenced report was not taken from its wrapper:\n%s", rep.Markdown)
			}
		}},
		{"a draft in a loop", openaifake.Misbehaviour{Degenerate: true}, func(t *testing.T, rep *research.Report, srv *openaifake.Server) {
			for _, c := range srv.Calls() {
				if c.Continue {
					t.Error("a draft in a loop was continued")
				}
			}
			if rep.Stats.DegenerateDrafts == 0 || !strings.Contains(rep.Markdown, "drafts stopped because they repeated themselves: 1") {
				t.Errorf("the stopped draft is not counted: %+v\n%s", rep.Stats, rep.Markdown)
			}
			body := rep.Markdown[:strings.Index(rep.Markdown, "## How this report was made")]
			for _, sent := range strings.SplitAfter(body, ". ") {
				if len(sent) > 40 && strings.Count(body, sent) > 1 {
					t.Errorf("published %d times: %q", strings.Count(body, sent), sent)
					break
				}
			}
			if _, out := srv.Usage(); out > 20_000 {
				t.Errorf("%d output tokens for a run with a looping draft", out)
			}
		}},
		{"bare arrays where objects are asked for", openaifake.Misbehaviour{BareArrays: true}, noReasks},
		{"single-quoted JSON with trailing commas", openaifake.Misbehaviour{SingleQuotes: true}, noReasks},
		{"hangs", openaifake.Misbehaviour{Hang: 5 * time.Second}, nil},
		{"rate limits", openaifake.Misbehaviour{RateLimit: 3}, nil},
		{"all together", all, func(t *testing.T, rep *research.Report, _ *openaifake.Server) {
			// The faulty draft is refused or its faults removed; a continuation that no longer fits the window
			// is not sent, so the draft kept may be the clean part of a cut one.
			if rep.Stats.Ungrounded == 0 || rep.Stats.SentencesRemoved+rep.Stats.DraftsRefused == 0 {
				t.Errorf("stats %+v\n%s", rep.Stats, rep.Markdown)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := researchtest.NewSite(kilnPages())
			defer site.Close()
			srv := openaifake.New(t, openaifake.Config{SubQuestions: kilnPlan, GapSubQuestion: -1, Misbehave: tc.mb})
			roles, _ := fakeRoles(t, srv, siteSearcher{site}, 500*time.Millisecond)
			dir := filepath.Join(t.TempDir(), "run")
			rep, err := research.Run(t.Context(), research.Config{Question: "How good is the solar kiln?", Roles: roles,
				Fetcher: site.Fetcher(), OutDir: dir})
			if err != nil {
				t.Fatalf("the run failed: %v", err)
			}
			md, err := os.ReadFile(filepath.Join(dir, research.ReportMarkdownFile))
			if err != nil || string(md) != rep.Markdown {
				t.Fatalf("report.md not written: %v", err)
			}
			if len(rep.Citations) == 0 {
				t.Fatalf("nothing cited:\n%s", rep.Markdown)
			}
			for _, bad := range openaifake.UnsupportedMarkers {
				if strings.Contains(rep.Markdown, bad) {
					t.Errorf("unsupported %q published:\n%s", bad, rep.Markdown)
				}
			}
			if !strings.Contains(rep.Markdown, "## How this report was made") {
				t.Error("the report does not say how it was made")
			}
			checkCitations(t, dir, rep)
			if tc.check != nil {
				tc.check(t, rep, srv)
			}
		})
	}
}

// noReasks: answers the JSON repair can read are never asked for again, so they cost what honest ones cost.
func noReasks(t *testing.T, rep *research.Report, srv *openaifake.Server) {
	t.Helper()
	reasks := 0
	for _, c := range srv.Calls() {
		if c.Reask && c.Role != openaifake.RoleSynthesizer {
			reasks++
		}
	}
	in, _ := srv.Usage()
	t.Logf("%d re-asks, %d input tokens, %d model calls", reasks, in, len(srv.Calls()))
	if reasks != 0 {
		t.Errorf("%d re-asks for answers the repair can read", reasks)
	}
	if rep.Stats.Ungrounded != 0 || rep.Stats.EvidenceAccepted == 0 {
		t.Errorf("the repaired answers lost evidence: %+v", rep.Stats)
	}
}

// checkCitations: every cited evidence item is unique per (document, quote), and its quote stands on the lines
// its anchor names — or, for a web page, in the text the run stored.
func checkCitations(t *testing.T, dir string, rep *research.Report) {
	t.Helper()
	byID := map[string]research.Evidence{}
	seen := map[string]bool{}
	for _, e := range rep.Evidence {
		byID[e.ID] = e
		key := strings.SplitN(e.Source, "#", 2)[0] + "\x00" + strings.Join(strings.Fields(e.Quote), " ")
		if seen[key] {
			t.Errorf("quote %q of %s pooled twice", e.Quote, e.Source)
		}
		seen[key] = true
	}
	// Web quotes link to the lines of the stored text the run read, and those lines hold the quote.
	links := storedLinkRe.FindAllStringSubmatch(rep.Markdown, -1)
	if len(links) != len(rep.Citations) {
		t.Errorf("%d stored-text links for %d citations of web pages", len(links), len(rep.Citations))
	}
	for _, l := range links {
		b, err := os.ReadFile(filepath.Join(dir, l[2]))
		if err != nil {
			t.Errorf("link %s: %v", l[2], err)
			continue
		}
		lines := strings.Split(string(b), "\n")
		a, z := atoi(l[3]), atoi(l[4])
		if a < 1 || z > len(lines) || !publish.Grounded(strings.Join(lines[a-1:z], "\n"), l[1]) {
			t.Errorf("quote %q is not on lines %d-%d of %s", l[1], a, z, l[2])
		}
	}
	for _, c := range rep.Citations {
		for _, id := range c.EvidenceIDs {
			e := byID[id]
			text, err := research.LoadSourceText(dir, e.Source)
			if err != nil {
				t.Errorf("[%d] %s: %v", c.N, id, err)
				continue
			}
			if !publish.Grounded(text, e.Quote) {
				t.Errorf("[%d] %s: quote %q not in the text read", c.N, id, e.Quote)
			}
		}
	}
}

// A citation entry: the quote, its source and id, the link that opens the page at the quote (web pages and HTML
// files), then the link to the lines of the stored text.
var storedLinkRe = regexp.MustCompile(`“([^”]*)” — \S+ \(e\d+\)(?: · \[[^\]]*\]\([^)\s]*#:~:text=[^)\s]*\))? · \[[^\]]*\]\((docs/[0-9a-f]+\.txt)#L(\d+)-L(\d+)\)`)

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// A Chinese question answered with an English body under Chinese headings is asked for again; the published
// report is Chinese, its footer too.
func TestWrongLanguageIsAskedAgain(t *testing.T) {
	var pages []researchtest.Page
	for _, p := range []struct{ path, title, fact string }{
		{"/design", "窑的设计", "第%d号窑的屋顶风扇在第%d个测试日推动热空气穿过木材堆。"},
		{"/cost", "窑的成本", "第%d号窑的建造成本为%d欧元，包括太阳能集热器。"},
	} {
		var b strings.Builder
		for i := 1; i <= 20; i++ {
			fmt.Fprintf(&b, p.fact+"\n\n", i, 100+i)
		}
		pages = append(pages, researchtest.Page{Path: p.path, Title: p.title, Body: b.String()})
	}
	site := researchtest.NewSite(pages)
	defer site.Close()
	plan := []openaifake.SubQuestion{
		{Question: "窑是如何设计的？", Queries: []string{"风扇"}, Keywords: []string{"风扇", "design"}},
		{Question: "窑的成本是多少？", Queries: []string{"欧元"}, Keywords: []string{"欧元", "cost"}},
	}
	srv := openaifake.New(t, openaifake.Config{Language: "zh", SubQuestions: plan, GapSubQuestion: -1,
		Misbehave: openaifake.Misbehaviour{WrongLanguage: true}})
	m, err := openai.New(openai.Config{Model: "fake-research", BaseURL: srv.BaseURL(), APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	roles := llmroles.New(llmroles.Config{Planner: m, Searcher: m, Analyst: m, Verifier: m, Synthesizer: m,
		Sources: []sources.Searcher{siteSearcher{site}}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	dir := filepath.Join(t.TempDir(), "run")
	rep, err := research.Run(t.Context(), research.Config{Question: "太阳能干燥窑好用吗？", Roles: roles,
		Fetcher: site.Fetcher(), OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rep.Markdown, "The source states") || len(rep.Citations) == 0 {
		t.Fatalf("English body published, or nothing cited:\n%s", rep.Markdown)
	}
	if !strings.Contains(rep.Markdown, "## 本报告的生成方式") {
		t.Errorf("the footer is not in the question's language:\n%s", rep.Markdown)
	}
	reasks := 0
	for _, c := range srv.Calls() {
		if c.Role == openaifake.RoleSynthesizer && c.Reask {
			reasks++
		}
	}
	if reasks == 0 {
		t.Error("the wrong-language draft was not sent back")
	}
	checkCitations(t, dir, rep)
}
