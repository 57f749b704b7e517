package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/research/state"
)

// The research question and plan both tests use. Each document of the corpus (and each article of the web site)
// answers one sub-question; the winter results answer the gap the verifier reports, and share no word with the
// first round's queries (nor their sub-questions, which the planner adds as queries), so only the directed
// re-search can find them.
const kilnQuestion = openaifake.KilnQuestion

const inventedQuote = "The Kestrel kiln was first built on the Moon in 1802."

var kilnDocs = openaifake.KilnDocs

func kilnFake(t *testing.T) *openaifake.Server {
	cfg := openaifake.Kiln()
	cfg.MalformedPlan = true
	cfg.InventedQuote = inventedQuote
	cfg.UncitedSentence = "Solar kilns like this one will surely replace every electric kiln within ten years."
	return openaifake.New(t, cfg)
}

// isolateHome keeps the corpus index cache and any user configuration out of the real home directory.
func isolateHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
}

// The fake model's price: local servers are free unless the configuration prices the model, and a real price
// makes the spend figures checkable.
const (
	inputPrice  = 2.5 // USD per million tokens
	outputPrice = 10.0
)

func writeConfig(t *testing.T, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "deepresearch.yaml")
	cfg := fmt.Sprintf("models:\n  fake-research:\n    context_window: 32000\n    input_price: %g\n    output_price: %g\n%s",
		inputPrice, outputPrice, extra)
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runLLM(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errw bytes.Buffer
	code = Main(t.Context(), args, strings.NewReader(""), &out, &errw, func(k string) string { return env[k] })
	return out.String(), errw.String(), code
}

var (
	numMarkerRe = regexp.MustCompile(`\[(\d+(?:,\s*\d+)*)\]`)
	spendRe     = regexp.MustCompile(`(\d+) calls · (\S+) tokens · \$([0-9.]+)`)
)

// checkReport is the integrity check done independently of the run: report.json parses; every [n] of report.md
// resolves through the citation map to accepted evidence whose quote occurs verbatim (white space normalised) in
// the text stored for its source; and every sentence of the body carries a citation (publish.CheckIntegrity
// over the body with the numbers mapped back to evidence ids).
func checkReport(t *testing.T, runDir string) *research.Report {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(runDir, research.ReportJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep research.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("report.json does not parse: %v", err)
	}
	md, err := os.ReadFile(filepath.Join(runDir, research.ReportMarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(md) != rep.Markdown {
		t.Fatal("report.md differs from the report in report.json")
	}
	byID := map[string]research.Evidence{}
	for _, e := range rep.Evidence {
		byID[e.ID] = e
	}
	citation := map[int][]string{}
	for _, c := range rep.Citations {
		citation[c.N] = c.EvidenceIDs
	}
	squash := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	texts := map[string]string{}
	grounded := func(id string) error {
		e, ok := byID[id]
		switch {
		case !ok:
			return fmt.Errorf("no evidence %s in report.json", id)
		case e.Status != research.StatusAccepted:
			return fmt.Errorf("evidence %s is %s", id, e.Status)
		}
		text, ok := texts[e.Source]
		if !ok {
			if text, err = research.LoadSourceText(runDir, e.Source); err != nil {
				return err
			}
			texts[e.Source] = text
		}
		if len([]rune(squash(e.Quote))) < publish.MinQuoteRunes || !strings.Contains(squash(text), squash(e.Quote)) {
			return fmt.Errorf("quote of %s %q is not in the stored text of %s", id, e.Quote, e.Source)
		}
		return nil
	}
	markers := 0
	for _, m := range numMarkerRe.FindAllStringSubmatch(rep.Markdown, -1) {
		for _, f := range strings.Split(m[1], ",") {
			n, _ := strconv.Atoi(strings.TrimSpace(f))
			ids, ok := citation[n]
			if !ok || len(ids) == 0 {
				t.Fatalf("[%d] resolves to no evidence", n)
			}
			for _, id := range ids {
				if err := grounded(id); err != nil {
					t.Fatalf("[%d]: %v", n, err)
				}
			}
			markers++
		}
	}
	if markers == 0 || len(rep.Citations) == 0 {
		t.Fatalf("the report cites nothing:\n%s", rep.Markdown)
	}
	// The body: after the header block quote, before the generated sources list.
	body := rep.Markdown
	if i := strings.Index(body, "\n## Sources\n"); i >= 0 {
		body = body[:i]
	}
	var kept []string
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, ">") {
			kept = append(kept, line)
		}
	}
	body = numMarkerRe.ReplaceAllStringFunc(strings.Join(kept, "\n"), func(m string) string {
		var ids []string
		for _, f := range strings.Split(numMarkerRe.FindStringSubmatch(m)[1], ",") {
			n, _ := strconv.Atoi(strings.TrimSpace(f))
			ids = append(ids, citation[n]...)
		}
		return "[" + strings.Join(ids, ", ") + "]"
	})
	if problems := publish.CheckIntegrity(body, grounded); len(problems) > 0 {
		t.Fatalf("integrity problems in the published report: %v\n%s", problems, rep.Markdown)
	}
	return &rep
}

