package research_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

// corpusRoles read a local corpus: the searcher returns its chunks (file:///x#La-Lb), and the analyst quotes
// the first sentences of the chunk it reads, citing each by an anchor the test chooses.
type corpusRoles struct {
	ix     *corpus.Index
	plan   research.Plan
	anchor func(doc *sources.Document, quote string, k int) string
}

func (c *corpusRoles) Plan(_ context.Context, q string) (*research.Plan, error) {
	p := c.plan
	p.Question = q
	return &p, nil
}

func (c *corpusRoles) Search(ctx context.Context, sq research.SubQuestion, queries []string) ([]research.Candidate, error) {
	var out []research.Candidate
	for _, q := range queries {
		rs, err := c.ix.Search(ctx, q, 3)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			out = append(out, research.Candidate{Result: r, SubQuestion: sq.ID, Query: q})
		}
	}
	return out, nil
}

func (c *corpusRoles) Analyze(_ context.Context, sq research.SubQuestion, doc *sources.Document) ([]research.Evidence, error) {
	first, last := anchorLines(doc.URL)
	lines := strings.Split(doc.Text, "\n")
	var out []research.Evidence
	for n := first; n <= last && n <= len(lines) && len(out) < 3; n++ {
		l := strings.TrimSpace(lines[n-1])
		if !strings.HasPrefix(l, "Fact") {
			continue
		}
		out = append(out, research.Evidence{SubQuestion: sq.ID, Claim: l, Quote: l, Confidence: 0.8,
			Source: c.anchor(doc, l, len(out))})
	}
	return out, nil
}

func (c *corpusRoles) Verify(context.Context, *research.Plan, []research.Evidence) (*research.Verdict, error) {
	return &research.Verdict{Pass: true}, nil
}

func (c *corpusRoles) Synthesize(_ context.Context, in research.SynthesisInput) (*research.Draft, error) {
	return &research.Draft{Markdown: researchtest.CiteAll(in)}, nil
}

func anchorLines(u string) (int, int) {
	var a, b int
	if i := strings.LastIndex(u, "#L"); i >= 0 {
		if _, err := fmt.Sscanf(u[i:], "#L%d-L%d", &a, &b); err == nil {
			return a, b
		}
	}
	return 1, 1 << 30
}

func lineOf(text, quote string) int {
	return strings.Count(text[:strings.Index(text, quote)], "\n") + 1
}

func TestAnchorsNameTheQuotesOwnLines(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("# Facts about kilns\n\n")
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&b, "Fact %d: the kiln number %d fires stoneware at %d degrees for glazing tests.\n\n", i, i, 1000+i)
	}
	path := filepath.Join(dir, "kilns.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.md")
	if err := os.WriteFile(other, []byte("# Other\n\nNothing about kilns here at all.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := corpus.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Add(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	fileURL := corpus.FileURL(path, 0, 0)
	roles := &corpusRoles{ix: ix, plan: research.Plan{Language: "en", SubQuestions: []research.SubQuestion{
		{ID: "q1", Question: "At what temperature do kilns fire stoneware?", Queries: []string{"kiln stoneware degrees glazing"}},
	}}}
	// Whatever the analyst claims — its own lines, lines the quote is not on, another file — the evidence is
	// anchored where the quote stands.
	roles.anchor = func(doc *sources.Document, quote string, k int) string {
		n := lineOf(doc.Text, quote)
		switch k {
		case 0:
			return fmt.Sprintf("%s#L%d-L%d", fileURL, n, n)
		case 1:
			return fmt.Sprintf("%s#L%d-L%d", fileURL, n+2, n+3)
		}
		return corpus.FileURL(other, 3, 3)
	}
	out := filepath.Join(t.TempDir(), "run")
	rep, err := research.Run(t.Context(), research.Config{Question: "How hot do kilns fire?", Fetcher: ix, OutDir: out,
		Roles: research.Roles{Engine: "test", Planner: roles, Searcher: roles, Analyst: roles, Verifier: roles, Synthesizer: roles}})
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, out)
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range rep.Evidence {
		n := lineOf(string(text), e.Quote)
		if want := fmt.Sprintf("%s#L%d-L%d", fileURL, n, n); e.Source != want {
			t.Errorf("%s: quote on line %d cited as %s, want %s", e.ID, n, e.Source, want)
		}
		if seen[e.Quote] {
			t.Errorf("quote %q pooled twice", e.Quote)
		}
		seen[e.Quote] = true
		got, err := research.LoadSourceText(out, e.Source)
		if err != nil || !strings.Contains(got, e.Quote) {
			t.Errorf("LoadSourceText(%s): %v", e.Source, err)
		}
	}
	if len(rep.Evidence) == 0 {
		t.Fatal("no evidence")
	}
	// The sources list names the file once, however many anchors into it are cited.
	if len(rep.Sources) != 1 || rep.Sources[0].URL != fileURL {
		t.Fatalf("sources %+v, want the one file %s", rep.Sources, fileURL)
	}
}
