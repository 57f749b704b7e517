package corpus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// Ignore rules from above the indexed folder apply as git applies them: from
// the top of the work tree (the folder holding .git) down, with
// .git/info/exclude under them all, anchored to each file's folder.
func TestIgnoreFromAbove(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // under the temporary folder; "/" ending: a folder
		index string            // the folder indexed
		home  string            // $HOME, when set
		want  []string          // the files indexed, relative to index
	}{
		{
			name: "parent gitignore",
			files: map[string]string{
				".git/": "", ".gitignore": "build/\n*.txt\n",
				"sub/a.md": "a", "sub/build/b.md": "b", "sub/notes.txt": "n", "sub/code.go": "package x\n",
			},
			index: "sub",
			want:  []string{"a.md", "code.go"},
		},
		{
			name: "levels between top and root, nearest decides",
			files: map[string]string{
				".git/": "", ".gitignore": "*.log.md\ntmp/\n", "mid/.gitignore": "!keep.log.md\n*.draft.md\n",
				"mid/sub/.gitignore": "!x.draft.md\n",
				"mid/sub/a.log.md":   "a", "mid/sub/keep.log.md": "k", "mid/sub/y.draft.md": "y", "mid/sub/x.draft.md": "x",
				"mid/sub/tmp/t.md": "t", "mid/sub/d/keep.log.md": "k",
			},
			index: "mid/sub",
			want:  []string{"d/keep.log.md", "keep.log.md", "x.draft.md"},
		},
		{
			name: "a pattern with a slash is relative to its file's folder",
			files: map[string]string{
				".git/": "", ".gitignore": "sub/gen/\n/top.md\ndocs/*.md\nsub/docs/*.txt\n",
				"sub/a.md": "a", "sub/gen/x.md": "x", "sub/top.md": "t", "sub/docs/d.md": "d", "sub/docs/d.txt": "d",
			},
			index: "sub",
			want:  []string{"a.md", "docs/d.md", "top.md"},
		},
		{
			name: "an excluded folder stays excluded whatever a deeper file says",
			files: map[string]string{
				".git/": "", ".gitignore": "build/\nout/\n!out/keep.md\n",
				"sub/build/.gitignore": "!b.md\n", "sub/build/b.md": "b", "sub/out/keep.md": "k", "sub/a.md": "a",
			},
			index: "sub",
			want:  []string{"a.md"},
		},
		{
			name: "double-star patterns",
			files: map[string]string{
				".git/": "", ".gitignore": "**/tmp/**\nlogs/**/*.md\n**/cache\n",
				"sub/.gitignore": "deep/**/*.md\n",
				"sub/tmp/a.md":   "a", "sub/logs/x/y.md": "y", "sub/x/cache/c.md": "c",
				"sub/deep/a/b/c.md": "c", "sub/deep/c.md": "c", "sub/deep/c.go": "package c\n",
			},
			index: "sub",
			want:  []string{"deep/c.go", "logs/x/y.md"},
		},
		{
			name: ".git/info/exclude and a .git file pointing to a linked work tree",
			files: map[string]string{
				"main/.git/info/exclude": "*.secret.md\n", "main/.git/worktrees/w/commondir": "../..\n",
				"w/.git": "gitdir: ../main/.git/worktrees/w\n", "w/.gitignore": "private/\n",
				"w/sub/a.md": "a", "w/sub/x.secret.md": "s", "w/sub/private/p.md": "p",
			},
			index: "w/sub",
			want:  []string{"a.md"},
		},
		{
			name: "the indexed folder is the top",
			files: map[string]string{
				"r/.git/info/exclude": "# local\n*.txt\n", "r/a.md": "a", "r/b.txt": "b",
			},
			index: "r",
			want:  []string{"a.md"},
		},
		{
			name: "no .git above: other folders' ignore files do not apply",
			files: map[string]string{
				".gitignore": "*.md\n", "sub/.gitignore": "*.txt\n", "sub/deeper/a.md": "a", "sub/deeper/b.txt": "b",
			},
			index: "sub/deeper",
			want:  []string{"a.md", "b.txt"},
		},
		{
			name: "not above the home folder",
			files: map[string]string{
				"home/.git/": "", "home/.gitignore": "*\n", "home/notes/a.md": "a",
			},
			home:  "home",
			index: "home/notes",
			want:  []string{"a.md"},
		},
		{
			// The user named the folder: it is indexed though git would
			// ignore all of it, and the other patterns still apply.
			name: "the indexed folder is itself ignored from above",
			files: map[string]string{
				".git/": "", ".gitignore": "sub/\n*.txt\n!sub/a.md\n", "a/.gitignore": "b\n",
				"sub/a.md": "a", "sub/n.txt": "n", "a/b/c.md": "c",
			},
			index: "sub",
			want:  []string{"a.md"},
		},
		{
			name: "a folder above ignored by a pattern with a slash",
			files: map[string]string{
				".git/": "", ".gitignore": "a/b\n*.txt\n", "a/b/c.md": "c", "a/b/c.txt": "c",
			},
			index: "a/b",
			want:  []string{"c.md"},
		},
		{
			name: "a .gitignore that is a folder",
			files: map[string]string{
				".git/": "", ".gitignore/x.md": "*.md\n", "sub/.gitignore/y": "*.md\n", "sub/a.md": "a",
			},
			index: "sub",
			want:  []string{"a.md"},
		},
		{
			name: "glob syntax that is not regular expression syntax",
			files: map[string]string{
				".git/": "", ".gitignore": "n?.md\n[!a]x.md\nc++.md\nv(1).md\n\\#h.md\n\\!b.md\nq\\?.md\ns[*].md\nlit\\*.md\n$d^.md\n",
				"sub/n1.md": "", "sub/nn.md": "", "sub/n12.md": "", "sub/ax.md": "", "sub/bx.md": "", "sub/c++.md": "",
				"sub/cc.md": "", "sub/v(1).md": "", "sub/v1.md": "", "sub/#h.md": "", "sub/!b.md": "", "sub/q?.md": "",
				"sub/qq.md": "", "sub/s*.md": "", "sub/ss.md": "", "sub/lit*.md": "", "sub/litx.md": "", "sub/$d^.md": "",
			},
			index: "sub",
			want:  []string{"ax.md", "cc.md", "litx.md", "n12.md", "qq.md", "ss.md", "v1.md"},
		},
		{
			name: "a pattern matches the path itself, not what is below it",
			files: map[string]string{
				".git/": "", ".gitignore": "*\n!*/\n!*.md\n", "sub/.gitignore": "out/**\n!out/keep.md\nlog/\n!bin\n",
				"sub/a.md": "a", "sub/a.txt": "a", "sub/d/b.md": "b", "sub/d/b.go": "package b\n",
				"sub/out/keep.md": "k", "sub/out/x.md": "x", "sub/log": "a file, not a folder", "sub/bin/c.md": "c",
			},
			index: "sub",
			want:  []string{"a.md", "bin/c.md", "d/b.md", "out/keep.md"},
		},
		{
			name: "an ignore-everything folder named for indexing",
			files: map[string]string{
				".git/": "", ".gitignore": "/data/*\n!/data/.gitignore\ndata/x/*.txt\n",
				"data/x/a.md": "a", "data/x/b.txt": "b",
			},
			index: "data/x",
			want:  []string{"a.md"},
		},
		{
			name: "a nested repository has its own rules only",
			files: map[string]string{
				".git/": "", ".gitignore": "*.txt\n", "sub/b.txt": "b",
				"sub/nested/.git/info/exclude": "*.log.md\n", "sub/nested/a.txt": "a", "sub/nested/x.log.md": "x",
				"sub/mod/.git": "gitdir: ../../.git/modules/mod\n", ".git/modules/mod/info/exclude": "*.go\n",
				"sub/mod/c.txt": "c", "sub/mod/c.go": "package c\n",
			},
			index: "sub",
			want:  []string{"mod/c.txt", "nested/a.txt"},
		},
		{
			name: "malformed patterns match nothing",
			files: map[string]string{
				".git/": "", ".gitignore": "[\n!\n/\n\\\n(\n*.txt\n", "sub/a.md": "a", "sub/b.txt": "b",
			},
			index: "sub",
			want:  []string{"a.md"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			for p, content := range tc.files {
				full := filepath.Join(base, filepath.FromSlash(p))
				if strings.HasSuffix(p, "/") {
					if err := os.MkdirAll(full, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				writeFile(t, full, content)
			}
			if tc.home != "" {
				t.Setenv("HOME", filepath.Join(base, tc.home))
			}
			if got := scanRel(t, filepath.Join(base, filepath.FromSlash(tc.index))); !slices.Equal(got, tc.want) {
				t.Errorf("indexed %q, want %q", got, tc.want)
			}
		})
	}
}

// An ignore file is applied whole or not at all: rules past the old bound
// of 1,000 apply, and an ignore file that would take the rules in effect
// past the bounds fails its folder, reported with the file's name and
// counts, so that no pattern left out lets a file into the index.
func TestIgnoreBounds(t *testing.T) {
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Line 1,001 of a .gitignore excludes the secret.
	writeFile(t, filepath.Join(base, ".gitignore"), strings.Repeat("junk/\n", 1000)+"secret*.md\n")
	writeFile(t, filepath.Join(base, "a.md"), "a")
	writeFile(t, filepath.Join(base, "secret-keys.md"), "s")
	// Past the bound on the rules in effect (with those above): the folder fails.
	writeFile(t, filepath.Join(base, "many", ".gitignore"), strings.Repeat("junk/\n", maxIgnoreRules-1000)+"secret*.md\n")
	writeFile(t, filepath.Join(base, "many", "b.md"), "b")
	writeFile(t, filepath.Join(base, "many", "deeper", "c.md"), "c")
	// Past the bound on bytes.
	writeFile(t, filepath.Join(base, "big", ".gitignore"), "#"+strings.Repeat("x", maxIgnoreBytes)+"\nsecret*.md\n")
	writeFile(t, filepath.Join(base, "big", "secret.md"), "s")

	ix := openIndex(t, t.TempDir())
	var st Stats
	found, err := ix.scan(t.Context(), []root{{path: base, dir: true}}, &st)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range found {
		got = append(got, filepath.Base(f.path))
	}
	if want := []string{"a.md"}; !slices.Equal(got, want) {
		t.Errorf("indexed %q, want %q", got, want)
	}
	if len(st.Failed) != 2 {
		t.Fatalf("failed: %v, want the two folders", st.Failed)
	}
	for i, tc := range []struct{ dir, says string }{
		{"big", fmt.Sprintf("%d KiB", maxIgnoreBytes>>10)},
		{"many", fmt.Sprintf("%d patterns (with the ignore files above it: %d), more than the %d", maxIgnoreRules-999, maxIgnoreRules+2, maxIgnoreRules)},
	} {
		f := st.Failed[i]
		if f.Path != filepath.Join(base, tc.dir) || !strings.Contains(f.Err.Error(), filepath.Join(base, tc.dir, ".gitignore")) ||
			!strings.Contains(f.Err.Error(), tc.says) {
			t.Errorf("failure %d: %v, want %s named with %q", i, f, tc.dir, tc.says)
		}
	}

	// From above the indexed folder too.
	st = Stats{}
	found, err = ix.scan(t.Context(), []root{{path: filepath.Join(base, "many", "deeper"), dir: true}}, &st)
	if err != nil || len(found) != 0 || len(st.Failed) != 1 || !strings.Contains(st.Failed[0].Err.Error(), "patterns") {
		t.Errorf("from above: found %d, failed %v, %v", len(found), st.Failed, err)
	}
}

// A hostile .gitignore (patterns "a*b", "a*a*b", … of up to 199 stars) is
// matched right, and a cancelled scan stops within a folder, not after it.
func TestIgnoreHostile(t *testing.T) {
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(base, ".gitignore"), hostileIgnore())
	var want []string
	for i := range 600 {
		name := hostileName(i)
		writeFile(t, filepath.Join(base, name), "x")
		want = append(want, name)
	}
	writeFile(t, filepath.Join(base, strings.Repeat("a", 150)+"b"), "x") // matched by every pattern up to 150 stars
	writeFile(t, filepath.Join(base, "ab.md"), "x")                      // by none: the name ends in "d"
	want = append(want, "ab.md")
	slices.Sort(want)
	if got := scanRel(t, base); !slices.Equal(got, want) {
		t.Errorf("indexed %d files, want %d", len(got), len(want))
	}

	ix := openIndex(t, t.TempDir())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	d := &scanDir{path: base}
	if more := ix.readDir(ctx, d); more != nil || len(d.items) >= 600 {
		t.Errorf("a cancelled readDir went on: %d entries, %d tasks", len(d.items), len(more))
	}
	if _, err := ix.scan(ctx, []root{{path: base, dir: true}}, &Stats{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled scan: %v", err)
	}
}

// scanRel returns the files a scan of folder would index, relative to it.
func scanRel(t *testing.T, folder string) []string {
	t.Helper()
	ix := openIndex(t, t.TempDir())
	var st Stats
	found, err := ix.scan(t.Context(), []root{{path: folder, dir: true}}, &st)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range found {
		rel, err := filepath.Rel(folder, f.path)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, filepath.ToSlash(rel))
	}
	slices.Sort(got)
	return got
}

