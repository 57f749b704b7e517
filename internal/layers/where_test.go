package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/llm/providers"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources/extract"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

// moduleRoot is the repository's root, two folders up.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	return root
}

// sourceFile is one non-test Go file of the module: its path from the root and its string literals.
type sourceFile struct {
	path     string
	literals []string
	ast      *ast.File
}

func sourceFiles(t *testing.T, root string) []sourceFile {
	t.Helper()
	var out []sourceFile
	fset := token.NewFileSet()
	eachSourceFile(t, root, func(path string) error {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		sf := sourceFile{path: filepath.ToSlash(rel), ast: f}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil {
					sf.literals = append(sf.literals, v)
				}
			}
			return true
		})
		out = append(out, sf)
		return nil
	})
	return out
}

// holding returns the files whose string literals include one of values.
func holding(files []sourceFile, values []string) []string {
	var out []string
	for _, f := range files {
		if slices.ContainsFunc(f.literals, func(l string) bool { return slices.Contains(values, l) }) {
			out = append(out, f.path)
		}
	}
	return out
}

// declaring returns the file that declares the named type in the package folder dir.
func declaring(files []sourceFile, dir, typeName string) string {
	for _, f := range files {
		if filepath.ToSlash(filepath.Dir(f.path)) != dir {
			continue
		}
		for _, d := range f.ast.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					if s.(*ast.TypeSpec).Name.Name == typeName {
						return f.path
					}
				}
			}
		}
	}
	return ""
}

// whereRow is one row of docs/architecture.md's "Where to add things": the files it names and the count it gives.
type whereRow struct {
	where string
	count int
}

func whereRows(t *testing.T, root string) map[string]whereRow {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Where to add things\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "Where to add things" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]whereRow{}
	num := regexp.MustCompile(`^\d+`)
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) != 3 || !strings.HasPrefix(line, "| ") {
			continue
		}
		n, err := strconv.Atoi(num.FindString(strings.TrimSpace(cells[2])))
		if err != nil {
			continue
		}
		rows[strings.TrimPrefix(cells[0], "| ")] = whereRow{where: cells[1], count: n}
	}
	return rows
}

// checkRow holds a row against the files the code shows a concept is declared in.
func checkRow(t *testing.T, rows map[string]whereRow, name string, files []string) {
	t.Helper()
	row, ok := rows[name]
	if !ok {
		t.Errorf("docs/architecture.md has no row %q under \"Where to add things\"", name)
		return
	}
	slices.Sort(files)
	files = slices.Compact(files)
	if len(files) != row.count {
		t.Errorf("%s: the document says %d files, the code declares it in %d: %v", name, row.count, len(files), files)
	}
	for _, f := range files {
		if !strings.Contains(row.where, "`"+f+"`") {
			t.Errorf("%s: declared in %s, which the row does not name", name, f)
		}
	}
}

