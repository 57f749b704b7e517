package lexical

import (
	"math"
	"sort"
	"strings"
)

// BM25 scores documents against queries with Okapi BM25 (k1 = 1.2, b = 0.75). Build it once over a fixed set of
// tokenised documents; it is then safe for concurrent reads.
type BM25 struct {
	docs  []map[string]int
	lens  []int
	avg   float64
	df    map[string]int
	k1, b float64
}

// NewBM25 indexes tokenised documents.
func NewBM25(docs [][]string) *BM25 {
	m := &BM25{df: map[string]int{}, k1: 1.2, b: 0.75}
	total := 0
	for _, d := range docs {
		tf := map[string]int{}
		for _, t := range d {
			tf[t]++
		}
		for t := range tf {
			m.df[t]++
		}
		m.docs = append(m.docs, tf)
		m.lens = append(m.lens, len(d))
		total += len(d)
	}
	if len(docs) > 0 {
		m.avg = float64(total) / float64(len(docs))
	}
	if m.avg == 0 {
		m.avg = 1
	}
	return m
}

// Len is the number of documents.
func (m *BM25) Len() int { return len(m.docs) }

// Score is document i's BM25 score for the query terms (duplicates in the query count once).
func (m *BM25) Score(query []string, i int) float64 {
	seen := map[string]bool{}
	n := float64(len(m.docs))
	s := 0.0
	for _, q := range query {
		if seen[q] {
			continue
		}
		seen[q] = true
		f := float64(m.docs[i][q])
		if f == 0 {
			continue
		}
		df := float64(m.df[q])
		s += IDF(df, n) * f * (m.k1 + 1) / (f + m.k1*(1-m.b+m.b*float64(m.lens[i])/m.avg))
	}
	return s
}

// Scores returns every document's score for the query.
func (m *BM25) Scores(query []string) []float64 {
	out := make([]float64, len(m.docs))
	for i := range m.docs {
		out[i] = m.Score(query, i)
	}
	return out
}

// Ranked is a document index with its score.
type Ranked struct {
	Index int
	Score float64
}

// Top returns up to k documents with a positive score, best first (ties by index, so results are stable).
func Top(scores []float64, k int) []Ranked {
	var r []Ranked
	for i, s := range scores {
		if s > 0 {
			r = append(r, Ranked{i, s})
		}
	}
	sort.SliceStable(r, func(a, b int) bool { return r[a].Score > r[b].Score })
	if k > 0 && len(r) > k {
		r = r[:k]
	}
	return r
}

// MMR picks up to k items by maximal marginal relevance: each pick maximises
// lambda·relevance − (1−lambda)·(max similarity to what was already picked), trading relevance for diversity.
// Relevance is normalised to [0,1]; items with zero relevance are never picked.
func MMR(relevance []float64, sim func(i, j int) float64, k int, lambda float64) []int {
	maxRel := 0.0
	for _, r := range relevance {
		maxRel = math.Max(maxRel, r)
	}
	if maxRel == 0 {
		return nil
	}
	var picked []int
	used := make([]bool, len(relevance))
	for len(picked) < k {
		best, bestScore := -1, math.Inf(-1)
		for i, r := range relevance {
			if used[i] || r <= 0 {
				continue
			}
			red := 0.0
			for _, j := range picked {
				red = math.Max(red, sim(i, j))
			}
			s := lambda*(r/maxRel) - (1-lambda)*red
			if s > bestScore {
				best, bestScore = i, s
			}
		}
		if best < 0 {
			break
		}
		used[best] = true
		picked = append(picked, best)
	}
	return picked
}

// Jaccard is the Jaccard similarity of two token sets.
func Jaccard(a, b []string) float64 {
	return NewTokenSet(a).Jaccard(NewTokenSet(b))
}

// TokenSet is a set of tokens, built once for a text compared with many others.
type TokenSet map[string]struct{}

// NewTokenSet returns the set of toks.
func NewTokenSet(toks []string) TokenSet {
	s := make(TokenSet, len(toks))
	for _, t := range toks {
		s[t] = struct{}{}
	}
	return s
}

// Jaccard is the Jaccard similarity of s and o: 1 for two empty sets.
func (s TokenSet) Jaccard(o TokenSet) float64 {
	if len(s) == 0 && len(o) == 0 {
		return 1
	}
	small, large := s, o
	if len(small) > len(large) {
		small, large = large, small
	}
	inter := 0
	for t := range small {
		if _, ok := large[t]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(s)+len(o)-inter)
}

// NormalizeSpace collapses every run of white space to one space and trims the ends; quotes are compared in this
// form so that line wrapping in a source does not break grounding.
func NormalizeSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// NearDuplicate reports whether two texts say the same thing: identical after normalisation, or token-set
// Jaccard similarity at or above threshold (0.8 is a good default).
func NearDuplicate(a, b string, threshold float64) bool {
	na, nb := strings.ToLower(NormalizeSpace(a)), strings.ToLower(NormalizeSpace(b))
	if na == nb {
		return true
	}
	return Jaccard(Tokenize(a), Tokenize(b)) >= threshold
}

// IDF is BM25's inverse document frequency of a term that df of n documents use: ln(1 + (n − df + 0.5)/(df + 0.5)),
// never negative, highest (ln(1 + 2n + 1)) for a term no document uses.
func IDF(df, n float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}
