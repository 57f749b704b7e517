package corpus

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// Ranking by walking the postings.
//
// The ranking query (rankQuery.full) is a disjunction of three clauses: the
// query's words in the text, the words as a phrase (boost 2) and the words
// in the title (boost 1.5); each disjunction multiplies the sum of its
// matching clauses by the fraction that match. Run through Bleve's
// searchers over the whole index it costs most of a search on a large
// corpus: every posting of every word becomes a scored document match, and
// the phrase clause reads the positions of every chunk that holds all the
// words.
//
// A search instead walks the words' postings itself (postingsRank) and
// computes each chunk's score with Bleve's own BM25 arithmetic, the same
// operations in the same order, so the scores are Bleve's bit for bit
// (TestRankScoresAreBleves):
//
//   - The words and title clauses come straight from the postings.
//   - The phrase clause can only match a chunk that holds a term of every
//     position of the phrase. For such a chunk whose score could still
//     matter, the words' positions are read and checked for the phrase.
//     Where they form it, Bleve's phrase searcher scores the phrase clause
//     on those chunks only (over candidateReader, see candidates.go); the few
//     found are then scored exactly. Everywhere else the phrase clause is
//     known not to match.
//   - Top-k skipping (MaxScore): a term's score is below k1 × idf × its
//     query weight whatever the chunk, so once the best k chunks are known
//     the commonest words, whose bounds add up to less than the k-th score,
//     cannot lift a chunk into the best k on their own: only chunks holding
//     another word are visited, and the common words' postings are skipped
//     to them. A chunk is also passed over when the words it holds cannot
//     reach the k-th score.
//
// The k kept are the hits a search looks at (rankQuery.want), so every
// chunk outside them scores at most the k-th; when the last hit the results
// take scores more than that, the ranking is the full query's. Otherwise
// (a tie at the boundary, or a query of more words than Bleve adds up in
// query order) the full query runs through Bleve (rankFull).

// depth overrides how many chunks the postings pass keeps (zero: as many
// as the search looks at) and how long its list of chunks that may form
// the phrase grows before what fell below the k-th score is dropped (zero:
// 4,096). Tests lower them to make the ranking fall back and the list
// shrink.
type depth struct{ keep, compact int }

// rankTerm is one distinct term of the query in one field, and where its
// postings stand.
type rankTerm struct {
	term  []byte
	tfr   index.TermFieldReader
	tfd   index.TermFieldDoc
	at    uint64  // document number of the current posting; noDoc when exhausted
	score float64 // the term's score at the current posting, once computed
	ready bool    // score is computed for at

	idf, weight, avg float64 // as Bleve's TermQueryScorer has them
	qw               float64 // query weight: boost × idf × query norm
	clauses          int     // clauses of the query that are this term
	ub               float64 // a chunk gets less than this from this term's clauses
	field            int     // 0 text, 1 title

	// The term's positions, for the phrase check (text terms only).
	vec   index.TermFieldReader
	vecAt uint64
	vtfd  index.TermFieldDoc
}

const noDoc = math.MaxUint64

// errDocID: the index's internal document ids are not the 8-byte numbers
// this ranking walks (an index kind it was not written for); the full
// query ranks instead.
var errDocID = errors.New("corpus: unexpected internal document id")

func docNum(d *index.TermFieldDoc) (uint64, error) {
	if d == nil {
		return noDoc, nil
	}
	if len(d.ID) != 8 {
		return 0, fmt.Errorf("%w: %d bytes", errDocID, len(d.ID))
	}
	return binary.BigEndian.Uint64(d.ID), nil
}

func internalID(n uint64) index.IndexInternalID { return binary.BigEndian.AppendUint64(nil, n) }

func (t *rankTerm) next() (err error) {
	d, err := t.tfr.Next(&t.tfd)
	if err != nil {
		return err
	}
	t.ready = false
	t.at, err = docNum(d)
	return err
}

// advance moves to the first posting at or after document n.
func (t *rankTerm) advance(n uint64) (err error) {
	if t.at >= n {
		return nil
	}
	d, err := t.tfr.Advance(internalID(n), &t.tfd)
	if err != nil {
		return err
	}
	t.ready = false
	t.at, err = docNum(d)
	return err
}

