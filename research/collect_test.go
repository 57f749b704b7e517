package research_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/sources"
)

// partialSearcher answers like the searcher it wraps, and for one sub-question also reports a failed source.
type partialSearcher struct {
	research.Searcher
	sq string

	mu    sync.Mutex
	calls map[string]int
}

func (s *partialSearcher) Search(ctx context.Context, sq research.SubQuestion, queries []string) ([]research.Candidate, error) {
	s.mu.Lock()
	s.calls[sq.ID]++
	s.mu.Unlock()
	cs, err := s.Searcher.Search(ctx, sq, queries)
	if err == nil && sq.ID == s.sq {
		err = errors.New("search web for \"beta cost\": provider down")
	}
	return cs, err
}

func TestSearcherErrorKeepsItsCandidates(t *testing.T) {
	f := newFixture(t, testPages())
	cfg := f.config("What do we know about alpha, beta and gamma?")
	ps := &partialSearcher{Searcher: cfg.Roles.Searcher, sq: "q2", calls: map[string]int{}}
	cfg.Roles.Searcher = ps
	rep, err := research.Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, f.dir)
	if !strings.Contains(rep.Markdown, "beta cost is forty dollars") {
		t.Fatalf("the candidates the searcher found for q2 were dropped:\n%s", rep.Markdown)
	}
	if ps.calls["q2"] != 1 {
		t.Fatalf("q2 searched %d times; its answers should be kept, not retried away", ps.calls["q2"])
	}
	var logged bool
	log, err := research.LoadLog(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range log {
		if e.Stage == research.StageSearch && e.SubQuestion == "q2" && strings.Contains(e.Error, "provider down") {
			logged = true
		}
	}
	if !logged {
		t.Fatalf("the search error is not in the research log: %+v", log)
	}
	var emitted bool
	for _, e := range f.eventsOf(research.EventError) {
		emitted = emitted || (e.SubQuestion == "q2" && strings.Contains(e.Err, "provider down"))
	}
	if !emitted {
		t.Fatal("no error event for the failed source")
	}
	if rep.Stats.RoleErrors == 0 {
		t.Fatalf("stats do not count the error: %+v", rep.Stats)
	}
}

// recordingAnalyst records which sub-question read which URL.
type recordingAnalyst struct {
	research.Analyst
	mu    sync.Mutex
	reads map[string][]string // URL → sub-questions
}

func (a *recordingAnalyst) Analyze(ctx context.Context, sq research.SubQuestion, doc *sources.Document) ([]research.Evidence, error) {
	a.mu.Lock()
	a.reads[doc.URL] = append(a.reads[doc.URL], sq.ID)
	a.mu.Unlock()
	return a.Analyst.Analyze(ctx, sq, doc)
}

func TestSharedSourceIsReadForEachSubQuestionAndFetchedOnce(t *testing.T) {
	pages := append(testPages(), pageShared)
	f := newFixture(t, pages)
	cfg := f.config("What do we know about alpha, beta and gamma?")
	ra := &recordingAnalyst{Analyst: cfg.Roles.Analyst, reads: map[string][]string{}}
	cfg.Roles.Analyst = ra
	rep, err := research.Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, f.dir)
	shared := f.site.URL + pageShared.Path
	got := strings.Join(sortedCopy(ra.reads[shared]), ",")
	if got != "q1,q2" {
		t.Fatalf("the page both q1 and q2 found was read for %q, want q1,q2", got)
	}
	if n := f.site.Hits()[pageShared.Path]; n != 1 {
		t.Fatalf("the shared page was fetched %d times, want once", n)
	}
	if rep.Stats.SourcesRead != rep.Stats.Candidates {
		t.Fatalf("stats: %d reads of %d picked", rep.Stats.SourcesRead, rep.Stats.Candidates)
	}
}

func TestMaxCandidatesCountsReads(t *testing.T) {
	pages := append(testPages(), pageShared)
	f := newFixture(t, pages)
	cfg := f.config("What do we know about alpha, beta and gamma?")
	cfg.MaxCandidates = 4
	cfg.Rounds = -1
	ra := &recordingAnalyst{Analyst: cfg.Roles.Analyst, reads: map[string][]string{}}
	cfg.Roles.Analyst = ra
	rep, err := research.Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	for _, sqs := range ra.reads {
		reads += len(sqs)
	}
	if reads != 4 || rep.Stats.Candidates != 4 || rep.Stats.SourcesRead != 4 {
		t.Fatalf("%d analyst calls, %d picked, %d read; MaxCandidates is 4 reads", reads, rep.Stats.Candidates, rep.Stats.SourcesRead)
	}
	// Round-robin: every sub-question got a read before any got a second.
	per := map[string]int{}
	for _, sqs := range ra.reads {
		for _, sq := range sqs {
			per[sq]++
		}
	}
	if per["q1"] == 0 || per["q2"] == 0 || per["q3"] == 0 {
		t.Fatalf("reads per sub-question: %v", per)
	}
}

// pageShared is found by the searches of q1 ("alpha speed") and q2 ("beta cost").
var pageShared = researchtest.Page{Path: "/both/1", Title: "Alpha speed and beta cost compared",
	Body: "Alpha speed and beta cost are often compared by buyers. The beta cost per unit of alpha speed fell in 2025."}

func sortedCopy(xs []string) []string {
	out := append([]string(nil), xs...)
	slices.Sort(out)
	return out
}