// Ignore files that are not regular files are not read: a FIFO would block
// the scan forever, and git does not follow a symbolic link to one.
func TestIgnoreFileNotRegular(t *testing.T) {
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(base, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(base, "elsewhere"), "*.md\n")
	sub := filepath.Join(base, "sub")
	writeFile(t, filepath.Join(sub, "a.md"), "a")
	writeFile(t, filepath.Join(sub, "b.txt"), "b")
	if err := os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(sub, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	if got, want := scanRel(t, sub), []string{"a.md", "b.txt"}; !slices.Equal(got, want) {
		t.Errorf("indexed %q, want %q", got, want)
	}
	// An unreadable .gitignore (when permissions are enforced) is skipped too.
	gi := filepath.Join(sub, "x", ".gitignore")
	writeFile(t, gi, "*.md\n")
	writeFile(t, filepath.Join(sub, "x", "c.md"), "c")
	if err := os.Chmod(gi, 0); err != nil {
		t.Fatal(err)
	}
	want := []string{"a.md", "b.txt"}
	if _, err := os.ReadFile(gi); err != nil {
		want = []string{"a.md", "b.txt", "x/c.md"}
	}
	if got := scanRel(t, sub); !slices.Equal(got, want) {
		t.Errorf("with an unreadable .gitignore: indexed %q, want %q", got, want)
	}
}

// Indexing a folder under a repository with ignore rules above it, then
// again with nothing changed, writes nothing the second time, and a change
// to a parent .gitignore takes effect on the next re-index.
func TestIgnoreFromAboveReindex(t *testing.T) {
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(base, ".gitignore"), "build/\n*.txt\n")
	sub := filepath.Join(base, "sub")
	for i := range 6 {
		writeFile(t, filepath.Join(sub, fmt.Sprintf("n%d.md", i)), fmt.Sprintf("# Note %d\n\nThe okapi number %d grazes.\n", i, i))
	}
	writeFile(t, filepath.Join(sub, "build", "b.md"), "# built\n")
	writeFile(t, filepath.Join(sub, "notes.txt"), "notes\n")
	setOld(t, base)
	dir := filepath.Join(t.TempDir(), "idx")
	ix := openIndex(t, dir)
	st, err := ix.Add(t.Context(), sub)
	if err != nil || st.Added != 6 || st.Excluded != 2 {
		t.Fatalf("first add: %+v %v", st, err)
	}
	before := snapshot(t, dir)
	if st, err := ix.Add(t.Context(), sub); err != nil || st.Unchanged != 6 || st.Added+st.Updated+st.Removed != 0 || st.Excluded != 2 {
		t.Fatalf("no-op add: %+v %v", st, err)
	}
	sameSnapshot(t, before, snapshot(t, dir))
	writeFile(t, filepath.Join(base, ".gitignore"), "build/\n")
	if st, err := ix.Add(t.Context(), sub); err != nil || st.Added != 1 || st.Unchanged != 6 || st.Excluded != 1 {
		t.Fatalf("after the parent .gitignore changed: %+v %v", st, err)
	}
}

