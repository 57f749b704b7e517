package research

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources"
)

// ---- ② search and ③ read ----

type target struct {
	sq      SubQuestion
	queries []string
}

func searchStep(round int, sq string) string { return fmt.Sprintf("search:r%d:%s", round, sq) }
func readStep(sq, u string) string           { return "read:" + sq + ":" + sources.NormalizeURL(u) }

func (r *runner) search(ctx context.Context, round int, t target) ([]Candidate, error) {
	var cands []Candidate
	name := searchStep(round, t.sq.ID)
	if ok, err := r.db.Step(ctx, name, &cands); err != nil || ok {
		return cands, storeErr(ctx, err)
	}
	var got []Candidate
	var partial error
	what := "search: " + strings.Join(t.queries, " | ")
	err := r.roleCall(ctx, StageSearch, round, t.sq.ID, what,
		func() error { return r.checkFuse(StageSearch) },
		func(ctx context.Context) error {
			cs, err := r.cfg.Roles.Searcher.Search(ctx, t.sq, t.queries)
			got, partial = cs, nil
			if err != nil && len(cs) > 0 && ctx.Err() == nil {
				// Some sources answered and some failed: the answers are kept, and not thrown away by a retry
				// that would repeat the searches that worked; the failure is reported below.
				partial = err
				return nil
			}
			return err
		})
	if err != nil {
		if errors.Is(err, errFuse) {
			r.emit(Event{Stage: StageSearch, Kind: EventSkip, Round: round, SubQuestion: t.sq.ID, Message: "not searched: cut short"})
		}
		return nil, err
	}
	if partial != nil {
		r.logf(ctx, StageSearch, round, t.sq.ID, "partial error",
			fmt.Sprintf("%s: kept the %d candidates found; some sources failed", what, len(got)), partial)
		r.emit(Event{Stage: StageSearch, Kind: EventError, Round: round, SubQuestion: t.sq.ID,
			Message: fmt.Sprintf("%s (kept %d candidates)", what, len(got)), Err: partial.Error()})
	}
	for _, c := range got {
		if err := state.CheckSource(c.URL); err != nil {
			r.logf(ctx, StageSearch, round, t.sq.ID, "refused", "search hit", err)
			continue
		}
		c.SubQuestion = t.sq.ID
		cands = append(cands, c)
	}
	if err := r.db.MarkStep(ctx, name, cands); err != nil {
		return nil, storeErr(ctx, err)
	}
	r.logf(ctx, StageSearch, round, t.sq.ID, "searched", fmt.Sprintf("%d hits for %s", len(cands), strings.Join(t.queries, " | ")), nil)
	r.update(func(p *Progress) { p.Searches++ })
	r.emit(Event{Stage: StageSearch, Kind: EventSearch, Round: round, SubQuestion: t.sq.ID, Count: len(cands),
		Message: strings.Join(t.queries, " | ")})
	return cands, nil
}

// collect is the search collector. It deduplicates each sub-question's hits by normalised URL, ranks them by
// reciprocal-rank fusion over its queries (a source found by several queries ranks higher), drops the sources
// already read for that sub-question, and picks at most MaxCandidates reads round-robin across sub-questions,
// so every sub-question gets sources. A read is a (sub-question, source) pair: a source several sub-questions
// found is analysed for each of them — the passage that best answers the question is read for the question,
// even when a facet found it too — and fetched once (see document).
func (r *runner) collect(ctx context.Context, round int, targets []target, found [][]Candidate) ([]Candidate, error) {
	name := fmt.Sprintf("pick:r%d", round)
	var picked []Candidate
	if ok, err := r.db.Step(ctx, name, &picked); err != nil {
		return nil, err
	} else if ok {
		r.update(func(p *Progress) { p.Candidates += len(picked) })
		return picked, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	type scored struct {
		c     Candidate
		score float64
	}
	// What was read or failed for good before, looked up once for all the candidates.
	done := map[string]bool{}
	for _, prefix := range []string{"read:", "unreadable:"} {
		names, err := r.db.StepNames(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			done[n] = true
		}
	}
	perSQ := make([][]scored, len(targets))
	unique := map[string]bool{}
	for i, cs := range found {
		byURL := map[string]*scored{}
		var order []string
		rank := map[string]int{}
		for _, c := range cs {
			q := c.Query
			rank[q]++
			n := sources.NormalizeURL(c.URL)
			s, ok := byURL[n]
			if !ok {
				s = &scored{c: c}
				byURL[n] = s
				order = append(order, n)
			}
			s.score += 1 / (60 + float64(rank[q]))
		}
		for _, n := range order {
			s := byURL[n]
			if done[readStep(targets[i].sq.ID, s.c.URL)] {
				continue
			}
			if done[unreadableStep(n)] {
				continue // its fetch or its reading failed for good earlier in the run
			}
			unique[n] = true
			perSQ[i] = append(perSQ[i], *s)
		}
		sort.SliceStable(perSQ[i], func(a, b int) bool { return perSQ[i][a].score > perSQ[i][b].score })
		if c := r.depth.Candidates; c > 0 && len(perSQ[i]) > c {
			perSQ[i] = perSQ[i][:c] // the depth's candidates per sub-question, best first
		}
	}
	sourcesPicked := map[string]bool{}
	for depth := 0; len(picked) < r.rc.MaxCandidates; depth++ {
		any := false
		for i := range perSQ {
			if depth >= len(perSQ[i]) || len(picked) >= r.rc.MaxCandidates {
				continue
			}
			any = true
			picked = append(picked, perSQ[i][depth].c)
			sourcesPicked[sources.NormalizeURL(perSQ[i][depth].c.URL)] = true
		}
		if !any {
			break
		}
	}
	if err := r.db.MarkStep(ctx, name, picked); err != nil {
		return nil, err
	}
	total := 0
	for _, cs := range found {
		total += len(cs)
	}
	r.logf(ctx, StageSearch, round, "", "collected", fmt.Sprintf("%d hits, %d unique sources, %d reads picked of %d sources (max %d reads)",
		total, len(unique), len(picked), len(sourcesPicked), r.rc.MaxCandidates), nil)
	r.update(func(p *Progress) { p.Candidates += len(picked) })
	r.emit(Event{Stage: StageSearch, Kind: EventCandidates, Round: round, Count: len(picked)})
	return picked, nil
}

// document returns the text read for url: from this run's folder if it was fetched before, else from the
// Fetcher, stored in the folder before it is used. Each source is fetched once per run, also when several
// sub-questions read it at the same time; a failed fetch is remembered (the reads that wanted it report it),
// except when it failed because its context ended.

// turnstile lets parallel reads enter the pool one at a time, in candidate order: wait(i) returns once every
// read before i is done (admitted, skipped or failed).
type turnstile struct {
	gates []chan struct{}
}

func newTurnstile(n int) *turnstile {
	t := &turnstile{gates: make([]chan struct{}, n)}
	for i := range t.gates {
		t.gates[i] = make(chan struct{})
	}
	return t
}

// done marks read i finished; it is safe to call more than once.
func (t *turnstile) done(i int) {
	select {
	case <-t.gates[i]:
	default:
		close(t.gates[i])
	}
}

// wait blocks until reads 0..i-1 are done or ctx ends.
func (t *turnstile) wait(ctx context.Context, i int) error {
	for j := 0; j < i; j++ {
		select {
		case <-t.gates[j]:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