// checkSpend compares the spend the CLI printed and recorded with the usage the fake model reported.
func checkSpend(t *testing.T, srv *openaifake.Server, rep *research.Report, stderr string) {
	t.Helper()
	prompt, completion := srv.Usage()
	if rep.Stats.Tokens != prompt+completion {
		t.Errorf("report counts %d tokens; the model reported %d prompt + %d completion", rep.Stats.Tokens, prompt, completion)
	}
	wantCost := (float64(prompt)*inputPrice + float64(completion)*outputPrice) / 1e6
	if math.Abs(rep.Stats.CostUSD-wantCost) > 1e-9 || wantCost == 0 {
		t.Errorf("report costs $%.6f; the model's usage at the configured prices is $%.6f", rep.Stats.CostUSD, wantCost)
	}
	m := spendRe.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no spend line on stderr:\n%s", stderr)
	}
	if m[2] != humanCount(rep.Stats.Tokens) || m[3] != fmt.Sprintf("%.4f", rep.Stats.CostUSD) {
		t.Errorf("spend line %q, report stats %d tokens $%.4f", m[0], rep.Stats.Tokens, rep.Stats.CostUSD)
	}
}

// checkRun checks the parts of a run folder every LLM run must have.
func checkRun(t *testing.T, srv *openaifake.Server, runDir, stdout, stderr string) *research.Report {
	t.Helper()
	if strings.TrimSpace(stdout) != filepath.Join(runDir, research.ReportMarkdownFile) {
		t.Errorf("stdout = %q", stdout)
	}
	for _, f := range []string{research.ReportMarkdownFile, research.ReportJSONFile, research.StateFile, research.EventsFile,
		"evidence.round1.json", "verdict.round1.json", "evidence.round2.json", "verdict.round2.json"} {
		if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
			t.Errorf("run folder lacks %s: %v", f, err)
		}
	}
	rep := checkReport(t, runDir)
	if rep.Engine != "llm" || !strings.Contains(rep.Markdown, "> Engine: llm · run ") || strings.Contains(rep.Markdown, "extractive") {
		t.Errorf("engine %q, report:\n%s", rep.Engine, rep.Markdown)
	}
	if rep.CutShort != "" || len(rep.Removed) != 0 {
		t.Errorf("cut short %q, removed %q", rep.CutShort, rep.Removed)
	}
	for _, e := range rep.Evidence {
		if strings.Contains(e.Quote, "Moon") {
			t.Errorf("the invented quote entered the pool: %+v", e)
		}
	}
	// One sentence per accepted evidence item, each cited once.
	accepted := 0
	for _, e := range rep.Evidence {
		if e.Status == research.StatusAccepted {
			accepted++
		}
	}
	if len(rep.Citations) != accepted {
		t.Errorf("%d citations for %d accepted evidence items:\n%s", len(rep.Citations), accepted, rep.Markdown)
	}

	// The fake model played every role; JSON roles asked for JSON; every call carried the key.
	for _, role := range []string{openaifake.RolePlanner, openaifake.RoleSearcher, openaifake.RoleAnalyst,
		openaifake.RoleVerifier, openaifake.RoleSynthesizer} {
		if srv.Count(role) == 0 {
			t.Errorf("no %s call reached the model", role)
		}
	}
	for _, c := range srv.Calls() {
		if c.Error != "" || c.Auth != "Bearer fake-key" || c.Model != "fake-research" ||
			c.JSONMode != (c.Role != openaifake.RoleSynthesizer) {
			t.Errorf("call %+v", c)
		}
	}
	// The malformed plan was repaired, not asked again; the uncited sentence cost one more draft.
	if n := srv.Count(openaifake.RolePlanner); n != 1 {
		t.Errorf("%d planner calls: the fenced plan with a trailing comma was not repaired", n)
	}
	if n := srv.Count(openaifake.RoleSynthesizer); n != 2 {
		t.Errorf("%d synthesizer calls, want 2 (the first draft fails the integrity check)", n)
	}
	if n := srv.Count(openaifake.RoleVerifier); n != 2 {
		t.Errorf("%d verifier calls, want 2 (a gap, then a pass)", n)
	}
	if strings.Contains(rep.Markdown, "surely replace") {
		t.Error("the uncited sentence was published")
	}

	// Directed re-search: the first verdict names q2 only; between the two verdicts the model is asked about q2
	// only; the research log's second round searches and reads for q2 only, with the suggested queries.
	var v1, v2 research.Verdict
	readJSON(t, filepath.Join(runDir, "verdict.round1.json"), &v1)
	readJSON(t, filepath.Join(runDir, "verdict.round2.json"), &v2)
	if v1.Pass || len(v1.Gaps) != 1 || v1.Gaps[0].SubQuestion != "q2" || !v2.Pass {
		t.Errorf("verdicts %+v then %+v", v1, v2)
	}
	verdicts, between := 0, 0
	for _, c := range srv.Calls() {
		if c.Role == openaifake.RoleVerifier {
			verdicts++
			continue
		}
		if verdicts == 1 && (c.Role == openaifake.RoleSearcher || c.Role == openaifake.RoleAnalyst) {
			between++
			if c.SubQuestion != "q2" {
				t.Errorf("re-search round asked the model about %s: %+v", c.SubQuestion, c)
			}
		}
	}
	if between == 0 {
		t.Error("no searcher or analyst call between the two verdicts")
	}
	log, err := research.LoadLog(runDir)
	if err != nil {
		t.Fatal(err)
	}
	searched2, integrity := false, false
	for _, e := range log {
		if e.Round == 2 && (e.Stage == research.StageSearch || e.Stage == research.StageRead) && e.SubQuestion != "" {
			if e.SubQuestion != "q2" {
				t.Errorf("round 2 touched %s: %+v", e.SubQuestion, e)
			}
			if e.Stage == research.StageSearch && e.Decision == "searched" && strings.Contains(e.Detail, "winter season December January") {
				searched2 = true
			}
		}
		if e.Decision == "re-search" && e.SubQuestion != "q2" {
			t.Errorf("re-search logged for %s", e.SubQuestion)
		}
		if e.Stage == research.StageSynth && e.Decision == "integrity" && strings.Contains(e.Detail, "without a citation") {
			integrity = true
		}
	}
	if !searched2 {
		t.Errorf("the research log has no round-2 search for q2 with the verifier's queries:\n%s", dumpLog(log))
	}
	if !integrity {
		t.Errorf("the research log does not record the refused first draft:\n%s", dumpLog(log))
	}
	round2 := 0
	for _, e := range rep.Evidence {
		if e.Round == 2 {
			round2++
			if e.SubQuestion != "q2" || !strings.Contains(e.Quote, "71 days") {
				t.Errorf("round-2 evidence %+v", e)
			}
		}
	}
	if round2 == 0 {
		t.Errorf("the directed re-search found nothing new:\n%s", rep.Markdown)
	}
	events, err := research.LoadEvents(runDir)
	if err != nil {
		t.Fatal(err)
	}
	redo := 0
	for _, e := range events {
		if e.Kind == research.EventResearch {
			redo++
			if e.Message != "directed re-search for q2" {
				t.Errorf("re-search event %q", e.Message)
			}
		}
	}
	if redo != 1 {
		t.Errorf("%d re-search events, want 1", redo)
	}
	checkSpend(t, srv, rep, stderr)
	return rep
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func dumpLog(log []state.LogEntry) string {
	var b strings.Builder
	for _, e := range log {
		fmt.Fprintf(&b, "r%d %-6s %-3s %-10s %s %s\n", e.Round, e.Stage, e.SubQuestion, e.Decision, lexical.Clip(lexical.NormalizeSpace(e.Detail), 99), e.Error)
	}
	return b.String()
}

