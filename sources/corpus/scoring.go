package corpus

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
)

// Scoring statistics that do not depend on how the index's segments were merged.
//
// BM25 needs each field's average length. Bleve takes it from the field's "cardinality", the sum over the
// index's segments of the distinct terms each segment's dictionary holds: a term found in two segments counts
// twice. How the chunks fall into segments depends on when the background merger ran while the generation was
// written, so two builds of the same folder — or one build on a busy machine — could score the same chunk
// differently, and a search's ties of content could come out in another order (the same question got two
// different reports). Every search of a generation therefore scores with statistics counted once over its
// merged dictionary: the distinct terms of each field, what one merged segment would report, whatever the
// layout on disk.

// searchedFields are the chunk fields searches score.
var searchedFields = [...]string{"text", "title"}

// scoringMemo holds a generation's scoring statistics once counted; the generation never changes.
type scoringMemo struct {
	mu    sync.Mutex
	stats *search.BM25Stats
}

// scoring returns ctx carrying the generation's scoring statistics, which Bleve's searchers and
// openPostingsQuery read from it (see bm25Metrics).
func (g *generation) scoring(ctx context.Context) (context.Context, error) {
	st, err := g.scoringStats(ctx)
	if err != nil {
		return nil, fmt.Errorf("corpus scoring statistics: %w", err)
	}
	return context.WithValue(ctx, search.BM25StatsKey, st), nil
}

// scoringStats are the generation's scoring statistics: those counted when it was written, else (a generation
// written before they were kept, or whose info does not agree with its index) counted once now.
func (g *generation) scoringStats(ctx context.Context) (*search.BM25Stats, error) {
	if st := g.info.Scoring; st != nil && g.agrees(st) {
		return st, nil
	}
	g.scores.mu.Lock()
	defer g.scores.mu.Unlock()
	if g.scores.stats != nil {
		return g.scores.stats, nil
	}
	st, err := indexScoringStats(ctx, g.idx)
	if err != nil {
		return nil, err
	}
	g.scores.stats = st
	return st, nil
}

// agrees reports statistics read from the generation's info that can be its own: its chunk count, and a count for
// every searched field, none negative. (A count of distinct terms cannot be checked without counting them.)
func (g *generation) agrees(st *search.BM25Stats) bool {
	n, err := g.idx.DocCount()
	if err != nil || st.DocCount != float64(n) {
		return false
	}
	return !slices.ContainsFunc(searchedFields[:], func(f string) bool { c, ok := st.FieldCardinality[f]; return !ok || c < 0 })
}

// indexScoringStats counts the scoring statistics of a Bleve index of chunks: its documents and the distinct terms
// of each searched field over all its segments.
func indexScoringStats(ctx context.Context, idx bleve.Index) (*search.BM25Stats, error) {
	r, err := openReader(idx)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	n, err := r.DocCount()
	if err != nil {
		return nil, err
	}
	st := &search.BM25Stats{DocCount: float64(n), FieldCardinality: make(map[string]int, len(searchedFields))}
	for _, f := range searchedFields {
		d, err := r.FieldDict(f)
		if err != nil {
			return nil, err
		}
		terms := 0
		for {
			e, err := d.Next()
			if err != nil {
				d.Close()
				return nil, err
			}
			if e == nil {
				break
			}
			terms++
			if terms%4096 == 0 && ctx.Err() != nil {
				d.Close()
				return nil, ctx.Err()
			}
		}
		if err := d.Close(); err != nil {
			return nil, err
		}
		st.FieldCardinality[f] = terms
	}
	return st, nil
}

// bm25Metrics are a field's document count and average length as Bleve's term searchers take them from the
// statistics ctx carries (see scoring); a search without them is refused, not scored on another scale.
func bm25Metrics(ctx context.Context, field string) (docTotal uint64, avg float64, err error) {
	st, ok := ctx.Value(search.BM25StatsKey).(*search.BM25Stats)
	if !ok {
		return 0, 0, errors.New("corpus: a search without the generation's scoring statistics")
	}
	card, ok := st.FieldCardinality[field]
	if !ok {
		return 0, 0, fmt.Errorf("corpus: no scoring statistics for field %s", field)
	}
	docTotal = uint64(st.DocCount)
	if docTotal != 0 || card != 0 {
		avg = math.Ceil(float64(card) / float64(docTotal))
	}
	return docTotal, avg, nil
}
