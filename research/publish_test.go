package research_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/sources"
)

// pageRoles read one page of a site: the analyst quotes each of the given sentences verbatim, the synthesizer
// writes the drafts it is given, in order, and the judge (when judge is set) answers with it.
type pageRoles struct {
	url    string
	quotes []string
	drafts []string
	// notCovered marks the drafts as saying the sources do not cover the question (Draft.NotCovered).
	notCovered bool
	judge      func(claims []publish.SupportClaim) ([]publish.SupportVerdict, error)

	mu     sync.Mutex
	n      int
	judged [][]string // the sentences of each judge call
}

func (p *pageRoles) Plan(_ context.Context, q string) (*research.Plan, error) {
	return &research.Plan{Question: q, Language: "en", SubQuestions: []research.SubQuestion{{ID: "q1", Question: q, Queries: []string{q}}}}, nil
}

func (p *pageRoles) Search(context.Context, research.SubQuestion, []string) ([]research.Candidate, error) {
	return []research.Candidate{{Result: sources.Result{URL: p.url, Title: "Kiln notes"}}}, nil
}

func (p *pageRoles) Analyze(_ context.Context, sq research.SubQuestion, _ *sources.Document) ([]research.Evidence, error) {
	var out []research.Evidence
	for _, q := range p.quotes {
		out = append(out, research.Evidence{SubQuestion: sq.ID, Claim: q, Quote: q, Confidence: 0.9})
	}
	return out, nil
}

func (p *pageRoles) Verify(context.Context, *research.Plan, []research.Evidence) (*research.Verdict, error) {
	return &research.Verdict{Pass: true}, nil
}

func (p *pageRoles) Synthesize(context.Context, research.SynthesisInput) (*research.Draft, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.drafts[min(p.n, len(p.drafts)-1)]
	p.n++
	return &research.Draft{Markdown: d, NotCovered: p.notCovered}, nil
}

// judgingRoles are pageRoles whose verifier is also a SupportJudge.
type judgingRoles struct{ *pageRoles }

func (j judgingRoles) JudgeSupport(_ context.Context, _ string, claims []publish.SupportClaim) ([]publish.SupportVerdict, error) {
	var ss []string
	for _, c := range claims {
		ss = append(ss, c.Sentence)
	}
	j.mu.Lock()
	j.judged = append(j.judged, ss)
	j.mu.Unlock()
	return j.judge(claims)
}

var kilnNotes = []string{
	"The kiln heats its chamber with a black absorber plate behind polycarbonate glazing.",
	"Two roof fans push the warm air through the timber stack.",
	"Oak boards 25 mm thick dried to 12 percent moisture in 38 days.",
}

