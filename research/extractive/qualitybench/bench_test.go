package qualitybench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

func TestQuestionSet(t *testing.T) {
	qs, err := Questions()
	if err != nil {
		t.Fatal(err)
	}
	var goDocs, zh, zhGuide, zhGo, absent, twins int
	ids := map[string]bool{}
	for _, q := range qs {
		if ids[q.ID] {
			t.Errorf("duplicate id %s", q.ID)
		}
		ids[q.ID] = true
		if q.Absent {
			absent++
			continue
		}
		if q.Twin != "" {
			twins++
		}
		isZH := strings.ContainsAny(q.Question, "的是什么有哪些如何")
		if q.Corpus != CorpusZH && !isZH {
			goDocs++
		}
		if isZH {
			zh++
			if q.Corpus == CorpusZH {
				zhGuide++
			} else {
				zhGo++
			}
		}
	}
	if goDocs < 15 || zh < 5 || zhGuide == 0 || zhGo == 0 {
		t.Errorf("%d questions over the Go docs, %d in Chinese (%d over the Chinese guide, %d Go docs); want ≥ 15 and ≥ 5 over both", goDocs, zh, zhGuide, zhGo)
	}
	debian := map[string]int{}
	var debianZH int
	for _, q := range qs {
		if q.Split == "" {
			continue
		}
		debian[q.Split]++
		if strings.ContainsAny(q.Question, "的是什么有哪些如何吗") {
			debianZH++
		}
	}
	// The held-out half is the 18 questions written with the first tune half; later question files add tuning
	// questions only, so it is a floor, not a share.
	if n := debian[SplitTune] + debian[SplitHeldOut]; n < 30 || 3*debianZH < n || debian[SplitHeldOut] < 15 || debian[SplitTune] == 0 {
		t.Errorf("%d questions over the Debian docs (%v), %d in Chinese; want ≥ 30, a third Chinese, ≥ 15 held out", n, debian, debianZH)
	}
	if absent < 3 || twins < 5 {
		t.Errorf("%d absent-answer questions and %d language pairs; want ≥ 3 and ≥ 5", absent, twins)
	}
}

// TestBenchSubset runs the bench on a subset of the questions — English and Chinese, all three corpora — through
// the real graph and corpus index. Citation grounding must be 100% and no cited sentence a fragment; the recall
// floor, 0.78 mean over the subset, is below what the engine reaches on it, so a clear regression in the planner,
// analyst or synthesizer fails it.
func TestBenchSubset(t *testing.T) {
	// Strong and weak questions alike (mem-channels, io-reader-eof and zh-budget stay at or below 50%).
	subset := []string{"mem-channels", "mem-locks", "spec-select", "context-cancel", "time-monotonic", "strings-builder",
		"io-reader-eof", "zh-stages", "zh-compaction", "zh-presets", "zh-budget"}
	res := runGrounded(t, Options{WorkDir: t.TempDir(), Only: subset})
	if res.Recall < 0.78 {
		t.Errorf("mean recall %.2f below the floor 0.78", res.Recall)
	}
	for _, q := range res.Questions {
		if q.Citations == 0 {
			t.Errorf("%s: no citations", q.ID)
		}
		if len(q.Fragments) > 0 || len(q.Repeats) > 0 {
			t.Errorf("%s: fragments %q, repeats %q", q.ID, q.Fragments, q.Repeats)
		}
	}
}

func TestFactRecallNeedsAllKeywordsInOneCitedSentence(t *testing.T) {
	rep := &research.Report{CitationMap: []research.Conclusion{
		{Text: "A send on a channel is synchronized before the completion of the receive [1].", EvidenceIDs: []string{"e1"}},
		{Text: "The closing of a channel happens first [2].", EvidenceIDs: []string{"e2"}},
		{Text: "A zero value is returned.", EvidenceIDs: nil}, // not cited: does not count
	}}
	found, missing := FactRecall(rep, [][]string{
		{"send on a channel", "synchronized before"},
		{"closing of a channel", "zero value"}, // split over two sentences: not found
		{"SEND|receive", "completion"},
	})
	if found != 2 || len(missing) != 1 || !strings.Contains(missing[0], "closing") {
		t.Errorf("found %d, missing %q", found, missing)
	}
}

