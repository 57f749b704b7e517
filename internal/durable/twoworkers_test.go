package durable

import (
	"context"
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// alternate hands a run's steps to two workers in turn, each keeping the run open between its steps.
type alternate struct {
	n    atomic.Int64
	acts [2]*Activities
	mu   sync.Mutex
	ran  [2][]string
}

func (al *alternate) pick(name string) *Activities {
	i := int(al.n.Add(1) % 2)
	al.mu.Lock()
	al.ran[i] = append(al.ran[i], name)
	al.mu.Unlock()
	return al.acts[i]
}

func (al *alternate) overrides() map[string]any {
	out := map[string]any{}
	for _, st := range research.Graph() {
		name := ActivityName(st)
		fns := [2]reflect.Value{reflect.ValueOf(al.acts[0].Activity(st)), reflect.ValueOf(al.acts[1].Activity(st))}
		out[name] = reflect.MakeFunc(fns[0].Type(), func(args []reflect.Value) []reflect.Value {
			a := al.pick(name)
			return fns[slices.Index(al.acts[:], a)].Call(args)
		}).Interface()
	}
	return out
}

// opens counts a worker's "open run" log lines.
type opens struct{ n atomic.Int32 }

func (o *opens) Enabled(context.Context, slog.Level) bool { return true }
func (o *opens) WithAttrs([]slog.Attr) slog.Handler       { return o }
func (o *opens) WithGroup(string) slog.Handler            { return o }
func (o *opens) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "open run" {
		o.n.Add(1)
	}
	return nil
}

// Two workers on one PostgreSQL state take a run's steps in turn, each keeping the run open between the steps it
// runs while the other changes the state (the plan, the pool, the step markers, the spend, the fuse): the report
// is a local run's — the same text, evidence and footer — and each worker opened the run once.
func TestTwoWorkersAlternatingMatchLocalRun(t *testing.T) {
	pg := pgtest.New(t)
	f := newFixture(t)
	local := f.localRun(t, "alternate")
	al := &alternate{}
	var logs [2]*opens
	for i := range al.acts {
		logs[i] = &opens{}
		al.acts[i] = &Activities{Dir: t.TempDir(), State: pg.URL, Log: slog.New(logs[i]),
			Build: func(context.Context, Input) (research.Config, func(), error) { return f.config(), func() {}, nil }}
		defer al.acts[i].Close()
	}
	rep := runWorkflow(t, al.acts[0], al.overrides(), "alternate")
	for i, ran := range al.ran {
		if !slices.Contains(ran, act("Read")) || !slices.Contains(ran, act("Admit")) || len(ran) < 10 {
			t.Errorf("worker %d ran %v: the steps did not alternate", i, ran)
		}
		if n := logs[i].n.Load(); n != 1 {
			t.Errorf("worker %d opened the run %d times over its %d steps, want once", i, n, len(ran))
		}
	}
	// The header's minute may differ between the two runs.
	minute := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d UTC`)
	if minute.ReplaceAllString(rep.Markdown, "") != minute.ReplaceAllString(local.Markdown, "") {
		t.Errorf("report of two alternating workers:\n%s\nlocal run's:\n%s", rep.Markdown, local.Markdown)
	}
	if rep.Stats.Rounds != 2 || rep.Stats.Rounds != local.Stats.Rounds || rep.Stats.EvidenceAccepted != local.Stats.EvidenceAccepted ||
		rep.Stats.SourcesRead != local.Stats.SourcesRead || len(rep.Citations) != len(local.Citations) {
		t.Errorf("two workers: rounds %d, evidence %d, reads %d, citations %d; local: %d, %d, %d, %d", rep.Stats.Rounds,
			rep.Stats.EvidenceAccepted, rep.Stats.SourcesRead, len(rep.Citations), local.Stats.Rounds,
			local.Stats.EvidenceAccepted, local.Stats.SourcesRead, len(local.Citations))
	}
	if rep.Stats.Calls != local.Stats.Calls || rep.Stats.Tokens != local.Stats.Tokens || rep.Stats.Tokens == 0 {
		t.Errorf("two workers' footer: %d calls, %d tokens; local: %d, %d", rep.Stats.Calls, rep.Stats.Tokens,
			local.Stats.Calls, local.Stats.Tokens)
	}
	// The pool in the state is the local run's, each item once.
	_, pool := storedPool(t, pg.URL, "alternate")
	want := evidenceKeys(local.Evidence)
	for _, e := range pool {
		if !want[state.EvidenceKey(e.Source, e.Quote)] {
			t.Errorf("evidence %s not in the local run's pool", e.ID)
		}
	}
	if len(pool) != len(want) {
		t.Errorf("%d items in the state, the local run has %d", len(pool), len(want))
	}
	// The run is over: the worker that synthesized it closed it; the other learns nothing of the end and closes it
	// when it has been idle for sessionsIdle.
	for i, a := range al.acts {
		want := 1
		if slices.Contains(al.ran[i], act("Synthesize")) {
			want = 0
		}
		if n := a.openRuns().held(); n != want {
			t.Errorf("worker %d (ran synthesis: %v) holds %d runs after the workflow ended, want %d", i, want == 0, n, want)
		}
	}
}
