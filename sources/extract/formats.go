package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// Layout is how a format's text is laid out, which decides how it is cut into passages.
type Layout int

const (
	LayoutText     Layout = iota // plain text: paragraphs
	LayoutMarkdown               // Markdown (and what converts to it): paragraphs and # headings
	LayoutRST                    // reStructuredText: underlined headings
	LayoutAsciiDoc               // AsciiDoc: = headings
	LayoutOrg                    // Org: * headings
	LayoutCode                   // source code: top-level blocks
	LayoutGo                     // Go: declarations
	LayoutHTML                   // HTML: converted to Markdown (the fetcher keeps a page's main content only)
)

// Document is what a converter makes of a file: its text and, when the file names one, its title.
type Document struct {
	Title string
	Text  string
}

// Limits bound one conversion.
type Limits struct {
	// Container bounds the uncompressed bytes read from a zip container, at most (and when zero)
	// MaxContainerSize. Past a smaller budget the error is ErrContainerShare.
	Container int64
	// Text bounds the text extracted from a container (an office document, an EPUB, a notebook); zero means
	// MaxTextSize. Past it the error is ErrTooMuchText.
	Text int64
}

// Converter turns a file's bytes into text.
type Converter func(ctx context.Context, data []byte, lim Limits) (Document, error)

// Format is one entry of the format registry: how a document format is recognised — by extension, file name,
// MIME type and, for a container, its bytes — and the one converter that turns it into text. The corpus reads
// every file through it and the fetcher every download, so a format added here is read from a folder and from
// the web alike.
type Format struct {
	// Name identifies the format ("docx", "markdown", "go").
	Name string
	// Extensions are the lower-case file extensions, with the dot.
	Extensions []string
	// FileNames are lower-case whole file names recognised without an extension ("makefile").
	FileNames []string
	// MIME are the media types that name the format, the canonical one (reported as the document's content type)
	// first.
	MIME []string
	// Lang is the programming or data language, for source code and data files.
	Lang string
	// Binary marks a container whose bytes are not text: not refused for holding NUL bytes, recognised by its
	// bytes (Sniff), and unreadable when cut short.
	Binary bool
	// Zip marks a zip container, whose members are read within Limits.Container.
	Zip bool
	// Expansion is about how many bytes of memory converting one byte of the file takes (0: 4).
	Expansion int
	// Layout is how the converted text is laid out.
	Layout Layout
	// Sniff recognises the format by its bytes, whatever a file's name or a server's label says; nil for a format
	// recognised by name and label only.
	Sniff func(data []byte) bool
	// Convert turns the bytes into text; nil means the bytes are text in some encoding, decoded to UTF-8.
	Convert Converter
}

// ContentType is the format's canonical media type.
func (f Format) ContentType() string {
	if len(f.MIME) == 0 {
		return "text/plain"
	}
	return f.MIME[0]
}

// Read converts data: the format's converter, or for a text format the text decoded, its newlines normalised,
// and a Markdown file's first heading as its title.
func (f Format) Read(ctx context.Context, data []byte, lim Limits) (Document, error) {
	if f.Convert != nil {
		return f.Convert(ctx, data, lim)
	}
	d := Document{Text: NormalizeNewlines(DecodeText(data, "text/plain"))}
	if f.Layout == LayoutMarkdown {
		d.Title = FirstHeading(d.Text)
	}
	return d, nil
}

// Registry is a set of formats, looked up by extension, file name, MIME type or content. The nil *Registry is
// the built-in one.
type Registry struct {
	formats []Format
}

func text(name, mt string, layout Layout, exts ...string) Format {
	return Format{Name: name, Extensions: exts, MIME: []string{mt}, Layout: layout}
}

func code(lang string, exts ...string) Format {
	return Format{Name: lang, Extensions: exts, MIME: []string{"text/x-" + lang}, Lang: lang, Layout: LayoutCode}
}