// value is the term's score at its current posting: Bleve's
// TermQueryScorer, the same operations in the same order.
func (t *rankTerm) value() float64 {
	if t.ready {
		return t.score
	}
	tf := math.Sqrt(float64(t.tfd.Freq))
	var s float64
	if t.avg > 0 {
		fieldLength := 1 / (t.tfd.Norm * t.tfd.Norm)
		s = t.idf * (tf * search.BM25_k1) /
			(tf + search.BM25_k1*(1-search.BM25_b+(search.BM25_b*fieldLength/t.avg)))
	} else {
		s = tf * t.tfd.Norm * t.idf
	}
	if t.qw != 1.0 {
		s = s * t.qw
	}
	t.score, t.ready = s, true
	return s
}

// positions returns the term's positions in document n, reading them on
// first use; nil when the term is not there. Calls come in document order.
func (t *rankTerm) positions(ctx context.Context, r index.IndexReader, n uint64) ([]*index.TermFieldVector, error) {
	if t.vec == nil || t.vecAt < n {
		if t.vec == nil {
			v, err := r.TermFieldReader(ctx, t.term, "text", false, false, true)
			if err != nil {
				return nil, err
			}
			t.vec = v
		}
		d, err := t.vec.Advance(internalID(n), &t.vtfd)
		if err != nil {
			return nil, err
		}
		if t.vecAt, err = docNum(d); err != nil { // noDoc when exhausted
			return nil, err
		}
	}
	if t.vecAt != n {
		return nil, nil
	}
	return t.vtfd.Vectors, nil
}

// postingsQuery is the ranking query of one search, opened on one reader.
type postingsQuery struct {
	terms  []*rankTerm
	groups [2][]int   // the clauses of words and title: indexes into terms, in Bleve's order (see bleveOrder)
	outer  [3]int     // the words (0), phrase (1) and title (2) clauses in Bleve's order
	phrase [][]int    // per phrase position, the text terms any of which fills it
	weight [3]float64 // the weights of the words, phrase and title clauses
	norm   float64    // the full query's norm
}

func (q *postingsQuery) Close() {
	for _, t := range q.terms {
		if t.tfr != nil {
			t.tfr.Close()
		}
		if t.vec != nil {
			t.vec.Close()
		}
	}
}

// openPostingsQuery analyses rq's words as its clauses do and opens the
// postings of each distinct term. ok is false when Bleve would add the
// clauses' scores in another order than the query's (more than
// searcher.DisjunctionHeapTakeover words).
func openPostingsQuery(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, rq rankQuery) (q *postingsQuery, ok bool, err error) {
	an := m.AnalyzerNamed(rq.analyzer)
	if an == nil {
		return nil, false, errors.New("corpus: analyzer missing")
	}
	tokens := an.Analyze([]byte(rq.text))
	q = &postingsQuery{}
	if len(tokens) == 0 {
		return q, true, nil
	}
	if len(tokens) > searcher.DisjunctionHeapTakeover || 2*len(tokens) > 32 { // present is a uint32
		return nil, false, nil
	}
	defer func() {
		if err != nil {
			q.Close()
		}
	}()
	byKey := map[[2]string]int{}
	for g, f := range []struct {
		name  string
		boost float64
	}{{"text", 1}, {"title", 1.5}} {
		docTotal, avg, err := bm25Metrics(ctx, f.name)
		if err != nil {
			return nil, false, err
		}
		for _, tok := range tokens {
			key := [2]string{f.name, string(tok.Term)}
			i, seen := byKey[key]
			if !seen {
				tfr, err := r.TermFieldReader(ctx, tok.Term, f.name, true, true, false)
				if err != nil {
					return nil, false, err
				}
				t := &rankTerm{term: tok.Term, tfr: tfr, avg: avg, qw: f.boost, field: g}
				docTerm := tfr.Count()
				if avg > 0 {
					t.idf = bm25IDF(docTerm, docTotal)
				} else {
					t.idf = 1.0 + math.Log(float64(docTotal)/float64(docTerm+1.0))
				}
				w := f.boost * t.idf
				t.weight = w * w
				i = len(q.terms)
				byKey[key] = i
				q.terms = append(q.terms, t)
			}
			q.terms[i].clauses++
			q.groups[g] = append(q.groups[g], i)
		}
	}
	for _, pos := range tokenPositions(tokens) {
		var alts []int
		for _, term := range pos {
			alts = append(alts, byKey[[2]string{"text", term}])
		}
		q.phrase = append(q.phrase, alts)
	}
	// Bleve's disjunctions visit their clauses, add up their weights and
	// add up their scores in the order of bleveOrder; the phrase clause's
	// weight and count come from Bleve's own phrase searcher.
	var counts [3]uint64
	for g := range q.groups {
		dfs := make([]uint64, len(q.groups[g]))
		for j, i := range q.groups[g] {
			dfs[j] = q.terms[i].tfr.Count()
			counts[2*g] += dfs[j]
		}
		sorted := make([]int, len(dfs))
		for j, k := range bleveOrder(dfs) {
			sorted[j] = q.groups[g][k]
		}
		q.groups[g] = sorted
		var w float64
		for _, i := range q.groups[g] {
			w += q.terms[i].weight
		}
		q.weight[2*g] = w
	}
	ps, err := rq.phrase.Searcher(withBM25(ctx), candidateReader{IndexReader: r}, m, search.SearcherOptions{})
	if err != nil {
		return nil, false, err
	}
	q.weight[1], counts[1] = ps.Weight(), ps.Count()
	if err := ps.Close(); err != nil {
		return nil, false, err
	}
	copy(q.outer[:], bleveOrder(counts[:]))
	var sum float64
	for _, c := range q.outer {
		sum += q.weight[c]
	}
	q.norm = 1.0 / math.Sqrt(sum)
	for _, t := range q.terms {
		t.qw = t.qw * t.idf * q.norm
		t.ub = math.Inf(1)
		if t.avg > 0 {
			t.ub = float64(t.clauses) * search.BM25_k1 * t.idf * t.qw
		}
	}
	return q, true, nil
}

