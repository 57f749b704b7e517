package corpus

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/sources/extract"
)

// format is one entry of the format registry (sources/extract): how a file type is recognised and converted;
// its layout decides how the corpus cuts the text into chunks.
type format = extract.Format

// generatedNames are files that tools write (lock files, minified bundles):
// indexing them only adds noise.
var generatedNames = []string{
	"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "go.sum", "cargo.lock", "poetry.lock", "composer.lock",
	"gemfile.lock", "uv.lock",
}

// excludedDirs are folders of vendored or installed third-party code and
// caches.
var excludedDirs = []string{"node_modules", "vendor", "bower_components", "__pycache__", "site-packages"}

// Extensions lists the file extensions the corpus indexes, sorted.
func Extensions() []string { return extract.Builtin().Extensions() }

// SupportedTypes is a one-line description of the indexed file types, for messages.
func SupportedTypes() string { return extract.Builtin().Describe() }

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

// extracted is a file's text as the corpus indexes and serves it.
type extracted struct {
	title  string
	text   string
	chunks []chunk
}

// extractFile turns data into text and chunks. Line numbers of the chunks
// count lines of text, which for text and source files is the file itself.
func extractFile(ctx context.Context, path string, f format, data []byte) (extracted, error) {
	return extractWithin(ctx, path, f, data, extract.Limits{})
}

// extractWithin is extractFile within lim (extract.Limits: the uncompressed bytes read from a zip container, the
// text extracted).
func extractWithin(ctx context.Context, path string, f format, data []byte, lim extract.Limits) (extracted, error) {
	base := filepath.Base(path)
	var ex extracted
	// The corpus has no charset to decode with: only text the one sniffer finds to be text is read.
	if !f.Binary && extract.Sniff(data) != extract.Text {
		return ex, errBinary
	}
	doc, err := f.Read(ctx, data, lim)
	if err != nil {
		return ex, err
	}
	ex.title, ex.text = doc.Title, doc.Text
	switch f.Layout {
	case extract.LayoutRST, extract.LayoutAsciiDoc, extract.LayoutOrg:
		lines := splitLines(ex.text)
		isHeading := headingFunc(f.Layout, lines)
		for i := range lines {
			if isHeading(i) {
				ex.title = headingText(f.Layout, lines, i)
				break
			}
		}
		ex.chunks = chunkLines(lines, func(lines []string, i int) bool {
			return isHeading(i) || strings.TrimSpace(lines[i]) == ""
		})
	case extract.LayoutGo:
		var err error
		ex.title, ex.chunks, err = chunkGo(base, ex.text)
		if errors.Is(err, errGenerated) {
			return ex, err
		}
		if err != nil { // not valid Go: still index it, by blocks
			ex.chunks = chunkText(ex.text, codeBoundary)
		}
	case extract.LayoutCode:
		if generatedHeader(ex.text) {
			return ex, errGenerated
		}
		ex.chunks = chunkText(ex.text, codeBoundary)
	default:
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
func headingFunc(k extract.Layout, lines []string) func(i int) bool {
	switch k {
	case extract.LayoutRST:
		return func(i int) bool {
			if i+1 >= len(lines) {
				return false
			}
			t, u := strings.TrimSpace(lines[i]), strings.TrimRight(lines[i+1], " \t")
			return t != "" && len(u) >= utf8.RuneCountInString(t) && len(u) >= 3 && isUnderline(u)
		}
	case extract.LayoutAsciiDoc:
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

func headingText(k extract.Layout, lines []string, i int) string {
	switch k {
	case extract.LayoutAsciiDoc:
		return strings.TrimSpace(strings.TrimLeft(lines[i], "="))
	case extract.LayoutOrg:
		return strings.TrimSpace(strings.TrimLeft(lines[i], "*"))
	}
	return strings.TrimSpace(lines[i])
}
