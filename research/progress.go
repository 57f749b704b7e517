package research

import (
	"context"

	"github.com/deepresearch/deepresearch/research/state"
)

// ---- progress and events ----

func (r *runner) progress() Progress {
	r.mu.Lock()
	p := r.prog
	r.mu.Unlock()
	tokens, cost, calls := r.spendNow()
	p.Tokens, p.CostUSD, p.Calls = tokens, cost, calls
	if r.fleet != nil {
		p.InFlight = r.fleet.InFlight()
	}
	return p
}

func (r *runner) emit(e Event) {
	if e.Kind == EventError && r.stopped != nil {
		select {
		case <-r.stopped:
			return // a step the cancellation interrupted; run_stopped says so once
		default:
		}
	}
	e.Message, e.Err = r.scrub.Scrub(e.Message), r.scrub.Scrub(e.Err)
	if r.events != nil {
		r.events.emit(e)
	}
}

func (r *runner) update(fn func(p *Progress)) {
	r.mu.Lock()
	fn(&r.prog)
	r.mu.Unlock()
}

// restoreProgress sets the counters from the tables, so a resumed run's display starts where it stopped.
func (r *runner) restoreProgress(ctx context.Context) error {
	t, err := r.db.Tally(ctx, progressTally...)
	if err != nil {
		return err
	}
	r.setTally(t)
	return nil
}

// progressTally are the step prefixes the progress counts: searches and reads.
var progressTally = []string{"search:", "read:"}

// setTally sets the progress counts from a tally of progressTally.
func (r *runner) setTally(t state.Tally) {
	r.update(func(p *Progress) {
		p.Searches, p.SourcesRead = t.Steps[0], t.Steps[1]
		p.Evidence, p.Rejected = t.Accepted, t.Other
	})
}

// logf appends to the research log; a failure to log is itself logged, never fatal.
func (r *runner) logf(ctx context.Context, stage string, round int, sq, decision, detail string, err error, opts ...func(*state.LogEntry)) {
	e := r.logEntry(stage, round, sq, decision, detail, err, opts...)
	if lerr := r.db.AddLog(context.WithoutCancel(ctx), e); lerr != nil {
		r.log.Error("research log", "err", lerr)
	}
}

// logTo queues a research-log row in b, written when b commits; a refused row is logged, never fatal.
func (r *runner) logTo(b *state.Batch, stage string, round int, sq, decision, detail string, err error, opts ...func(*state.LogEntry)) {
	if lerr := b.AddLog(r.logEntry(stage, round, sq, decision, detail, err, opts...)); lerr != nil {
		r.log.Error("research log", "err", lerr)
	}
}

func (r *runner) logEntry(stage string, round int, sq, decision, detail string, err error, opts ...func(*state.LogEntry)) state.LogEntry {
	e := state.LogEntry{Stage: stage, Round: round, SubQuestion: sq, Decision: decision, Detail: detail}
	if err != nil {
		e.Error = err.Error()
	}
	for _, o := range opts {
		o(&e)
	}
	e.Error, e.Detail = r.scrub.Scrub(e.Error), r.scrub.Scrub(e.Detail)
	r.log.Debug("research", "stage", stage, "round", round, "sq", sq, "decision", decision, "detail", e.Detail, "err", e.Error)
	return e
}
