package chat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/deepresearch/deepresearch/base/atomicfile"
	"github.com/deepresearch/deepresearch/base/redact"
)

// History bounds: the entries kept (older ones are dropped when the file is next loaded) and the longest entry
// recorded (a longer message is not recorded: recalling a page of pasted text one line at a time helps nobody,
// and it would make the file grow by the page).
const (
	HistoryLimit    = 1000
	maxHistoryEntry = 8 << 10
	// maxHistoryFile is the most of the file that is read; past it the oldest part is ignored.
	maxHistoryFile = HistoryLimit * (maxHistoryEntry + 8)
)

// history is the input history the line editor recalls with Up and Down: the messages typed in this and earlier
// sessions, newest first, kept in a file of JSON strings, one a line, readable only by the user (0600). It
// implements golang.org/x/term's History; the editor's own Add (called for every line read, including each line of
// a multi-line message) is ignored, and the chat records whole messages with push.
type history struct {
	mu      sync.Mutex
	file    string           // empty: kept in memory only
	entries []string         // oldest first
	scrub   *redact.Scrubber // removes secrets (API keys from the environment) before anything is written
	err     error            // the first write failure, reported once
}

// loadHistory reads the history file (a missing one is an empty history), rewriting it when it holds more than
// HistoryLimit entries or has looser permissions than 0600.
func loadHistory(file string, scrub *redact.Scrubber) (*history, error) {
	h := &history{file: file, scrub: scrub}
	if file == "" {
		return h, nil
	}
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("chat history %s: %w", file, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return &history{scrub: scrub}, fmt.Errorf("chat history %s: not a regular file; history is kept for this session only", file)
	}
	if st.Size() > maxHistoryFile {
		if _, err := f.Seek(st.Size()-maxHistoryFile, 0); err != nil {
			return h, fmt.Errorf("chat history %s: %w", file, err)
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxHistoryEntry*8)
	bad := 0
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) != nil || !historyWorthy(s) {
			bad++
			continue
		}
		h.entries = append(h.entries, s)
	}
	if err := sc.Err(); err != nil {
		bad++
	}
	if len(h.entries) > HistoryLimit || bad > 0 || st.Mode().Perm() != 0o600 {
		h.entries = h.entries[max(len(h.entries)-HistoryLimit, 0):]
		if err := h.rewrite(); err != nil {
			return h, err
		}
	}
	return h, nil
}

// historyWorthy says whether a message is recorded: not empty, not too long, and not typed with a leading space
// (the shells' way to keep a line out of the history).
func historyWorthy(s string) bool {
	return strings.TrimSpace(s) != "" && len(s) <= maxHistoryEntry && !strings.HasPrefix(s, " ")
}

func (h *history) rewrite() error {
	var b bytes.Buffer
	for _, e := range h.entries {
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(h.file), 0o700); err != nil {
		return fmt.Errorf("chat history: %w", err)
	}
	if err := atomicfile.Write(h.file, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("chat history: %w", err)
	}
	return nil
}

// push records a message typed by the user: a multi-line one as one line, a repeat of the newest entry not again.
func (h *history) push(msg string) error {
	if !historyWorthy(msg) {
		return nil
	}
	msg = strings.Join(strings.Fields(msg), " ")
	msg = h.scrub.Scrub(msg)
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.entries); n > 0 && h.entries[n-1] == msg {
		return nil
	}
	h.entries = append(h.entries, msg)
	compact := len(h.entries) > 2*HistoryLimit
	if compact {
		// A long session: the file, appended to at every message, is cut back to the limit here too.
		h.entries = h.entries[len(h.entries)-HistoryLimit:]
	}
	if h.file == "" || h.err != nil {
		return nil
	}
	var err error
	if compact {
		err = h.rewrite()
	} else {
		err = h.append(msg)
	}
	if err != nil {
		h.err = err
	}
	return err
}

func (h *history) append(msg string) error {
	if err := os.MkdirAll(filepath.Dir(h.file), 0o700); err != nil {
		return fmt.Errorf("chat history: %w", err)
	}
	f, err := os.OpenFile(h.file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("chat history: %w", err)
	}
	line, _ := json.Marshal(msg)
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("chat history: %w", err)
	}
	return nil
}

// Add is the line editor's call for every line it reads; whole messages are recorded by push instead.
func (h *history) Add(string) {}

// Len is the number of entries the editor can recall.
func (h *history) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return min(len(h.entries), HistoryLimit)
}

// At returns the entry idx back from the newest (0 is the newest).
func (h *history) At(idx int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.entries[len(h.entries)-1-idx]
}
