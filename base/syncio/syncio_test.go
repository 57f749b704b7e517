package syncio_test

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/deepresearch/deepresearch/base/syncio"
)

// chunky writes each call in two halves, so unserialised callers would interleave.
type chunky struct{ b bytes.Buffer }

func (c *chunky) Write(p []byte) (int, error) {
	h := len(p) / 2
	c.b.Write(p[:h])
	runtime.Gosched() // widen the window between the halves
	c.b.Write(p[h:])
	return len(p), nil
}

func TestWriterKeepsEachWriteWhole(t *testing.T) {
	var dst chunky
	w := syncio.NewWriter(&dst)
	if syncio.NewWriter(w) != w {
		t.Fatal("wrapping a Writer again made a second lock")
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			line := strings.Repeat(string(rune('a'+g)), 40) + "\n"
			for i := 0; i < 200; i++ {
				_, _ = w.Write([]byte(line))
			}
		}(g)
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(dst.b.String(), "\n"), "\n")
	if len(lines) != 8*200 {
		t.Fatalf("got %d lines, want %d", len(lines), 8*200)
	}
	for i, l := range lines {
		if len(l) != 40 || strings.Count(l, l[:1]) != 40 {
			t.Fatalf("line %d interleaved: %q", i, l)
		}
	}
}

func TestBufferConcurrent(t *testing.T) {
	var b syncio.Buffer
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := len(b.String()); got != 400 {
		t.Fatalf("buffer holds %d bytes, want 400", got)
	}
}
