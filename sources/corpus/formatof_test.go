package corpus

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/sources/extract"
)

// formatOf is the built-in format of path, as an index with no Options.Formats reads it.
func formatOf(path string) (format, bool) { return extract.Builtin().ByPath(path) }

// zipBytes is a zip container with the given members, in order.
func zipBytes(t *testing.T, members ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.Create(m[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(m[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// epubRepeating is an EPUB whose spine names one chapter n times.
func epubRepeating(t *testing.T, n int, chapter string) []byte {
	var manifest, spine strings.Builder
	for i := range n {
		fmt.Fprintf(&manifest, `<item id="c%d" href="ch.xhtml"/>`, i)
		fmt.Fprintf(&spine, `<itemref idref="c%d"/>`, i)
	}
	return zipBytes(t,
		[2]string{"mimetype", "application/epub+zip"},
		[2]string{"META-INF/container.xml", `<container><rootfiles><rootfile full-path="c.opf"/></rootfiles></container>`},
		[2]string{"c.opf", "<package><manifest>" + manifest.String() + "</manifest><spine>" + spine.String() + "</spine></package>"},
		[2]string{"ch.xhtml", chapter})
}
