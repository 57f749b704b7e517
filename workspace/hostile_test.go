package workspace_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/workspace"
)

// A FIFO (or a device) in the workspace is never opened for a blocking read or append: read_file and AppendFile
// refuse it at once with a clear error, grep and glob walk past it, ls lists it.
func TestFIFOIsRefusedWithoutBlocking(t *testing.T) {
	ws := newWS(t, 0)
	if err := syscall.Mkfifo(filepath.Join(ws.Root(), "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile("note.txt", []byte("needle here\n")); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := ws.ReadFile("pipe")
		if !errors.Is(err, workspace.ErrNotRegular) || !strings.Contains(err.Error(), "a FIFO") {
			t.Errorf("ReadFile(pipe) = %v, want ErrNotRegular naming a FIFO", err)
		}
		if err := ws.AppendFile("pipe", []byte("appended\n")); !errors.Is(err, workspace.ErrNotRegular) || !strings.Contains(err.Error(), "a FIFO") {
			t.Errorf("AppendFile(pipe) = %v, want ErrNotRegular naming a FIFO", err)
		}
		if r := run(t, ws, "read_file", map[string]string{"path": "pipe"}); !r.IsError || !strings.Contains(r.Content, "not a regular file") {
			t.Errorf("read_file pipe = %+v", r)
		}
		if r := run(t, ws, "grep", map[string]string{"pattern": "needle"}); r.Content != "note.txt:1: needle here\n" {
			t.Errorf("grep = %q", r.Content)
		}
		if r := run(t, ws, "ls", map[string]string{}); !strings.Contains(r.Content, "pipe") {
			t.Errorf("ls = %q", r.Content)
		}
		if _, err := ws.ReadFile("/dev/zero"); err == nil {
			t.Error("read a device outside the workspace")
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		// Unblock a reader stuck on the FIFO so the test can report instead of hanging.
		if f, err := os.OpenFile(filepath.Join(ws.Root(), "pipe"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("a file tool blocked on the FIFO")
	}
}

// A folder swapped for a link to somewhere else while grep, glob and ls run must never lead them out: every
// step of the walk goes through os.Root. The swap runs flat out in a goroutine while the tools run again and
// again; not once may a name or a line from outside appear.
func TestWalksRefuseAFolderSwappedForALink(t *testing.T) {
	ws := newWS(t, 0)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret-outside.txt"), []byte("TOPSECRET outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(ws.Root(), "sub")
	aside := filepath.Join(ws.Root(), "sub-real")
	if err := ws.WriteFile("sub/inside.txt", []byte("TOPSECRET inside\n")); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			// sub is a real folder, then a link to outside, then a real folder again.
			if os.Rename(sub, aside) == nil {
				_ = os.Symlink(outside, sub)
				time.Sleep(time.Millisecond)
				_ = os.Remove(sub)
				_ = os.Rename(aside, sub)
			}
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	for range 300 {
		for _, c := range []struct {
			tool string
			args map[string]string
		}{
			{"grep", map[string]string{"pattern": "TOPSECRET"}},
			{"grep", map[string]string{"pattern": "TOPSECRET", "path": "sub"}},
			{"glob", map[string]string{"pattern": "**/*.txt"}},
			{"ls", map[string]string{"path": "sub"}},
		} {
			r := run(t, ws, c.tool, c.args)
			if strings.Contains(r.Content, "outside") {
				t.Fatalf("%s %v read outside the workspace:\n%s", c.tool, c.args, r.Content)
			}
		}
	}
}
