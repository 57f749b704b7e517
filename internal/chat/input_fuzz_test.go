package chat

import (
	"bufio"
	"os"
	"path/filepath"
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
