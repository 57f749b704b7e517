package corpus

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestQueryUnits(t *testing.T) {
	for _, tt := range []struct {
		q     string
		units [][]string
		alts  bool
	}{
		{"smallint byte", [][]string{{"smallint"}, {"byte"}}, false},
		{"smallint type|kind byte", [][]string{{"smallint"}, {"type", "kind"}, {"byte"}}, true},
		{"a||b |x| |", [][]string{{"a", "b"}, {"x"}}, true},
		{"|||", nil, false},
		{"", nil, false},
		{"w|" + strings.Repeat("r|", 20), [][]string{{"w", "r", "r", "r", "r", "r", "r", "r"}}, true},
	} {
		units, alts := queryUnits(tt.q)
		if alts != tt.alts || !slices.EqualFunc(units, tt.units, slices.Equal) {
			t.Errorf("queryUnits(%q) = %q, %v; want %q, %v", tt.q, units, alts, tt.units, tt.alts)
		}
	}
}

// A translated question carries its words' renderings as alternatives. Searched as plain words, a rare wrong
// rendering in a page's title ("fetch" for 取) outranks the page that holds the question's own words; searched
// as one unit per word, the page holding three of the words comes first.
func TestAlternativesRankAsOneWord(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "numeric.md"), "# Numeric Types\n\n"+
		"The smallint type takes two bytes and holds a small range of whole numbers.\n")
	writeFile(t, filepath.Join(root, "fetch.md"), "# FETCH\n\n"+
		"FETCH chooses the scope and extent of the rows a cursor returns; each value fetched is returned.\n")
	// Filler so that the common words are common and the rare ones rare, as in a real manual. The FETCH page holds
	// more of the query's words (fetch, choose, scope, extent, value) than the numeric page (smallint, type, byte,
	// range), but they render three of the question's words, the numeric page's four.
	for i := range 40 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("page%02d.md", i)), fmt.Sprintf("# Page %d\n\n"+
			"Each type of value has a range and a kind; choose the type that fits the value range %d.\n", i, i))
	}
	ix, first := rankFirst(t, root)
	flat := "smallint type category kind byte fetch choose value range scope extent"
	if got := first(flat); got != "fetch.md" {
		t.Fatalf("the plain query ranks %s first: the case this test is about is gone", got)
	}
	if got := first("smallint type|category|kind byte fetch|choose value range|scope|extent"); got != "numeric.md" {
		t.Errorf("the query with alternatives ranks %s first, want numeric.md", got)
	}
	// Bounds: a query of nothing but separators, renderings no passage uses, and a word of many renderings.
	for _, q := range []string{"|", "||| |", "aardvark|zebu quux", "type|" + strings.Repeat("x|", 500)} {
		if _, err := ix.Search(t.Context(), q, 5); err != nil {
			t.Errorf("Search(%q): %v", q, err)
		}
	}
}

// Two adjacent words of a query with alternatives count again as a phrase: the page that writes "foreign key"
// outranks one holding the same words apart ("foreign servers", "each key"), which the words alone rank first.
// The same words in another order (no phrase of the pages' left) leave the words' own ranking.
func TestAdjacentWordsRankAsPhrase(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "keys.md"), "# Constraints\n\n"+
		"A foreign key names the table whose rows it references, and deleting a referenced row is refused.\n")
	writeFile(t, filepath.Join(root, "data.md"), "# Foreign Data\n\n"+
		"Foreign servers are reached through a wrapper; each key of its options is a host setting, and deleting a "+
		"wrapper is refused while a host uses it.\n")
	for i := range 40 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("page%02d.md", i)), fmt.Sprintf("# Page %d\n\n"+
			"A table has rows; a row has values, and value %d is read by the server.\n", i, i))
	}
	_, first := rankFirst(t, root)
	if got := first("key deleting|removing foreign host|server refused"); got != "data.md" {
		t.Fatalf("the words apart rank %s first: the case this test is about is gone", got)
	}
	if got := first("foreign key deleting|removing host|server refused"); got != "keys.md" {
		t.Errorf("with foreign key adjacent the query ranks %s first, want keys.md", got)
	}
}

// rankFirst indexes root and returns the index and a function giving the file name of a query's first result.
func rankFirst(t *testing.T, root string) (*Index, func(q string) string) {
	t.Helper()
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	return ix, func(q string) string {
		t.Helper()
		rs, err := ix.Search(t.Context(), q, 5)
		if err != nil || len(rs) == 0 {
			t.Fatalf("Search(%q) = %v, %v", q, rs, err)
		}
		path, _, _, _ := parseChunkID(rs[0].URL)
		return filepath.Base(path)
	}
}
