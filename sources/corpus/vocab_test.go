package corpus

import (
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
