package webui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// makeRuns writes n run folders under dir, named as NewRunID names them a second apart (the last is the newest),
// each with a real state.db; it returns the ids, oldest first.
func makeRuns(t testing.TB, dir string, n int) []string {
	t.Helper()
	tmpl := filepath.Join(t.TempDir(), research.StateFile)
	db, err := state.Open(t.Context(), tmpl)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"run_id": "tmpl", "question": "A stored question?", "status": research.RunDone,
		"created": time.Now().UTC().Format(time.RFC3339Nano)} {
		if err := db.SetMeta(t.Context(), k, v); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	data, err := os.ReadFile(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 2, 3, 0, 0, 0, time.Local)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = base.Add(time.Duration(i)*time.Second).Format("20060102-150405") + fmt.Sprintf("-%06x", i)
		if err := os.MkdirAll(filepath.Join(dir, ids[i]), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ids[i], research.StateFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// opens watches run folders with inotify and reports which of them had a file opened.
type opens struct {
	fd   int
	dirs map[int32]string // watch → run id
}

func watchOpens(t *testing.T, runs string, ids []string) *opens {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	o := &opens{fd: fd, dirs: map[int32]string{}}
	for _, id := range ids {
		wd, err := syscall.InotifyAddWatch(fd, filepath.Join(runs, id), syscall.IN_OPEN)
		if err != nil {
			t.Fatal(err)
		}
		o.dirs[int32(wd)] = id
	}
	return o
}

// drain returns the run ids whose state file was opened since the last drain.
func (o *opens) drain(t *testing.T) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(o.fd, buf)
		if err == syscall.EAGAIN || n <= 0 {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := string(bytes.TrimRight(buf[off+syscall.SizeofInotifyEvent:off+syscall.SizeofInotifyEvent+int(ev.Len)], "\x00"))
			if strings.HasPrefix(name, research.StateFile) {
				got[o.dirs[ev.Wd]] = true
			}
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// An index page over 2,000 runs used to open every state.db (1.4 s a load). The listing is paged, and a page reads
// only the runs it shows: watched with inotify, loading page 1 opens the state of its 50 runs and of no other,
// page 3 of 120 shows the 20 oldest, and /api/runs pages the same way with the total in X-Total-Count.
func TestRunsListReadsOnlyThePageShown(t *testing.T) {
	s := newTestServer(t, "", nil)
	ids := makeRuns(t, s.cfg.RunsDir, 120)
	w := watchOpens(t, s.cfg.RunsDir, ids)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	get := func(p string) (*http.Response, string) {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	_, page := get("/")
	opened := w.drain(t)
	newest := ids[len(ids)-runsPerPage:]
	for _, id := range newest {
		if !opened[id] {
			t.Errorf("run %s is on page 1 but its state was not read (is inotify watching?)", id)
		}
		if !strings.Contains(page, `href="/runs/`+id+`"`) {
			t.Errorf("page 1 lacks run %s", id)
		}
	}
	for _, id := range ids[:len(ids)-runsPerPage] {
		if opened[id] {
			t.Errorf("loading page 1 opened the state of run %s, which it does not show", id)
		}
		if strings.Contains(page, id) {
			t.Errorf("page 1 shows run %s", id)
		}
	}
	if !strings.Contains(page, "Runs 1–50 of 120") || !strings.Contains(page, `href="/?page=2"`) || strings.Contains(page, `rel="prev"`) {
		t.Errorf("page 1's range and links are wrong")
	}
	_, page = get("/?page=3")
	if !strings.Contains(page, "Runs 101–120 of 120") || !strings.Contains(page, `href="/runs/`+ids[0]+`"`) || strings.Contains(page, `rel="next"`) {
		t.Errorf("page 3 does not end the listing with the oldest run")
	}
	if resp, _ := get("/?page=0"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("page 0: %d", resp.StatusCode)
	}
	w.drain(t)
	resp, body := get("/api/runs?page=2&per_page=100")
	if resp.Header.Get("X-Total-Count") != "120" || strings.Count(body, `"id":`) != 20 || !strings.Contains(body, `"question":"A stored question?"`) {
		t.Errorf("api page 2 of 100: total %q, %d runs", resp.Header.Get("X-Total-Count"), strings.Count(body, `"id":`))
	}
	if opened := w.drain(t); len(opened) != 20 {
		t.Errorf("the api page of 20 runs opened %d states", len(opened))
	}
	if resp, _ := get("/api/runs?per_page=100000"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("per_page=100000: %d, want 400", resp.StatusCode)
	}
}

// BenchmarkIndexPage times a load of the index page over 2,000 run folders (a page of 50), beside reading every
// run's state as the listing did before it was paged (research.Runs.List).
func BenchmarkIndexPage(b *testing.B) {
	s, err := New(Config{RunsDir: b.TempDir(), Start: func(ctx context.Context, req RunRequest) (*research.Report, error) { return nil, nil }})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	makeRuns(b, s.cfg.RunsDir, 2000)
	h := s.Handler()
	b.Run("page", func(b *testing.B) {
		for b.Loop() {
			req := httptest.NewRequest("GET", "/", nil)
			req.Host = "127.0.0.1"
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatal(rec.Code)
			}
		}
	})
	b.Run("every-state", func(b *testing.B) {
		for b.Loop() {
			if list, err := s.store.List(b.Context()); err != nil || len(list) != 2000 {
				b.Fatal(len(list), err)
			}
		}
	})
}
