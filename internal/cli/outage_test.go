package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/internal/durable"
	"github.com/deepresearch/deepresearch/research"
)

// What the follower of a durable run sees go wrong is said once when it starts and once when it ends, on the
// progress display as on every surface's event stream: a state store that cannot be read, steps retried on it,
// an engine that cannot be reached.
func TestOutagesAreSaidOnceAndWhenOver(t *testing.T) {
	var buf bytes.Buffer
	disp := newProgressDisplay(&buf, "", true)
	var evs []research.Event
	down := newOutages("r1", func(e research.Event) { evs = append(evs, e); disp.Event(e) })
	retrying := durable.Status{Outage: research.StateStoreRetrying + " (deepresearch.Read, attempt 3): connection refused"}
	for range 3 {
		down.status(retrying) // every tick of the outage
	}
	down.set("state store", "", "") // the feed reads the state again
	for range 2 {
		down.status(durable.Status{Outage: "Temporal unreachable, retrying: connection refused"})
	}
	down.status(durable.Status{Stage: research.StageRead})
	disp.Finish()
	want := []string{research.StateStoreRetrying, "state store reachable again", "Temporal unreachable, retrying", "Temporal reachable again"}
	if len(evs) != len(want) {
		t.Fatalf("%d outage events, want %d: %+v", len(evs), len(want), evs)
	}
	for i, e := range evs {
		if e.Kind != research.EventOutage || e.Message != want[i] || e.RunID != "r1" {
			t.Errorf("event %d: %s %q (run %s), want outage %q", i, e.Kind, e.Message, e.RunID, want[i])
		}
	}
	if evs[0].Err == "" || !strings.Contains(evs[0].Err, "attempt 3") {
		t.Errorf("the outage's cause is not carried: %q", evs[0].Err)
	}
	out := buf.String()
	for _, w := range want {
		if strings.Count(out, w) != 1 {
			t.Errorf("progress says %q %d times, want once:\n%s", w, strings.Count(out, w), out)
		}
	}
}
