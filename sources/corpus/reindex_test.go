package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// snapshot lists every file and folder under dir with its size and
// modification time: a no-op re-index must leave it as it is.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameSnapshot reports every entry of the index folder that changed, appeared or went between two snapshots.
func sameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, s := range before {
		if a, ok := after[p]; !ok {
			t.Errorf("%s went", p)
		} else if a != s {
			t.Errorf("%s changed: %q, was %q", p, a, s)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared", p)
		}
	}
}

// setOld gives every file under root a modification time well in the past,
// as files that were not just written have.
func setOld(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A re-index of a folder where nothing changed writes nothing at all: no
// generation, no manifest, no lock file touched — whether the files were
// just written (their content is checked by hash) or long ago.
func TestNoopReindexWritesNothing(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		t.Run(fmt.Sprintf("fresh=%v", fresh), func(t *testing.T) {
			root := t.TempDir()
			for i := range 30 {
				writeFile(t, filepath.Join(root, fmt.Sprintf("d%d", i%4), fmt.Sprintf("f%02d.md", i)),
					fmt.Sprintf("# Note %d\n\nThe ibex number %d climbs.\n", i, i))
			}
			writeFile(t, filepath.Join(root, "skip.png"), "\x89PNG")
			if !fresh {
				setOld(t, root)
			}
			dir := filepath.Join(t.TempDir(), "idx")
			ix := openIndex(t, dir)
			if st, err := ix.Add(t.Context(), root); err != nil || st.Added != 30 {
				t.Fatalf("first add: %+v %v", st, err)
			}
			before := snapshot(t, dir)
			for range 2 {
				st, err := ix.Add(t.Context(), root)
				if err != nil || st.Unchanged != 30 || st.Added+st.Updated+st.Removed != 0 || st.SkippedType != 1 {
					t.Fatalf("no-op add: %+v %v", st, err)
				}
			}
			// Another process's no-op re-index writes nothing either.
			ix2 := openIndex(t, dir)
			if st, err := ix2.Add(t.Context(), root); err != nil || st.Unchanged != 30 {
				t.Fatalf("no-op add from a second handle: %+v %v", st, err)
			}
			sameSnapshot(t, before, snapshot(t, dir))
			m, err := readManifest(filepath.Join(dir, genName(1)))
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range m.paths {
				if m.racy(i) != fresh {
					t.Errorf("%s: racy %v, want %v (written just before indexing: %v)", p, m.racy(i), fresh, fresh)
				}
			}
		})
	}
}

