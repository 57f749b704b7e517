package extractive

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

// Searcher runs a sub-question's queries against every configured source and fuses the rankings.
type Searcher struct{ cfg Config }

// rrfK is the reciprocal-rank-fusion constant; 60 is the value of the original paper and works without tuning.
const rrfK = 60

// Search implements research.Searcher. Results of all queries and sources are merged by normalised URL and
// ranked by reciprocal rank fusion, so a passage many query variants find comes first whatever the scale of each
// source's scores. A source that fails is reported: its error is returned, joined with the others', alongside
// the candidates the remaining sources found (nil candidates only when every search failed).
func (s *Searcher) Search(ctx context.Context, sq research.SubQuestion, queries []string) ([]research.Candidate, error) {
	if len(s.cfg.Searchers) == 0 {
		return nil, errors.New("extractive search: no sources configured (give a corpus or a web provider)")
	}
	queries = dedupe(queries)
	if len(queries) == 0 {
		queries = dedupe(append([]string{sq.Question}, sq.Queries...))
	}
	type hit struct {
		query   string
		src, qi int
		rank    int
		res     sources.Result
	}
	var (
		mu   sync.Mutex
		hits []hit
		errs []error
		ok   int
		wg   sync.WaitGroup
	)
	for si, src := range s.cfg.Searchers {
		for qi, q := range queries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rs, err := src.Search(ctx, q, s.cfg.PerQuery)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("search %s for %q: %w", src.Name(), q, err))
					return
				}
				ok++
				for i, r := range rs {
					hits = append(hits, hit{query: q, src: si, qi: qi, rank: i, res: r})
				}
			}()
		}
	}
	wg.Wait()
	// Fuse in a fixed order (source, query, rank), not the order the searches finished in: the first hit of a URL
	// names its candidate, and float sums depend on their order.
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if a.src != b.src {
			return a.src < b.src
		}
		if a.qi != b.qi {
			return a.qi < b.qi
		}
		return a.rank < b.rank
	})
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	err := errors.Join(errs...)
	if ok == 0 {
		return nil, err
	}

	type fused struct {
		c      research.Candidate
		score  float64
		best   int
		firstQ int
	}
	qIndex := map[string]int{}
	for i, q := range queries {
		qIndex[q] = i
	}
	byURL := map[string]*fused{}
	var order []string
	for _, h := range hits {
		key := sources.NormalizeURL(h.res.URL)
		f := byURL[key]
		if f == nil {
			f = &fused{c: research.Candidate{Result: h.res, SubQuestion: sq.ID, Query: h.query}, best: h.rank, firstQ: qIndex[h.query]}
			byURL[key] = f
			order = append(order, key)
		}
		f.score += 1 / float64(rrfK+h.rank+1)
		if h.rank < f.best || (h.rank == f.best && qIndex[h.query] < f.firstQ) {
			f.best, f.firstQ = h.rank, qIndex[h.query]
			f.c.Query = h.query
		}
	}
	out := make([]*fused, 0, len(order))
	for _, k := range order {
		out = append(out, byURL[k])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].c.URL < out[j].c.URL
	})
	if len(out) > s.cfg.MaxCandidates {
		out = out[:s.cfg.MaxCandidates]
	}
	cands := make([]research.Candidate, len(out))
	for i, f := range out {
		cands[i] = f.c
		cands[i].Score = f.score
	}
	return cands, err
}
