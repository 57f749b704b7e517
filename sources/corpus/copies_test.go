package corpus

import (
	"path/filepath"
	"strings"
	"testing"
)

// A print-all page that repeats two specific pages does not take their place: a search for a passage of one
// page cites the page. A notice repeated on three stub pages is boilerplate and is cited from none of them.
func TestSearchPrefersTheSpecificPageOverAggregatesAndDropsBoilerplate(t *testing.T) {
	root := t.TempDir()
	ownership := "# Ownership\n\nEach value in Rust has an owner. There can only be one owner at a time. When the owner goes out of scope, the value will be dropped.\n"
	borrowing := "# Borrowing\n\nAt any given time, you can have either one mutable reference or any number of immutable references. References must always be valid.\n"
	writeFile(t, filepath.Join(root, "ownership.md"), ownership)
	writeFile(t, filepath.Join(root, "borrowing.md"), borrowing)
	writeFile(t, filepath.Join(root, "print.md"), "# The whole book\n\n"+ownership+"\n"+borrowing+"\n# Appendix\n\nThe appendix lists the keywords of the language in one table.\n")
	for _, stub := range []string{"old-a.md", "old-b.md", "old-c.md"} {
		writeFile(t, filepath.Join(root, stub), "# "+strings.TrimSuffix(stub, ".md")+"\n\nThe first edition of the owner book is no longer distributed; read the current version of the owner book instead.\n")
	}
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	for _, d := range []depth{{}, {keep: 2}} { // certified, and falling back to the full query
		ix.depth = d
		got, err := ix.Search(t.Context(), "owner goes out of scope value dropped", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || !strings.Contains(got[0].URL, "ownership.md") {
			t.Fatalf("depth %+v: first result is not the specific page: %v", d, urls(got))
		}
		for _, r := range got {
			if strings.Contains(r.URL, "print.md") && strings.Contains(r.Snippet, "goes out of scope") {
				t.Errorf("depth %+v: the aggregate is cited for the page's passage: %v", d, urls(got))
			}
			if strings.Contains(r.URL, "old-") {
				t.Errorf("depth %+v: boilerplate stub cited: %v", d, urls(got))
			}
		}
		// The aggregate's own passage, which no other page holds, is still found there.
		got, err = ix.Search(t.Context(), "appendix keywords table", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || !strings.Contains(got[0].URL, "print.md") {
			t.Errorf("depth %+v: the aggregate's own passage lost: %v", d, urls(got))
		}
	}
}