// Every kind of change is picked up by the next re-index, including a file
// rewritten with the same size within the file system's timestamp
// resolution (modelled by putting its old modification time back).
func TestReindexPicksUpEveryChange(t *testing.T) {
	type want struct{ added, updated, unchanged, removed int }
	cases := []struct {
		name   string
		old    bool // the files' mtimes are an hour old when first indexed
		change func(t *testing.T, root string)
		want   want
		found  []string // words the index must find after the change
		gone   []string // words it must no longer find
	}{
		{
			name: "content changed, new size", old: true,
			change: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "a.md"), "# Alpha\n\nThe albatross glides over the sea.\n")
			},
			want: want{updated: 1, unchanged: 2}, found: []string{"albatross"}, gone: []string{"aardvark"},
		},
		{
			name: "content changed, same size, new mtime", old: true,
			change: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "a.md"), "# Alpha\n\nThe axolotls eats ants at night.\n")
			},
			want: want{updated: 1, unchanged: 2}, found: []string{"axolotls"}, gone: []string{"aardvark"},
		},
		{
			name: "content changed in the same tick, same size, same mtime",
			change: func(t *testing.T, root string) {
				p := filepath.Join(root, "a.md")
				info, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, p, "# Alpha\n\nThe axolotls eats ants at night.\n")
				if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
					t.Fatal(err)
				}
				if now, _ := os.Stat(p); now.Size() != info.Size() || !now.ModTime().Equal(info.ModTime()) {
					t.Fatalf("the change is not invisible to mtime and size: %v %v", now.Size(), now.ModTime())
				}
			},
			want: want{updated: 1, unchanged: 2}, found: []string{"axolotls"}, gone: []string{"aardvark"},
		},
		{
			name: "touched, content the same", old: true,
			change: func(t *testing.T, root string) {
				now := time.Now()
				if err := os.Chtimes(filepath.Join(root, "b.txt"), now, now); err != nil {
					t.Fatal(err)
				}
			},
			want: want{unchanged: 3}, found: []string{"badger"},
		},
		{
			name: "added", old: true,
			change: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "sub", "deeper", "d.md"), "# Delta\n\nThe dingo howls.\n")
			},
			want: want{added: 1, unchanged: 3}, found: []string{"dingo", "aardvark"},
		},
		{
			name: "removed", old: true,
			change: func(t *testing.T, root string) {
				if err := os.Remove(filepath.Join(root, "b.txt")); err != nil {
					t.Fatal(err)
				}
			},
			want: want{removed: 1, unchanged: 2}, gone: []string{"badger"},
		},
		{
			name: "folder removed", old: true,
			change: func(t *testing.T, root string) {
				if err := os.RemoveAll(filepath.Join(root, "sub")); err != nil {
					t.Fatal(err)
				}
			},
			want: want{removed: 1, unchanged: 2}, gone: []string{"chameleon"},
		},
		{
			name: "renamed", old: true,
			change: func(t *testing.T, root string) {
				if err := os.Rename(filepath.Join(root, "sub", "c.md"), filepath.Join(root, "c2.md")); err != nil {
					t.Fatal(err)
				}
			},
			want: want{added: 1, removed: 1, unchanged: 2}, found: []string{"chameleon"},
		},
		{
			name: "renamed over another file of the same size and mtime", old: true,
			change: func(t *testing.T, root string) {
				a, b := filepath.Join(root, "a.md"), filepath.Join(root, "b.md")
				writeFile(t, b, "# Alpha\n\nThe anteater eats ants at night.\n")
				ai, _ := os.Stat(a)
				if err := os.Chtimes(b, ai.ModTime(), ai.ModTime()); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(b, a); err != nil {
					t.Fatal(err)
				}
				if now, _ := os.Stat(a); now.Size() != ai.Size() || !now.ModTime().Equal(ai.ModTime()) {
					t.Fatalf("the change is not invisible to mtime and size: %v %v", now.Size(), now.ModTime())
				}
			},
			want: want{updated: 1, unchanged: 2}, found: []string{"anteater"}, gone: []string{"aardvark"},
		},
		{
			name: "renamed over another file", old: true,
			change: func(t *testing.T, root string) {
				if err := os.Rename(filepath.Join(root, "b.txt"), filepath.Join(root, "a.md")); err != nil {
					t.Fatal(err)
				}
			},
			want: want{updated: 1, removed: 1, unchanged: 1}, found: []string{"badger"}, gone: []string{"aardvark"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "a.md"), "# Alpha\n\nThe aardvark eats ants at night.\n")
			writeFile(t, filepath.Join(root, "b.txt"), "Bravo: the badger digs burrows.\n")
			writeFile(t, filepath.Join(root, "sub", "c.md"), "# Charlie\n\nThe chameleon changes colour.\n")
			if tc.old {
				setOld(t, root)
			}
			ix := openIndex(t, t.TempDir())
			if st, err := ix.Add(t.Context(), root); err != nil || st.Added != 3 {
				t.Fatalf("first add: %+v %v", st, err)
			}
			tc.change(t, root)
			st, err := ix.Add(t.Context(), root)
			if err != nil {
				t.Fatal(err)
			}
			if got := (want{st.Added, st.Updated, st.Unchanged, st.Removed}); got != tc.want {
				t.Fatalf("after the change: %+v, want %+v", got, tc.want)
			}
			for _, w := range tc.found {
				if rs, err := ix.Search(t.Context(), w, 5); err != nil || len(rs) == 0 {
					t.Errorf("%q not found after the change: %v", w, err)
				}
			}
			for _, w := range tc.gone {
				if rs, err := ix.Search(t.Context(), w, 5); err != nil || len(rs) != 0 {
					t.Errorf("%q still found after the change: %v %v", w, rs, err)
				}
			}
			// And the next re-index has nothing left to do.
			st, err = ix.Add(t.Context(), root)
			if err != nil || st.Added+st.Updated+st.Removed != 0 {
				t.Fatalf("re-index after the change: %+v %v", st, err)
			}
		})
	}
}

