package research

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// eventSink numbers events, appends them to events.jsonl and hands them to the caller's callback, one at a time.
type eventSink struct {
	mu       sync.Mutex
	f        *os.File
	seq      int64
	runID    string
	on       func(Event)
	progress func() Progress
}

func openEventSink(path, runID string, on func(Event), progress func() Progress) (*eventSink, error) {
	// A resumed run continues the numbering of the events already written.
	var seq int64
	if old, err := readEvents(path); err == nil && len(old) > 0 {
		seq = old[len(old)-1].Seq
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("research: events: %w", err)
	}
	return &eventSink{f: f, seq: seq, runID: runID, on: on, progress: progress}, nil
}

func (s *eventSink) emit(e Event) {
	p := s.progress()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	e.Seq = s.seq
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.RunID = s.runID
	e.Progress = p
	if b, err := json.Marshal(e); err == nil {
		_, _ = s.f.Write(append(b, '\n'))
	}
	if s.on != nil {
		s.on(e)
	}
}

func (s *eventSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Close()
}

// readEvents reads events.jsonl; a torn last line (the process was killed mid-write) is skipped.
func readEvents(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}
