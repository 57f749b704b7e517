package extractive

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

// fakeSearcher answers each query from a fixed table.
type fakeSearcher struct {
	name string
	hits map[string][]string // query → URLs, best first
	err  error
}

func (f fakeSearcher) Name() string { return f.name }

func (f fakeSearcher) Search(_ context.Context, q string, limit int) ([]sources.Result, error) {
	if f.err != nil {
		return nil, f.err
	}
	var out []sources.Result
	for _, u := range f.hits[q] {
		out = append(out, sources.Result{URL: u, Title: u, Provider: f.name})
	}
	return out, nil
}

func TestSearcherFusesQueriesAndDedupes(t *testing.T) {
	s := New(Config{Searchers: []sources.Searcher{fakeSearcher{name: "corpus", hits: map[string][]string{
		"a": {"https://x.test/one", "https://x.test/both"},
		"b": {"https://X.test/both/?utm_source=feed", "https://x.test/two"},
	}}}}).Searcher
	sq := research.SubQuestion{ID: "q2", Question: "?"}
	cands, err := s.Search(t.Context(), sq, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 3 {
		t.Fatalf("got %d candidates, want 3 (the two forms of …/both merged): %+v", len(cands), cands)
	}
	if sources.NormalizeURL(cands[0].URL) != "https://x.test/both" {
		t.Errorf("first = %s, want the page both queries found", cands[0].URL)
	}
	for _, c := range cands {
		if c.SubQuestion != "q2" || c.Query == "" {
			t.Errorf("candidate %+v lacks its sub-question or query", c)
		}
	}
}

func TestSearcherReportsFailingSources(t *testing.T) {
	good := fakeSearcher{name: "corpus", hits: map[string][]string{"q": {"file:///a.md#L1-L3"}}}
	bad := fakeSearcher{name: "web", err: errors.New("rate limited")}
	s := New(Config{Searchers: []sources.Searcher{good, bad}}).Searcher
	cands, err := s.Search(t.Context(), research.SubQuestion{ID: "q1"}, []string{"q"})
	if err == nil || !strings.Contains(err.Error(), "web") || !strings.Contains(err.Error(), "rate limited") {
		t.Errorf("err = %v, want the web source's failure", err)
	}
	if len(cands) != 1 {
		t.Errorf("got %d candidates, want the corpus hit kept", len(cands))
	}
	s = New(Config{Searchers: []sources.Searcher{bad}}).Searcher
	if cands, err := s.Search(t.Context(), research.SubQuestion{ID: "q1"}, []string{"q"}); err == nil || cands != nil {
		t.Errorf("all sources failing: cands=%v err=%v", cands, err)
	}
	if _, err := New(Config{}).Searcher.Search(t.Context(), research.SubQuestion{ID: "q1"}, []string{"q"}); err == nil {
		t.Error("no sources configured: want an error")
	}
}
