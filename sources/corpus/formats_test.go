package corpus

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/deepresearch/deepresearch/sources/extract"
	"github.com/deepresearch/deepresearch/sources/internal/testzip"
)

// zipFile writes a zip container with the given members (testzip.Build), in name order.
func zipFile(t *testing.T, path string, members map[string]string) {
	t.Helper()
	var ms [][2]string
	for _, name := range slices.Sorted(maps.Keys(members)) {
		ms = append(ms, [2]string{name, members[name]})
	}
	if err := os.WriteFile(path, testzip.Build(ms...), 0o644); err != nil {
		t.Fatal(err)
	}
}

const goSource = `// Package shelf keeps books.
package shelf

import "sort"

// Book is one volume on the shelf.
type Book struct {
	Title string
}

// Sort orders the books by title, so that a reader finds the quetzal book first.
//
// It is stable.
func Sort(bs []Book) {
	sort.SliceStable(bs, func(i, j int) bool { return bs[i].Title < bs[j].Title })
}
`

// Every supported format is found by its content, cites lines that hold the words, and says what it is.
func TestFormats(t *testing.T) {
	root := t.TempDir()
	// Many declarations, so that chunks must close at declaration boundaries.
	var goFile strings.Builder
	goFile.WriteString(goSource)
	for i := range 40 {
		fmt.Fprintf(&goFile, "\n// Helper%d does step %d of the filing work, which is explained at length here so that the chunk grows.\nfunc Helper%d() int {\n\treturn %d\n}\n", i, i, i, i)
	}
	writeFile(t, filepath.Join(root, "shelf.go"), goFile.String())
	writeFile(t, filepath.Join(root, "tool.py"), "import os\n\n\n# Walks the tapir directory.\ndef walk(path):\n    return os.listdir(path)\n\n\nclass Keeper:\n    pass\n")
	writeFile(t, filepath.Join(root, "guide.rst"), "Axolotl Guide\n=============\n\nThe axolotl regrows limbs.\n")
	writeFile(t, filepath.Join(root, "manual.adoc"), "= Binturong Manual\n\nThe binturong smells of popcorn.\n")
	writeFile(t, filepath.Join(root, "notes.org"), "* Caracal notes\nThe caracal jumps high.\n")
	writeFile(t, filepath.Join(root, "query.sql"), "-- Dugong census\nSELECT count(*) FROM dugong;\n")
	writeFile(t, filepath.Join(root, "conf.yaml"), "# echidna settings\nechidna:\n  spines: many\n")
	writeFile(t, filepath.Join(root, "data.csv"), "animal,legs\nfossa,4\n")
	writeFile(t, filepath.Join(root, "nb.ipynb"), `{"cells":[{"cell_type":"markdown","source":["# Gharial notebook\n","The gharial eats fish."]},
{"cell_type":"code","source":"print('hoatzin')","outputs":[{"text":"OUTPUTONLY"}]}],"metadata":{"language_info":{"name":"python"}}}`)
	zipFile(t, filepath.Join(root, "report.docx"), map[string]string{
		"word/document.xml": `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>
<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Ibex report</w:t></w:r></w:p>
<w:p><w:r><w:t xml:space="preserve">The ibex climbs </w:t></w:r><w:r><w:t>dams.</w:t></w:r></w:p>
<w:tbl><w:tr><w:tc><w:p><w:r><w:t>jerboa</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>hops</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
</w:body></w:document>`,
	})
	zipFile(t, filepath.Join(root, "deck.pptx"), map[string]string{
		"ppt/slides/slide2.xml": `<p:sld xmlns:p="p" xmlns:a="a"><a:p><a:r><a:t>Second: the kinkajou</a:t></a:r></a:p></p:sld>`,
		"ppt/slides/slide1.xml": `<p:sld xmlns:p="p" xmlns:a="a"><a:p><a:r><a:t>Lemur deck</a:t></a:r></a:p></p:sld>`,
	})
	zipFile(t, filepath.Join(root, "book.epub"), map[string]string{
		"mimetype":               "application/epub+zip",
		"META-INF/container.xml": `<container><rootfiles><rootfile full-path="OEBPS/content.opf"/></rootfiles></container>`,
		"OEBPS/content.opf": `<package><metadata><dc:title xmlns:dc="dc">Margay Book</dc:title></metadata>
<manifest><item id="c1" href="ch1.xhtml"/><item id="c2" href="ch2.xhtml"/></manifest><spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>`,
		"OEBPS/ch1.xhtml": `<html><body><h1>One</h1><p>The margay climbs down head first.</p></body></html>`,
		"OEBPS/ch2.xhtml": `<html><body><h1>Two</h1><p>The narwhal is elsewhere.</p></body></html>`,
	})
	xf := excelize.NewFile()
	xf.SetCellValue("Sheet1", "A1", "animal")
	xf.SetCellValue("Sheet1", "B1", "count")
	xf.SetCellValue("Sheet1", "A2", "numbat")
	xf.SetCellValue("Sheet1", "B2", 42)
	if err := xf.SaveAs(filepath.Join(root, "zoo.xlsx")); err != nil {
		t.Fatal(err)
	}

	ix := openIndex(t, t.TempDir())
	st, err := ix.Add(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Failed) != 0 || st.Added != 13 {
		t.Fatalf("stats %+v", st)
	}
	for _, tc := range []struct{ q, file, ctype, inText, title string }{
		{"quetzal book", "shelf.go", "text/x-go", "func Sort(", "shelf.go (package shelf)"},
		{"tapir directory", "tool.py", "text/x-python", "def walk", "tool.py"},
		{"axolotl", "guide.rst", "text/x-rst", "regrows", "Axolotl Guide"},
		{"binturong popcorn", "manual.adoc", "text/asciidoc", "popcorn", "Binturong Manual"},
		{"caracal", "notes.org", "text/x-org", "jumps", "Caracal notes"},
		{"dugong", "query.sql", "text/x-sql", "SELECT", "query.sql"},
		{"echidna spines", "conf.yaml", "text/x-yaml", "spines", "conf.yaml"},
		{"fossa", "data.csv", "text/csv", "fossa,4", "data.csv"},
		{"gharial fish", "nb.ipynb", "application/x-ipynb+json", "The gharial eats fish.", "Gharial notebook"},
		{"hoatzin", "nb.ipynb", "application/x-ipynb+json", "print('hoatzin')", "Gharial notebook"},
		{"ibex climbs", "report.docx", "", "The ibex climbs dams.", "Ibex report"},
		{"jerboa hops", "report.docx", "", "jerboa |", "Ibex report"},
		{"kinkajou", "deck.pptx", "", "Second: the kinkajou", "Lemur deck"},
		{"margay head first", "book.epub", "application/epub+zip", "The margay climbs down head first.", "Margay Book"},
		{"numbat", "zoo.xlsx", "", "numbat | 42", "zoo.xlsx"},
	} {
		t.Run(tc.q, func(t *testing.T) {
			rs, err := ix.Search(t.Context(), tc.q, 3)
			if err != nil || len(rs) == 0 {
				t.Fatalf("%v %v", rs, err)
			}
			if !strings.Contains(rs[0].URL, "/"+tc.file+"#L") {
				t.Fatalf("top hit %s, want %s", rs[0].URL, tc.file)
			}
			if rs[0].Title != tc.title {
				t.Errorf("title %q, want %q", rs[0].Title, tc.title)
			}
			doc, err := ix.Fetch(t.Context(), rs[0].URL)
			if err != nil {
				t.Fatal(err)
			}
			if tc.ctype != "" && doc.ContentType != tc.ctype {
				t.Errorf("content type %q, want %q", doc.ContentType, tc.ctype)
			}
			var start, end int
			_, frag, _ := strings.Cut(rs[0].URL, "#")
			fmt.Sscanf(frag, "L%d-L%d", &start, &end)
			lines := strings.Split(doc.Text, "\n")
			if cited := strings.Join(lines[start-1:end], "\n"); !strings.Contains(cited, tc.inText) {
				t.Errorf("lines %d-%d do not hold %q:\n%s", start, end, tc.inText, cited)
			}
			if strings.Contains(doc.Text, "OUTPUTONLY") {
				t.Error("notebook outputs indexed")
			}
		})
	}

	// Go: chunks begin at declarations, with their doc comments, and the cited lines are the file's own lines.
	data, _ := os.ReadFile(filepath.Join(root, "shelf.go"))
	fileLines := strings.Split(string(data), "\n")
	_, chunks, err := chunkGo("shelf.go", string(data))
	if err != nil || len(chunks) < 3 {
		t.Fatalf("%d chunks, %v", len(chunks), err)
	}
	for _, c := range chunks[1:] {
		first := fileLines[c.start-1]
		if !strings.HasPrefix(first, "// Helper") && !strings.HasPrefix(first, "// Sort") && !strings.HasPrefix(first, "// Book") {
			t.Errorf("chunk %d-%d starts inside a declaration: %q", c.start, c.end, first)
		}
		if c.text != strings.Join(fileLines[c.start-1:c.end], "\n") {
			t.Errorf("chunk %d-%d is not the file's lines", c.start, c.end)
		}
	}
}