// A racy file whose content is found unchanged is trusted again once its
// modification time is old enough — by the next build, not by a write of
// its own.
func TestRacyFilesSettle(t *testing.T) {
	root := t.TempDir()
	content := "# Old\n\nThe okapi hides.\n"
	oldFile, newFile := filepath.Join(root, "old.md"), filepath.Join(root, "new.md")
	writeFile(t, oldFile, content)
	writeFile(t, newFile, content)
	sum := sha256.Sum256([]byte(content))
	long := time.Now().Add(-time.Hour).UnixNano()
	p := plan{check: []job{
		{found: found{path: oldFile, mod: long}, prev: &fileEntry{Hash: sum, Racy: true}},
		{found: found{path: newFile, mod: time.Now().UnixNano()}, prev: &fileEntry{Hash: sum, Racy: true}},
		{found: found{path: filepath.Join(root, "gone.md"), mod: long}, prev: &fileEntry{Hash: sum, Racy: true}},
	}}
	if err := p.checkContent(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := []verified{{path: oldFile, settle: true}, {path: newFile}}
	if !slices.Equal(p.unchanged, []string{oldFile, newFile}) || !slices.Equal(p.verified, want) || len(p.jobs) != 1 {
		t.Fatalf("unchanged %v, verified %v, jobs %d", p.unchanged, p.verified, len(p.jobs))
	}
}

// comparePaths is the order in which a walk meets paths, so that the scan's
// list and the manifest merge.
func TestComparePathsIsWalkOrder(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"a/f.md", "a-b/f.md", "a.b/f.md", "a b/f.md", "ab/f.md", "a0/f.md", "a~/f.md", "A/f.md", "é/f.md", "z/f.md",
		"a/b/f.md", "a/b-c/f.md", "a/b.c/f.md", "a/é/x/f.md", "a.md", "a-b.md", "a/b.md", "a/b/c.md", "a/b/c/d.md",
	} {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), "x\n")
	}
	var walked []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			walked = append(walked, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(walked); i++ {
		if comparePaths(walked[i-1], walked[i]) >= 0 || comparePaths(walked[i], walked[i-1]) <= 0 {
			t.Errorf("%q and %q out of walk order", walked[i-1], walked[i])
		}
	}
	ix := openIndex(t, t.TempDir())
	var st Stats
	found, err := ix.scan(t.Context(), []root{{path: dir, dir: true}}, &st)
	if err != nil {
		t.Fatal(err)
	}
	var scanned []string
	for _, f := range found {
		scanned = append(scanned, f.path)
	}
	if !slices.Equal(scanned, walked) {
		t.Fatalf("scan order\n%q\nwalk order\n%q", scanned, walked)
	}
}

// An index whose generation has the manifest of the format before columns
// (files.gob, a map) is read, re-indexed without work, and replaced by the
// next build.
func TestLegacyManifestIsRead(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.md"), "# Alpha\n\nThe aardvark eats ants.\n")
	writeFile(t, filepath.Join(root, "sub", "b.md"), "# Bravo\n\nThe badger digs.\n")
	setOld(t, root)
	dir := t.TempDir()
	ix := openIndex(t, dir)
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	gdir := filepath.Join(dir, genName(1))
	m, err := readManifest(gdir)
	if err != nil {
		t.Fatal(err)
	}
	type oldEntry struct {
		ModTime  int64
		Size     int64
		FileHash string
		Chunks   []int32
	}
	old := struct {
		Roots []string
		Files map[string]*oldEntry
	}{Roots: m.cols.Roots, Files: map[string]*oldEntry{}}
	for i, p := range m.paths {
		e := m.entry(i)
		old.Files[p] = &oldEntry{e.ModTime, e.Size, hex.EncodeToString(e.Hash[:]), e.Chunks}
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(old); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(gdir, legacyFilesName), buf.String())
	if err := os.Remove(filepath.Join(gdir, filesName)); err != nil {
		t.Fatal(err)
	}
	if st, err := ix.Add(t.Context(), root); err != nil || st.Unchanged != 2 || st.Added+st.Updated+st.Removed != 0 {
		t.Fatalf("no-op over a legacy manifest: %+v %v", st, err)
	}
	writeFile(t, filepath.Join(root, "a.md"), "# Alpha\n\nThe albatross glides.\n")
	if st, err := ix.Add(t.Context(), root); err != nil || st.Updated != 1 || st.Unchanged != 1 {
		t.Fatalf("change over a legacy manifest: %+v %v", st, err)
	}
	if rs, err := ix.Search(t.Context(), "aardvark", 5); err != nil || len(rs) != 0 {
		t.Fatalf("old chunks kept: %v %v", rs, err)
	}
	if _, err := os.Stat(filepath.Join(dir, genName(2), filesName)); err != nil {
		t.Fatalf("the next build did not write the current format: %v", err)
	}
}

