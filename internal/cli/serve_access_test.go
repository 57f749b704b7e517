package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

// --token shows in ps to every user of the machine; the token can come from a file (its first line, trimmed) or
// $DEEPRESEARCH_TOKEN instead. Both flags at once, an empty file and a FIFO (refused without blocking) are errors.
func TestTokenFromFileOrEnvironment(t *testing.T) {
	app := &App{Getenv: func(k string) string {
		if k == "DEEPRESEARCH_TOKEN" {
			return "from-env"
		}
		return ""
	}}
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("  from-file \nsecond line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		flags     tokenFlags
		want, err string
	}{
		{"environment", tokenFlags{}, "from-env", ""},
		{"file", tokenFlags{file: file}, "from-file", ""},
		{"flag", tokenFlags{value: "from-flag"}, "from-flag", ""},
		{"both flags", tokenFlags{value: "x", file: file}, "", "not both"},
		{"empty file", tokenFlags{file: empty}, "", "holds no token"},
		{"missing file", tokenFlags{file: filepath.Join(dir, "nope")}, "", "no such file"},
		{"fifo", tokenFlags{file: fifo}, "", "not a regular file"},
	} {
		done := make(chan struct{})
		var got string
		var err error
		go func() { got, err = tc.flags.token(app); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: reading the token blocked", tc.name)
		}
		if got != tc.want || (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %q, %v; want %q, error %q", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// With no --root and no sources.roots, a server shares the working folder and the folders already indexed; a
// --root (or sources.roots) replaces that default; the configured corpora and the server's own are always in.
func TestServerRoots(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	indexed := t.TempDir()
	if err := os.WriteFile(filepath.Join(indexed, "a.md"), []byte("# A\n\nBees dance.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := corpus.Open(corpus.DefaultDir(indexed))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Add(t.Context(), indexed); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	wd, _ := os.Getwd()
	configured, extra, flag, key := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	app := &App{Config: config.Defaults()}
	app.Config.Sources.Corpus = []string{configured}
	has := func(roots []string, dirs ...string) bool {
		for _, d := range dirs {
			if !slices.Contains(roots, d) {
				return false
			}
		}
		return true
	}
	if got := app.serverRoots(nil, extra); !has(got, wd, indexed, configured, extra) || len(got) != 4 {
		t.Errorf("default roots %q, want the working folder, the indexed folder, the configured and the server's corpora", got)
	}
	if got := app.serverRoots([]string{flag}); !has(got, flag, configured) || has(got, wd) || has(got, indexed) {
		t.Errorf("--root: %q", got)
	}
	app.Config.Sources.Roots = []string{key}
	if got := app.serverRoots(nil); !has(got, key, configured) || has(got, wd) {
		t.Errorf("sources.roots: %q", got)
	}
}
