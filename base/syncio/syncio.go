// Package syncio holds the one writer and the one buffer that several goroutines may share: the terminal that
// parallel questions print to, the MCP transport's frames and error frames, and log sinks read by tests while
// the code under test is still writing.
//
// Like every package under base/, it is importable by other modules but carries no compatibility promise.
package syncio

import (
	"bytes"
	"io"
	"sync"
)

// Writer serialises writes to an underlying writer: each Write reaches it whole, never interleaved.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter wraps w. Wrapping a *Writer returns it unchanged, so layers that each protect their output do not
// stack locks.
func NewWriter(w io.Writer) *Writer {
	if s, ok := w.(*Writer); ok {
		return s
	}
	return &Writer{w: w}
}

// Write implements io.Writer.
func (s *Writer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Close implements io.Closer and closes nothing: the underlying writer belongs to the caller.
func (s *Writer) Close() error { return nil }

// Buffer is a bytes.Buffer safe for concurrent writers and readers.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what has been written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
