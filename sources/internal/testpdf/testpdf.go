// Package testpdf builds tiny valid PDF files for tests, so no binary
// fixtures need to be committed.
package testpdf

import (
	"bytes"
	"fmt"
	"strings"
)

// Build returns a PDF with one page per element of pages; each page shows
// its lines (ASCII, no parentheses or backslashes) in Helvetica.
func Build(pages ...[]string) []byte {
	var objs []string
	objs = append(objs, "<< /Type /Catalog /Pages 2 0 R >>")
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	objs = append(objs, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	objs = append(objs, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	for i, lines := range pages {
		var c strings.Builder
		c.WriteString("BT /F1 12 Tf 14 TL 72 720 Td")
		for _, l := range lines {
			fmt.Fprintf(&c, " (%s) Tj T*", l)
		}
		c.WriteString(" ET")
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources << /Font << /F1 3 0 R >> >> >>", 5+2*i),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", c.Len(), c.String()))
	}
	return Raw(objs...)
}

// Raw assembles a PDF from the bodies of objects 1, 2, … (object 1 must be the catalog), with a correct
// cross-reference table, so tests can write malformed documents (a page tree that points to itself, a
// stream bomb) in a few lines.
func Raw(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}
