package corpus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/sources/extract"
)

// kind is how a file type is read and chunked.
type kind int

const (
	kindText     kind = iota // plain text: paragraphs
	kindMarkdown             // Markdown: paragraphs and # headings
	kindRST                  // reStructuredText: underlined headings
	kindAsciiDoc             // AsciiDoc: = headings
	kindOrg                  // Org: * headings
	kindCode                 // source code: top-level blocks
	kindGo                   // Go: declarations via go/parser
	kindHTML
	kindPDF
	kindNotebook // Jupyter
	kindEPUB
	kindDOCX
	kindPPTX
	kindXLSX
)

// format describes one supported file type.
type format struct {
	kind  kind
	ctype string // content type of the extracted text's source
	lang  string // programming or data language, for source code
}

// binaryFormat reports whether the file is a container whose bytes are not
// text (and must not be checked for NUL bytes).
func (f format) binaryFormat() bool {
	switch f.kind {
	case kindPDF, kindEPUB, kindDOCX, kindPPTX, kindXLSX:
		return true
	}
	return false
}

func code(lang string) format { return format{kind: kindCode, ctype: "text/x-" + lang, lang: lang} }

// formats maps lower-case extensions to their format.
var formats = map[string]format{
	".md":       {kind: kindMarkdown, ctype: "text/markdown"},
	".markdown": {kind: kindMarkdown, ctype: "text/markdown"},
	".txt":      {kind: kindText, ctype: "text/plain"},
	".text":     {kind: kindText, ctype: "text/plain"},
	".rst":      {kind: kindRST, ctype: "text/x-rst"},
	".adoc":     {kind: kindAsciiDoc, ctype: "text/asciidoc"},
	".asciidoc": {kind: kindAsciiDoc, ctype: "text/asciidoc"},
	".org":      {kind: kindOrg, ctype: "text/x-org"},
	".html":     {kind: kindHTML, ctype: "text/html"},
	".htm":      {kind: kindHTML, ctype: "text/html"},
	".xhtml":    {kind: kindHTML, ctype: "text/html"},
	".pdf":      {kind: kindPDF, ctype: "application/pdf"},
	".ipynb":    {kind: kindNotebook, ctype: "application/x-ipynb+json", lang: "python"},
	".epub":     {kind: kindEPUB, ctype: "application/epub+zip"},
	".docx":     {kind: kindDOCX, ctype: "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
	".pptx":     {kind: kindPPTX, ctype: "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
	".xlsx":     {kind: kindXLSX, ctype: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
	".csv":      {kind: kindText, ctype: "text/csv", lang: "csv"},
	".tsv":      {kind: kindText, ctype: "text/tab-separated-values", lang: "tsv"},
	".go":       {kind: kindGo, ctype: "text/x-go", lang: "go"},
	".py":       code("python"),
	".pyi":      code("python"),
	".js":       code("javascript"),
	".mjs":      code("javascript"),
	".cjs":      code("javascript"),
	".jsx":      code("javascript"),
	".ts":       code("typescript"),
	".tsx":      code("typescript"),
	".mts":      code("typescript"),
	".rs":       code("rust"),
	".java":     code("java"),
	".kt":       code("kotlin"),
	".scala":    code("scala"),
	".c":        code("c"),
	".h":        code("c"),
	".cc":       code("c++"),
	".cpp":      code("c++"),
	".cxx":      code("c++"),
	".hpp":      code("c++"),
	".hh":       code("c++"),
	".cs":       code("csharp"),
	".rb":       code("ruby"),
	".php":      code("php"),
	".swift":    code("swift"),
	".lua":      code("lua"),
	".sh":       code("shell"),
	".bash":     code("shell"),
	".zsh":      code("shell"),
	".sql":      code("sql"),
	".proto":    code("protobuf"),
	".yaml":     code("yaml"),
	".yml":      code("yaml"),
	".toml":     code("toml"),
	".json":     code("json"),
	".ini":      code("ini"),
}

// namedFormats are files recognised by their whole name.
var namedFormats = map[string]format{
	"makefile":     code("make"),
	"gnumakefile":  code("make"),
	"dockerfile":   code("dockerfile"),
	"readme":       {kind: kindText, ctype: "text/plain"},
	"license":      {kind: kindText, ctype: "text/plain"},
	"copying":      {kind: kindText, ctype: "text/plain"},
	"authors":      {kind: kindText, ctype: "text/plain"},
	"changelog":    {kind: kindText, ctype: "text/plain"},
	"contributing": {kind: kindText, ctype: "text/plain"},
	"notice":       {kind: kindText, ctype: "text/plain"},
}

// generatedNames are files that tools write (lock files, minified bundles):
// indexing them only adds noise.
var generatedNames = []string{
	"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "go.sum", "cargo.lock", "poetry.lock", "composer.lock",
	"gemfile.lock", "uv.lock",
}

// excludedDirs are folders of vendored or installed third-party code and
// caches.
var excludedDirs = []string{"node_modules", "vendor", "bower_components", "__pycache__", "site-packages"}

// formatOf returns the format of path, or false when the type is not
// indexed.
func formatOf(path string) (format, bool) {
	base := strings.ToLower(filepath.Base(path))
	if f, ok := formats[strings.ToLower(filepath.Ext(base))]; ok {
		return f, true
	}
	f, ok := namedFormats[base]
	return f, ok
}

// Extensions lists the file extensions the corpus indexes, sorted.
func Extensions() []string {
	out := make([]string, 0, len(formats))
	for ext := range formats {
		out = append(out, ext)
	}
	slices.Sort(out)
	return out
}

// SupportedTypes is a one-line description of the indexed file types, for
// messages.
func SupportedTypes() string {
	return "documents (.md .txt .rst .adoc .org .html .pdf .epub .docx .pptx .xlsx .csv .ipynb), " +
		"source code (.go .py .js .ts .rs .java .c .cpp .sh .sql .yaml .toml .json and more)"
}

// excludedName reports why a file is left out by its name alone ("" if it
// is not).
func excludedName(name string) string {
	lower := strings.ToLower(name)
	switch {
	case slices.Contains(generatedNames, lower):
		return "generated (lock file)"
	case strings.HasSuffix(lower, ".min.js") || strings.HasSuffix(lower, ".min.css"):
		return "generated (minified)"
	}
	return ""
}

var (
	errBinary    = errors.New("binary content")
	errGenerated = errors.New("generated file")
)

// looksBinary reports whether data is not text: a NUL byte in the first
// 8 KiB, or mostly invalid UTF-8 there.
func looksBinary(data []byte) bool {
	head := data[:min(len(data), 8<<10)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if utf8.Valid(head) {
		return false
	}
	bad := 0
	for len(head) > 0 {
		r, n := utf8.DecodeRune(head)
		if r == utf8.RuneError && n == 1 {
			bad++
		}
		head = head[n:]
	}
	return bad*10 > len(data[:min(len(data), 8<<10)]) // legacy 8-bit encodings have some; binaries many
}

// extracted is a file's text as the corpus indexes and serves it.
type extracted struct {
	title  string
	text   string
	chunks []chunk
}

// extractFile turns data into text and chunks. Line numbers of the chunks
// count lines of text, which for text and source files is the file itself.
func extractFile(ctx context.Context, path string, f format, data []byte) (extracted, error) {
	return extractWithin(ctx, path, f, data, maxContainerSize)
}

// extractWithin is extractFile reading at most containerBudget uncompressed
// bytes from a zip container (see officeText).
func extractWithin(ctx context.Context, path string, f format, data []byte, containerBudget int64) (extracted, error) {
	base := filepath.Base(path)
	var ex extracted
	if !f.binaryFormat() && looksBinary(data) {
		return ex, errBinary
	}
	plain := func() string { return extract.NormalizeNewlines(extract.DecodeText(data, "text/plain")) }
	switch f.kind {
	case kindHTML:
		res, err := extract.Whole(extract.DecodeText(data, "text/html"), nil)
		if err != nil {
			return ex, err
		}
		ex.title, ex.text = res.Title, res.Text
		ex.chunks = chunkText(ex.text, markdownBoundary)
	case kindPDF:
		text, err := extract.PDF(ctx, data)
		if err != nil {
			return ex, err
		}
		ex.text = text
		ex.chunks = chunkText(text, markdownBoundary)
	case kindMarkdown:
		ex.text = plain()
		ex.title = extract.FirstHeading(ex.text)
		ex.chunks = chunkText(ex.text, markdownBoundary)
	case kindRST, kindAsciiDoc, kindOrg:
		ex.text = plain()
		lines := splitLines(ex.text)
		isHeading := headingFunc(f.kind, lines)
		for i := range lines {
			if isHeading(i) {
				ex.title = headingText(f.kind, lines, i)
				break
			}
		}
		ex.chunks = chunkLines(lines, func(lines []string, i int) bool {
			return isHeading(i) || strings.TrimSpace(lines[i]) == ""
		})
	case kindGo:
		ex.text = plain()
		var err error
		ex.title, ex.chunks, err = chunkGo(base, ex.text)
		if errors.Is(err, errGenerated) {
			return ex, err
		}
		if err != nil { // not valid Go: still index it, by blocks
			ex.chunks = chunkText(ex.text, codeBoundary)
		}
	case kindCode:
		ex.text = plain()
		if generatedHeader(ex.text) {
			return ex, errGenerated
		}
		ex.chunks = chunkText(ex.text, codeBoundary)
	case kindNotebook:
		var err error
		ex.text, err = notebookText(data)
		if err != nil {
			return ex, err
		}
		ex.title = extract.FirstHeading(ex.text)
		ex.chunks = chunkText(ex.text, markdownBoundary)
	case kindEPUB, kindDOCX, kindPPTX, kindXLSX:
		var err error
		ex.title, ex.text, err = officeText(ctx, f.kind, data, containerBudget)
		if err != nil {
			return ex, err
		}
		ex.chunks = chunkText(ex.text, markdownBoundary)
	default:
		ex.text = plain()
		ex.chunks = chunkText(ex.text, markdownBoundary)
	}
	if ex.title == "" {
		ex.title = base
	}
	return ex, nil
}

// generatedHeader reports the "generated, do not edit" marker tools put in
// the first lines of the files they write.
func generatedHeader(text string) bool {
	head := text[:min(len(text), 1024)]
	return strings.Contains(head, "DO NOT EDIT") || strings.Contains(head, "@generated")
}

// headingFunc returns whether line i starts a section in a lightweight
// markup language.
func headingFunc(k kind, lines []string) func(i int) bool {
	switch k {
	case kindRST:
		return func(i int) bool {
			if i+1 >= len(lines) {
				return false
			}
			t, u := strings.TrimSpace(lines[i]), strings.TrimRight(lines[i+1], " \t")
			return t != "" && len(u) >= utf8.RuneCountInString(t) && len(u) >= 3 && isUnderline(u)
		}
	case kindAsciiDoc:
		return func(i int) bool {
			l := lines[i]
			n := len(l) - len(strings.TrimLeft(l, "="))
			return n >= 1 && n <= 6 && len(l) > n && l[n] == ' '
		}
	default: // Org
		return func(i int) bool {
			l := lines[i]
			n := len(l) - len(strings.TrimLeft(l, "*"))
			return n >= 1 && len(l) > n && l[n] == ' '
		}
	}
}

func isUnderline(s string) bool {
	c := s[0]
	if !strings.ContainsRune("=-~^\"'`#*+.:_", rune(c)) {
		return false
	}
	return strings.Trim(s, string(c)) == ""
}

func headingText(k kind, lines []string, i int) string {
	switch k {
	case kindAsciiDoc:
		return strings.TrimSpace(strings.TrimLeft(lines[i], "="))
	case kindOrg:
		return strings.TrimSpace(strings.TrimLeft(lines[i], "*"))
	}
	return strings.TrimSpace(lines[i])
}

func errorf(what string, err error) error { return fmt.Errorf("%s: %w", what, err) }
