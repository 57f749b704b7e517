package research

import (
	"sync"
	"testing"
)

// Sessions of one SharedRun share its events file: their events, emitted at once, are numbered in one sequence,
// and a later opening of the file continues it.
func TestSharedEventFileNumbersAcrossSessions(t *testing.T) {
	dir := t.TempDir()
	f, err := openEventFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	const sessions, each = 4, 50
	var wg sync.WaitGroup
	for range sessions {
		s := &eventSink{file: f, runID: "r", progress: func() Progress { return Progress{} }}
		wg.Go(func() {
			for range each {
				s.emit(Event{Kind: EventStageStart})
			}
			if err := s.Close(); err != nil { // a shared sink leaves the file open
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// Every sink has closed; the file is still open for the run's next session.
	last := &eventSink{file: f, runID: "r", progress: func() Progress { return Progress{} }}
	last.emit(Event{Kind: EventStageDone})
	if err := f.close(); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	if err := eachEvent(dir, func(e Event) error {
		if seen[e.Seq] {
			t.Errorf("event number %d twice", e.Seq)
		}
		seen[e.Seq] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= sessions*each+1; i++ {
		if !seen[i] {
			t.Fatalf("event number %d missing of %d", i, sessions*each+1)
		}
	}
	again, err := openEventFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.close()
	if again.seq != sessions*each+1 {
		t.Fatalf("reopened, the numbering continues from %d, want %d", again.seq, sessions*each+1)
	}
}
