package corpus

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// candidateReader lets Bleve's own searchers score a few chunks of a large
// index as they would score them over the whole of it (see rank.go).

// hit is one scored chunk: its index-internal id and, once resolved, its
// chunk id.
type hit struct {
	iid   index.IndexInternalID
	id    string
	score float64
}

// candidateReader is an index reader whose term postings hold only the
// candidate documents; everything else (document count, each term's
// document frequency) is the whole index's, and the average field length
// comes with the generation's scoring statistics in the context (see
// scoring.go).
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
// in index order and the query's weight. norm, when not zero, replaces the
// query's own norm (1/√weight): q's scores as a clause of a larger query.
func scoreCandidates(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, q query.Query, ids []index.IndexInternalID, norm float64) ([]hit, float64, error) {
	cr := candidateReader{IndexReader: r, ids: ids}
	s, err := q.Searcher(withBM25(ctx), cr, m, search.SearcherOptions{})
	if err != nil {
		return nil, 0, err
	}
	defer s.Close()
	weight := s.Weight()
	if norm != 0 {
		s.SetQueryNorm(norm)
	}
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
	return out, weight, nil
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
