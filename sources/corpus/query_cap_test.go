package corpus

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// A 1 MB query (a pasted document, a runaway model) reaches the index as its first words only: the search
// answers, from the words that lead the query, instead of building a million-term query.
func TestHugeQueryIsCapped(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "bees.md"), "# Bees\n\nHoney bees dance to tell the hive where flowers are.\n")
	writeFile(t, filepath.Join(root, "ships.md"), "# Ships\n\nCargo ships carry containers across the ocean.\n")
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	q := "honey bees dance " + strings.Repeat("zzqx ", 1<<18)
	rs, err := ix.Search(t.Context(), q, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 || !strings.Contains(rs[0].URL, "/bees.md#L") {
		t.Fatalf("got %+v, want bees.md first", rs)
	}
	if got := capQuery(q); len(strings.Fields(got)) != maxQueryWords {
		t.Errorf("capQuery kept %d words, want %d", len(strings.Fields(got)), maxQueryWords)
	}
	if got := capQuery(strings.Repeat("字", 5000)); utf8.RuneCountInString(got) != maxQueryRunes || !utf8.ValidString(got) {
		t.Errorf("capQuery kept %d runes, want %d", utf8.RuneCountInString(got), maxQueryRunes)
	}
}
