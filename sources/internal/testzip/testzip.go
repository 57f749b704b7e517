// Package testzip builds zip containers (DOCX, EPUB and the like) for tests, so no binary fixtures need to be
// committed.
package testzip

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
)

// Build returns a zip container with the given members (name, content) in order; a member named "mimetype" is
// stored uncompressed, as EPUB requires of its first member.
func Build(members ...[2]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		h := &zip.FileHeader{Name: m[0], Method: zip.Deflate}
		if m[0] == "mimetype" {
			h.Method = zip.Store
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			panic(err) // writing to memory fails only on a bad header, a bug of the test
		}
		if _, err := w.Write([]byte(m[1])); err != nil {
			panic(err)
		}
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// EPUBRepeating returns an EPUB whose spine names one chapter n times: a few kilobytes that expand to as much work
// as the reader lets them.
func EPUBRepeating(n int, chapter string) []byte {
	var manifest, spine strings.Builder
	for i := range n {
		fmt.Fprintf(&manifest, `<item id="c%d" href="ch.xhtml"/>`, i)
		fmt.Fprintf(&spine, `<itemref idref="c%d"/>`, i)
	}
	return Build(
		[2]string{"mimetype", "application/epub+zip"},
		[2]string{"META-INF/container.xml", `<container><rootfiles><rootfile full-path="c.opf"/></rootfiles></container>`},
		[2]string{"c.opf", "<package><manifest>" + manifest.String() + "</manifest><spine>" + spine.String() + "</spine></package>"},
		[2]string{"ch.xhtml", chapter})
}
