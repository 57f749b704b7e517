package corpus

import (
	"context"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/lexical/bilingual"
)

// Queries with alternatives. A translated question carries each of its words as the word's renderings, written
// with bilingual.Alternatives between them ("smallint type|category|kind byte"). Searched as plain words, every
// rendering would be a word of its own: a word with five renderings would weigh five times one with a single
// rendering, and a wrong rendering that is rare in the documents ("fetch" for 取) would outweigh the question's
// real words by its IDF. Such a query is therefore structured (the structured queries of dictionary-based
// cross-language retrieval): each word is one clause, the disjunction of its renderings, and
//
//   - the clause weighs what a word as common as all its renderings together would weigh: each rendering's
//     BM25 weight (boost × IDF², as Bleve's term scorer has it) is scaled to the IDF of the renderings' summed
//     document frequency, so an ambiguous word counts as its commonest sense, not its rarest;
//   - the query's coordination (the share of clauses a passage matches) counts words, not renderings, so a
//     passage holding three of the question's words outranks one holding three renderings of one word;
//   - a title match weighs 1.5 times the same rendering's weight in the text (its IDF taken from the text, not
//     from the title field's few and repeated values, where one rare rendering in a page title would outweigh
//     three of the question's words in a passage);
//   - the phrase clause puts any rendering of each word at its place (a multi-phrase query), and each two adjacent
//     words are such a phrase again, at a quarter of its weight (the ordered pairs of a sequential dependence
//     model: a translated "foreign key" is searched as the phrase, not only as two words).
//
// Bleve's disjunction multiplies the sum of its matching children by the share that match; the renderings are
// boosted by their number so that one rendering matched counts as the word matched. Such a query is ranked by
// Bleve's searchers over the whole index (rankFull): the postings walk reproduces the plain query only.

// pairBoost is the weight of two adjacent words of a query found as a phrase, against the whole query's phrase (2);
// chosen on the bench's tune half (0.25 and 0.5 alike, 1 worse).
const pairBoost = 0.5

// maxAlternatives bounds the renderings of one word a query may carry.
const maxAlternatives = 8

// queryUnits splits a query into its words, each the list of its alternatives, and reports whether any word
// has more than one.
func queryUnits(q string) (units [][]string, alternatives bool) {
	for _, f := range strings.Fields(q) {
		var alts []string
		for _, a := range strings.Split(f, bilingual.Alternatives) {
			if a != "" && len(alts) < maxAlternatives {
				alts = append(alts, a)
			}
		}
		if len(alts) == 0 {
			continue
		}
		alternatives = alternatives || len(alts) > 1
		units = append(units, alts)
	}
	return units, alternatives
}

// bm25IDF is the IDF of Bleve's BM25 term scorer for a term in df of n documents.
func bm25IDF(df, n uint64) float64 {
	return lexical.IDF(float64(df), float64(n))
}