// Any ignore file compiles, and its rules match any path without
// panicking; the literal only spares work: without it every answer is the
// same.
func FuzzCompileIgnore(f *testing.F) {
	for _, s := range []string{
		"build/\n*.txt\n!keep.txt\n", "**/tmp/**\nlogs/**/*.md\n", "[\n!\n/\n\\\n(\n", "n?.md\n[!a]x.md\nc++.md\n\\#h\n",
		"a/b\r\n  \n# c\n\\ \n", "[]]\n[!]a]\n[a-\n***\n/**/\n**\n", "[abcdef]x.md\n**/foo\na/**/bcd\n",
	} {
		f.Add(s, "a/b.md")
		f.Add(s, "a/foo")
		f.Add(s, "bx.md")
	}
	f.Fuzz(func(t *testing.T, text, path string) {
		rules := compileIgnore(text)
		for _, r := range rules {
			plain := &ignoreRule{pat: r.pat, negate: r.negate, dirOnly: r.dirOnly}
			for _, dir := range []bool{false, true} {
				if got, want := r.matches(path, dir), plain.matches(path, dir); got != want {
					t.Fatalf("%q (literal %q) on %q (folder: %v): %v, without the literal %v", text, r.literal, path, dir, got, want)
				}
			}
		}
		g := &ignorer{dir: "/r", rules: rules}
		g.match("/r/"+path, false)
		g.match("/r/"+path, true)
	})
}

