package chat

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// FuzzHistoryFile loads whatever a history file may hold (cut lines, invalid JSON, huge entries, control bytes):
// loading never fails on content, keeps at most HistoryLimit entries the editor can recall, each one a message
// worth recalling, and leaves the file readable by the user only.
func FuzzHistoryFile(f *testing.F) {
	f.Add([]byte("\"hello\"\n\"second\"\n"))
	f.Add([]byte("not json\n\"ok\"\n\"\\u0000\"\n" + strings.Repeat("x", 9000) + "\n"))
	f.Add([]byte(`"` + strings.Repeat("y", 9000) + `"` + "\n\" leading space\"\n\"\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "chat_history")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := loadHistory(file, nil)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		if h.Len() > HistoryLimit {
			t.Fatalf("%d entries", h.Len())
		}
		for i := range h.Len() {
			if e := h.At(i); !historyWorthy(e) {
				t.Fatalf("entry %d %q kept", i, e)
			}
		}
		if st, err := os.Stat(file); err == nil && st.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v after loading", st.Mode().Perm())
		}
		if err := h.push("a new message"); err != nil {
			t.Fatal(err)
		}
		if h.At(0) != "a new message" {
			t.Fatalf("newest entry %q", h.At(0))
		}
	})
}

// FuzzComplete completes any line: no panic, and every candidate extends the word being completed.
func FuzzComplete(f *testing.F) {
	root := f.TempDir()
	os.WriteFile(filepath.Join(root, "notes.md"), nil, 0o644)
	os.MkdirAll(filepath.Join(root, "docs", "deep"), 0o755)
	for _, s := range []string{"/c", "/", "read ./no", "~/", "./docs/", "../", "x /de", "./\x00", "/dee/p", "…/é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, before string) {
		c := completer{root: root, home: root}
		cands, start := c.complete(before)
		if start < 0 || start > len(before) {
			t.Fatalf("start %d of %q", start, before)
		}
		word := before[start:]
		for _, cand := range cands {
			if !strings.HasPrefix(cand, word) {
				t.Fatalf("candidate %q does not extend %q", cand, word)
			}
		}
		if p := commonPrefix(cands); len(cands) > 0 && !strings.HasPrefix(cands[0], p) {
			t.Fatalf("common prefix %q of %q", p, cands)
		}
	})
}

// FuzzReadLine reads any piped input: every message is at most MaxMessage bytes, and clean leaves no control
// character but the newline.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("a\nb\r\nc"))
	f.Add([]byte("\x00\x1b[2J\x07\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReaderSize(strings.NewReader(string(data)), 16)
		for range len(data) + 2 {
			line, _, err := readLine(br, 64)
			if err != nil {
				return
			}
			if len(line) > 64 {
				t.Fatalf("line of %d bytes", len(line))
			}
			for _, r := range clean(line) {
				if r != '\n' && unicode.IsControl(r) {
					t.Fatalf("control %U left in %q", r, clean(line))
				}
			}
		}
		t.Fatal("readLine never reached the end of its input")
	})
}

// TestHistoryStaysBounded types more messages than the history keeps, in one session and over two: the file never
// holds more than twice HistoryLimit entries, a new session recalls the newest HistoryLimit, and the file stays
// 0600.
func TestHistoryStaysBounded(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state", "chat_history")
	h, err := loadHistory(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := func() int {
		b, _ := os.ReadFile(file)
		return strings.Count(string(b), "\n")
	}
	for i := range 3*HistoryLimit + 7 {
		if err := h.push("message " + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
		if n := lines(); n > 2*HistoryLimit {
			t.Fatalf("after %d messages the file holds %d entries", i+1, n)
		}
	}
	h2, err := loadHistory(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h2.Len() != HistoryLimit || h2.At(0) != "message "+strconv.Itoa(3*HistoryLimit+6) || h2.At(HistoryLimit-1) != "message "+strconv.Itoa(2*HistoryLimit+7) {
		t.Errorf("recalled %d entries, newest %q, oldest %q", h2.Len(), h2.At(0), h2.At(HistoryLimit-1))
	}
	if n := lines(); n != HistoryLimit {
		t.Errorf("loading left %d entries in the file, want %d", n, HistoryLimit)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	// Secrets are scrubbed before anything is written.
	if err := h2.push("my key is sk-abcdefghijklmnopqrstuvwxyz123456"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); strings.Contains(string(b), "sk-abcdefghijklmnopqrstuvwxyz123456") {
		t.Error("the history file keeps an API key")
	}
}
