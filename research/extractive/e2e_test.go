package extractive

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/docs/zh"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

func goroot(t testing.TB) string {
	t.Helper()
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		return strings.TrimSpace(string(out))
	}
	//lint:ignore SA1019 only a fallback for when the go command cannot be run
	return runtime.GOROOT()
}

func buildIndex(t testing.TB, paths ...string) *corpus.Index {
	t.Helper()
	ix, err := corpus.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	st, err := ix.Add(t.Context(), paths...)
	if err != nil || len(st.Failed) > 0 || st.Added == 0 {
		t.Fatalf("index %v: %+v %v", paths, st, err)
	}
	return ix
}

// runAndCheck runs the graph with the extractive roles and checks the published report: every cited evidence
// item's quote occurs verbatim in the text the corpus returns for the cited file, and the report says which
// engine wrote it.
func runAndCheck(t *testing.T, ix *corpus.Index, question string) *research.Report {
	t.Helper()
	rep, err := research.Run(t.Context(), research.Config{Question: question, Roles: New(Config{Searchers: []sources.Searcher{ix}}),
		Fetcher: ix, OutDir: filepath.Join(t.TempDir(), "run")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Engine != Engine || !strings.Contains(rep.Markdown, Banner) {
		t.Errorf("engine %q; the report must say %q", rep.Engine, Banner)
	}
	if len(rep.Citations) < 2 {
		t.Fatalf("only %d citations:\n%s", len(rep.Citations), rep.Markdown)
	}
	byID := map[string]research.Evidence{}
	for _, e := range rep.Evidence {
		byID[e.ID] = e
	}
	for _, c := range rep.Citations {
		for _, id := range c.EvidenceIDs {
			e, ok := byID[id]
			if !ok {
				t.Fatalf("citation [%d] → %s, which is not in the report's evidence", c.N, id)
			}
			doc, err := ix.Fetch(t.Context(), e.Source)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(doc.Text, e.Quote) {
				t.Errorf("[%d] %s: quote not verbatim in %s: %q", c.N, id, e.Source, e.Quote)
				continue
			}
			// The citation names the quote's own lines, not those of the chunk the search found.
			if m := regexp.MustCompile(`#L(\d+)-L(\d+)$`).FindStringSubmatch(e.Source); m != nil {
				at := strings.Index(doc.Text, e.Quote)
				first := strings.Count(doc.Text[:at], "\n") + 1
				last := first + strings.Count(e.Quote, "\n")
				if m[1] != strconv.Itoa(first) || m[2] != strconv.Itoa(last) {
					t.Errorf("[%d] %s: quote on lines %d-%d cited as %s", c.N, id, first, last, e.Source)
				}
			}
			text, err := research.LoadSourceText(rep.Dir, e.Source)
			if err != nil || !strings.Contains(text, e.Quote) {
				t.Errorf("[%d] %s: LoadSourceText(%s): %v", c.N, id, e.Source, err)
			}
		}
	}
	if len(rep.Removed) > 0 {
		t.Errorf("the integrity check removed %d sentences of the extractive draft: %q", len(rep.Removed), rep.Removed)
	}
	return rep
}

func TestRunGoMemoryModel(t *testing.T) {
	ix := buildIndex(t, filepath.Join(goroot(t), "doc"))
	rep := runAndCheck(t, ix, "What does the Go memory model guarantee about channel communication?")
	for _, fact := range []string{
		"A send on a channel is synchronized before the completion of the corresponding receive from that channel",
		"synchronized before the completion of the k+Cth send",
	} {
		if !strings.Contains(rep.Markdown, fact) {
			t.Errorf("report lacks %q:\n%s", fact, rep.Markdown)
		}
	}
}

func TestRunChineseQuestionOverChineseGuide(t *testing.T) {
	paths, err := zh.WriteTo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ix := buildIndex(t, paths...)
	rep := runAndCheck(t, ix, "deepagents 预设和 claude-code 预设的压缩触发时机有什么不同？")
	if rep.Language != "zh" || !strings.Contains(rep.Markdown, "## 摘要") {
		t.Errorf("want a Chinese report, got language %q:\n%s", rep.Language, rep.Markdown)
	}
	if !strings.Contains(rep.Markdown, "85%") || !strings.Contains(rep.Markdown, "95%") {
		t.Errorf("report lacks the two trigger thresholds:\n%s", rep.Markdown)
	}
}

// The same question over the same corpus gives the same report, byte for byte apart from the run id and time:
// reads finish in any order, but results are ordered by stable keys. One set of roles serves all four runs, as
// a server's would.
func TestRunIsRepeatable(t *testing.T) {
	// Each of the four runs builds its own indexes (files enter an index in the order parallel extraction
	// finishes, so internal document numbers differ between builds) and its own roles (empty caches), as a second
	// process would.
	header := regexp.MustCompile(`(?m)^> .*· run \S+ · .*$`)
	zh, err := filepath.Abs(filepath.Join("..", "..", "docs", "zh"))
	if err != nil {
		t.Fatal(err)
	}
	folders := []string{filepath.Join(goroot(t), "doc"), zh}
	questions := []struct {
		folder   int
		question string
	}{
		{0, "What does the Go memory model guarantee about channel communication?"},
		{1, "研究流程如何控制预算，熔断触发后会怎样？"},
		{1, "deepresearch 的研究流程有哪五个阶段？"},
	}
	first := make([]string, len(questions))
	for run := range 4 {
		var ixs []*corpus.Index
		for _, f := range folders {
			ixs = append(ixs, buildIndex(t, f))
		}
		for i, q := range questions {
			ix := ixs[q.folder]
			rep, err := research.Run(t.Context(), research.Config{Question: q.question,
				Roles: New(Config{Searchers: []sources.Searcher{ix}}), Fetcher: ix, OutDir: filepath.Join(t.TempDir(), "run")})
			if err != nil {
				t.Fatal(err)
			}
			md := header.ReplaceAllString(rep.Markdown, "> header")
			if run == 0 {
				first[i] = md
				continue
			}
			if md != first[i] {
				t.Fatalf("%s: run %d differs from run 1:\n--- run 1\n%s\n--- run %d\n%s", q.question, run+1, first[i], run+1, md)
			}
		}
	}
}