// A report leads with a fact when its first cited sentence states one; an uncited heading line before it does not
// count, and a fact stated only later does not make the lead.
func TestLeadsWithFact(t *testing.T) {
	rep := &research.Report{CitationMap: []research.Conclusion{
		{Text: "What does a send on a channel do?", EvidenceIDs: nil},
		{Text: "The closing of a channel happens first [1].", EvidenceIDs: []string{"e1"}},
		{Text: "A send on a channel is synchronized before the completion of the receive [2].", EvidenceIDs: []string{"e2"}},
	}}
	for _, tc := range []struct {
		facts [][]string
		want  bool
	}{
		{[][]string{{"send on a channel", "synchronized before"}}, false},
		{[][]string{{"send on a channel", "synchronized before"}, {"CLOSING|close", "happens first"}}, true},
		{nil, false},
	} {
		if got := LeadsWithFact(rep, tc.facts); got != tc.want {
			t.Errorf("LeadsWithFact(%q) = %v, want %v", tc.facts, got, tc.want)
		}
	}
	if LeadsWithFact(&research.Report{}, [][]string{{"send"}}) {
		t.Error("an empty report leads with a fact")
	}
}

func TestGroundingCatchesAlteredQuotesAndWrongLines(t *testing.T) {
	dir := t.TempDir()
	text := "# Notes\n\nFirst line of prose.\nSecond line of prose.\n"
	path := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := corpus.Open(filepath.Join(t.TempDir(), "ix"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Add(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	rep := &research.Report{
		Citations: []research.Citation{{N: 1, EvidenceIDs: []string{"e1"}}, {N: 2, EvidenceIDs: []string{"e2"}}, {N: 3, EvidenceIDs: []string{"e3"}}},
		Evidence: []research.Evidence{
			{ID: "e1", Quote: "Second line of prose.", Source: corpus.FileURL(path, 3, 4)},
			{ID: "e2", Quote: "Second line of poetry.", Source: corpus.FileURL(path, 3, 4)}, // altered
			{ID: "e3", Quote: "Second line of prose.", Source: corpus.FileURL(path, 1, 3)},  // outside the lines
		},
	}
	checked, grounded, failures := Grounding(t.Context(), rep, ix)
	if checked != 3 || grounded != 1 || len(failures) != 2 {
		t.Errorf("checked %d grounded %d failures %q", checked, grounded, failures)
	}
}

func TestWritePackageDocs(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WritePackageDocs(strings.TrimSpace(string(out)), dir, []string{"sync", "encoding/json"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "sync.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Package sync", "## type Mutex", "The zero value for a Mutex is an unlocked mutex."} {
		if !strings.Contains(string(data), want) {
			t.Errorf("sync.md lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "encoding_json.md")); err != nil {
		t.Error(err)
	}
}

// TestBenchOtherSource runs questions over the othersrc corpus — JavaScript, Python, C and shell that ship with
// Go — through the real graph: every file of the corpus must index as source code (none failed or skipped), the
// cited quotes must be grounded, and the answers, read from comments only (a JavaScript comment after code, a
// shell comment after code examples, a Chinese question over them), must keep a recall floor below what the
// engine reaches (3/3 on each).
func TestBenchOtherSource(t *testing.T) {
	opts := Options{WorkDir: t.TempDir()}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	opts.GoRoot = strings.TrimSpace(string(out))
	paths, err := corpusPaths[CorpusOtherSrc](opts)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := corpus.Open(filepath.Join(t.TempDir(), "ix"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := ix.Add(t.Context(), paths...)
	ix.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != len(paths) || len(st.Failed) > 0 {
		t.Errorf("indexed %d of the %d files of the corpus (failed: %v)", st.Added, len(paths), st.Failed)
	}

	subset := []string{"src-wasm-refs", "src-syscall-entry", "zh-src-syscall-entry"}
	opts.Only = subset
	res := runGrounded(t, opts)
	for _, q := range res.Questions {
		if q.Recall < 0.66 {
			t.Errorf("%s: recall %.2f below the floor 0.66 (missing %q)", q.ID, q.Recall, q.Missing)
		}
	}
}

// runGrounded runs the questions opts.Only names, logs the table, and fails unless each question has its result,
// the run reports no error and every cited quote is grounded.
func runGrounded(t *testing.T, opts Options) *Result {
	t.Helper()
	res, err := Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Questions) != len(opts.Only) {
		t.Fatalf("%d results for %d questions", len(res.Questions), len(opts.Only))
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if res.Citations == 0 || res.Grounded != res.Citations {
		t.Errorf("grounding %d/%d, want 100%%", res.Grounded, res.Citations)
	}
	return res
}

// TestBenchDebianDocs runs two questions of the tune half over documentation trees of Debian packages (the Rust
// book in mdBook, with its print-all page and old-edition stubs; Node.js's API docs, with all.html) through the
// real graph: citations grounded, none of them page furniture (navigation, a caption, a comment out of its code),
// none from the aggregate pages or the stubs, and a recall floor below what the engine reaches.
func TestBenchDebianDocs(t *testing.T) {
	res := runGrounded(t, Options{WorkDir: t.TempDir(), Only: []string{"rust-references-rules", "node-max-listeners"}})
	for _, q := range res.Questions {
		if q.Citations == 0 || len(q.Furniture) > 0 {
			t.Errorf("%s: %d citations, furniture %q", q.ID, q.Citations, q.Furniture)
		}
		if q.Recall < debianFloor[q.ID] {
			t.Errorf("%s: recall %.2f below the floor %.2f (missing %q)", q.ID, q.Recall, debianFloor[q.ID], q.Missing)
		}
		for _, agg := range []string{"/print.html", "/all.html", "-edition/"} {
			if strings.Contains(q.Markdown, agg+")") || strings.Contains(q.Markdown, agg) {
				t.Errorf("%s: cites %s:\n%s", q.ID, agg, q.Markdown)
			}
		}
	}
}

// debianFloor is TestBenchDebianDocs's recall floor per question, below what the engine reaches.
var debianFloor = map[string]float64{"rust-references-rules": 0.5, "node-max-listeners": 0.66}

// The totals of each split: the older questions, the tune half and the held-out half, each summed on its own.
func TestTotalsPerSplit(t *testing.T) {
	res := Total([]QuestionResult{
		{ID: "a", Facts: 2, Found: 2, Recall: 1, Citations: 2, Precision: 1},
		{ID: "b", Split: SplitTune, Facts: 2, Found: 1, Recall: 0.5, Citations: 2, Precision: 0.5, Furniture: []string{"caption: x"}},
		{ID: "c", Split: SplitHeldOut, Facts: 4, Found: 1, Recall: 0.25, Citations: 4, Precision: 0.75},
		{ID: "d", Split: SplitHeldOut, Facts: 4, Found: 3, Recall: 0.75, Citations: 4, Precision: 0.25},
	})
	if len(res.Splits) != 3 || res.Furniture != 1 || res.Found != 7 || res.Facts != 12 {
		t.Fatalf("totals %+v", res)
	}
	ho := res.Splits[2]
	if ho.Split != SplitHeldOut || ho.Questions != 2 || ho.Recall != 0.5 || ho.FactRecall != 0.5 || ho.Precision != 0.5 {
		t.Errorf("held-out totals %+v", ho)
	}
	if res.Splits[0].Split != "older" || res.Splits[1].Furniture != 1 {
		t.Errorf("splits %+v", res.Splits)
	}
}

// --split picks one half of the questions: "older" those without a split, the others by name; any other name is an
// error that lists them.
func TestSplitSelects(t *testing.T) {
	res, err := Run(t.Context(), Options{WorkDir: t.TempDir(), Only: []string{"mem-channels", "rust-references-rules"}, Split: SplitOlder})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Questions) != 1 || res.Questions[0].ID != "mem-channels" {
		t.Errorf("--split older ran %v, want mem-channels alone", res.Questions)
	}
	_, err = Run(t.Context(), Options{WorkDir: t.TempDir(), Only: []string{"mem-channels"}, Split: "held-out"})
	if err == nil || !strings.Contains(err.Error(), `"older"`) || !strings.Contains(err.Error(), `"heldout"`) {
		t.Errorf("an unknown split: %v, want an error naming the splits", err)
	}
}
