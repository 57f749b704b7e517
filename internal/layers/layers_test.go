package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/deepresearch/deepresearch"

// layer is one row of the table in docs/architecture.md. A pattern ending in "/..." matches the package and
// every package below it; longer patterns win.
type layer struct {
	name     string
	packages []string
}

// layers runs from the top (entry points) to the bottom (text and files).
var layers = []layer{
	{"entry", []string{"cmd/...", "examples/...", "internal/layers"}},
	{"surfaces", []string{"internal/cli", "internal/webui", "internal/mcpserver", "internal/chat"}},
	{"benchmarks", []string{"internal/bench/..."}},
	{"assembly", []string{"internal/request", "internal/config", "internal/durable", "harness/..."}},
	{"research", []string{"research/..."}},
	{"publication check", []string{"research/publish"}},
	{"runtime", []string{"agent/...", "contextmgr/...", "mcptools/...", "subagent/...", "workspace/..."}},
	{"sources", []string{"sources/..."}},
	{"models", []string{"llm/..."}},
	{"text and files", []string{"lexical/...", "base/...", "docs/..."}},
}

// testSupport are fakes and fixtures: only test files, benchmarks and other test support import them.
var testSupport = []string{"llm/llmtest", "mcptools/mcptest", "research/researchtest/...", "internal/webui/researchtest",
	"sources/internal/testpdf", "sources/internal/testzip", "internal/pgtest", "internal/temporaltest"}

func match(pkg, pattern string) (bool, int) {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/"), len(base)
	}
	return pkg == pattern, len(pattern)
}

// layerOf returns the index of pkg's layer, or -1.
func layerOf(pkg string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l.packages {
			if ok, n := match(pkg, p); ok && n > bestLen {
				best, bestLen = i, n
			}
		}
	}
	return best
}

func isTestSupport(pkg string) bool {
	return slices.ContainsFunc(testSupport, func(p string) bool { ok, _ := match(pkg, p); return ok })
}

// imports maps each package of the module (relative path) to the module packages its non-test files import.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	eachSourceFile(t, root, func(path string) error {
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		for _, im := range f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return err
			}
			if dep, ok := strings.CutPrefix(p, module+"/"); ok && !slices.Contains(out[pkg], dep) {
				out[pkg] = append(out[pkg], dep)
			}
		}
		return nil
	})
	return out
}

// eachSourceFile calls visit with the path of every non-test Go file of the module below root, leaving out
// hidden, underscore, testdata and node_modules folders and modules of their own (bench/); an error fails the test.
func eachSourceFile(t *testing.T, root string, visit func(path string) error) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // a module of its own, with its own imports
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		return visit(path)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestImportsPointDown(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	graph := imports(t, root)
	if len(graph) < 30 {
		t.Fatalf("found only %d packages under %s", len(graph), root)
	}
	for pkg, deps := range graph {
		if isTestSupport(pkg) {
			// Test support may use any production package below the surfaces, and other test support.
			for _, dep := range deps {
				if to := layerOf(dep); to >= 0 && to <= 1 && !isTestSupport(dep) {
					t.Errorf("test support %s imports %s (%s)", pkg, dep, layers[to].name)
				}
			}
			continue
		}
		from := layerOf(pkg)
		if from < 0 {
			t.Errorf("package %s is in no layer: add it to the table here and in docs/architecture.md", pkg)
			continue
		}
		for _, dep := range deps {
			to := layerOf(dep)
			switch {
			case to < 0:
				// reported as its own package
			case isTestSupport(dep) && !isTestSupport(pkg) && layers[from].name != "benchmarks":
				t.Errorf("%s (%s) imports test support %s: only tests and benchmarks may", pkg, layers[from].name, dep)
			case to < from:
				t.Errorf("%s (%s) imports %s of a higher layer (%s)", pkg, layers[from].name, dep, layers[to].name)
			}
		}
	}
}

// The rule itself is checked against an import graph that breaks it, so that the test cannot pass by seeing
// nothing.
func TestRuleCatchesUpwardImports(t *testing.T) {
	cases := []struct {
		pkg, dep string
		bad      bool
	}{
		{"research", "agent", false},
		{"research", "research/publish", false},
		{"research/publish", "research", true},
		{"research/llmroles", "research/publish", false},
		{"agent", "research", true},
		{"llm/openai", "lexical", false},
		{"lexical", "llm", true},
		{"sources/corpus", "internal/config", true},
		{"internal/cli", "internal/request", false},
		{"research/llmroles", "research/researchtest", true},
		{"internal/bench/graphbench", "research/researchtest", false},
	}
	for _, c := range cases {
		from, to := layerOf(c.pkg), layerOf(c.dep)
		bad := to < from || isTestSupport(c.dep) && !isTestSupport(c.pkg) && layers[from].name != "benchmarks"
		if from < 0 || to < 0 || bad != c.bad {
			t.Errorf("%s → %s: layers %d → %d, judged bad=%v, want %v", c.pkg, c.dep, from, to, bad, c.bad)
		}
	}
}
