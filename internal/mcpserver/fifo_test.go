package mcpserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/research"
)

// A FIFO as a run's state.db or events.jsonl in the runs folder used to leave initialize unanswered: listing
// the runs blocked in open(2). The server must answer initialize and list its resources.
func TestFIFOsInRunFoldersDoNotHangTheServer(t *testing.T) {
	runs := t.TempDir()
	for name, file := range map[string]string{"state-fifo": research.StateFile, "events-fifo": research.EventsFile} {
		dir := filepath.Join(runs, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(dir, file), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(Config{RunsDir: runs,
		Start: func(context.Context, RunRequest) (*research.Report, error) { return nil, errors.New("no engine here") }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		cs := connectInMemory(t, s, &recorder{})
		_, err := cs.ListResources(t.Context(), nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("initialize and resources/list did not answer")
	}
}
