package corpus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// peakHeap samples the heap in use while f runs and returns its peak above the level before. The collector runs
// often meanwhile, so that the heap in use follows what is live rather than the garbage collector's pacing.
func peakHeap(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
				peak.Store(ms.HeapInuse - base)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	f()
	close(stop)
	wg.Wait()
	return peak.Load()
}

// A single file of thousands of chunks (a data dump, a long log) is indexed in bounded batches: memory stays a
// small multiple of the file, not the gigabytes one batch of all its chunks takes, and every chunk is searchable,
// also after the file changes.
func TestHugeFileIndexedInBoundedBatches(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "dump.json")
	write := func(word string) int {
		var b strings.Builder
		b.WriteString("{\n")
		for i := range 130000 {
			fmt.Fprintf(&b, " \"k%d\": \"value number %d about %s\",\n", i, i, word)
		}
		b.WriteString(" \"end\": \"the last entry mentions the quokka\"\n}\n")
		writeFile(t, path, b.String())
		return b.Len()
	}
	size := write("pangolins")
	ix := openIndex(t, t.TempDir())
	var st Stats
	var err error
	peak := peakHeap(func() { st, err = ix.Add(t.Context(), root) })
	if err != nil || st.Added != 1 {
		t.Fatalf("%+v %v", st, err)
	}
	if st.Chunks < 4*defaultBatchOps {
		t.Fatalf("%d chunks: the file must span several batches", st.Chunks)
	}
	t.Logf("%d MB file, %d chunks: heap peak %d MB", size>>20, st.Chunks, peak>>20)
	if limit := uint64(30 * size); peak > limit {
		t.Errorf("indexing a %d MB file took %d MB of heap, over %d MB", size>>20, peak>>20, limit>>20)
	}
	if ix.ChunkCount() != st.Chunks {
		t.Errorf("index holds %d chunks, %d written", ix.ChunkCount(), st.Chunks)
	}
	for _, q := range []string{"k0 value number 0", "quokka last entry"} {
		rs, err := ix.Search(t.Context(), q, 1)
		if err != nil || len(rs) == 0 || !strings.Contains(rs[0].URL, "dump.json#L") {
			t.Errorf("search %q: %v %v", q, rs, err)
		}
	}
	// Changed: the old chunks go, across batches, and the new ones come.
	write("armadillos")
	if st, err = ix.Add(t.Context(), root); err != nil || st.Updated != 1 {
		t.Fatalf("%+v %v", st, err)
	}
	if rs, err := ix.Search(t.Context(), "pangolins", 1); err != nil || len(rs) != 0 {
		t.Errorf("old text still found: %v %v", rs, err)
	}
	if rs, err := ix.Search(t.Context(), "armadillos", 1); err != nil || len(rs) == 0 {
		t.Errorf("new text not found: %v %v", rs, err)
	}
}

// A stop does not wait for the files already read to be written: files whose text arrives after the stop are left
// as the index had them, and the update that comes next does them.
func TestStopDoesNotWriteFilesReadMeanwhile(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "Line %d of the long ledger names the wombat.\n\n", i)
	}
	writeFile(t, filepath.Join(root, "ledger.md"), b.String())
	writeFile(t, filepath.Join(root, "note.md"), "# Note\n\nThe wombat note.\n")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var phases []string
	ix, err := OpenWith(t.TempDir(), &Options{Progress: func(p Progress) {
		phases = append(phases, p.Phase)
		if p.Phase == "indexing" && p.Total > 0 && p.Done == 0 {
			cancel() // before any file is written
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	st, err := ix.Add(ctx, root)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Add after a stop: %v", err)
	}
	if st.Added != 0 || ix.DocCount() != 0 || ix.ChunkCount() != 0 {
		t.Errorf("files written after the stop: %+v, %d documents, %d chunks", st, ix.DocCount(), ix.ChunkCount())
	}
	if slices.Contains(phases, "done") {
		t.Errorf("a stopped update reported itself done: %v", phases)
	}
	if st, err = ix.Add(t.Context(), root); err != nil || st.Added != 2 {
		t.Fatalf("next update: %+v %v", st, err)
	}
	if rs, err := ix.Search(t.Context(), "ledger line 19999 wombat", 1); err != nil || len(rs) == 0 {
		t.Errorf("ledger not found after the next update: %v %v", rs, err)
	}
}

// Cancelled part way through a file, indexFile takes back what it added, also the chunks already written.
func TestIndexFileStoppedPartWay(t *testing.T) {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := bleve.NewMemOnly(m)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	o := outcome{job: job{found: found{path: "/x/big.md"}}}
	for i := range 3*defaultBatchOps + 10 {
		o.ex.chunks = append(o.ex.chunks, chunk{start: i + 1, end: i + 1, text: fmt.Sprintf("line %d about the wombat", i)})
	}
	batch, tbatch := idx.NewBatch(), idx.NewBatch()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	flushes := 0
	flush := func() error {
		if err := idx.Batch(batch); err != nil {
			return err
		}
		batch = idx.NewBatch()
		return nil
	}
	err = indexFile(ctx, func() (*bleve.Batch, *bleve.Batch) { return batch, tbatch }, func() error {
		if batch.Size() < defaultBatchOps {
			return nil
		}
		if flushes++; flushes == 2 {
			cancel()
		}
		return flush()
	}, o)
	if !errors.Is(err, errStopped) {
		t.Fatalf("indexFile after a stop: %v", err)
	}
	if err := flush(); err != nil {
		t.Fatal(err)
	}
	if n, err := idx.DocCount(); err != nil || n != 0 {
		t.Errorf("%d chunks of the stopped file left in the index (%v)", n, err)
	}
}

// An update waiting for another process's sees that process's files done of its total, as the lock's holder
// publishes them.
func TestWaiterSeesTheWritersProgress(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.md"), "# A\n\nThe aardvark eats ants.\n")
	dir := t.TempDir()
	if err := prepareDir(dir); err != nil {
		t.Fatal(err)
	}
	unlock, publish, err := lockWriterShared(dir, nil, nil) // another process's update
	if err != nil {
		t.Fatal(err)
	}
	publish(40, 100)
	seen := make(chan Progress, 100)
	ix, err := OpenWith(dir, &Options{Progress: func(p Progress) {
		if p.Phase == "waiting" {
			seen <- p
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	done := make(chan error, 1)
	go func() { _, err := ix.Add(t.Context(), root); done <- err }()
	want := []Progress{{Done: 40, Total: 100}, {Done: 75, Total: 100}}
	for i, w := range want {
		select {
		case p := <-seen:
			if p.Done != w.Done || p.Total != w.Total {
				t.Errorf("waiting report %d: %d/%d, want %d/%d", i, p.Done, p.Total, w.Done, w.Total)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no waiting report %d", i)
		}
		if i == 0 {
			time.Sleep(150 * time.Millisecond) // past the reports' 100 ms spacing
			publish(75, 100)
		}
	}
	unlock()
	if err := <-done; err != nil || ix.DocCount() != 1 {
		t.Fatalf("after the wait: %v, %d documents", err, ix.DocCount())
	}
	// The lock's next holder starts its own figures afresh.
	unlock, _, err = lockWriterShared(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	var d, tot int
	data, _ := os.ReadFile(filepath.Join(dir, writeLockName))
	if len(data) > progressAt {
		fmt.Sscanf(string(data[progressAt:]), "%d %d", &d, &tot)
	}
	if d != 0 || tot != 0 {
		t.Errorf("a new holder shows the previous one's figures %d/%d", d, tot)
	}
}
