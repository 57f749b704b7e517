package webui

import (
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

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/research"
)

// A FIFO as a run's state.db or events.jsonl used to block the index page and every GET of the run's events in
// open(2), each pinning a thread. The viewer must answer both, and stream a finished run's events from the file
// line by line, resuming after Last-Event-ID.
func TestFIFOsInRunFoldersDoNotHangTheViewer(t *testing.T) {
	eng := researchtest.New(t, 0)
	s := newTestServer(t, "", nil)
	good := filepath.Join(s.cfg.RunsDir, "good")
	if _, err := eng.Run(t.Context(), researchtest.Question, "good", good, nil); err != nil {
		t.Fatal(err)
	}
	for name, file := range map[string]string{"state-fifo": research.StateFile, "events-fifo": research.EventsFile} {
		dir := filepath.Join(s.cfg.RunsDir, name)
		if _, err := eng.Run(t.Context(), researchtest.Question, name, dir, nil); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{file, file + "-wal", file + "-shm"} {
			os.Remove(filepath.Join(dir, f))
		}
		if err := syscall.Mkfifo(filepath.Join(dir, file), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := s.Handler()
	get := func(p, lastID string) (int, string) {
		req := httptest.NewRequest("GET", p, nil)
		req.Host = "127.0.0.1"
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() { h.ServeHTTP(rec, req); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("GET %s hung", p)
		}
		b, _ := io.ReadAll(rec.Result().Body)
		return rec.Code, string(b)
	}
	if code, body := get("/", ""); code != http.StatusOK || !strings.Contains(body, "good") {
		t.Errorf("index: %d\n%.500s", code, body)
	}
	for _, id := range []string{"state-fifo", "events-fifo"} {
		if code, body := get("/runs/"+id+"/events", ""); code == http.StatusOK && !strings.Contains(body, "event: end") {
			t.Errorf("events of %s: %d %.300s", id, code, body)
		}
	}
	evs, err := research.LoadEvents(good)
	if err != nil || len(evs) < 3 {
		t.Fatalf("events: %d %v", len(evs), err)
	}
	code, body := get("/runs/good/events", "")
	if code != http.StatusOK || strings.Count(body, "event: progress") != len(evs) || !strings.Contains(body, "event: end") {
		t.Fatalf("stored events: %d, %d progress events of %d", code, strings.Count(body, "event: progress"), len(evs))
	}
	_, body = get("/runs/good/events", "1")
	if got := strings.Count(body, "event: progress"); got != len(evs)-2 || !strings.HasPrefix(body, fmt.Sprintf("id: %d\n", 2)) {
		t.Fatalf("after Last-Event-ID 1: %d progress events of %d, starting %.20q", got, len(evs), body)
	}
}
