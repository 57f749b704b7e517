//go:build unix

package corpus

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/sources/extract"
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

// A link to a file or folder outside the indexed folder is skipped and
// counted (notes.md -> /etc/passwd must not be quoted), unless links are
// followed; a link inside is indexed once; a followed link loop is not
// walked round.
func TestScanLinksOutside(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	writeFile(t, filepath.Join(outside, "passwd.md"), "# Secret\n\nroot:x:0:0:root:/root:/bin/bash\n")
	writeFile(t, filepath.Join(outside, "dir", "o.md"), "# Outside folder\n\nThe otter floats.\n")
	root := filepath.Join(base, "root")
	writeFile(t, filepath.Join(root, "real.md"), "# Real\n\nThe raccoon washes food.\n")
	writeFile(t, filepath.Join(root, "sub", "s.md"), "# Sub\n\nThe seal swims.\n")
	for link, target := range map[string]string{
		"notes.md": filepath.Join(outside, "passwd.md"), "ext": filepath.Join(outside, "dir"),
		"rel.md": "../outside/passwd.md", "inside.md": "real.md", "sub/up.md": "../real.md", "subdir": "sub",
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	// Below the linked folder, a link back up to it: a loop when followed.
	if err := os.Symlink(filepath.Join(outside, "dir"), filepath.Join(outside, "dir", "loop")); err != nil {
		t.Fatal(err)
	}
	outcomes := func(st Stats) map[string]Outcome {
		got := map[string]Outcome{}
		for _, f := range st.Files {
			rel, _ := filepath.Rel(root, f.Path)
			got[filepath.ToSlash(rel)] = f.Outcome
		}
		return got
	}
	ix := openIndex(t, t.TempDir())
	st, err := ix.Add(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Outcome{
		"real.md": Added, "sub/s.md": Added, "inside.md": Added, "sub/up.md": Added,
		"notes.md": LinkOutside, "rel.md": LinkOutside, "ext": LinkOutside,
	}
	if got := outcomes(st); !maps.Equal(got, want) || st.LinksOutside != 3 || st.Added != 4 {
		t.Errorf("outcomes %v, %d links outside, %d added; want %v", got, st.LinksOutside, st.Added, want)
	}
	hits, err := ix.Search(t.Context(), "root bash", 10)
	if err != nil || len(hits) != 0 {
		t.Errorf("the outside file is searchable: %v %v", hits, err)
	}

	follow, err := OpenWith(t.TempDir(), &Options{FollowLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer follow.Close()
	st, err = follow.Add(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]Outcome{
		"real.md": Added, "sub/s.md": Added, "inside.md": Added, "sub/up.md": Added,
		"notes.md": Added, "rel.md": Added, "ext/o.md": Added, "ext/loop": Excluded,
	}
	if got := outcomes(st); !maps.Equal(got, want) || st.LinksOutside != 0 {
		t.Errorf("following links: outcomes %v, %d links outside; want %v", got, st.LinksOutside, want)
	}
}

// A file the scan found regular and that is a link by the time it is read
// (a swap to /etc/passwd) is not read through the link.
func TestReadRefusesLinkSwappedIn(t *testing.T) {
	base := t.TempDir()
	secret := filepath.Join(base, "secret.md")
	writeFile(t, secret, "# Secret\n\nroot:x:0:0\n")
	path := filepath.Join(base, "root", "notes.md")
	writeFile(t, path, "# Notes\n\nThe notes.\n")
	f, _ := formatOf(path)
	j := job{found: found{path: path, f: f}}
	if o := process(t.Context(), j, extract.Limits{}); o.result != Added {
		t.Fatalf("the regular file: %v %v", o.result, o.err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, path); err != nil {
		t.Fatal(err)
	}
	if o := process(t.Context(), j, extract.Limits{}); o.result != Failed || strings.Contains(o.ex.text, "root:x") {
		t.Errorf("read through a link swapped in: %v %q", o.result, o.ex.text)
	}
	j.link = true // found as a link: read through it
	if o := process(t.Context(), j, extract.Limits{}); o.result != Added {
		t.Errorf("a link found as one: %v %v", o.result, o.err)
	}
}