// A run against a local OpenAI-compatible server playing the five roles, over a local corpus.
func TestRunLLMCorpus(t *testing.T) {
	isolateHome(t)
	docs := filepath.Join(t.TempDir(), "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range kilnDocs {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := kilnFake(t)
	runDir := filepath.Join(t.TempDir(), "runs", "llm1")
	stdout, stderr, code := runLLM(t, map[string]string{"OPENAI_API_KEY": "fake-key"},
		"--config", writeConfig(t, ""), "run", "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "fake-research",
		"--corpus", docs, "--out", runDir, kilnQuestion)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	rep := checkRun(t, srv, runDir, stdout, stderr)
	for _, s := range rep.Sources {
		if !strings.HasPrefix(s.URL, "file://") {
			t.Errorf("source %s is not a corpus file", s.URL)
		}
	}
	if t.Failed() {
		t.Logf("stderr:\n%s\nreport:\n%s", stderr, rep.Markdown)
	}
}

// kilnSite serves the documents as HTML articles, and a SearXNG instance that finds them by their words.
func kilnSite(t *testing.T) (site, searx *httptest.Server) {
	t.Helper()
	type article struct{ path, title, html, text string }
	var articles []article
	for name, text := range kilnDocs {
		title, rest, _ := strings.Cut(strings.TrimPrefix(text, "# "), "\n")
		var paras []string
		for _, p := range strings.Split(strings.TrimSpace(rest), "\n\n") {
			paras = append(paras, "<p>"+strings.TrimSpace(p)+"</p>")
		}
		page := fmt.Sprintf("<!DOCTYPE html><html><head><title>%s</title></head><body><nav><a href=\"/\">Home</a></nav>"+
			"<article><h1>%s</h1>%s</article><footer>Kiln notes</footer></body></html>", title, title, strings.Join(paras, "\n"))
		articles = append(articles, article{path: "/articles/" + strings.TrimSuffix(name, ".md") + ".html", title: title, html: page, text: text})
	}
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, a := range articles {
			if r.URL.Path == a.path {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, a.html)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(site.Close)
	searx = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "want /search?format=json", http.StatusBadRequest)
			return
		}
		words := strings.Fields(strings.ToLower(r.URL.Query().Get("q")))
		type result struct {
			Title   string  `json:"title"`
			URL     string  `json:"url"`
			Content string  `json:"content"`
			Score   float64 `json:"score"`
			Engine  string  `json:"engine"`
		}
		results := []result{}
		for _, a := range articles {
			low, hits := strings.ToLower(a.text), 0
			for _, w := range words {
				if len(w) > 3 && strings.Contains(low, w) {
					hits++
				}
			}
			if hits > 0 {
				_, body, _ := strings.Cut(a.text, "\n\n")
				results = append(results, result{Title: a.title, URL: site.URL + a.path, Content: lexical.Clip(lexical.NormalizeSpace(body), 199),
					Score: float64(hits), Engine: "fake"})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"query": r.URL.Query().Get("q"), "results": results})
	}))
	t.Cleanup(searx.Close)
	return site, searx
}