// A damaged manifest is an error, never a panic or a wrong plan.
func FuzzManifest(f *testing.F) {
	files := map[string]*fileEntry{
		"/r/a.md":     {ModTime: 1, Size: 2, Chunks: []int32{1, 3, 4, 9}},
		"/r/b/c.md":   {ModTime: 3, Size: 4, Racy: true},
		"/r/b-c/d.md": {ModTime: 5, Size: 6, Chunks: []int32{1, 1}},
		"/r/b/e.txt":  {ModTime: 7, Size: 8, Outcome: Binary},
		"/r/f.docx":   {ModTime: 9, Size: 10, Outcome: Failed, Detail: "zip: not a valid zip file"},
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&newManifest([]string{"/r"}, files).cols); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, filesName), data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := readManifest(dir)
		if err != nil {
			return
		}
		for i, p := range m.paths {
			if m.find(p) != i {
				t.Fatalf("%q not found at %d", p, i)
			}
			e := m.entry(i)
			if len(e.Chunks) > len(m.cols.Chunks) {
				t.Fatal("chunks out of range")
			}
		}
	})
}

// A folder with more files than one stat task takes is looked at by several
// workers and still listed whole, in walk order, beside its subfolders.
func TestScanLargeFolder(t *testing.T) {
	dir := t.TempDir()
	const n = 3*statBatch + 7
	for i := range n {
		writeFile(t, filepath.Join(dir, "big", fmt.Sprintf("f%05d.md", i)), "x\n")
	}
	writeFile(t, filepath.Join(dir, "big", "f00100", "inner.md"), "x\n")
	writeFile(t, filepath.Join(dir, "big", "skip.png"), "x\n")
	writeFile(t, filepath.Join(dir, "small", "a.md"), "x\n")
	ix := openIndex(t, t.TempDir())
	var st Stats
	found, err := ix.scan(t.Context(), []root{{path: dir, dir: true}}, &st)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != n+2 || st.SkippedType != 1 {
		t.Fatalf("found %d files (want %d), %d skipped", len(found), n+2, st.SkippedType)
	}
	for i := 1; i < len(found); i++ {
		if comparePaths(found[i-1].path, found[i].path) >= 0 {
			t.Fatalf("%q before %q", found[i-1].path, found[i].path)
		}
	}
	if want := filepath.Join(dir, "big", "f00100", "inner.md"); found[100].path != want {
		t.Fatalf("found[100] = %q, want %q", found[100].path, want)
	}
	for _, f := range found {
		if f.size != 2 || f.mod == 0 {
			t.Fatalf("%s: size %d, mtime %d", f.path, f.size, f.mod)
		}
	}
}

// Several roots — overlapping, out of walk order, a file named on its own —
// are scanned once each, compared with the manifest whatever their order,
// and a later Add of one root leaves the others' files alone.
func TestReindexSeveralRoots(t *testing.T) {
	base := t.TempDir()
	notes, other := filepath.Join(base, "notes"), filepath.Join(base, "other")
	writeFile(t, filepath.Join(notes, "a.md"), "# A\n\nThe aardvark eats ants.\n")
	writeFile(t, filepath.Join(notes, "sub", "b.md"), "# B\n\nThe badger digs.\n")
	writeFile(t, filepath.Join(other, "c.md"), "# C\n\nThe chameleon changes colour.\n")
	writeFile(t, filepath.Join(base, "single.md"), "# S\n\nThe seal swims.\n")
	setOld(t, base)
	ix := openIndex(t, t.TempDir())
	roots := []string{other, filepath.Join(notes, "sub"), filepath.Join(base, "single.md"), notes}
	if st, err := ix.Add(t.Context(), roots...); err != nil || st.Added != 4 {
		t.Fatalf("first add: %+v %v", st, err)
	}
	if st, err := ix.Add(t.Context(), roots...); err != nil || st.Unchanged != 4 || st.Added+st.Updated+st.Removed != 0 {
		t.Fatalf("no-op add: %+v %v", st, err)
	}
	writeFile(t, filepath.Join(notes, "sub", "b.md"), "# B\n\nThe bison grazes on the plain.\n")
	if err := os.Remove(filepath.Join(notes, "a.md")); err != nil {
		t.Fatal(err)
	}
	if st, err := ix.Add(t.Context(), notes); err != nil || st.Updated != 1 || st.Removed != 1 || st.Unchanged != 0 {
		t.Fatalf("add of one root: %+v %v", st, err)
	}
	for w, n := range map[string]int{"bison": 1, "badger": 0, "aardvark": 0, "chameleon": 1, "seal": 1} {
		if rs, err := ix.Search(t.Context(), w, 5); err != nil || len(rs) != n {
			t.Errorf("%q: %d results, want %d (%v)", w, len(rs), n, err)
		}
	}
	if err := os.Remove(filepath.Join(base, "single.md")); err != nil {
		t.Fatal(err)
	}
	if st, err := ix.Add(t.Context(), roots...); err != nil || st.Removed != 1 || st.Unchanged != 2 {
		t.Fatalf("after the single file went: %+v %v", st, err)
	}
}
