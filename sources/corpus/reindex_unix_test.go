//go:build unix

package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

// The scan follows a symbolic link to a file, does not follow one to a
// folder, and reports a dangling one; a change seen through a link is
// picked up.
func TestScanSymlinks(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "real.md"), "# Real\n\nThe raccoon washes food.\n")
	writeFile(t, filepath.Join(root, "sub", "s.md"), "# Sub\n\nThe seal swims.\n")
	setOld(t, root)
	for link, target := range map[string]string{"link.md": "real.md", "dirlink": "sub", "dangling.md": "nowhere.md"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	ix := openIndex(t, t.TempDir())
	check := func(what string, want map[string]Outcome, added, updated, unchanged int) {
		t.Helper()
		st, err := ix.Add(t.Context(), root)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]Outcome{}
		for _, f := range st.Files {
			rel, _ := filepath.Rel(root, f.Path)
			got[filepath.ToSlash(rel)] = f.Outcome
		}
		for p, o := range want {
			if got[p] != o {
				t.Errorf("%s: %s: outcome %q, want %q", what, p, got[p], o)
			}
		}
		if len(got) != len(want) || st.Added != added || st.Updated != updated || st.Unchanged != unchanged || len(st.Failed) != 1 {
			t.Errorf("%s: %+v", what, st)
		}
	}
	check("first add", map[string]Outcome{"real.md": Added, "link.md": Added, "sub/s.md": Added, "dangling.md": Failed}, 3, 0, 0)
	check("no-op", map[string]Outcome{"real.md": Unchanged, "link.md": Unchanged, "sub/s.md": Unchanged, "dangling.md": Failed}, 0, 0, 3)
	writeFile(t, filepath.Join(root, "real.md"), "# Real\n\nThe reindeer pulls a sled.\n")
	check("after a change", map[string]Outcome{"real.md": Updated, "link.md": Updated, "sub/s.md": Unchanged, "dangling.md": Failed}, 0, 2, 1)
}
