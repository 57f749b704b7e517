package extractive

import (
	"slices"
	"testing"

	"github.com/deepresearch/deepresearch/lexical/synonyms"
	"github.com/deepresearch/deepresearch/sources"
)

func TestQuerySynonyms(t *testing.T) {
	th := synonyms.Embedded()
	syns := querySynonyms(th, []string{"What happens when the buffer exceeds its capacity?", "sync.Map 内存模型"})
	if got := syns["exce"]; !slices.Contains(got, "surpass") {
		t.Errorf("synonyms of exceed = %q, want surpass", got)
	}
	for term, alts := range syns {
		if len(alts) > synonymsPerWord || slices.Contains(alts, term) {
			t.Errorf("%s: %q", term, alts)
		}
	}
	// Names, CJK and numbers have none; a query of nothing but those gives an empty map.
	if got := querySynonyms(th, []string{"sync.Map 内存模型 1.21"}); len(got) != 0 {
		t.Errorf("querySynonyms of names = %q", got)
	}
	if querySynonyms(nil, []string{"exceed"}) != nil {
		t.Error("no thesaurus: synonyms")
	}
	// A damaged table turns the synonyms off; it does not fail the analysis.
	if got := querySynonyms(synonyms.New([]byte("not gzip")), []string{"exceed"}); got != nil {
		t.Errorf("damaged table: %q", got)
	}
}

// A passage that says the query's word by a synonym covers it, less than one saying the word and more than one
// lacking it.
func TestSynonymCoverage(t *testing.T) {
	const text = "When the buffer exceeds its capacity, the writer blocks.\n\n" +
		"When the buffer surpasses its capacity, the writer blocks.\n\n" +
		"When the buffer reaches its capacity, the writer blocks.\n"
	a := &Analyst{cfg: Config{}.withDefaults(), syn: synonyms.Embedded()}
	ix := a.index(&sources.Document{URL: "file:///doc/buffer.txt", Title: "buffer", Text: text, ContentType: "text/plain"})
	q := []string{"buffer exceeds capacity"}
	variants := []variant{queryVariant(q[0])}
	syns := querySynonyms(a.syn, q)
	find := func(word string) int {
		for i := range ix.spans {
			if slices.Contains(ix.tokens[i], word) {
				return i
			}
		}
		t.Fatalf("no passage with %q", word)
		return -1
	}
	exact := a.coverage(ix, variants, syns, find("exce"))
	synonym := a.coverage(ix, variants, syns, find("surpass"))
	none := a.coverage(ix, variants, syns, find("reach"))
	if !(exact > synonym && synonym > none) {
		t.Errorf("coverage: exact %.3f, synonym %.3f, none %.3f; want them in that order", exact, synonym, none)
	}
	if without := a.coverage(ix, variants, nil, find("surpass")); without != none {
		t.Errorf("without synonyms the synonym passage covers %.3f, the other %.3f", without, none)
	}
}