// builtin is every format deepresearch reads.
var builtin = &Registry{formats: []Format{
	text("markdown", "text/markdown", LayoutMarkdown, ".md", ".markdown"),
	{Name: "text", Extensions: []string{".txt", ".text"}, MIME: []string{"text/plain"}, Layout: LayoutText,
		FileNames: []string{"readme", "license", "copying", "authors", "changelog", "contributing", "notice"}},
	text("rst", "text/x-rst", LayoutRST, ".rst"),
	text("asciidoc", "text/asciidoc", LayoutAsciiDoc, ".adoc", ".asciidoc"),
	text("org", "text/x-org", LayoutOrg, ".org"),
	{Name: "html", Extensions: []string{".html", ".htm", ".xhtml"}, MIME: []string{"text/html", "application/xhtml+xml"},
		Layout: LayoutHTML, Expansion: 8, Convert: func(_ context.Context, data []byte, _ Limits) (Document, error) {
			res, err := Whole(DecodeText(data, "text/html"), nil)
			return Document{Title: res.Title, Text: res.Text}, err
		}},
	{Name: "pdf", Extensions: []string{".pdf"}, MIME: []string{"application/pdf", "application/x-pdf"}, Binary: true,
		Expansion: 16, Layout: LayoutMarkdown, Sniff: IsPDF,
		Convert: func(ctx context.Context, data []byte, _ Limits) (Document, error) {
			t, err := PDF(ctx, data)
			return Document{Text: t}, err
		}},
	{Name: "notebook", Extensions: []string{".ipynb"}, MIME: []string{"application/x-ipynb+json"}, Lang: "python",
		Expansion: 8, Layout: LayoutMarkdown, Sniff: isNotebook,
		Convert: func(_ context.Context, data []byte, lim Limits) (Document, error) {
			t, err := notebookText(data, lim)
			return Document{Title: FirstHeading(t), Text: t}, err
		}},
	{Name: "epub", Extensions: []string{".epub"}, MIME: []string{"application/epub+zip"}, Binary: true, Zip: true,
		Layout: LayoutMarkdown, Sniff: isEPUB,
		Convert: func(ctx context.Context, data []byte, lim Limits) (Document, error) {
			return zipText(ctx, data, lim, epubText)
		}},
	{Name: "docx", Extensions: []string{".docx"}, MIME: []string{"application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		Binary: true, Zip: true, Layout: LayoutMarkdown, Sniff: zipHolds("word/document.xml"),
		Convert: func(ctx context.Context, data []byte, lim Limits) (Document, error) {
			return zipText(ctx, data, lim, docxText)
		}},
	{Name: "pptx", Extensions: []string{".pptx"}, MIME: []string{"application/vnd.openxmlformats-officedocument.presentationml.presentation"},
		Binary: true, Zip: true, Layout: LayoutMarkdown, Sniff: zipHolds("ppt/presentation.xml"),
		Convert: func(ctx context.Context, data []byte, lim Limits) (Document, error) {
			return zipText(ctx, data, lim, pptxText)
		}},
	{Name: "xlsx", Extensions: []string{".xlsx"}, MIME: []string{"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
		Binary: true, Expansion: 16, Layout: LayoutMarkdown, Sniff: zipHolds("xl/workbook.xml"),
		Convert: func(_ context.Context, data []byte, lim Limits) (Document, error) {
			title, t, err := xlsxText(data, lim)
			return Document{Title: title, Text: t}, err
		}},
	{Name: "csv", Extensions: []string{".csv"}, MIME: []string{"text/csv"}, Lang: "csv", Layout: LayoutText},
	{Name: "tsv", Extensions: []string{".tsv"}, MIME: []string{"text/tab-separated-values"}, Lang: "tsv", Layout: LayoutText},
	{Name: "go", Extensions: []string{".go"}, MIME: []string{"text/x-go"}, Lang: "go", Layout: LayoutGo},
	code("python", ".py", ".pyi"),
	code("javascript", ".js", ".mjs", ".cjs", ".jsx"),
	code("typescript", ".ts", ".tsx", ".mts"),
	code("rust", ".rs"),
	code("java", ".java"),
	code("kotlin", ".kt"),
	code("scala", ".scala"),
	code("c", ".c", ".h"),
	code("c++", ".cc", ".cpp", ".cxx", ".hpp", ".hh"),
	code("csharp", ".cs"),
	code("ruby", ".rb"),
	code("php", ".php"),
	code("swift", ".swift"),
	code("lua", ".lua"),
	code("shell", ".sh", ".bash", ".zsh"),
	code("sql", ".sql"),
	code("protobuf", ".proto"),
	code("yaml", ".yaml", ".yml"),
	code("toml", ".toml"),
	code("json", ".json"),
	code("ini", ".ini"),
	{Name: "make", FileNames: []string{"makefile", "gnumakefile"}, MIME: []string{"text/x-make"}, Lang: "make", Layout: LayoutCode},
	{Name: "dockerfile", FileNames: []string{"dockerfile"}, MIME: []string{"text/x-dockerfile"}, Lang: "dockerfile", Layout: LayoutCode},
}}

// Builtin returns the registry of every format deepresearch reads.
func Builtin() *Registry { return builtin }

func (r *Registry) reg() *Registry {
	if r == nil {
		return builtin
	}
	return r
}

// With returns a copy of the registry with the given formats added; a format of a name already present
// replaces it.
func (r *Registry) With(formats ...Format) *Registry {
	out := &Registry{formats: slices.Clone(r.reg().formats)}
	for _, f := range formats {
		if i := slices.IndexFunc(out.formats, func(g Format) bool { return g.Name == f.Name }); i >= 0 {
			out.formats[i] = f
		} else {
			out.formats = append(out.formats, f)
		}
	}
	return out
}

// Formats lists the registry's formats.
func (r *Registry) Formats() []Format { return slices.Clone(r.reg().formats) }

// ByPath finds the format of a file by its extension, else by its whole name, ignoring case.
func (r *Registry) ByPath(p string) (Format, bool) {
	base := strings.ToLower(path.Base(strings.ReplaceAll(p, "\\", "/")))
	if ext := path.Ext(base); ext != "" {
		for _, f := range r.reg().formats {
			if slices.Contains(f.Extensions, ext) {
				return f, true
			}
		}
	}
	for _, f := range r.reg().formats {
		if slices.Contains(f.FileNames, base) {
			return f, true
		}
	}
	return Format{}, false
}

// ByMIME finds the format a media type names (parameters and case ignored).
func (r *Registry) ByMIME(mediaType string) (Format, bool) {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(mediaType))
	}
	if mt == "" {
		return Format{}, false
	}
	for _, f := range r.reg().formats {
		if slices.Contains(f.MIME, mt) {
			return f, true
		}
	}
	return Format{}, false
}

