package extract

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/sources/internal/testpdf"
)

const catalog = "<< /Type /Catalog /Pages 2 0 R >>"

// flatePage returns a page (object 3) whose content stream (object 4) inflates to n bytes of spaces.
func flateBomb(t testing.TB, n int) []byte {
	t.Helper()
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for left := n; left > 0; left -= len(chunk) {
		if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return testpdf.Raw(catalog,
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << >> >>",
		fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.String()))
}

// TestHostilePDFs: every malformed or hostile PDF ends promptly with a clear error for that file, never a
// hang, a panic or an unbounded allocation.
func TestHostilePDFs(t *testing.T) {
	tests := []struct {
		name string
		pdf  []byte
		want string // in the error
	}{
		{"page tree points to itself", testpdf.Raw(catalog,
			"<< /Type /Pages /Kids [2 0 R] /Count 1 >>"), "nested more than"},
		{"page tree points to its parent", testpdf.Raw(catalog,
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Pages /Kids [2 0 R] /Count 1 >>"), "nested more than"},
		{"claims 2e9 pages", testpdf.Raw(catalog,
			"<< /Type /Pages /Kids [3 0 R] /Count 2000000000 >>",
			"<< /Type /Page /Parent 2 0 R >>"), "claims 2000000000 pages"},
		{"kids shared exponentially", func() []byte {
			objs := []string{catalog}
			for i := 2; i < 40; i++ { // each level lists the next one four times: 4^38 leaves
				objs = append(objs, fmt.Sprintf("<< /Type /Pages /Kids [%[1]d 0 R %[1]d 0 R %[1]d 0 R %[1]d 0 R] /Count 1 >>", i+1))
			}
			return testpdf.Raw(append(objs, "<< /Type /Page >>")...)
		}(), "PDF exceeds a safety limit"},
		{"page is its own parent", testpdf.Raw(catalog,
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 3 0 R /Contents 4 0 R >>",
			"<< /Length 20 >>\nstream\nBT (hello) Tj ET   \nendstream"), "/Parent chain"},
		{"object stream extends itself", testpdf.Raw(catalog,
			"<< /Type /Pages /Kids [] /Count 0 >>",
			"<< /Type /ObjStm /N 0 /First 1 /Extends 3 0 R /Length 1 >>\nstream\n \nendstream"), "/Extends"},
		{"flate bomb", flateBomb(t, MaxPDFDecodedBytes+(1<<20)), "decompress to more than"},
		{"truncated", testpdf.Build([]string{"Hello"})[:200], "read PDF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PDF(context.Background(), tt.pdf)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("PDF: err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestPDFLimitIsTyped(t *testing.T) {
	_, err := PDF(context.Background(), testpdf.Raw(catalog, "<< /Type /Pages /Kids [2 0 R] /Count 1 >>"))
	if !errors.Is(err, ErrPDFLimit) {
		t.Fatalf("err = %v, want ErrPDFLimit", err)
	}
}

func TestPDFStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := PDF(ctx, testpdf.Build([]string{"Hello world"}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestPDFStillReadsRealDocuments(t *testing.T) {
	text, err := PDF(context.Background(), testpdf.Build([]string{"First page text"}, []string{"Second page text"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "First page text") || !strings.Contains(text, "Second page text") ||
		strings.Index(text, "First") > strings.Index(text, "Second") {
		t.Fatalf("text = %q", text)
	}
}

func TestLooksBinary(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want bool
	}{
		{"ascii", []byte("hello\tworld\r\n"), false},
		{"utf-8", []byte("日本語のテキスト — café"), false},
		{"latin-1", []byte("caf\xe9 cr\xe8me"), false},
		{"utf-16 with BOM", []byte("\xff\xfeh\x00i\x00"), false},
		{"NUL", []byte("text\x00more"), true},
		{"ELF", append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 64)...), true},
		{"control soup", bytes.Repeat([]byte("\x01\x02\x03a"), 100), true},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		if got := LooksBinary(tt.in); got != tt.want {
			t.Errorf("%s: LooksBinary = %v, want %v", tt.name, got, tt.want)
		}
	}
}