// tokenPositions groups tokens by position as Bleve's phrase query does:
// one entry per position from the first to the last, holding the terms at
// that position (none for a gap).
func tokenPositions(tokens analysis.TokenStream) [][]string {
	first, last := math.MaxInt, math.MinInt
	for _, t := range tokens {
		first = min(first, t.Position)
		last = max(last, t.Position)
	}
	if last < first {
		return nil
	}
	out := make([][]string, last-first+1)
	for _, t := range tokens {
		out[t.Position-first] = append(out[t.Position-first], string(t.Term))
	}
	return out
}

// clauseScore is a disjunction clause's score at document n (every term's
// postings standing at or after n): the sum of its matching terms, in
// order, times the fraction that match.
func (q *postingsQuery) clauseScore(g int, n uint64) (float64, bool) {
	var sum float64
	count := 0
	for _, i := range q.groups[g] {
		if t := q.terms[i]; t.at == n {
			sum += t.value()
			count++
		}
	}
	if count == 0 {
		return 0, false
	}
	return sum * (float64(count) / float64(len(q.groups[g]))), true
}

// parts are a chunk's words (0), phrase (1) and title (2) clauses' scores.
type parts struct {
	score [3]float64
	has   [3]bool
}

// total is the full query's score of a chunk with these parts: Bleve's
// outer disjunction.
func (p parts) total(order [3]int) float64 {
	var sum float64
	matched := 0
	for _, c := range order {
		if p.has[c] {
			sum += p.score[c]
			matched++
		}
	}
	return sum * (float64(matched) / float64(3))
}

// withPhrase is p with the phrase clause scoring s.
func (p parts) withPhrase(s float64) parts {
	p.score[1], p.has[1] = s, true
	return p
}

// bleveOrder returns the order in which a Bleve disjunction of clauses
// matching these many chunks each visits them: sorted by count with
// sort.Sort, which is not stable, so equal counts end up in the order its
// algorithm leaves them.
func bleveOrder(counts []uint64) []int {
	o := byCount{idx: make([]int, len(counts)), count: slices.Clone(counts)}
	for i := range o.idx {
		o.idx[i] = i
	}
	sort.Sort(o)
	return o.idx
}

// byCount sorts like Bleve's OrderedSearcherList.
type byCount struct {
	idx   []int
	count []uint64
}

func (b byCount) Len() int           { return len(b.idx) }
func (b byCount) Less(i, j int) bool { return b.count[i] < b.count[j] }
func (b byCount) Swap(i, j int) {
	b.idx[i], b.idx[j] = b.idx[j], b.idx[i]
	b.count[i], b.count[j] = b.count[j], b.count[i]
}

// phraseBound bounds the phrase clause at document n: each position's
// terms there, at the phrase clause's boost (2); 0 when some position has
// none, so the phrase cannot match.
func (q *postingsQuery) phraseBound(n uint64) float64 {
	var b float64
	for _, alts := range q.phrase {
		var pos float64
		for _, i := range alts {
			if t := q.terms[i]; t.at == n {
				pos += 2 * t.value()
			}
		}
		if pos == 0 && len(alts) > 0 {
			return 0
		}
		b += pos
	}
	return b
}