// The matcher answers as the go-gitignore library's regular expressions
// answered (the corpus's matcher before this one) wherever the library
// follows git; where it does not, TestIgnoreLikeGit has git's answers.
func FuzzIgnoreAgainstLibrary(f *testing.F) {
	for _, s := range []string{
		"*.md", "build/", "docs/*.md", "**/tmp/**", "logs/**/*.md", "**/cache", "n?.md", "[!a]x.md", "c++.md",
		"\\#h.md", "q\\?.md", "s[*].md", "lit\\*.md", "$d^.md", "[a-c]?/*.go", "a*a*a*b", "out/**", "*", "!*/",
		"/top.md", "a/**/b", "[]a]*", "[\\]]x", "é*.md", "*[é-ü]", "[0-9][0-9]",
	} {
		for _, p := range []string{"a.md", "docs/x.md", "x/tmp/y", "logs/a/b/c.md", "aab", "n1.md", "b/x.md", "a/b", "a/x/y/b", "é1.md"} {
			f.Add(s, p)
		}
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if strings.ContainsAny(pattern, "\n\r") || path == "" || strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") ||
			strings.Contains(path, "//") || slices.Contains(strings.Split(path, "/"), ".") || slices.Contains(strings.Split(path, "/"), "..") {
			return // not one pattern, or not a cleaned relative path
		}
		if !libAgrees(pattern, path) {
			return
		}
		rules := compileIgnore(pattern)
		lib := compileLib(pattern)
		for _, dir := range []bool{false, true} {
			got := len(rules) == 1 && rules[0].matches(path, dir)
			want := lib != nil && lib.matches(path, dir)
			if got != want {
				t.Fatalf("%q on %q (folder: %v): %v, the library %v", pattern, path, dir, got, want)
			}
		}
	})
}

