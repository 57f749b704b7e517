package corpus

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// Ranking without a phrase pass over the whole index.
//
// The ranking query (rankQuery.full) is a disjunction of three clauses: the
// query's words in the text, the words as a phrase (boost 2) and the words in
// the title (boost 1.5). Checking a phrase needs every term's positions in
// every chunk holding all the words, which made the phrase clause most of a
// search's cost on a large index. So a search runs in two passes over the
// same read-only snapshot:
//
//  1. candidates: the disjunction of the words and title clauses alone
//     (rankQuery.cheap), best maxCandidates chunks;
//  2. the full query, evaluated by Bleve's own searchers but through a
//     reader whose postings hold only the candidates (candidateReader).
//     Term statistics (document frequency, document count, field length)
//     are the whole index's, so each candidate gets the score the full
//     query gives it over the whole index (bit for bit, but for queries of
//     ten or more words: Bleve then adds the words' scores in an order that
//     depends on the documents visited before, which can change the last
//     bit).
//
// Pass 2 starts with the best firstStage candidates. A chunk not rescored
// can still outrank a rescored one only by matching the phrase, and by at
// most phraseBound of its pass-1 score; pass 2 goes on with every candidate
// whose bound reaches the last hit the caller takes, and the ranking is
// certified when no chunk outside can reach it. When that needs more than
// the candidates pass 1 kept, the full query runs over the whole index
// (rankFull). Either way the answer is rankFull's (TestTwoPassRankingEqualsFullQuery).

// Pass 1 keeps the best maxCandidates chunks; pass 2 rescores the first
// firstStage of them, then as many more as could still reach the hits the
// caller takes.
const (
	firstStage    = 200
	maxCandidates = 4096
)

// depth overrides firstStage and maxCandidates (zero: the constants).
type depth struct{ first, most int }

// hit is one scored chunk: its index-internal id and, once resolved, its
// chunk id.
type hit struct {
	iid   index.IndexInternalID
	id    string
	score float64
}

// candidateReader is an index reader whose term postings hold only the
// candidate documents; everything else (document count, field cardinality,
// each term's document frequency) is the whole index's.
type candidateReader struct {
	index.IndexReader
	ids []index.IndexInternalID // ascending
}

func (r candidateReader) TermFieldReader(ctx context.Context, term []byte, field string, includeFreq, includeNorm, includeTermVectors bool) (index.TermFieldReader, error) {
	tfr, err := r.IndexReader.TermFieldReader(ctx, term, field, includeFreq, includeNorm, includeTermVectors)
	if err != nil {
		return nil, err
	}
	return &candidateTFR{inner: tfr, ids: r.ids}, nil
}

// FieldCardinality keeps BM25's average field length the whole index's.
func (r candidateReader) FieldCardinality(field string) (int, error) {
	b, ok := r.IndexReader.(index.BM25Reader)
	if !ok {
		return 0, errors.New("the index reader reports no field cardinality")
	}
	return b.FieldCardinality(field)
}

// candidateTFR visits the postings of a term at the candidates only.
type candidateTFR struct {
	inner index.TermFieldReader
	ids   []index.IndexInternalID
	i     int // next candidate to look at
}

func (t *candidateTFR) Next(pre *index.TermFieldDoc) (*index.TermFieldDoc, error) {
	for t.i < len(t.ids) {
		d, err := t.inner.Advance(t.ids[t.i], pre)
		if err != nil || d == nil {
			t.i = len(t.ids)
			return nil, err
		}
		for t.i < len(t.ids) && bytes.Compare(t.ids[t.i], d.ID) < 0 {
			t.i++
		}
		if t.i < len(t.ids) && bytes.Equal(t.ids[t.i], d.ID) {
			t.i++
			return d, nil
		}
	}
	return nil, nil
}

func (t *candidateTFR) Advance(id index.IndexInternalID, pre *index.TermFieldDoc) (*index.TermFieldDoc, error) {
	t.i, _ = slices.BinarySearchFunc(t.ids, id, func(a, b index.IndexInternalID) int { return bytes.Compare(a, b) })
	return t.Next(pre)
}

func (t *candidateTFR) Count() uint64 { return t.inner.Count() }
func (t *candidateTFR) Close() error  { return t.inner.Close() }
func (t *candidateTFR) Size() int     { return t.inner.Size() }

// scoreCandidates evaluates q over the candidates ids (ascending) with
// Bleve's searchers and the whole index's statistics, and returns the hits
// in index order and the query's weight (its query norm is 1/√weight).
func scoreCandidates(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, q query.Query, ids []index.IndexInternalID) ([]hit, float64, error) {
	cr := candidateReader{IndexReader: r, ids: ids}
	s, err := q.Searcher(withBM25(ctx), cr, m, search.SearcherOptions{})
	if err != nil {
		return nil, 0, err
	}
	defer s.Close()
	sctx := &search.SearchContext{
		DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize()+1, 0),
		IndexReader:       cr,
	}
	var out []hit
	for {
		dm, err := s.Next(sctx)
		if err != nil {
			return nil, 0, err
		}
		if dm == nil {
			break
		}
		out = append(out, hit{iid: slices.Clone(dm.IndexInternalID), score: dm.Score})
		sctx.DocumentMatchPool.Put(dm)
	}
	return out, s.Weight(), nil
}

