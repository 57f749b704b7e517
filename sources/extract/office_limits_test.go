package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/sources/internal/testzip"
)

// Office containers are read within bounds: a cancelled update stops reading them, every member read counts
// against one budget for the whole container, and text past the limit ends the reading at once.
func TestOfficeContainersAreBounded(t *testing.T) {
	docx := testzip.Build([2]string{"word/document.xml", `<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>okapi</w:t></w:r></w:p></w:body></w:document>`})
	pptx := testzip.Build([2]string{"ppt/slides/slide1.xml", `<p:sld xmlns:p="p" xmlns:a="a"><a:p><a:r><a:t>okapi</a:t></a:r></a:p></p:sld>`})
	epub := testzip.EPUBRepeating(2, "<html><body><p>The okapi.</p></body></html>")

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		for name, data := range map[string][]byte{"a.docx": docx, "a.pptx": pptx, "a.epub": epub} {
			f, _ := Builtin().ByPath(name)
			if _, err := f.Read(ctx, data, Limits{}); !errors.Is(err, context.Canceled) {
				t.Errorf("%s read after cancellation: %v", name, err)
			}
		}
	})

	t.Run("budget", func(t *testing.T) {
		// Each member is small; together they pass the container's budget.
		var slides [][2]string
		for i := range 40 {
			slides = append(slides, [2]string{fmt.Sprintf("ppt/slides/slide%d.xml", i+1),
				`<p:sld xmlns:p="p" xmlns:a="a">` + strings.Repeat(`<a:p><a:r><a:t>x</a:t></a:r></a:p>`, 200) + `</p:sld>`})
		}
		data := testzip.Build(slides...)
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		c := &container{ctx: t.Context(), zr: zr, budget: 64 << 10}
		if _, _, err := pptxText(c); err == nil || !strings.Contains(err.Error(), "uncompressed") {
			t.Errorf("40 slides of 7 KB within a 64 KB budget: %v", err)
		}
		c = &container{ctx: t.Context(), zr: zr, budget: MaxContainerSize}
		if _, text, err := pptxText(c); err != nil || strings.Count(text, "## Slide") != 40 {
			t.Errorf("the same slides within the default budget: %v", err)
		}
	})

	t.Run("text limit stops the reading", func(t *testing.T) {
		// One chapter of 64 KiB of text named 100 times, read with a text limit of 1 MiB (Limits.Text; the
		// default is MaxTextSize): the limit is passed at the 17th, and the reader stops there instead of
		// extracting the other 83.
		chapter := "<html><body>" + strings.Repeat("<p>"+strings.Repeat("okapi ", 170)+"</p>", 64) + "</body></html>"
		data := testzip.EPUBRepeating(100, chapter)
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		c := &container{ctx: t.Context(), zr: zr, budget: 1 << 40, text: 1 << 20}
		if _, _, err := epubText(c); !errors.Is(err, ErrTooMuchText) || !strings.Contains(err.Error(), "1024 KiB") {
			t.Fatalf("got %v, want ErrTooMuchText naming the 1024 KiB limit", err)
		}
		if c.read > 20*int64(len(chapter)) {
			t.Errorf("read %d MiB of chapters after the text limit was passed", c.read>>20)
		}
	})
}

// The text limit is MaxTextSize unless Limits.Text sets another: text up to the limit is kept, a line past it is
// ErrTooMuchText, and the error names a limit other than the default.
func TestTextLimit(t *testing.T) {
	line := strings.Repeat("okapi ", 1<<10) // 6 KiB
	for _, tc := range []struct {
		limit, want int64
		msg         string
	}{{0, MaxTextSize, "16 MiB"}, {-1, MaxTextSize, "16 MiB"}, {64 << 10, 64 << 10, "64 KiB"}} {
		b := textBuilder{limit: tc.limit}
		for int64(b.Len()+2*len(line)+1) <= tc.want {
			b.line(line)
		}
		if _, err := b.result(); err != nil {
			t.Fatalf("limit %d: %d bytes refused: %v", tc.limit, b.Len(), err)
		}
		b.line(line)
		b.line(line)
		if _, err := b.result(); !errors.Is(err, ErrTooMuchText) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("limit %d: past %d bytes: %v, want ErrTooMuchText naming %s", tc.limit, tc.want, err, tc.msg)
		}
	}
}