func runPage(t *testing.T, p *pageRoles, withJudge bool, unjudged string) *research.Report {
	t.Helper()
	site := researchtest.NewSite([]researchtest.Page{{Path: "/kiln", Title: "Kiln notes", Body: strings.Join(kilnNotes, "\n\n")}})
	t.Cleanup(site.Close)
	p.url = site.URL + "/kiln"
	p.quotes = kilnNotes
	roles := research.Roles{Engine: "test", Planner: p, Searcher: p, Analyst: p, Verifier: p, Synthesizer: p}
	if withJudge {
		roles.Verifier = judgingRoles{p}
	}
	rep, err := research.Run(t.Context(), research.Config{Question: "How does the kiln work?", Roles: roles,
		Fetcher: site.Fetcher(), OutDir: filepath.Join(t.TempDir(), "run"), Unjudged: unjudged, Rounds: -1})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// body is the report between its header and its sources.
func body(rep *research.Report) string {
	b, _, _ := strings.Cut(rep.Markdown, "\n## Sources")
	return b
}

// TestAPreambleBeforeAFencedReportKeepsTheReport: a draft that opens with prose and wraps the report in a
// Markdown fence is the report, not one code block to remove.
func TestAPreambleBeforeAFencedReportKeepsTheReport(t *testing.T) {
	for _, fence := range []string{"```markdown", "```", "~~~md"} {
		t.Run(fence, func(t *testing.T) {
			closing := fence[:3]
			draft := "Sure! Here is the report you asked for:\n\n" + fence + "\n# The kiln\n\n## Heating\n\n" +
				"The kiln heats its chamber with a black absorber plate behind polycarbonate glazing [e1]. " +
				"Two roof fans push the warm air through the timber stack [e2].\n" + closing + "\n\nLet me know if you need more."
			rep := runPage(t, &pageRoles{drafts: []string{draft}}, false, "")
			b := body(rep)
			if !strings.Contains(b, "black absorber plate behind polycarbonate glazing [1]") || !strings.Contains(b, "## Heating") {
				t.Fatalf("the fenced report was not published:\n%s", rep.Markdown)
			}
			for _, gone := range []string{"Sure!", "Let me know", "```", "~~~", "answer none"} {
				if strings.Contains(b, gone) {
					t.Errorf("%q published:\n%s", gone, rep.Markdown)
				}
			}
		})
	}
}

// TestNothingPublishableListsTheGroundedQuotes: when every sentence of the draft is removed while grounded
// quotes exist, the partial report lists them instead of saying the sources answer nothing.
func TestNothingPublishableListsTheGroundedQuotes(t *testing.T) {
	draft := "# The kiln\n\nThe kiln is the most efficient dryer ever built [e1]. It costs nothing to run [e2].\n"
	rep := runPage(t, &pageRoles{drafts: []string{draft}}, false, "")
	b := body(rep)
	if strings.Contains(b, "answer none of these sub-questions") || strings.Contains(b, "most efficient") {
		t.Fatalf("the report says nothing was found, or publishes the unsupported draft:\n%s", rep.Markdown)
	}
	if !strings.Contains(b, "no sentence of the draft could be published") {
		t.Errorf("the partial report does not say why it lists the evidence:\n%s", rep.Markdown)
	}
	for _, q := range kilnNotes {
		if !strings.Contains(b, strings.TrimSuffix(q, ".")) {
			t.Errorf("grounded quote %q not listed:\n%s", q, rep.Markdown)
		}
	}
	if rep.Stats.RemovedByCause[publish.CauseUnsupported] != 2 {
		t.Errorf("removals by cause %v, want the 2 unsupported sentences", rep.Stats.RemovedByCause)
	}
}

// TestANotCoveredDraftIsTheReport: a draft that answers that the sources do not cover the question is published
// as it is; the run's evidence is not listed in its place, as it is for a draft none of whose sentences could be
// published (the same draft without the mark).
func TestANotCoveredDraftIsTheReport(t *testing.T) {
	const line = "Not covered: the sources searched never mention errgroup."
	for _, marked := range []bool{true, false} {
		rep := runPage(t, &pageRoles{drafts: []string{"# The kiln\n\n### " + line + "\n"}, notCovered: marked}, false, "")
		b := body(rep)
		listed := strings.Contains(b, strings.TrimSuffix(kilnNotes[0], "."))
		if marked && (!strings.Contains(b, line) || listed || len(rep.Citations) != 0) {
			t.Errorf("not-covered draft: the line is missing or the evidence is listed (%d citations):\n%s", len(rep.Citations), rep.Markdown)
		}
		if !marked && !listed {
			t.Errorf("a draft with nothing to publish does not list the grounded evidence:\n%s", rep.Markdown)
		}
	}
}

// TestStrayCitationMarkersAreNeverPublished: markers in other forms that name evidence ids are rewritten to
// citations; those that name none are never published, and their sentences are counted as removed for their
// citation format.
func TestStrayCitationMarkersAreNeverPublished(t *testing.T) {
	draft := "# The kiln 【3】\n\n" +
		"The kiln heats its chamber with a black absorber plate behind polycarbonate glazing 【e1】. " +
		"Two roof fans push the warm air through the timber stack [E2]. " +
		"Oak boards 25 mm thick dried to 12 percent moisture in 38 days [^e3].\n\n" +
		"The fans are quiet at night 【4†source】. The stack dries evenly [source].\n"
	rep := runPage(t, &pageRoles{drafts: []string{draft}}, false, "")
	b := body(rep)
	for _, want := range []string{"glazing [1]", "timber stack [2]", "38 days [3]"} {
		if !strings.Contains(b, want) {
			t.Errorf("%q: a marker naming evidence was not made a citation:\n%s", want, rep.Markdown)
		}
	}
	for _, bad := range []string{"【", "】", "[E", "[^", "[source]", "quiet at night", "dries evenly"} {
		if strings.Contains(b, bad) {
			t.Errorf("%q published:\n%s", bad, rep.Markdown)
		}
	}
	if rep.Stats.RemovedByCause[publish.CauseCitationFormat] != 2 {
		t.Errorf("removals by cause %v, want 2 for citation format", rep.Stats.RemovedByCause)
	}
	if !strings.Contains(rep.Markdown, "sentences removed: 2 (citation format: 2)") {
		t.Errorf("the footer does not count the cause:\n%s", rep.Markdown)
	}
}

// TestRepeatedSentencesAreJudgedOnceAndPublishedOnce: a draft repeating a sentence asks the judge about it once
// and publishes it once; the repeats are counted as duplicates.
func TestRepeatedSentencesAreJudgedOnceAndPublishedOnce(t *testing.T) {
	s := "The chamber is heated by a black absorber plate behind polycarbonate glazing [e1]. "
	draft := "# The kiln\n\n" + strings.Repeat(s, 5) + "\n"
	p := &pageRoles{drafts: []string{draft}, judge: func(cs []publish.SupportClaim) ([]publish.SupportVerdict, error) {
		var v []publish.SupportVerdict
		for _, c := range cs {
			v = append(v, publish.SupportVerdict{ID: c.ID, Supported: true})
		}
		return v, nil
	}}
	rep := runPage(t, p, true, "")
	if n := strings.Count(rep.Markdown, "heated by a black absorber plate"); n != 1 {
		t.Errorf("published %d times:\n%s", n, rep.Markdown)
	}
	if len(p.judged) != 1 || len(p.judged[0]) != 1 {
		t.Errorf("judge calls %q, want one call about one sentence", p.judged)
	}
	if rep.Stats.RemovedByCause[publish.CauseDuplicate] != 4 {
		t.Errorf("removals by cause %v, want 4 duplicates", rep.Stats.RemovedByCause)
	}
}

// TestTheJudgeIsAskedAgainForExactlyTheMissingSentences: a judge that answers only part of each batch is asked
// again about the sentences it left out, and only those, in smaller batches; a sentence it never answers on is
// removed, or kept marked with UnjudgedKeep.
func TestTheJudgeIsAskedAgainForExactlyTheMissingSentences(t *testing.T) {
	sentences := []string{
		"The chamber is heated by a black absorber plate behind polycarbonate glazing [e1].",
		"Warm air is pushed through the timber stack by two roof fans [e2].",
		"Boards of oak 25 mm thick reached 12 percent moisture in 38 days [e3].",
	}
	draft := "# The kiln\n\n" + strings.Join(sentences, " ") + "\n"
	never := "Warm air is pushed through the timber stack by two roof fans."
	for _, mode := range []string{research.UnjudgedRemove, research.UnjudgedKeep} {
		t.Run(mode, func(t *testing.T) {
			calls := 0
			p := &pageRoles{drafts: []string{draft}}
			p.judge = func(cs []publish.SupportClaim) ([]publish.SupportVerdict, error) {
				calls++
				if calls == 1 {
					return nil, fmt.Errorf("HTTP 500: the judge is down")
				}
				var v []publish.SupportVerdict
				for _, c := range cs {
					if c.Sentence != never {
						v = append(v, publish.SupportVerdict{ID: c.ID, Supported: true})
					}
				}
				return v, nil
			}
			rep := runPage(t, p, true, mode)
			if len(p.judged) < 3 || len(p.judged[0]) != 3 {
				t.Fatalf("judge calls %q", p.judged)
			}
			for _, call := range p.judged[2:] {
				if len(call) != 1 || call[0] != never {
					t.Errorf("asked again about %q; only %q was missing", call, never)
				}
			}
			if len(p.judged) > 1+2+2 {
				t.Errorf("%d judge calls: the asks are not bounded", len(p.judged))
			}
			b := body(rep)
			for _, s := range []string{"heated by a black absorber plate", "reached 12 percent moisture"} {
				if !strings.Contains(b, s) {
					t.Errorf("supported %q lost:\n%s", s, rep.Markdown)
				}
			}
			j := rep.Stats.Judge
			if j == nil || j.Supported != 2 || j.Unjudged != 1 || j.Why["the judge's answer left it out"] != 1 {
				t.Fatalf("judge figures %+v", j)
			}
			switch mode {
			case research.UnjudgedRemove:
				if strings.Contains(b, "two roof fans") {
					t.Errorf("an unjudged sentence was published:\n%s", rep.Markdown)
				}
				if !strings.Contains(rep.Markdown, "sentences without a verdict, removed: 1 (the judge's answer left it out: 1)") {
					t.Errorf("footer:\n%s", rep.Markdown)
				}
			case research.UnjudgedKeep:
				if !strings.Contains(b, "by two roof fans [2]. ⚠ *unverified*") {
					t.Errorf("the kept sentence is not marked:\n%s", rep.Markdown)
				}
				if strings.Count(b, "⚠ *unverified*") != 1 {
					t.Errorf("judged sentences marked unverified:\n%s", rep.Markdown)
				}
			}
		})
	}
}

// TestBadUnjudgedChoiceIsRefused: Unjudged takes remove or keep, nothing else.
func TestBadUnjudgedChoiceIsRefused(t *testing.T) {
	if err := research.CheckUnjudged("maybe"); err == nil {
		t.Fatal(`"maybe" accepted`)
	}
	for _, ok := range []string{"", research.UnjudgedRemove, research.UnjudgedKeep} {
		if err := research.CheckUnjudged(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	p := &pageRoles{drafts: []string{"# x"}}
	_, err := research.Run(t.Context(), research.Config{Question: "q?", Roles: research.Roles{Planner: p, Searcher: p,
		Analyst: p, Verifier: p, Synthesizer: p}, Fetcher: noFetch{}, OutDir: filepath.Join(t.TempDir(), "run"), Unjudged: "sometimes"})
	if err == nil || !strings.Contains(err.Error(), "sometimes") {
		t.Fatalf("Run took Unjudged %q: %v", "sometimes", err)
	}
}