// BySniff finds the format data's own bytes show (a PDF signature, a zip container's members), whatever it is
// called or labelled.
func (r *Registry) BySniff(data []byte) (Format, bool) {
	for _, f := range r.reg().formats {
		if f.Sniff != nil && f.Sniff(data) {
			return f, true
		}
	}
	return Format{}, false
}

// Extensions lists every extension of the registry, sorted.
func (r *Registry) Extensions() []string {
	var out []string
	for _, f := range r.reg().formats {
		out = append(out, f.Extensions...)
	}
	slices.Sort(out)
	return out
}

// Describe is a one-line description of the formats, for messages: "documents (.md .txt …), source code (.go
// .py … and more)", each format by its first extension.
func (r *Registry) Describe() string {
	var docs, src []string
	for _, f := range r.reg().formats {
		if len(f.Extensions) == 0 {
			continue
		}
		if f.Layout == LayoutCode || f.Layout == LayoutGo {
			src = append(src, f.Extensions[0])
		} else {
			docs = append(docs, f.Extensions[0])
		}
	}
	return "documents (" + strings.Join(docs, " ") + "), source code (" + strings.Join(src, " ") + " and more)"
}

// Content is what a sniff of a file's first bytes found.
type Content int

const (
	// Text is UTF-8, ASCII or text in an 8-bit encoding mostly valid as UTF-8.
	Text Content = iota
	// Legacy is text that is mostly not valid UTF-8: a legacy multi-byte encoding (GBK, Shift JIS), readable only
	// with a declared charset.
	Legacy
	// UTF16 is text in UTF-16 with a byte-order mark.
	UTF16
	// Binary is not text: a NUL byte, or more than one in ten bytes control characters.
	Binary
)

// binarySniff is how much of a body Sniff inspects.
const binarySniff = 8 << 10

// Sniff is the one look at a body's first 8 KiB that says whether it is text: the corpus, which has no charset
// to decode with, reads Text only; the fetcher, which has the server's charset, refuses Binary only.
func Sniff(data []byte) Content {
	head := data[:min(len(data), binarySniff)]
	if bytes.HasPrefix(head, []byte("\xff\xfe")) || bytes.HasPrefix(head, []byte("\xfe\xff")) {
		return UTF16
	}
	ctrl := 0
	for _, c := range head {
		switch {
		case c == 0:
			return Binary
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b, c == 0x7f:
			ctrl++
		}
	}
	if ctrl*10 > len(head) {
		return Binary
	}
	if utf8.Valid(head) {
		return Text
	}
	bad := 0
	for rest := head; len(rest) > 0; {
		r, n := utf8.DecodeRune(rest)
		if r == utf8.RuneError && n == 1 {
			bad++
		}
		rest = rest[n:]
	}
	if bad*10 > len(head) { // legacy 8-bit encodings have some; multi-byte ones many
		return Legacy
	}
	return Text
}

// LooksBinary reports whether data is binary rather than text, whatever its label says (Sniff: Binary). Text in
// UTF-16 (which has NULs) is recognised by its byte-order mark.
func LooksBinary(data []byte) bool { return Sniff(data) == Binary }

// IsPDF reports whether data starts with the PDF signature.
func IsPDF(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(data[:min(len(data), 1024)], "\x00\t\n\r "), []byte("%PDF-"))
}

// zipHolds recognises a zip container holding a member of the given name (an Office Open XML part).
func zipHolds(member string) func([]byte) bool {
	return func(data []byte) bool {
		if !bytes.HasPrefix(data, []byte("PK\x03\x04")) {
			return false
		}
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return false
		}
		return slices.ContainsFunc(zr.File, func(f *zip.File) bool { return f.Name == member })
	}
}

// isEPUB recognises an EPUB by its first member, the uncompressed "mimetype" file the format requires.
func isEPUB(data []byte) bool {
	return bytes.HasPrefix(data, []byte("PK\x03\x04")) && len(data) > 58 &&
		bytes.Equal(data[30:38], []byte("mimetype")) && bytes.Contains(data[38:min(len(data), 100)], []byte("application/epub+zip"))
}

// isNotebook recognises a Jupyter notebook: a JSON object with cells and an nbformat version.
func isNotebook(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n\xef\xbb\xbf")
	if len(t) == 0 || t[0] != '{' || !bytes.Contains(data[:min(len(data), 1<<20)], []byte(`"nbformat"`)) {
		return false
	}
	var nb struct {
		Cells    []json.RawMessage `json:"cells"`
		NBFormat *int              `json:"nbformat"`
	}
	return json.Unmarshal(data, &nb) == nil && nb.NBFormat != nil && nb.Cells != nil
}