// present is the set of terms (bit i for terms[i]) whose postings stand
// at document n.
func (q *postingsQuery) present(n uint64) uint32 {
	var m uint32
	for i, t := range q.terms {
		if t.at == n {
			m |= 1 << i
		}
	}
	return m
}

// formsPhrase reports whether the positions in document n of the text
// terms in present form the phrase: a term of each position at
// consecutive positions. It may say yes where Bleve says no (it ignores
// array positions), never the reverse. Calls come in document order.
func (q *postingsQuery) formsPhrase(ctx context.Context, r index.IndexReader, n uint64, present uint32) (bool, error) {
	at := make([][]uint64, len(q.phrase))
	for p, alts := range q.phrase {
		if len(alts) == 0 {
			continue // a gap: any word
		}
		for _, i := range alts {
			if present&(1<<i) == 0 {
				continue
			}
			vs, err := q.terms[i].positions(ctx, r, n)
			if err != nil {
				return false, err
			}
			for _, v := range vs {
				at[p] = append(at[p], v.Pos)
			}
		}
		if len(at[p]) == 0 {
			return false, nil
		}
	}
	for _, start := range at[0] {
		ok := true
		for p := 1; p < len(at) && ok; p++ {
			ok = len(q.phrase[p]) == 0 || slices.Contains(at[p], start+uint64(p))
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// ranked is a chunk the postings pass kept.
type ranked struct {
	num     uint64
	score   float64 // the full query's score; a lower bound until the phrase clause is known
	ub      float64 // when its words may form the phrase: its score is at most this
	present uint32  // then: the terms it holds
	parts   parts
}

// rankStats counts what one postingsRank did.
type rankStats struct {
	passed  int // chunks passed over because their words could not reach the k-th score
	skipped int // terms whose postings were skipped rather than walked, at the end
	checked int // chunks whose positions were checked for the phrase
	phrase  int // chunks Bleve's phrase searcher scored
}

// postingsRank returns the best k chunks under rq.full with their exact
// scores (any order), the k-th score (-Inf when fewer than k chunks
// match), and false when it cannot rank this query (see openPostingsQuery).
// Every chunk it leaves out scores at most the k-th score.
func postingsRank(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, rq rankQuery, k int, d depth) ([]ranked, float64, rankStats, bool, error) {
	if d.keep > 0 {
		k = d.keep
	}
	compact := d.compact
	if compact <= 0 {
		compact = 4096
	}
	var st rankStats
	q, ok, err := openPostingsQuery(ctx, r, m, rq)
	if err != nil || !ok {
		return nil, 0, st, ok, err
	}
	defer q.Close()
	if len(q.terms) == 0 || k <= 0 {
		return nil, math.Inf(-1), st, true, nil
	}
	for _, t := range q.terms {
		if err := t.next(); err != nil {
			return nil, 0, st, false, err
		}
	}
	// order: the terms by bound, smallest first; below[i] bounds what
	// order[:i] give a chunk; phraseIn[i] tells whether order[:i] hold a
	// term of every phrase position. order[:skip] cannot lift a chunk into
	// the best k on their own.
	order := make([]int, len(q.terms))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch ua, ub := q.terms[a].ub, q.terms[b].ub; {
		case ua < ub:
			return -1
		case ua > ub:
			return 1
		}
		return 0
	})
	below := make([][2]float64, len(order)+1) // text, title
	rank := make([]int, len(q.terms))         // position of each term in order
	for i, o := range order {
		below[i+1] = below[i]
		below[i+1][q.terms[o].field] += q.terms[o].ub
		rank[o] = i
	}
	// canForm tells whether a chunk can still hold a term of every phrase
	// position when order[:i] are not known yet and the other terms at n
	// are the ones there.
	canForm := func(i int, n uint64) bool {
		for _, alts := range q.phrase {
			has := len(alts) == 0
			for _, t := range alts {
				has = has || rank[t] < i || q.terms[t].at == n
			}
			if !has {
				return false
			}
		}
		return len(q.phrase) > 0
	}
	// A chunk's score is at most two thirds of its text and title clauses
	// (two of the three clauses at most) without the phrase; with it, the
	// phrase clause adds at most twice the text's.
	const margin = 1 + 1e-9 // rounding, in the bounds' favour
	most := func(s [2]float64, phrase bool) float64 {
		if phrase {
			return (3*s[0] + s[1]) * margin
		}
		return 2.0 / 3 * (s[0] + s[1]) * margin
	}
	skip := 0

	var maybe []ranked                   // chunks whose words may form the phrase, in document order
	h := make([]ranked, 0, min(k, 1024)) // the best k by score (lower bound): worst on top
	worse := func(a, b ranked) bool { return a.score < b.score || a.score == b.score && a.num > b.num }
	theta := math.Inf(-1)
	for steps := 0; ; steps++ {
		if steps%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, st, false, err
			}
		}
		n := uint64(noDoc)
		for _, o := range order[skip:] {
			n = min(n, q.terms[o].at)
		}
		if n == noDoc {
			break
		}
		visit := true
		if skip > 0 {
			// What the chunk's terms give, the terms passed over bounded by
			// their bounds; those are then looked up, largest bound first,
			// until the chunk cannot reach the k-th score or all are known.
			var known [2]float64
			for _, o := range order[skip:] {
				if t := q.terms[o]; t.at == n {
					known[t.field] += float64(t.clauses) * t.value()
				}
			}
			for j := skip; ; j-- {
				b := [2]float64{below[j][0] + known[0], below[j][1] + known[1]}
				if most(b, canForm(j, n)) < theta {
					visit = false
					st.passed++
					break
				}
				if j == 0 {
					break
				}
				t := q.terms[order[j-1]]
				if err := t.advance(n); err != nil {
					return nil, 0, st, false, err
				}
				if t.at == n {
					known[t.field] += float64(t.clauses) * t.value()
				}
			}
		}
		if visit {
			var p parts
			p.score[0], p.has[0] = q.clauseScore(0, n)
			p.score[2], p.has[2] = q.clauseScore(1, n)
			e := ranked{num: n, parts: p, score: p.total(q.outer)}
			if pb := q.phraseBound(n); pb > 0 {
				if ub := p.withPhrase(pb).total(q.outer) * margin; ub >= theta {
					e.ub, e.present = ub, q.present(n)
					if len(maybe) == cap(maybe) && len(maybe) >= compact {
						// The k-th score only rises: what fell below it is dropped
						// before the list grows, so it stays near what can matter.
						maybe = slices.DeleteFunc(maybe, func(m ranked) bool { return m.ub < theta })
					}
					maybe = append(maybe, e)
				}
			}
			if len(h) < k {
				h = append(h, e)
				for i := len(h) - 1; i > 0; { // sift up
					p := (i - 1) / 2
					if !worse(h[i], h[p]) {
						break
					}
					h[i], h[p] = h[p], h[i]
					i = p
				}
			} else if worse(h[0], e) {
				h[0] = e
				for i := 0; ; { // sift down
					l, least := 2*i+1, i
					if l < len(h) && worse(h[l], h[least]) {
						least = l
					}
					if l+1 < len(h) && worse(h[l+1], h[least]) {
						least = l + 1
					}
					if least == i {
						break
					}
					h[i], h[least] = h[least], h[i]
					i = least
				}
			}
			if len(h) == k && h[0].score > theta {
				theta = h[0].score
				for skip < len(order) && most(below[skip+1], canForm(skip+1, noDoc)) < theta {
					skip++
				}
			}
		}
		for _, o := range order[skip:] {
			if t := q.terms[o]; t.at == n {
				if err := t.next(); err != nil {
					return nil, 0, st, false, err
				}
			}
		}
	}

	// The chunks whose words may form the phrase and that could still
	// matter: where their positions form it, Bleve's phrase searcher scores
	// the phrase clause.
	out := h
	kept := map[uint64]int{}
	for i, e := range out {
		kept[e.num] = i
	}
	var ids []index.IndexInternalID
	for _, e := range maybe {
		if e.ub < theta {
			continue
		}
		st.checked++
		forms, err := q.formsPhrase(ctx, r, e.num, e.present)
		if err != nil {
			return nil, 0, st, false, err
		}
		if !forms {
			continue
		}
		if _, in := kept[e.num]; !in {
			kept[e.num] = len(out)
			out = append(out, e)
		}
		ids = append(ids, internalID(e.num))
	}
	st.phrase, st.skipped = len(ids), skip
	if len(ids) > 0 {
		slices.SortFunc(ids, func(a, b index.IndexInternalID) int { return a.Compare(b) })
		hits, _, err := scoreCandidates(ctx, r, m, rq.phrase, ids, q.norm)
		if err != nil {
			return nil, 0, st, false, err
		}
		for _, hit := range hits {
			n, err := docNum(&index.TermFieldDoc{ID: hit.iid})
			if err != nil {
				return nil, 0, st, false, err
			}
			e := &out[kept[n]]
			e.score = e.parts.withPhrase(hit.score).total(q.outer)
		}
	}
	if len(h) < k {
		theta = math.Inf(-1)
	}
	return out, theta, st, true, nil
}
