package extractive

import (
	"slices"
	"strings"
	"unicode"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/lexical/synonyms"
)

// A question and the page answering it may word one thing differently ("past its end" and "outside the vector").
// A passage that has a WordNet synonym of a query word where it lacks the word covers that word at synonymShare of
// an exact match; only the synonyms of the word's synonymSenses most frequent senses in each part of speech count,
// single words only, at most synonymsPerWord of them.
const (
	synonymShare    = 0.7
	synonymSenses   = 2
	synonymsPerWord = 12
)

// synonymMap maps an index term of the query to the index terms of its synonyms.
type synonymMap map[string][]string

// querySynonyms returns the synonyms of the Latin-script words of queries, as index terms; nil without a
// thesaurus, or when it cannot be read (matching then goes on by the words themselves).
func querySynonyms(th *synonyms.Thesaurus, queries []string) synonymMap {
	if th == nil {
		return nil
	}
	out := synonymMap{}
	for _, q := range queries {
		for _, w := range lexical.Keywords(q) {
			if !latinWord(w) {
				continue
			}
			stem := lexical.Tokenize(w)
			if len(stem) != 1 || facetTerms[stem[0]] {
				continue
			}
			if _, done := out[stem[0]]; done {
				continue
			}
			related, err := th.Related(w, synonymSenses)
			if err != nil {
				return nil
			}
			var terms []string
			for _, r := range related {
				if !latinWord(r) {
					continue
				}
				ts := lexical.Tokenize(r)
				if len(ts) != 1 || ts[0] == stem[0] || slices.Contains(terms, ts[0]) {
					continue
				}
				terms = append(terms, ts[0])
				if len(terms) == synonymsPerWord {
					break
				}
			}
			out[stem[0]] = terms
		}
	}
	return out
}

// latinWord reports a word of letters only (a name such as "sync.Map" or a number has no synonyms).
func latinWord(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) || lexical.IsCJK(r) {
			return false
		}
	}
	return w != "" && !strings.ContainsAny(w, " ")
}