// The "Where to add things" file counts are what the code shows: each model provider, web search provider and
// converted document format is declared in the files the document names and no other, and a research role (the
// verifier, as an example) is declared in as many files as it says.
func TestWhereToAddThingsMatchesTheCode(t *testing.T) {
	root := moduleRoot(t)
	files := sourceFiles(t, root)
	rows := whereRows(t, root)

	// A model provider: its key variables and endpoints.
	var modelFiles []string
	for _, p := range providers.Builtin().Rows() {
		values := append(slices.Clone(p.KeyEnv), p.BaseURL, p.BaseURLEnv)
		values = slices.DeleteFunc(values, func(s string) bool { return s == "" })
		got := holding(files, values)
		if len(got) == 0 {
			t.Errorf("model provider %s: no file declares %v", p.Name, values)
		}
		modelFiles = append(modelFiles, got...)
	}
	checkRow(t, rows, "a model provider", modelFiles)

	// A web search provider: its key and URL variables and endpoint, and its client type.
	var webFiles []string
	for _, p := range websearch.Providers() {
		values := append(slices.Clone(p.KeyEnv), p.URLEnv, p.BaseURL)
		values = slices.DeleteFunc(values, func(s string) bool { return s == "" })
		webFiles = append(webFiles, holding(files, values)...)
		s, err := websearch.New(p.Name, websearch.Config{APIKey: "k", BaseURL: "http://127.0.0.1:1", Getenv: func(string) string { return "" }})
		if err != nil {
			t.Errorf("web search provider %s: %v", p.Name, err)
			continue
		}
		client := declaring(files, "sources/websearch", reflect.TypeOf(s).Elem().Name())
		if client == "" {
			t.Errorf("web search provider %s: no file declares its client %T", p.Name, s)
			continue
		}
		// Each provider's files: the table and the one file of its client.
		if got := len(slices.Compact(slices.Sorted(slices.Values(append(holding(files, values), client))))); got != rows["a web search provider"].count {
			t.Errorf("web search provider %s is declared in %d files: %v and %s", p.Name, got, holding(files, values), client)
		}
		webFiles = append(webFiles, client)
	}
	if row, ok := rows["a web search provider"]; ok {
		// The row names the table and both client files; per provider it is the table and one of them.
		for _, f := range slices.Compact(slices.Sorted(slices.Values(webFiles))) {
			if !strings.Contains(row.where, "`"+f+"`") {
				t.Errorf("a web search provider: declared in %s, which the row does not name", f)
			}
		}
	} else {
		t.Error(`docs/architecture.md has no row "a web search provider"`)
	}

	// A document format with a converter: its extensions.
	var formatFiles []string
	for _, f := range extract.Builtin().Formats() {
		if f.Convert == nil {
			continue
		}
		// The export table names the extensions of the files a report is written as — another concept, with its
		// own row ("an export format of a report").
		got := slices.DeleteFunc(holding(files, f.Extensions), func(p string) bool { return p == "research/export/export.go" })
		if len(got) == 0 {
			t.Errorf("format %s: no file declares %v", f.Name, f.Extensions)
		}
		formatFiles = append(formatFiles, got...)
	}
	checkRow(t, rows, "a document format", formatFiles)

	// A research role: the files that name the verifier.
	role := regexp.MustCompile(`\bVerifier\b|RoleVerifier|"verifier"`)
	var roleFiles []string
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f.path))
		if err != nil {
			t.Fatal(err)
		}
		if role.Match(data) {
			roleFiles = append(roleFiles, f.path)
		}
	}
	checkRow(t, rows, "a research role", roleFiles)
}

// The layer table of docs/architecture.md is this test's: the same layers in the same order, each naming every
// package pattern of its row here.
func TestDocumentedLayersAreTheTested(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Layers\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "Layers" section (internal/layers/doc.go cites it)`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var names []string
	packages := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) < 3 || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| layer ") || strings.HasPrefix(line, "|---") {
			continue
		}
		name := strings.TrimPrefix(cells[0], "| ")
		names = append(names, name)
		packages[name] = cells[1]
	}
	var want []string
	for _, l := range layers {
		want = append(want, l.name)
		for _, p := range l.packages {
			if !strings.Contains(packages[l.name], "`"+p+"`") {
				t.Errorf("layer %s: the document does not name `%s`", l.name, p)
			}
		}
	}
	want = append(want, "test support")
	if !slices.Equal(names, want) {
		t.Errorf("the document's layers are %v, the test's %v", names, want)
	}
	for _, p := range testSupport {
		if !strings.Contains(packages["test support"], "`"+p+"`") {
			t.Errorf("test support: the document does not name `%s`", p)
		}
	}
}

// A graph step is declared in as many files as the row "a graph step" says, all named there: its row of the
// step table (its name) and its function over a session (a method named like it), in the research package and
// the durable executor — which builds its activities from the table, and so declares no step of its own.
func TestGraphStepRowMatchesTheCode(t *testing.T) {
	root := moduleRoot(t)
	files := sourceFiles(t, root)
	rows := whereRows(t, root)
	var all []string
	for _, st := range research.Graph() {
		var got []string
		for _, f := range files {
			dir := filepath.ToSlash(filepath.Dir(f.path))
			if dir != "research" && dir != "internal/durable" {
				continue
			}
			named := slices.Contains(f.literals, st.Name)
			for _, d := range f.ast.Decls {
				// A method named like the step over its arguments: after a context, after a context and a run's
				// input (an activity's), or alone (an executor's method per step).
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == st.Name {
					n := fn.Type.Params.NumFields()
					named = named || n >= len(st.Args) && n <= len(st.Args)+2
				}
			}
			if named {
				got = append(got, f.path)
			}
		}
		if row, ok := rows["a graph step"]; ok && len(got) != row.count {
			t.Errorf("step %s is declared in %d files, the document says %d: %v", st.Name, len(got), row.count, got)
		}
		all = append(all, got...)
	}
	checkRow(t, rows, "a graph step", slices.Compact(slices.Sorted(slices.Values(all))))
}
