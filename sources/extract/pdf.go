package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ledongthuc/pdf"
)

// Limits on one PDF document. A PDF is untrusted input: its page tree may point to itself, claim billions of
// pages or hold a stream that inflates to gigabytes. Each limit turns such a file into a clear error for that
// file alone.
const (
	// MaxPDFPages is the most pages read from one PDF; a document with more is refused.
	MaxPDFPages = 2000
	// MaxPDFDecodedBytes bounds the decompressed size of the content streams and font maps of one PDF.
	MaxPDFDecodedBytes = 64 << 20
	// PDFTimeout bounds the time spent parsing one PDF.
	PDFTimeout = 30 * time.Second
	// maxPDFTreeDepth bounds the nesting of the page tree (real files use a handful of levels); deeper means
	// a cycle or an attack.
	maxPDFTreeDepth = 64
	// maxPDFTreeNodes bounds the page-tree nodes visited, so a tree whose kids are shared many times over
	// cannot make the walk exponential.
	maxPDFTreeNodes = 4 * MaxPDFPages
)

// ErrPDFLimit marks a PDF refused because it exceeds one of the limits above.
var ErrPDFLimit = errors.New("PDF exceeds a safety limit")

// PDF extracts the text of a PDF document, page by page. Parsing is bounded: at most MaxPDFPages pages, at most
// MaxPDFDecodedBytes of decompressed content, at most PDFTimeout, and it stops when ctx ends. The page tree is
// walked here (depth- and node-capped), never by the parser library, whose own walk loops forever on a tree
// that points to itself. The parser runs in a worker goroutine: on a timeout or cancellation PDF returns at once,
// and the worker, whose every step is capped, stops at its next page.
func PDF(ctx context.Context, data []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, PDFTimeout, fmt.Errorf("read PDF: %w: parsing took longer than %s", ErrPDFLimit, PDFTimeout))
	defer cancel()
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1) // buffered: an abandoned worker never blocks
	go func() {
		text, err := parsePDF(ctx, data)
		done <- result{text, err}
	}()
	select {
	case r := <-done:
		return r.text, r.err
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

func parsePDF(ctx context.Context, data []byte) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("read PDF: malformed document: %v", r)
		}
	}()
	// An object stream that extends itself makes the library's object lookup loop forever; such chains are
	// vanishingly rare in real files, and their dictionaries are never compressed, so they can be seen here.
	if bytes.Contains(data, []byte("/Extends")) {
		return "", fmt.Errorf("read PDF: %w: object stream chains (/Extends) are not supported", ErrPDFLimit)
	}
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", fmt.Errorf("read PDF: %w", err)
	}
	pages, err := pdfPages(r.Trailer().Key("Root").Key("Pages"))
	if err != nil {
		return "", err
	}
	budget := int64(MaxPDFDecodedBytes)
	var b strings.Builder
	for i, p := range pages {
		if err := ctx.Err(); err != nil {
			return "", context.Cause(ctx)
		}
		if err := checkPage(p, &budget); err != nil {
			return "", fmt.Errorf("read PDF page %d: %w", i+1, err)
		}
		// nil fonts: each page resolves its own font names, which may
		// differ between pages that reuse a name like /F1.
		t, err := p.GetPlainText(nil)
		if err != nil {
			return "", fmt.Errorf("read PDF page %d: %w", i+1, err)
		}
		t = strings.TrimSpace(NormalizeNewlines(t))
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(t)
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", fmt.Errorf("read PDF: no extractable text (scanned images need OCR)")
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD") + "\n", nil
}

// pdfPages walks the page tree in document order and returns its leaf pages, refusing trees that are too deep
// (a cycle), too large, or that claim more than MaxPDFPages pages.
func pdfPages(root pdf.Value) ([]pdf.Page, error) {
	if n := root.Key("Count").Int64(); n > MaxPDFPages {
		return nil, fmt.Errorf("read PDF: %w: the document claims %d pages (the limit is %d)", ErrPDFLimit, n, MaxPDFPages)
	}
	var (
		pages []pdf.Page
		nodes int
	)
	var walk func(v pdf.Value, depth int) error
	walk = func(v pdf.Value, depth int) error {
		nodes++
		switch {
		case depth > maxPDFTreeDepth:
			return fmt.Errorf("read PDF: %w: the page tree is nested more than %d deep (it may point to itself)", ErrPDFLimit, maxPDFTreeDepth)
		case nodes > maxPDFTreeNodes:
			return fmt.Errorf("read PDF: %w: the page tree has more than %d nodes", ErrPDFLimit, maxPDFTreeNodes)
		}
		switch v.Key("Type").Name() {
		case "Pages":
			kids := v.Key("Kids")
			for i := 0; i < kids.Len(); i++ {
				if err := walk(kids.Index(i), depth+1); err != nil {
					return err
				}
			}
		case "Page":
			if len(pages) >= MaxPDFPages {
				return fmt.Errorf("read PDF: %w: more than %d pages", ErrPDFLimit, MaxPDFPages)
			}
			pages = append(pages, pdf.Page{V: v})
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	return pages, nil
}

// checkPage refuses a page whose inherited attributes loop through /Parent (the library follows /Parent until
// it finds a value) and charges the decompressed size of its content streams and font maps to budget.
func checkPage(p pdf.Page, budget *int64) error {
	depth := 0
	for v := p.V; !v.IsNull(); v = v.Key("Parent") {
		if depth++; depth > maxPDFTreeDepth {
			return fmt.Errorf("%w: the /Parent chain is more than %d long (it may point to itself)", ErrPDFLimit, maxPDFTreeDepth)
		}
		if !v.Key("Resources").IsNull() {
			break
		}
	}
	streams := []pdf.Value{}
	contents := p.V.Key("Contents")
	if contents.Kind() == pdf.Array {
		for i := 0; i < contents.Len(); i++ {
			streams = append(streams, contents.Index(i))
		}
	} else {
		streams = append(streams, contents)
	}
	fonts := p.Resources().Key("Font")
	for _, name := range fonts.Keys() {
		streams = append(streams, fonts.Key(name).Key("ToUnicode"))
	}
	for _, s := range streams {
		if s.Kind() != pdf.Stream {
			continue
		}
		n, err := io.Copy(io.Discard, io.LimitReader(s.Reader(), *budget+1))
		*budget -= n
		if *budget < 0 {
			return fmt.Errorf("%w: its streams decompress to more than %d bytes", ErrPDFLimit, MaxPDFDecodedBytes)
		}
		if err != nil {
			return fmt.Errorf("decompress stream: %w", err)
		}
	}
	return nil
}