// Where the library the corpus used before departs from git, the matcher
// answers as git does (answers checked with git 2.39's check-ignore).
func TestIgnoreLikeGit(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		dir, want     bool
	}{
		{"a/**b", "a/xb", false, true}, // "**" not alone between slashes is "*"
		{"a/**b", "a/b", false, true},
		{"a/**b", "a/x/yb", false, false},
		{"a/**b", "ab", false, false},
		{"/**", "x/y", false, true},
		{"**/**", "0", false, true},
		{"***", "a/b", false, true},
		{"a/***/b", "a/x/y/b", false, true},
		{"a/**/", "a/0", true, true},
		{"a[!b]c", "a/c", false, false}, // no class matches "/"
		{"a[!b]c", "axc", false, true},
		{"x[/]y", "x/y", false, false},
		{"[z-ab]x", "zx", false, true}, // a backward range is empty, its start still matches
		{"[z-ab]x", "bx", false, true},
		{"[z-ab]x", "qx", false, false},
		{"[[:alpha:]]1", "c1", false, true},
		{"[[:alpha:]]1", "11", false, false},
		{"[[:digit:][:upper:]]x", "Qx", false, true},
		{"[[:nope:]]x", "nx", false, false}, // an unknown class matches nothing
		{"[a-b-d]1", "d1", false, true},
		{"[a-b-d]1", "c1", false, false},
		{"! x", " x", false, true}, // the pattern " x", negated
		{"! x", "x", false, false},
		{"a\\/b", "a/b", false, true},
		{"[\\]x]", "x", false, true},
		{"*", "0\n/0", false, true},
		{"n?.md", "né.md", false, true}, // "?" is one character, not one byte
	} {
		rules := compileIgnore(tc.pattern)
		got := len(rules) == 1 && rules[0].matches(tc.path, tc.dir)
		if got != tc.want {
			t.Errorf("%q on %q (folder: %v): %v, want %v", tc.pattern, tc.path, tc.dir, got, tc.want)
		}
	}
}

// The literal that spares a pattern its matching is one that every path
// the pattern matches contains.
func TestIgnoreLiteral(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{"*.ext5", ".ext5"},
		{"**/foo", "foo"},
		{"a/**/bcd", "bcd"},
		{"[abcdef]x.md", "x.md"},
		{"[]abcdef]x", "x"},
		{"[!abcdef]", ""},
		{"docs/*.md", "docs"},
		{`\#h.md`, "#h.md"},
		{"n?.md", ".md"},
		{"[abc", "[abc"}, // no class: "[" is itself
		{"a[", "a["},
		{"*", ""},
		{"[[:alpha:]]1x", "1x"},
		{"ab*[[:digit:]]xyz", "xyz"},
	} {
		rules := compileIgnore(tc.pattern)
		if len(rules) != 1 {
			t.Fatalf("%q: %d rules", tc.pattern, len(rules))
		}
		if got := rules[0].literal; got != tc.want {
			t.Errorf("literal of %q = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}
