package qualitybench

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// Packages are the standard-library packages whose documentation forms the "gopkg" corpus.
var Packages = []string{"context", "errors", "sync", "sync/atomic", "time", "encoding/json", "slices", "strings", "io", "unicode/utf8"}

// WritePackageDocs extracts the documentation of each package under goroot/src — the package comment and the doc
// comments of its exported constants, variables, types, functions and methods, as go doc prints them — into one
// Markdown file per package in dir (only the files this platform builds) (context.md, sync_atomic.md, …), which the corpus can index.
func WritePackageDocs(goroot, dir string, pkgs []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("package docs: %w", err)
	}
	for _, path := range pkgs {
		text, err := packageDoc(filepath.Join(goroot, "src", filepath.FromSlash(path)), path)
		if err != nil {
			return err
		}
		name := strings.ReplaceAll(path, "/", "_") + ".md"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("package docs %s: %w", path, err)
		}
	}
	return nil
}

func packageDoc(dir, importPath string) (string, error) {
	fset := token.NewFileSet()
	// The files this platform builds, as go doc reads them (encoding/json has files behind GOEXPERIMENT tags).
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		return "", fmt.Errorf("package docs %s: %w", importPath, err)
	}
	var files []*ast.File
	for _, n := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return "", fmt.Errorf("package docs %s: %w", importPath, err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, importPath)
	if err != nil {
		return "", fmt.Errorf("package docs %s: %w", importPath, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Package %s\n\n", importPath)
	b.Write(p.Markdown(p.Doc))
	section := func(title, text string) {
		if strings.TrimSpace(text) == "" {
			return
		}
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		b.Write(p.Markdown(text))
	}
	for _, f := range p.Funcs {
		section("func "+f.Name, f.Doc)
	}
	for _, t := range p.Types {
		section("type "+t.Name, t.Doc)
		for _, f := range t.Funcs {
			section("func "+f.Name, f.Doc)
		}
		for _, m := range t.Methods {
			section("func ("+t.Name+") "+m.Name, m.Doc)
		}
	}
	return b.String(), nil
}
