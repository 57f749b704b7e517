package extract

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/sources/internal/testpdf"
)

// FuzzHTML feeds arbitrary pages to both HTML entry points: no panic, and the text is valid UTF-8.
func FuzzHTML(f *testing.F) {
	for _, s := range []string{
		articleSeed, "<p>x", "<title>t</title><svg><script>alert(1)</script></svg>", "<!--{ \"Title\": \"T\" }--><h2>Intro</h2>",
		"<table><tr><td>a<td>b</table>", "\xff\xfe<\x00p\x00>", "<a href='javascript:alert(1)'>x</a>", "",
	} {
		f.Add(s)
	}
	base, _ := url.Parse("https://example.org/a/b.html")
	f.Fuzz(func(t *testing.T, page string) {
		text := DecodeText([]byte(page), "text/html")
		for name, fn := range map[string]func(string, *url.URL) (Result, error){"Readable": Readable, "Whole": Whole} {
			res, err := fn(text, base)
			if err != nil {
				continue
			}
			if !utf8.ValidString(res.Text) || !utf8.ValidString(res.Title) {
				t.Fatalf("%s(%q): invalid UTF-8", name, page)
			}
		}
	})
}

const articleSeed = `<html><head><title>Bees</title></head><body><nav>menu</nav><article><h1>Bees dance</h1>
<p>Honey bees perform a waggle dance to tell their sisters where flowers are; the angle encodes the direction.</p>
</article></body></html>`

// FuzzPDF feeds arbitrary bytes to the PDF reader: no panic, no hang (the worker's limits bound every step), and
// text only in valid UTF-8.
func FuzzPDF(f *testing.F) {
	f.Add(testpdf.Build([]string{"Hello PDF world"}, []string{"Second page"}))
	f.Add(testpdf.Raw("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R] /Count 1 >>"))
	f.Add(testpdf.Raw("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 2000000000 >>", "<< /Type /Page /Parent 2 0 R >>"))
	f.Add([]byte("%PDF-1.7\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		text, err := PDF(context.Background(), data)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("PDF(%q) ran into its time limit", data)
		}
		if err == nil && !utf8.ValidString(text) {
			t.Fatalf("PDF(%q): invalid UTF-8", data)
		}
	})
}
