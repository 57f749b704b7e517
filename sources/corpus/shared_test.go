//go:build unix

package corpus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A reader that keeps an index open (an idle server) blocks no writer, and sees the writer's update on its next
// search; the writer removes the old generation only once the reader lets go of it.
func TestReaderHoldingIndexBlocksNoWriter(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.md"), "# A\n\nThe aardvark eats ants.\n")
	dir := t.TempDir()
	w := openIndex(t, dir)
	if _, err := w.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	r := openIndex(t, dir)
	if rs, err := r.Search(t.Context(), "aardvark", 5); err != nil || len(rs) != 1 {
		t.Fatalf("reader: %v %v", rs, err)
	}
	first := r.cur.name

	writeFile(t, filepath.Join(root, "b.md"), "# B\n\nThe badger digs.\n")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	st, err := w.Add(ctx, root)
	if err != nil || st.Added != 1 {
		t.Fatalf("writer while a reader holds the index: %+v %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(dir, first)); err != nil {
		t.Fatalf("the generation a reader holds was removed: %v", err)
	}
	if rs, err := r.Search(t.Context(), "badger", 5); err != nil || len(rs) != 1 {
		t.Fatalf("reader did not see the update: %v %v", rs, err)
	}
	// The reader moved on; the next update removes the old generation.
	writeFile(t, filepath.Join(root, "c.md"), "# C\n\nThe cat sleeps.\n")
	if _, err := w.Add(ctx, root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, first)); err == nil {
		t.Fatalf("generation %s left behind after its reader let go", first)
	}
}