// topHits runs q over r and returns its best k hits, best first, ties in
// index order (as Bleve's collector orders them), and how many chunks match.
// Chunk ids are not resolved.
func topHits(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, q query.Query, k int) ([]hit, int, float64, error) {
	s, err := q.Searcher(withBM25(ctx), r, m, search.SearcherOptions{})
	if err != nil {
		return nil, 0, 0, err
	}
	defer s.Close()
	sctx := &search.SearchContext{
		DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize()+1, 0),
		IndexReader:       r,
	}
	// h is a min-heap of the best k so far: worst (lowest score, latest) on top.
	var h []hit
	worse := func(a, b hit) bool { return a.score < b.score || a.score == b.score && bytes.Compare(a.iid, b.iid) > 0 }
	total := 0
	for {
		if total%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, 0, err
			}
		}
		dm, err := s.Next(sctx)
		if err != nil {
			return nil, 0, 0, err
		}
		if dm == nil {
			break
		}
		total++
		c := hit{score: dm.Score}
		if len(h) < k {
			c.iid = slices.Clone(dm.IndexInternalID)
			h = append(h, c)
			for i := len(h) - 1; i > 0; { // sift up
				p := (i - 1) / 2
				if !worse(h[i], h[p]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
		} else if c.iid = dm.IndexInternalID; worse(h[0], c) {
			c.iid = append(h[0].iid[:0], dm.IndexInternalID...)
			h[0] = c
			for i := 0; ; { // sift down
				l, min := 2*i+1, i
				if l < len(h) && worse(h[l], h[min]) {
					min = l
				}
				if l+1 < len(h) && worse(h[l+1], h[min]) {
					min = l + 1
				}
				if min == i {
					break
				}
				h[i], h[min] = h[min], h[i]
				i = min
			}
		}
		sctx.DocumentMatchPool.Put(dm)
	}
	sortHits(h)
	return h, total, s.Weight(), nil
}

// sortHits orders hits best first, ties in index order.
func sortHits(h []hit) {
	slices.SortFunc(h, func(a, b hit) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return bytes.Compare(a.iid, b.iid)
	})
}

// breakTies orders each run of hits with equal scores (sorted by score) by chunk id, the file URL with its line
// anchor. Internal document numbers depend on the order files entered the index — parallel extraction finishes
// in any order — so two builds of the same folder would otherwise rank tied chunks differently, and the same
// question would get a different report.
func breakTies(r index.IndexReader, h []hit) error {
	for i := 0; i < len(h); {
		j := i + 1
		for j < len(h) && h[j].score == h[i].score {
			j++
		}
		if j-i > 1 {
			for k := i; k < j; k++ {
				if h[k].id != "" {
					continue
				}
				id, err := r.ExternalID(h[k].iid)
				if err != nil {
					return err
				}
				h[k].id = id
			}
			slices.SortFunc(h[i:j], func(a, b hit) int { return strings.Compare(a.id, b.id) })
		}
		i = j
	}
	return nil
}

func withBM25(ctx context.Context) context.Context {
	return context.WithValue(ctx, search.GetScoringModelCallbackKey,
		search.GetScoringModelCallbackFn(func() string { return index.BM25Scoring }))
}

// phraseBound returns, for a query whose pass 1 has weight cheapWeight,
// the highest score (in the full query's units, for its weight
// fullWeight) that a chunk with pass-1 score c can have under the full
// query, with a small margin for rounding.
//
// In units without the query norm (score × √weight), let C be a chunk's
// pass-1 score, w and t its words and title clauses' scores and p its
// phrase clause's (Bleve's disjunction multiplies the sum of the matching
// clauses by the fraction that match). A chunk without the phrase scores
// (w+t)·m/3 = ⅔·C under the full query. A phrase match holds every word,
// so p = 2w, and:
//
//   - without a title match, C = w/2 and the full score is 2w = p;
//   - with one, C = w+t and the full score is 3w+t = C + p.
//
// p is also bounded by the index: a term's BM25 score is below
// k1 × boost × IDF², and the phrase's terms are the words' terms, so
// p < k1 × 2 × ΣIDF² = k1 × (fullWeight − cheapWeight) / 2, which is small
// for phrases of common words. Hence max(min(4C, P), C + min(2C, P)).
func phraseBound(cheapWeight float64) func(c, fullWeight float64) float64 {
	return func(c, fullWeight float64) float64 {
		if cheapWeight <= 0 || fullWeight < cheapWeight {
			return math.Inf(1)
		}
		c *= math.Sqrt(cheapWeight)
		p := search.BM25_k1 * (fullWeight - cheapWeight) / 2
		return max(min(4*c, p), c+min(2*c, p)) / math.Sqrt(fullWeight) * (1 + 1e-9)
	}
}
