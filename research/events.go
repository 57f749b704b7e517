package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/deepresearch/deepresearch/base/runfolder"
	"github.com/deepresearch/deepresearch/research/state"
)

// eventSink numbers events, appends them to events.jsonl and hands them to the caller's callback, one at a time.
type eventSink struct {
	// mu keeps the sink's events in order through the file, the shared state and the callback; file.mu only
	// numbers and appends, so that sessions sharing a file store their events in the state concurrently.
	mu   sync.Mutex
	file *eventFile
	// own says the sink opened file and closes it; a session of a SharedRun shares the run's.
	own      bool
	runID    string
	on       func(Event)
	progress func() Progress
	// shared, when set, also receives every event: the run's state, for whoever follows a run whose steps run
	// in other processes.
	shared *state.DB
}

// eventFile is a run folder's events.jsonl open for appending, and the number of the last event in it.
type eventFile struct {
	mu  sync.Mutex
	f   *os.File
	seq int64
}

func openEventFile(dir string) (*eventFile, error) {
	// A resumed run continues the numbering of the events already written.
	var seq int64
	err := runfolder.Lines(dir, EventsFile, func(line []byte) error {
		var e struct {
			Seq int64 `json:"seq"`
		}
		if json.Unmarshal(line, &e) == nil && e.Seq > seq {
			seq = e.Seq
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("research: events: %w", err)
	}
	f, err := runfolder.OpenAppend(dir, EventsFile)
	if err != nil {
		return nil, fmt.Errorf("research: events: %w", err)
	}
	return &eventFile{f: f, seq: seq}, nil
}

func (f *eventFile) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.f.Close()
}

func openEventSink(dir, runID string, on func(Event), progress func() Progress) (*eventSink, error) {
	f, err := openEventFile(dir)
	if err != nil {
		return nil, err
	}
	return &eventSink{file: f, own: true, runID: runID, on: on, progress: progress}, nil
}

func (s *eventSink) emit(e Event) {
	p := s.progress()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.file.mu.Lock()
	s.file.seq++
	e.Seq = s.file.seq
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.RunID = s.runID
	e.Progress = p
	b, err := json.Marshal(e)
	if err == nil {
		_, _ = s.file.f.Write(append(b, '\n'))
	}
	s.file.mu.Unlock()
	if err == nil && s.shared != nil {
		_ = s.shared.AddEvents(context.Background(), b) // progress only: a lost event loses nothing else
	}
	if s.on != nil {
		s.on(e)
	}
}

func (s *eventSink) Close() error {
	if !s.own {
		return nil
	}
	return s.file.close()
}

// eachEvent calls fn with each event of the run folder dir's events.jsonl in order, one line in memory at a
// time; a line that does not parse (a torn last line: the process was killed mid-write) is skipped.
func eachEvent(dir string, fn func(Event) error) error {
	return runfolder.Lines(dir, EventsFile, func(line []byte) error {
		var e Event
		if json.Unmarshal(line, &e) != nil {
			return nil
		}
		return fn(e)
	})
}

// EventFeed follows the events of a run kept in a shared state, written by every process working on it.
type EventFeed struct {
	location, runID string
	db              *state.DB
	after           int64
}

// NewEventFeed follows run runID in the state at location (a postgres:// URL or a run's state file).
func NewEventFeed(location, runID string) *EventFeed {
	return &EventFeed{location: location, runID: runID}
}

// Next returns the events stored since the last call, oldest first, each with its place in the run's sequence
// as Seq. Before the run's state exists it returns none.
func (f *EventFeed) Next(ctx context.Context) ([]Event, error) {
	if f.db == nil {
		db, err := state.OpenRunReadOnly(ctx, f.location, f.runID)
		if errors.Is(err, state.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		f.db = db
	}
	rows, err := f.db.Events(ctx, f.after, 1000)
	if err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(rows))
	for _, row := range rows {
		f.after = row.Seq
		var e Event
		if json.Unmarshal([]byte(row.Data), &e) != nil {
			continue
		}
		e.Seq = row.Seq
		out = append(out, e)
	}
	return out, nil
}

// Close releases the feed's hold on the state.
func (f *EventFeed) Close() error {
	if f.db == nil {
		return nil
	}
	return f.db.Close()
}