// Damaged containers fail alone, with the file named, and never take the index down.
func TestDamagedOfficeFiles(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "ok.md"), "# fine\n\nThe okapi is fine.\n")
	writeFile(t, filepath.Join(root, "bad.docx"), "not a zip at all")
	zipFile(t, filepath.Join(root, "empty.pptx"), map[string]string{"readme.txt": "no slides"})
	zipFile(t, filepath.Join(root, "broken.epub"), map[string]string{"META-INF/container.xml": "<container>"})
	writeFile(t, filepath.Join(root, "bad.ipynb"), "{not json")
	writeFile(t, filepath.Join(root, "bad.xlsx"), "PK but not really")
	ix := openIndex(t, t.TempDir())
	st, err := ix.Add(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 1 || len(st.Failed) != 5 {
		t.Fatalf("stats %+v", st)
	}
	for _, f := range st.Failed {
		if f.Err == nil || f.Err.Error() == "" {
			t.Errorf("%s failed without a reason", f.Path)
		}
	}
}

// FuzzExtract: whatever bytes a file holds, extraction returns an error or text whose chunks are exact line ranges
// of that text — never a panic, never an anchor outside the document.
func FuzzExtract(f *testing.F) {
	f.Add(".go", []byte(goSource))
	f.Add(".py", []byte("def f():\n    pass\n\n\nclass C:\n    pass\n"))
	f.Add(".rst", []byte("Title\n=====\n\ntext\n"))
	f.Add(".adoc", []byte("= T\n\n== S\ntext\n"))
	f.Add(".org", []byte("* H\n** H2\ntext\n"))
	f.Add(".ipynb", []byte(`{"cells":[{"cell_type":"code","source":["x = 1\n"]}]}`))
	f.Add(".docx", []byte("PK\x03\x04"))
	f.Add(".md", []byte("# T\r\n\r\ntext\r\n"))
	f.Fuzz(func(t *testing.T, ext string, data []byte) {
		fm, ok := extract.Builtin().ByPath("fuzz" + ext)
		if !ok || !slices.Contains(fm.Extensions, ext) || fm.Name == "pdf" || fm.Name == "xlsx" {
			return
		}
		ex, err := extractFile(t.Context(), "fuzz"+ext, fm, data)
		if err != nil {
			return
		}
		lines := splitLines(ex.text)
		prev := 0
		for _, c := range ex.chunks {
			if c.start <= prev || c.end < c.start || c.end > len(lines) {
				t.Fatalf("chunk %d-%d after %d in %d lines", c.start, c.end, prev, len(lines))
			}
			if c.text != strings.Join(lines[c.start-1:c.end], "\n") {
				t.Fatalf("chunk %d-%d text is not its lines", c.start, c.end)
			}
			prev = c.end
		}
	})
}
