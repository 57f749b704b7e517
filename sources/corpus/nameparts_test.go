package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
)

// The index's analyser keeps a qualified name whole and adds its parts before it; a number keeps its
// point; every other word passes as before, at a position shifted past the added parts.
func TestAnalyserAddsTheNamesParts(t *testing.T) {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	index, query := m.AnalyzerNamed(analyzerName), m.AnalyzerNamed(queryAnalyzerName)
	for _, tc := range []struct{ in, index, query string }{
		{"The node:dgram module", "the@1 node@2 dgram@3 node:dgram@3 modul@4", "the@1 node:dgram@2 modul@3"},
		{"call fs.readFile(path)", "call@1 fs@2 readfil@3 fs.readfil@3 path@4", "call@1 fs.readfil@2 path@3"},
		{"set max_connections to 3.14", "set@1 max_connect@2 to@3 3.14@4", "set@1 max_connect@2 to@3 3.14@4"},
		{"inspect.get_annotations()", "inspect@1 get_annot@2 inspect.get_annot@2", "inspect.get_annot@1"},
		{"a __init__ method", "a@1 __init__@2 method@3", "a@1 __init__@2 method@3"},
		{"内存模型 os.EOL", "内存@1 存模@2 模型@3 os@4 eol@5 os.eol@5", "内存@1 存模@2 模型@3 os.eol@4"},
		{"plain words only", "plain@1 word@2 onli@3", "plain@1 word@2 onli@3"},
		{"see gcc_libinit.c, e.g. here", "see@1 gcc_libinit@2 gcc_libinit.c@2 e.g@3 here@4", "see@1 gcc_libinit.c@2 e.g@3 here@4"},
	} {
		for _, a := range []struct {
			name string
			an   analysis.Analyzer
			want string
		}{{"index", index, tc.index}, {"query", query, tc.query}} {
			var got []string
			for _, tok := range a.an.Analyze([]byte(tc.in)) {
				got = append(got, fmt.Sprintf("%s@%d", tok.Term, tok.Position))
			}
			if g := strings.Join(got, " "); g != a.want {
				t.Errorf("%s analyser, %q: got %s, want %s", a.name, tc.in, g, a.want)
			}
		}
	}
}

// A page documenting `node:dgram` and `dgram.createSocket()` is found by the module's bare name, among pages that
// say "module" far more often; a phrase written with a space finds the dotted name.
func TestSearchFindsAQualifiedNameByItsParts(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "dgram.md"), "# UDP/datagram sockets\n\nThe `node:dgram` module provides an implementation of UDP datagram sockets.\n\nNew instances are created using `dgram.createSocket()`.\n")
	for i := range 6 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("modules%d.md", i)), fmt.Sprintf("# Modules %d\n\nA module is loaded once; the module cache keeps each module, and a module may export another module.\n", i))
	}
	writeFile(t, filepath.Join(root, "config.md"), "# Connections\n\nThe `max_connections` setting determines the maximum number of concurrent connections.\n")
	writeFile(t, filepath.Join(root, "annotations.md"), "# Annotations\n\nCall `inspect.get_annotations()` to read the annotations dict of an object.\n")
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ q, want string }{
		{"dgram module", "dgram.md"},
		{"createSocket", "dgram.md"},
		{"dgram createSocket", "dgram.md"},
		{"node:dgram", "dgram.md"},
		{"get_annotations", "annotations.md"},
		{"max_connections setting", "config.md"},
	} {
		rs, err := ix.Search(t.Context(), tc.q, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 || !strings.Contains(rs[0].URL, "/"+tc.want+"#L") {
			t.Errorf("%s: got %+v, want %s first", tc.q, rs, tc.want)
		}
	}
}

// An index built with another analysis (an older deepresearch) is rebuilt whole by the next update, into a new
// generation: its unchanged files are not kept with their old terms, and a reader of the old generation keeps
// searching it until it lets go.
func TestIndexOfAnotherAnalysisIsRebuilt(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "dgram.md"), "# Sockets\n\nThe `node:dgram` module provides UDP datagram sockets.\n")
	writeFile(t, filepath.Join(root, "other.md"), "# Other\n\nNothing about sockets here.\n")
	dir := t.TempDir()
	ix := openIndex(t, dir)
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	first, err := readCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Mark the generation as indexed the way before names had parts.
	info, err := readGenInfo(filepath.Join(dir, first))
	if err != nil {
		t.Fatal(err)
	}
	if info.Analysis != analysisVersion {
		t.Fatalf("a new generation records analysis %d, want %d", info.Analysis, analysisVersion)
	}
	info.Analysis = 0
	data, _ := json.Marshal(info)
	if err := os.WriteFile(filepath.Join(dir, first, infoName), data, 0o644); err != nil {
		t.Fatal(err)
	}

	reader := openIndex(t, dir) // holds the old generation while the update runs
	if rs, err := reader.Search(t.Context(), "datagram", 5); err != nil || len(rs) == 0 {
		t.Fatalf("old generation before the update: %v, %v", rs, err)
	}
	var logged bytes.Buffer
	updater, err := OpenWith(dir, &Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer updater.Close()
	st, err := updater.Add(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logged.String(), "earlier version") {
		t.Errorf("the rebuild is not said: %q", logged.String())
	}
	if st.Added != 2 || st.Unchanged != 0 {
		t.Errorf("update of an index of another analysis: %d added, %d unchanged; want both files re-added", st.Added, st.Unchanged)
	}
	second, err := readCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatalf("rebuilt into the generation being read (%s)", first)
	}
	if info, err := readGenInfo(filepath.Join(dir, second)); err != nil || info.Analysis != analysisVersion || info.Files != 2 {
		t.Errorf("rebuilt generation's info: %+v, %v", info, err)
	}
	if rs, err := reader.Search(t.Context(), "datagram", 5); err != nil || len(rs) == 0 {
		t.Errorf("the reader of the old generation lost it during the update: %v, %v", rs, err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Contains(names, second) {
		t.Errorf("index folder holds %v, not the new generation %s", names, second)
	}
	// A later update of the rebuilt index is incremental again.
	st, err = openIndex(t, dir).Add(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unchanged != 2 || st.Added != 0 {
		t.Errorf("second update: %d added, %d unchanged; want 2 unchanged", st.Added, st.Unchanged)
	}
}

// A generation indexed before the name parts has no query analyser in its stored mapping: its queries are analysed
// by the one analyser it has, as when it was built.
func TestQueryAnalyserOfAnOlderIndex(t *testing.T) {
	current, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	older := bleve.NewIndexMapping()
	if err := older.AddCustomAnalyzer(analyzerName, map[string]any{"type": custom.Name, "tokenizer": unicode.Name}); err != nil {
		t.Fatal(err)
	}
	older.DefaultAnalyzer = analyzerName
	for _, tc := range []struct {
		m    mapping.IndexMapping
		want string
	}{{current, queryAnalyzerName}, {older, analyzerName}} {
		idx, err := bleve.NewMemOnly(tc.m)
		if err != nil {
			t.Fatal(err)
		}
		if got := (&generation{idx: idx}).queryAnalyzer(); got != tc.want {
			t.Errorf("query analyser %q, want %q", got, tc.want)
		}
		idx.Close()
	}
}
