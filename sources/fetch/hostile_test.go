package fetch

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/sources/internal/testpdf"
)

// TestHostileBodies: a page that lies about its type or carries a malformed PDF gets a clear error for that
// URL; nothing binary is returned as text, nothing hangs.
func TestHostileBodies(t *testing.T) {
	elf := append([]byte("\x7fELF\x02\x01\x01\x00"), bytes.Repeat([]byte{0, 1, 2, 3}, 4096)...)
	loop := testpdf.Raw("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R] /Count 1 >>")
	bodies := map[string]struct {
		ctype string
		body  []byte
		want  string
	}{
		"/binary.txt":  {"text/plain; charset=utf-8", elf, "holds binary data"},
		"/binary.html": {"text/html", elf, "holds binary data"},
		"/binary.json": {"application/json", elf, "holds binary data"},
		"/loop.pdf":    {"application/pdf", loop, "nested more than"},
		"/loop":        {"text/plain", loop, "nested more than"}, // sniffed as PDF whatever the label
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		b := bodies[r.URL.Path]
		w.Header().Set("Content-Type", b.ctype)
		w.Write(b.body)
	})
	f := newFetcher(t, Config{AllowLoopback: true})
	for p, b := range bodies {
		doc, err := f.Fetch(t.Context(), srv.URL+p)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: doc = %v, err = %v; want an error mentioning %q", p, doc, err, b.want)
		}
	}
}