// The same run over the web: SearXNG finds articles on a local site. The fetcher refuses the loopback site
// unless the configuration opens it — loudly, in the events, the research log and the terminal.
func TestRunLLMWebSearXNG(t *testing.T) {
	isolateHome(t)
	site, searx := kilnSite(t)
	env := map[string]string{"OPENAI_API_KEY": "fake-key", "SEARXNG_URL": searx.URL}

	t.Run("refused without allow-list", func(t *testing.T) {
		srv := kilnFake(t)
		runDir := filepath.Join(t.TempDir(), "runs", "refused")
		stdout, stderr, code := runLLM(t, env, "--config", writeConfig(t, ""), "run", "--provider", "openai",
			"--base-url", srv.BaseURL(), "--model", "fake-research", "--web", "searxng", "--rounds", "0", "--out", runDir, kilnQuestion)
		// Every page was refused, so the report cites nothing: exit 3.
		if code != ExitNothing {
			t.Fatalf("exit %d, want %d (nothing to cite)\nstdout:\n%s\nstderr:\n%s", code, ExitNothing, stdout, stderr)
		}
		events, err := research.LoadEvents(runDir)
		if err != nil {
			t.Fatal(err)
		}
		refused := 0
		for _, e := range events {
			if e.Kind == research.EventRead {
				t.Errorf("a loopback article was read: %+v", e)
			}
			// The error event names the URL in its message ("read URL"); its URL field is left empty.
			if e.Kind == research.EventError && e.Stage == research.StageRead && strings.Contains(e.Message, site.URL+"/articles/") {
				if !strings.Contains(e.Err, "refused") || !strings.Contains(e.Err, "loopback") {
					t.Errorf("refusal does not say why: %q", e.Err)
				}
				refused++
			}
		}
		if refused == 0 {
			t.Fatalf("no refusal event for the loopback site\nstderr:\n%s", stderr)
		}
		log, err := research.LoadLog(runDir)
		if err != nil {
			t.Fatal(err)
		}
		logged := 0
		for _, e := range log {
			if e.Stage == research.StageRead && strings.Contains(e.Error, "127.0.0.1 is a loopback address") {
				logged++
			}
		}
		if logged != refused {
			t.Errorf("%d refusals in the research log, %d in the events:\n%s", logged, refused, dumpLog(log))
		}
		if !strings.Contains(stderr, "refused: 127.0.0.1 is a loopback address") {
			t.Errorf("the terminal does not show the refusal:\n%s", stderr)
		}
		if srv.Count(openaifake.RoleAnalyst) != 0 {
			t.Errorf("the analyst was called %d times with nothing fetched", srv.Count(openaifake.RoleAnalyst))
		}
		rep, err := research.LoadReport(runDir)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Citations) != 0 || len(rep.Sources) != 0 {
			t.Errorf("a report from refused sources cites something:\n%s", rep.Markdown)
		}
	})

	t.Run("allowed by configuration", func(t *testing.T) {
		srv := kilnFake(t)
		runDir := filepath.Join(t.TempDir(), "runs", "web")
		cfg := writeConfig(t, "sources:\n  allow_hosts: [127.0.0.1]\n")
		stdout, stderr, code := runLLM(t, env, "--config", cfg, "run", "--provider", "openai",
			"--base-url", srv.BaseURL(), "--model", "fake-research", "--web", "searxng", "--out", runDir, kilnQuestion)
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		rep := checkRun(t, srv, runDir, stdout, stderr)
		for _, s := range rep.Sources {
			if !strings.HasPrefix(s.URL, site.URL+"/articles/") {
				t.Errorf("source %s is not an article of the site", s.URL)
			}
		}
		if strings.Contains(stderr, "refused: ") {
			t.Errorf("a fetch was refused although the host is allowed:\n%s", stderr)
		}
		if t.Failed() {
			t.Logf("stderr:\n%s\nreport:\n%s", stderr, rep.Markdown)
		}
	})
}
