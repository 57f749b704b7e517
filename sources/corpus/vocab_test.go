package corpus

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// DocFreq counts the chunks that use a word as the index analyses it (stemmed, any case), the rarest term of a
// word of several, nothing for a word no chunk uses, and bounds what it analyses.
func TestDocFreq(t *testing.T) {
	ix := openIndex(t, t.TempDir())
	if df, n, err := ix.DocFreq(t.Context(), "sort"); err != nil || df != 0 || n != 0 {
		t.Fatalf("empty index: %d, %d, %v", df, n, err)
	}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "sorting.md"), "# Sorting\n\nSorts are stable. The sorted list keeps equal keys in order.\n")
	writeFile(t, filepath.Join(root, "faq.md"), "# FAQ\n\nStable releases come out every year.\n")
	writeFile(t, filepath.Join(root, "other.md"), "# Other\n\nNothing about ordering here.\n")
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		word string
		want int
	}{{"sort", 1}, {"Sorting", 1}, {"STABLE", 2}, {"stable sort", 1}, {"aardvark", 0}, {"", 0}, {"the", 1}} {
		df, n, err := ix.DocFreq(t.Context(), tt.word)
		if err != nil || df != tt.want || n != ix.ChunkCount() {
			t.Errorf("DocFreq(%q) = %d, %d, %v; want %d, %d", tt.word, df, n, err, tt.want, ix.ChunkCount())
		}
	}
	if _, _, err := ix.DocFreq(t.Context(), strings.Repeat("stable ", 1<<17)); err != nil {
		t.Errorf("a 900 kB word: %v", err)
	}
}

// PhraseFreq counts the chunks that use a phrase's words one after the other, as the index analyses them
// ("foreign keys" is "foreign key"), not chunks that use them apart or in the other order; a phrase of one word
// is DocFreq, one of none is used nowhere, and what it analyses is bounded.
func TestPhraseFreq(t *testing.T) {
	ix := openIndex(t, t.TempDir())
	if df, n, err := ix.PhraseFreq(t.Context(), "foreign key"); err != nil || df != 0 || n != 0 {
		t.Fatalf("empty index: %d, %d, %v", df, n, err)
	}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "fk.md"), "# Constraints\n\nA Foreign Keys constraint names the referenced table.\n")
	writeFile(t, filepath.Join(root, "apart.md"), "# Keys\n\nThe key of a foreign table is its own.\n")
	writeFile(t, filepath.Join(root, "reversed.md"), "# Reversed\n\nEach key foreign to this one is skipped.\n")
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		phrase string
		want   int
	}{{"foreign key", 1}, {"FOREIGN KEYS", 1}, {"key foreign", 1}, {"foreign table", 1}, {"table foreign", 0},
		{"key", 3}, {"", 0}, {"  ", 0}, {"aardvark key", 0}} {
		for range 2 { // the second time from the memo
			df, n, err := ix.PhraseFreq(t.Context(), tt.phrase)
			if err != nil || df != tt.want || n != ix.ChunkCount() {
				t.Errorf("PhraseFreq(%q) = %d, %d, %v; want %d, %d", tt.phrase, df, n, err, tt.want, ix.ChunkCount())
			}
		}
	}
	if _, _, err := ix.PhraseFreq(t.Context(), strings.Repeat("foreign key ", 1<<17)); err != nil {
		t.Errorf("a 1.5 MB phrase: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := ix.PhraseFreq(ctx, "referenced table"); err == nil {
		t.Error("a cancelled context: no error")
	}
}
