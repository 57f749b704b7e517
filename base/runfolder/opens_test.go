package runfolder

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// openCalls are the calls that open a file by its path, following links and blocking on FIFOs.
var openCalls = map[string]bool{
	"os.Open": true, "os.Create": true, "os.OpenFile": true, "os.ReadFile": true, "os.WriteFile": true,
	"os.CreateTemp": true, "atomicfile.Write": true, "sql.Open": true,
}

// notRunFolders lists, file by file, the production code allowed to open files by path, and why none of those
// paths is in a run folder. Everything a run folder names goes through this package.
var notRunFolders = map[string]string{
	"internal/cli/serve.go":                        "the viewer's --token-file, a file the user names (opened non-blocking, regular files only)",
	"lexical/bilingual/internal/gencedict/main.go": "the dictionary generator reads CC-CEDICT and writes the embedded data (go generate)",
	"lexical/synonyms/internal/genwordnet/main.go": "the thesaurus generator reads the WordNet database files and writes the embedded data (go generate)",
	"sources/corpus/ignore.go":                     "ignore files of the indexed folder",
	"research/state/state.go":                      "sql.Open of SQLite, after checkSQLiteFiles passed every file SQLite opens (checked below); PostgreSQL URLs",
	"base/atomicfile/atomicfile.go":                "whole-file replacement of configuration and chat files (trust list, sessions)",
	"internal/config/config.go":                    "configuration files",
	"internal/config/trust.go":                     "the trust list in the user's configuration folder",
	"internal/chat/session.go":                     "chat sessions under the user's session folder",
	"internal/chat/history.go":                     "chat's input history in the user's state folder",
	"internal/chat/complete.go":                    "Tab completion lists the folder of the path being typed",
	"internal/cli/durable.go":                      "the Temporal TLS certificate, key and CA files the configuration names",
	"internal/cli/research.go":                     "show --output FILE, a file the user names",
	"research/export/pdf.go":                       "the browser's input and output in a private temporary folder",
	"internal/cli/batch.go":                        "batch's questions.jsonl input and results.jsonl output, files the user names",
	"mcptools/config.go":                           ".mcp.json files",
	"contextmgr/memory.go":                         "the agent's memory file in its workspace",
	"subagent/types.go":                            "subagent definition files in the workspace",
	"docs/zh/guide.go":                             "writes the embedded guide into a folder the caller names",
	"sources/corpus/build.go":                      "the corpus index directory",
	"sources/corpus/manifest.go":                   "the corpus index directory",
	"sources/corpus/store.go":                      "the corpus index directory",
	"sources/corpus/scan.go":                       "the user's corpus files (its own link and type checks)",
	"sources/corpus/lock_unix.go":                  "the corpus index's lock files",
	"sources/corpus/lock_windows.go":               "the corpus index's lock files",
	"sources/corpus/lock_other.go":                 "the corpus index's lock files",
	"sources/fetch/cache.go":                       "the fetcher's HTTP cache directory",
	"internal/pgtest/pgtest.go":                    "test support: a throwaway PostgreSQL server's log",
	"internal/webui/researchtest/researchtest.go":  "test support: copies the test corpus",
	"research/researchtest/files.go":               "test support: hashes the files of a folder a test must leave unwritten (reads only)",
	"internal/bench/contextbench/contextbench.go":  "benchmark fixtures",
	"internal/bench/corpusbench/corpusbench.go":    "benchmark fixtures",
	"internal/bench/scalebench/scalebench.go":      "benchmark fixtures",
	"research/extractive/qualitybench/pkgdocs.go":  "benchmark fixtures",
}

// TestRunFolderOpensGoThroughRunfolder walks the repository's production code and fails on any open by path
// outside the files listed above, so a new reader or writer of a run folder cannot bypass the checks here (a
// FIFO as events.jsonl, a docs/ that links out of the folder).
func TestRunFolderOpensGoThroughRunfolder(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, path)
		rel = filepath.ToSlash(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if name := pkg.Name + "." + sel.Sel.Name; openCalls[name] {
				found[rel] = append(found[rel], fset.Position(call.Pos()).String()+" "+name)
			}
			return true
		})
		if rel == "research/state/state.go" {
			checkSQLiteOpen(t, f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for rel, calls := range found {
		if _, ok := notRunFolders[rel]; !ok {
			bad = append(bad, calls...)
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: open a run folder's files with base/runfolder, or list the file in notRunFolders with the reason its paths are not in a run folder", b)
	}
	for rel := range notRunFolders {
		if len(found[rel]) == 0 {
			t.Errorf("notRunFolders lists %s, which opens nothing by path any more: remove it", rel)
		}
	}
}

// checkSQLiteOpen asserts that openSQLite checks the files before the first sql.Open.
func checkSQLiteOpen(t *testing.T, f *ast.File) {
	t.Helper()
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "openSQLite" {
			continue
		}
		checked, opened := token.NoPos, token.NoPos
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch fun := call.Fun.(type) {
			case *ast.Ident:
				if fun.Name == "checkSQLiteFiles" && !checked.IsValid() {
					checked = call.Pos()
				}
			case *ast.SelectorExpr:
				if x, ok := fun.X.(*ast.Ident); ok && x.Name == "sql" && fun.Sel.Name == "Open" && !opened.IsValid() {
					opened = call.Pos()
				}
			}
			return true
		})
		if !checked.IsValid() || !opened.IsValid() || checked > opened {
			t.Errorf("openSQLite must call checkSQLiteFiles before sql.Open")
		}
		return
	}
	t.Errorf("research/state/state.go has no openSQLite")
}