// An update waits for another one in progress — reporting that it waits — instead of failing, and a caller that
// gives up while waiting is let go at once.
func TestWriterWaitsForAnotherWriter(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.md"), "# A\n\nThe aardvark eats ants.\n")
	dir := t.TempDir()
	if err := prepareDir(dir); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockWriter(dir, nil, nil) // another process's update
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var phases []string
	waiting := make(chan struct{}, 1)
	ix, err := OpenWith(dir, &Options{Progress: func(p Progress) {
		mu.Lock()
		phases = append(phases, p.Phase)
		mu.Unlock()
		if p.Phase == "waiting" {
			waiting <- struct{}{}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()

	// Given up while waiting.
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := ix.Add(ctx, root); done <- err }()
	<-waiting
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "waiting for another process") {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("a cancelled Add kept waiting for the lock")
	}

	// Waits, then does the work once the lock is free.
	go func() { _, err := ix.Add(t.Context(), root); done <- err }()
	<-waiting
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ix.DocCount() != 1 {
		t.Fatalf("DocCount = %d", ix.DocCount())
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(phases, " "), "waiting indexing") {
		t.Fatalf("phases %v", phases)
	}
}

// Cancelling an update part-way keeps the files done so far, and the index stays whole and searchable.
func TestCancelMidwayLeavesIndexConsistent(t *testing.T) {
	root := t.TempDir()
	const n = 2000
	for i := range n {
		writeFile(t, filepath.Join(root, fmt.Sprintf("n%04d.md", i)), fmt.Sprintf("# Note %d\n\nThe okapi note number %d.\n", i, i))
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var cancelledAt time.Time
	ix, err := OpenWith(dir, &Options{Progress: func(p Progress) {
		if p.Phase == "indexing" && p.Done == 0 {
			// Reports come at most every 100 ms: hold the writer past that, so that the next file done is
			// reported (and cancels) however fast this machine indexes 2000 small files.
			time.Sleep(150 * time.Millisecond)
		}
		if p.Phase == "indexing" && p.Done > 0 && cancelledAt.IsZero() {
			cancelledAt = time.Now()
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	st, err := ix.Add(ctx, root)
	stopped := time.Since(cancelledAt)
	if err == nil {
		t.Fatal("cancelled Add reported success")
	}
	if cancelledAt.IsZero() {
		t.Fatal("no progress was reported")
	}
	t.Logf("returned %s after cancellation, %d of %d files indexed", stopped.Round(time.Millisecond), st.Added, n)
	if st.Added == 0 || st.Added >= n || ix.DocCount() != st.Added {
		t.Fatalf("added %d, index holds %d", st.Added, ix.DocCount())
	}
	// Every indexed document is found, up to the search's result cap.
	rs, err := ix.Search(t.Context(), "okapi", 1000)
	if err != nil || len(rs) != min(st.Added, 1000) {
		t.Fatalf("%d results for %d documents: %v", len(rs), st.Added, err)
	}
	st2, err := ix.Add(t.Context(), root)
	if err != nil || st2.Added != n-st.Added || st2.Unchanged != st.Added || ix.DocCount() != n {
		t.Fatalf("resume: %+v %v", st2, err)
	}
}

// What an interrupted build leaves behind (a generation never made current) is removed by the next update and
// never read.
func TestInterruptedBuildIsDiscarded(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.md"), "# A\n\nThe aardvark eats ants.\n")
	dir := t.TempDir()
	ix := openIndex(t, dir)
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, genName(2))
	writeFile(t, filepath.Join(junk, bleveName, "store", "root.bolt"), "half written")
	writeFile(t, filepath.Join(junk, useLockName), "")
	if rs, err := ix.Search(t.Context(), "aardvark", 5); err != nil || len(rs) != 1 {
		t.Fatalf("search with a half-built generation beside: %v %v", rs, err)
	}
	writeFile(t, filepath.Join(root, "b.md"), "# B\n\nThe badger digs.\n")
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	if rs, err := ix.Search(t.Context(), "badger", 5); err != nil || len(rs) != 1 {
		t.Fatalf("after the update: %v %v", rs, err)
	}
	if cur, _ := readCurrent(dir); cur != genName(2) {
		t.Fatalf("current = %s", cur)
	}
	if _, err := os.Stat(filepath.Join(junk, infoName)); err != nil {
		t.Fatalf("the half-built generation was not replaced by a whole one: %v", err)
	}
}

// Honest accounting: every file is reported with what happened to it, pipes and devices are never opened for a
// blocking read, and binary, oversized, hidden, vendored, generated and ignored files stay out.
func TestAddReportsEveryOutcome(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "doc.md"), "# Doc\n\nThe dingo howls.\n")
	writeFile(t, filepath.Join(root, "main.go"), "package main\n\n// Hello says hello.\nfunc Hello() {}\n")
	writeFile(t, filepath.Join(root, "gen.go"), "// Code generated by stringer; DO NOT EDIT.\n\npackage main\n")
	writeFile(t, filepath.Join(root, "photo.png"), "\x89PNG\r\n\x1a\n")
	writeFile(t, filepath.Join(root, "Makefile.bak"), "all:\n")
	writeFile(t, filepath.Join(root, "blob.txt"), "text\x00with\x00nul bytes")
	writeFile(t, filepath.Join(root, "node_modules", "x", "index.js"), "module.exports = 1\n")
	writeFile(t, filepath.Join(root, "vendor", "y.go"), "package y\n")
	writeFile(t, filepath.Join(root, ".git", "config"), "[core]\n")
	writeFile(t, filepath.Join(root, ".gitignore"), "build/\n*.log.md\n")
	writeFile(t, filepath.Join(root, "build", "out.md"), "# built\n")
	writeFile(t, filepath.Join(root, "sub", "trace.log.md"), "# ignored\n")
	writeFile(t, filepath.Join(root, "sub", "package-lock.json"), "{}\n")
	big := filepath.Join(root, "huge.txt")
	writeFile(t, big, "")
	if err := os.Truncate(big, maxFileSize+1); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}

	ix := openIndex(t, t.TempDir())
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	st, err := ix.Add(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Outcome{}
	for _, f := range st.Files {
		rel, _ := filepath.Rel(root, f.Path)
		got[filepath.ToSlash(rel)] = f.Outcome
	}
	want := map[string]Outcome{
		"doc.md": Added, "main.go": Added, "gen.go": Excluded, "photo.png": SkippedType, "Makefile.bak": SkippedType,
		"blob.txt": Binary, "node_modules": Excluded, "vendor": Excluded, ".git": Excluded, ".gitignore": Excluded,
		"build": Excluded, "sub/trace.log.md": Excluded, "sub/package-lock.json": Excluded, "huge.txt": TooLarge,
		"pipe.md": Excluded,
	}
	for p, o := range want {
		if got[p] != o {
			t.Errorf("%s: outcome %q, want %q", p, got[p], o)
		}
	}
	if len(got) != len(want) {
		t.Errorf("outcomes for %d entries, want %d: %v", len(got), len(want), got)
	}
	if st.Added != 2 || st.SkippedType != 2 || st.Binary != 1 || st.TooLarge != 1 || st.Excluded != 9 || len(st.Failed) != 0 {
		t.Errorf("stats %+v", st)
	}

	// A file that turns binary is dropped from the index, not kept with its old text.
	writeFile(t, filepath.Join(root, "doc.md"), "\x00\x01\x02binary now")
	st, err = ix.Add(ctx, root)
	if err != nil || st.Binary != 2 || st.Removed != 1 || ix.DocCount() != 1 {
		t.Fatalf("after doc.md turned binary: %+v %v (%d documents)", st, err, ix.DocCount())
	}
}

// Readers never see a broken index: while one index handle keeps updating a folder (as another process would),
// searches through a second handle all succeed, and each sees a whole generation — the documents of one update,
// never a part of one.
func TestSearchesDuringUpdatesSeeWholeGenerations(t *testing.T) {
	root := t.TempDir()
	dir := t.TempDir()
	w := openIndex(t, dir)
	r := openIndex(t, dir)
	const updates, perUpdate = 8, 5
	write := func(u int) {
		for i := range perUpdate {
			writeFile(t, filepath.Join(root, fmt.Sprintf("u%02d-%d.md", u, i)), fmt.Sprintf("# Update %d\n\nThe wombat note %d of update %d.\n", u, i, u))
		}
	}
	write(0)
	if _, err := w.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	errc := make(chan error, 1)
	var searches int
	go func() {
		defer close(errc)
		for {
			select {
			case <-stop:
				return
			default:
			}
			rs, err := r.Search(t.Context(), "wombat note", 1000)
			if err != nil {
				errc <- err
				return
			}
			if len(rs)%perUpdate != 0 || len(rs) == 0 {
				errc <- fmt.Errorf("a search saw %d documents: not a whole number of updates", len(rs))
				return
			}
			for _, res := range rs[:1] {
				if _, err := r.Fetch(t.Context(), res.URL); err != nil {
					errc <- err
					return
				}
			}
			searches++
		}
	}()
	for u := 1; u < updates; u++ {
		write(u)
		if _, err := w.Add(t.Context(), root); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if searches == 0 {
		t.Fatal("no search ran during the updates")
	}
	if rs, err := r.Search(t.Context(), "wombat note", 1000); err != nil || len(rs) != updates*perUpdate {
		t.Fatalf("after the updates: %d results, %v", len(rs), err)
	}
}
