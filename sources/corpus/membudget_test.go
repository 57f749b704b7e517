package corpus

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// bigOffice writes n DOCX and n EPUB files of about mib MiB of XML each:
// heavily formatted paragraphs of a few words drawn from a small
// vocabulary, so that decoding them, not indexing their text, is the work.
func bigOffice(t *testing.T, dir string, n, mib int) {
	t.Helper()
	words := strings.Fields("okapi raccoon seal otter heron badger lynx marten stoat vole shrew ibex tapir zebu gnu yak")
	rng := rand.New(rand.NewPCG(1, 2))
	para := func() string {
		var b strings.Builder
		for range 6 {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	}
	for i := range n {
		var docx, xhtml strings.Builder
		docx.WriteString(`<w:document xmlns:w="w"><w:body>`)
		xhtml.WriteString("<html><body>")
		for docx.Len() < mib<<20 {
			fmt.Fprintf(&docx, `<w:p><w:pPr><w:pStyle w:val="Body%d"/><w:spacing w:before="%d" w:after="120"/><w:ind w:left="%d"/></w:pPr>`+
				`<w:r><w:rPr><w:b/><w:i/><w:sz w:val="%d"/><w:color w:val="%06x"/></w:rPr><w:t>%s</w:t></w:r></w:p>`,
				rng.IntN(9), rng.IntN(400), rng.IntN(800), 20+rng.IntN(8), rng.IntN(1<<24), para())
			fmt.Fprintf(&xhtml, `<div class="c%d" id="p%d"><span class="s%d" style="margin:%dpx">`+
				`<em title="t%d">%s</em></span></div>`, rng.IntN(9), rng.IntN(1<<20), rng.IntN(9), rng.IntN(40), rng.IntN(1<<20), para())
		}
		docx.WriteString("</w:body></w:document>")
		xhtml.WriteString("</body></html>")
		write := func(name string, data []byte) {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(fmt.Sprintf("d%d.docx", i), zipBytes(t, [2]string{"word/document.xml", docx.String()}))
		write(fmt.Sprintf("e%d.epub", i), epubRepeating(t, 1, xhtml.String()))
	}
}

// The files indexed at once share one memory budget whatever the number of
// workers: with 16 workers on large DOCX and EPUB files, the heap's peak
// stays within the budget and a margin for the index being written, while
// without a budget to speak of it is past that.
func TestMemoryBudgetBoundsPeak(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(16))
	dir := t.TempDir()
	bigOffice(t, dir, 6, 6)
	const budget, margin = 48 << 20, 64 << 20
	peakWith := func(b int64) uint64 {
		ix, err := OpenWith(t.TempDir(), &Options{MemoryBudget: b})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		var st Stats
		peak := peakHeap(func() { st, err = ix.Add(t.Context(), dir) })
		if err != nil || st.Added != 12 {
			t.Fatalf("added %d of 12: %v %v", st.Added, err, st.Failed)
		}
		return peak
	}
	bounded := peakWith(budget)
	t.Logf("peak heap: %d MiB with a budget of %d MiB", bounded>>20, budget>>20)
	if bounded > budget+margin {
		t.Errorf("peak heap %d MiB, over the %d MiB budget and the %d MiB margin", bounded>>20, budget>>20, margin>>20)
	}
	unbounded := peakWith(1 << 40)
	t.Logf("peak heap: %d MiB without a budget", unbounded>>20)
	if unbounded <= budget+margin {
		t.Errorf("without a budget the peak is %d MiB, within the bound: the test does not measure the budget", unbounded>>20)
	}
}
