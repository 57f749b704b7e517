package corpus

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deepresearch/deepresearch/sources/internal/testzip"
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
		write(fmt.Sprintf("d%d.docx", i), testzip.Build([2]string{"word/document.xml", docx.String()}))
		write(fmt.Sprintf("e%d.epub", i), testzip.EPUBRepeating(1, xhtml.String()))
	}
}

// The files read at once share one memory budget whatever the number of
// workers: 16 workers reading (decoding, extracting, chunking) large DOCX
// and EPUB files as an update does keep the heap's peak within the budget
// and a margin, while without a budget to speak of it is past that. The
// index writer is left out: its memory is bounded by its batches, not by
// the workers. Budget, files and the least share of a container are a
// fraction of an update's (a budget of 1 GiB, files of tens of MiB, 4 MiB):
// the budget admits about two files at once, as it would there.
func TestMemoryBudgetBoundsPeak(t *testing.T) {
	dir := t.TempDir()
	const mib, workers, budget, margin, minContainer = 1, 16, 6 << 20, 8 << 20, 512 << 10
	bigOffice(t, dir, 4, mib)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []job
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := formatOf(p)
		jobs = append(jobs, job{found: found{path: p, size: info.Size(), f: f}})
	}
	read := func(total int64) uint64 {
		mem := newMemBudget(total)
		mem.minContainer = minContainer
		return peakHeap(func() {
			jobCh := make(chan job)
			outCh := make(chan outcome, workers*2)
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for j := range jobCh {
						if o, ok := mem.process(t.Context(), j); ok {
							outCh <- o
						}
					}
				})
			}
			go func() {
				for _, j := range jobs {
					jobCh <- j
				}
				close(jobCh)
			}()
			go func() { wg.Wait(); close(outCh) }()
			n := 0
			for o := range outCh {
				mem.release(o.share)
				if o.result != Added {
					t.Errorf("%s: %v %v", o.path, o.result, o.err)
				}
				n++
			}
			if n != len(jobs) {
				t.Errorf("%d of %d files read", n, len(jobs))
			}
		})
	}
	bounded := read(budget)
	t.Logf("peak heap: %d MiB with a budget of %d MiB", bounded>>20, budget>>20)
	if bounded > budget+margin {
		t.Errorf("peak heap %d MiB, over the %d MiB budget and the %d MiB margin", bounded>>20, budget>>20, margin>>20)
	}
	unbounded := read(1 << 40)
	t.Logf("peak heap: %d MiB without a budget", unbounded>>20)
	if unbounded <= budget+margin {
		t.Errorf("without a budget the peak is %d MiB, within the bound: the test does not measure the budget", unbounded>>20)
	}
}
