package extractive

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/sources"
)

// The corpus-facet heuristic: which section headings name a facet of the question.
func TestFacetHeading(t *testing.T) {
	tests := []struct {
		head, title, question string
		want                  bool
	}{
		{"Select statements", "The Go Programming Language Specification", "How does a select statement choose which communication proceeds?", true},
		{"type Map", "Package sync", "When should sync.Map be used instead of a plain Go map?", true},
		{"Monotonic Clocks", "Package time", "How does the time package use the monotonic clock?", true},
		{"Goroutine creation", "The Go Memory Model", "What does the Go memory model guarantee when a goroutine is created or exits?", true},
		{"分层压缩", "上下文工程", "上下文压缩在什么时候触发，分为哪几层？", true},
		{"预算与熔断", "研究流程的五个阶段", "研究流程如何控制预算，熔断触发后会怎样？", true},
		// Shares only the document title's word ("Go"), or an API heading whose name is not asked about.
		{"Go 1.22", "Go, Backwards Compatibility, and GODEBUG", "What is a data race in Go and how should programs avoid it?", false},
		{"func (Value) CompareAndSwap", "Package sync/atomic", "What rules should programs follow when using Context values?", false},
		{"func (Reader) Read", "Package strings", "What does the io.Reader contract say about EOF?", false},
		// The title itself, a sentence-long line, or a heading mostly about something else.
		{"Package context", "Package context", "What happens when a Go context is canceled?", false},
		{"Default GODEBUG Values and the many ways a program may set them, described at length", "Go", "What is a GODEBUG setting?", false},
		{"第四阶段：对抗验证", "研究流程的五个阶段", "deepresearch 的研究流程有哪五个阶段？", false},
	}
	for _, tt := range tests {
		phrases, _ := splitPhrases(tt.question)
		var all []string
		for _, p := range phrases {
			all = append(all, p.Text)
		}
		if got := facetHeading(tt.head, tt.title, keyTerms(all, nil)); got != tt.want {
			t.Errorf("facetHeading(%q, %q) for %q = %v, want %v", tt.head, tt.title, tt.question, got, tt.want)
		}
	}
}

func TestSectionHeading(t *testing.T) {
	text := "# Package sync\n\nIntro line about maps.\n\n## type Map {#Map}\n\nMap is like a Go map.\nIt is safe.\n\n## type Mutex\n\nA Mutex is a lock.\n"
	keys := keyTerms([]string{"sync.Map", "plain Go map"}, nil)
	for url, want := range map[string]string{
		"file:///s.md#L7-L8":   "type Map",
		"file:///s.md#L3-L3":   "Package sync",
		"file:///s.md#L1-L12":  "type Map", // a chunk over three sections: the one that holds the question's words
		"file:///s.md#L12-L12": "type Mutex",
		"file:///s.md":         "",
	} {
		if got := sectionHeading(url, text, keys); got != want {
			t.Errorf("sectionHeading(%q) = %q, want %q", url, got, want)
		}
	}
}

// Against a real corpus index: the section the question's search lands in becomes a sub-question asked by its
// heading; a source that fails or cannot fetch adds none, and the plan is the same every time.
func TestPlannerAsksTheCorpusSections(t *testing.T) {
	dir := t.TempDir()
	// Sections long enough to be chunks of their own.
	filler := strings.Repeat("Other types are documented elsewhere in this package, with their own rules and examples.\n\n", 12)
	text := "# Package sync\n\nPackage sync provides basic synchronization primitives.\n\n" + filler + "## type Map\n\n" +
		"Map is like a Go map[any]any but is safe for concurrent use by multiple goroutines without additional locking.\n\n" +
		"The Map type is optimized for two common use cases: when the entry for a given key is only ever written once but read many times.\n\n" +
		filler + "## type Mutex\n\nA Mutex is a mutual exclusion lock. The zero value for a Mutex is an unlocked mutex.\n"
	if err := os.WriteFile(filepath.Join(dir, "sync.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := buildIndex(t, dir)
	q := "When should sync.Map be used instead of a plain Go map?"
	var first []string
	for range 2 {
		plan, err := New(Config{Searchers: []sources.Searcher{ix}}).Planner.Plan(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		var qs []string
		for _, sq := range plan.SubQuestions {
			qs = append(qs, sq.Question)
		}
		if !slices.Contains(qs, "What does Package sync say under \u201ctype Map\u201d?") {
			t.Errorf("no corpus facet among %q", qs)
		}
		if strings.Contains(strings.Join(qs, "\n"), "type Mutex") {
			t.Errorf("an unrelated section became a facet: %q", qs)
		}
		if first != nil && !slices.Equal(first, qs) {
			t.Errorf("plans differ: %q vs %q", first, qs)
		}
		first = qs
	}
	for _, src := range []sources.Searcher{failingSearcher{}, searchOnly{ix}} {
		plan, err := New(Config{Searchers: []sources.Searcher{src}}).Planner.Plan(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, sq := range plan.SubQuestions {
			if strings.Contains(sq.Question, "say under") {
				t.Errorf("%T: corpus facet %q from a source that cannot give one", src, sq.Question)
			}
		}
	}
}

type failingSearcher struct{}

func (failingSearcher) Name() string { return "broken" }
func (failingSearcher) Search(context.Context, string, int) ([]sources.Result, error) {
	return nil, errors.New("index unavailable")
}
func (failingSearcher) Fetch(context.Context, string) (*sources.Document, error) {
	return nil, errors.New("index unavailable")
}

// searchOnly hides the index's Fetch: a web search provider finds pages but does not fetch them itself.
type searchOnly struct{ s sources.Searcher }

func (s searchOnly) Name() string { return s.s.Name() }
func (s searchOnly) Search(ctx context.Context, q string, n int) ([]sources.Result, error) {
	return s.s.Search(ctx, q, n)
}

func TestNamesOne(t *testing.T) {
	tests := []struct {
		head, question string
		want           bool
	}{
		{"type Value", "What is the zero value of a sync.Mutex and may it be copied?", false},
		{"func Copy", "What is the zero value of a sync.Mutex and may it be copied?", false},
		{"type Mutex", "What is the zero value of a sync.Mutex and may it be copied?", true},
		{"Monotonic Clocks", "How does the time package use the monotonic clock?", true}, // names nothing: any heading
	}
	for _, tt := range tests {
		if got := namesOne(tt.head, nameTerms(tt.question)); got != tt.want {
			t.Errorf("namesOne(%q) for %q = %v, want %v", tt.head, tt.question, got, tt.want)
		}
	}
}

// The defined-term heuristic: a facet's topic is cut to the words a corpus heading names.
func TestCorpusTopic(t *testing.T) {
	heads := []string{"Select statements", "Iota", "Goroutine creation", "Initialization", "Defer statements", "The Go Memory Model"}
	for topic, want := range map[string]string{
		"select statement choose":     "select statement",
		"iota represent":              "iota",
		"initialization synchronized": "initialization",
		"goroutine created exits":     "goroutine created exits", // "Goroutine creation" is more than "goroutine"
		"deferred functions executed": "deferred functions executed",
		"Go memory model":             "Go memory model", // named whole
		"channel communication":       "channel communication",
		"上下文压缩":                       "上下文压缩",
	} {
		if got := corpusTopic(topic, heads); got != want {
			t.Errorf("corpusTopic(%q) = %q, want %q", topic, got, want)
		}
	}
}