// structuredQuery builds the ranking query of a query with alternatives (see above) over r; ok is false when q has
// none, and the plain query ranks it.
func (g *generation) structuredQuery(ctx context.Context, r index.IndexReader, q string) (full query.Query, ok bool, err error) {
	units, alternatives := queryUnits(q)
	if !alternatives {
		return nil, false, nil
	}
	analyzer := g.queryAnalyzer()
	an := g.idx.Mapping().AnalyzerNamed(analyzer)
	if an == nil {
		return nil, false, nil
	}
	n, err := r.DocCount()
	if err != nil {
		return nil, false, err
	}
	clause := func(field string, alts []string, boost float64) (query.Query, error) {
		type rendering struct {
			term      []byte
			df, field uint64 // passages using it, in the text and in the clause's field
			several   bool   // a rendering of several words: term is its text, matched as it is
		}
		var rs []rendering
		var union uint64
		for _, a := range alts {
			tokens := an.Analyze([]byte(a))
			if len(tokens) != 1 {
				// A stop word, or a rendering that is several words: weighed as it is.
				if len(tokens) > 1 {
					rs = append(rs, rendering{term: []byte(a), several: true})
				}
				continue
			}
			df, err := termCount(ctx, r, "text", tokens[0].Term)
			if err != nil {
				return nil, err
			}
			fdf := df
			if field != "text" {
				if fdf, err = termCount(ctx, r, field, tokens[0].Term); err != nil {
					return nil, err
				}
			}
			if fdf > 0 {
				rs = append(rs, rendering{term: tokens[0].Term, df: df, field: fdf})
				union += df
			}
		}
		dq := bleve.NewDisjunctionQuery()
		if len(rs) == 0 {
			// It matches nothing: the word counts as absent for every passage alike.
			dq.AddQuery(matchIn(field, alts[0], boost, analyzer))
			return dq, nil
		}
		union = min(max(union, 1), n)
		for _, rd := range rs {
			if rd.several { // a match query of its own, at the clause's boost
				dq.AddQuery(matchIn(field, string(rd.term), boost*float64(len(rs)), analyzer))
				continue
			}
			scale := bm25IDF(union, n) / bm25IDF(rd.field, n)
			t := bleve.NewTermQuery(string(rd.term))
			t.SetField(field)
			t.SetBoost(boost * float64(len(rs)) * scale * scale)
			dq.AddQuery(t)
		}
		return dq, nil
	}
	fieldQuery := func(field string, boost float64) (query.Query, error) {
		dq := bleve.NewDisjunctionQuery()
		for _, alts := range units {
			c, err := clause(field, alts, boost)
			if err != nil {
				return nil, err
			}
			dq.AddQuery(c)
		}
		return dq, nil
	}
	words, err := fieldQuery("text", 1)
	if err != nil {
		return nil, false, err
	}
	title, err := fieldQuery("title", 1.5)
	if err != nil {
		return nil, false, err
	}
	out := bleve.NewDisjunctionQuery(words, title)
	if phrase := multiPhrase(an.Analyze, units, 2); phrase != nil {
		out.AddQuery(phrase)
	}
	// A passage that writes "foreign key" outranks one with "foreign" and "key" apart, or "Foreign Data" alone.
	if len(units) > 2 {
		for i := 1; i < len(units); i++ {
			if pair := multiPhrase(an.Analyze, units[i-1:i+1], pairBoost); pair != nil {
				out.AddQuery(pair)
			}
		}
	}
	return out, true, nil
}

// matchIn is a match query for text in field, analysed by the analyser named analyzer, at boost.
func matchIn(field, text string, boost float64, analyzer string) query.Query {
	m := bleve.NewMatchQuery(text)
	m.SetField(field)
	m.Analyzer = analyzer
	m.SetBoost(boost)
	return m
}

// multiPhrase is the phrase clause of a query with alternatives: at each place any rendering of that word, each
// analysed to one term, at boost. It is nil for a single word, or when a word has no rendering of one term.
func multiPhrase(analyze func([]byte) analysis.TokenStream, units [][]string, boost float64) query.Query {
	if len(units) < 2 {
		return nil
	}
	terms := make([][]string, 0, len(units))
	for _, alts := range units {
		var place []string
		for _, a := range alts {
			if tokens := analyze([]byte(a)); len(tokens) == 1 {
				place = append(place, string(tokens[0].Term))
			}
		}
		if len(place) == 0 {
			return nil
		}
		terms = append(terms, place)
	}
	p := query.NewMultiPhraseQuery(terms, "text")
	p.SetBoost(boost)
	return p
}

// structure replaces the ranking query of rq with its structured form when the query carries alternatives, and
// reports whether it did.
func (g *generation) structure(ctx context.Context, rq *rankQuery) (bool, error) {
	if !strings.Contains(rq.text, bilingual.Alternatives) {
		return false, nil
	}
	r, err := openReader(g.idx)
	if err != nil {
		return false, err
	}
	defer r.Close()
	full, ok, err := g.structuredQuery(ctx, r, rq.text)
	if err != nil || !ok {
		return false, err
	}
	rq.full = full
	return true, nil
}
