package research

import (
	"context"
	"fmt"
	"strings"
)

// Target is one sub-question sent to search in a round, with the queries to run for it.
type Target struct {
	SubQuestion SubQuestion `json:"sub_question"`
	Queries     []string    `json:"queries"`
}

// Steps are the research graph's steps as an executor runs them. Each step is idempotent, keyed by the graph's
// step keys in the run's state: a step run again after a crash, a retry or a second delivery continues where the
// last attempt stopped and never duplicates evidence, fetches or spend. Local runs call them directly
// (goroutines inside each step); durable runs call each one as an activity (research/durable).
type Steps interface {
	// Scope plans the run (once) and returns the plan.
	Scope() (*Plan, error)
	// SearchRead searches for the targets and reads what the collector picks; fused reports that the budget
	// fuse fired, so the run goes to synthesis with the evidence at hand.
	SearchRead(round int, targets []Target) (fused bool, err error)
	// Verify runs the verifier over the pool; nil (with no error) means the verifier failed or the fuse fired, and
	// the run goes to synthesis with the unverified pool.
	Verify(round int) (*Verdict, error)
	// Next routes a failed verdict's gaps back to search: the targets of the next round, none when the rounds are
	// exhausted or no gap names a known sub-question.
	Next(round int, v *Verdict) ([]Target, error)
	// Synthesize writes, checks and publishes the report.
	Synthesize(v *Verdict) (*Report, error)
}

// Drive is the research graph's control flow: scope, then rounds of search and read, verification and directed
// re-search, then synthesis. It makes no decision from anything but the steps' results, so it runs unchanged
// as deterministic workflow code on a durable-execution engine.
func Drive(s Steps) (*Report, error) {
	plan, err := s.Scope()
	if err != nil {
		return nil, err
	}
	targets := InitialTargets(plan)
	var verdict *Verdict
	for round := 1; ; round++ {
		fused, err := s.SearchRead(round, targets)
		if err != nil {
			return nil, err
		}
		if fused {
			break
		}
		v, err := s.Verify(round)
		if err != nil {
			return nil, err
		}
		if v == nil {
			break // the verifier failed; logged and visible — synthesise with the unverified pool
		}
		verdict = v
		if v.Pass {
			break
		}
		if targets, err = s.Next(round, v); err != nil {
			return nil, err
		}
		if len(targets) == 0 {
			break
		}
	}
	return s.Synthesize(verdict)
}

// InitialTargets are the first round's targets: every sub-question with its own queries.
func InitialTargets(plan *Plan) []Target {
	out := make([]Target, len(plan.SubQuestions))
	for i, sq := range plan.SubQuestions {
		out[i] = Target{SubQuestion: sq, Queries: sq.Queries}
	}
	return out
}

// localSteps runs each step in this process, under one context.
type localSteps struct {
	ctx context.Context
	r   *runner
}

func (l localSteps) Scope() (*Plan, error) { return l.r.scopeStep(l.ctx) }
func (l localSteps) SearchRead(round int, t []Target) (bool, error) {
	return l.r.searchReadStep(l.ctx, round, t)
}
func (l localSteps) Verify(round int) (*Verdict, error) { return l.r.verifyStep(l.ctx, round) }
func (l localSteps) Next(round int, v *Verdict) ([]Target, error) {
	return l.r.nextStep(l.ctx, round, v)
}
func (l localSteps) Synthesize(v *Verdict) (*Report, error) { return l.r.synthesizeStep(l.ctx, v) }

func (r *runner) execute(ctx context.Context) (*Report, error) {
	return Drive(localSteps{ctx: ctx, r: r})
}

func (r *runner) scopeStep(ctx context.Context) (*Plan, error) {
	plan, err := r.scope(ctx)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.plan = plan
	r.prog.SubQuestions = len(plan.SubQuestions)
	r.mu.Unlock()
	if err := r.restoreProgress(ctx); err != nil {
		return nil, err
	}
	return plan, nil
}

func (r *runner) searchReadStep(ctx context.Context, round int, targets []Target) (bool, error) {
	r.mu.Lock()
	r.rounds, r.prog.Round = round, round
	r.mu.Unlock()
	if err := r.rebuildNovelty(ctx, round); err != nil {
		return false, err
	}
	if r.fused() {
		return true, nil
	}
	ts := make([]target, len(targets))
	for i, t := range targets {
		ts[i] = target{sq: t.SubQuestion, queries: t.Queries}
	}
	if err := r.searchAndRead(ctx, round, ts); err != nil {
		return false, err
	}
	if r.fused() {
		r.logf(ctx, StageVerify, round, "", "skipped", "cut short: going to synthesis with the evidence at hand", nil)
		r.snapshotEvidence(ctx, round)
		return true, nil
	}
	return false, nil
}

func (r *runner) verifyStep(ctx context.Context, round int) (*Verdict, error) {
	r.mu.Lock()
	r.rounds, r.prog.Round = round, round
	r.mu.Unlock()
	v, err := r.verify(ctx, round)
	if err != nil {
		return nil, err
	}
	r.snapshotEvidence(ctx, round)
	return v, nil
}

func (r *runner) nextStep(ctx context.Context, round int, v *Verdict) ([]Target, error) {
	if round > r.rc.Rounds {
		r.logf(ctx, StageVerify, round, "", "rounds exhausted",
			fmt.Sprintf("the verifier still reports %d gaps after %d extra rounds", len(v.Gaps), max(r.rc.Rounds, 0)), nil)
		return nil, nil
	}
	ts := r.gapTargets(ctx, round, v)
	out := make([]Target, len(ts))
	var ids []string
	for i, t := range ts {
		out[i] = Target{SubQuestion: t.sq, Queries: t.queries}
		ids = append(ids, t.sq.ID)
	}
	if len(out) > 0 {
		r.emit(Event{Stage: StageVerify, Kind: EventResearch, Round: round + 1,
			Message: "directed re-search for " + strings.Join(ids, ", ")})
	}
	return out, nil
}

func (r *runner) synthesizeStep(ctx context.Context, v *Verdict) (*Report, error) {
	return r.synthesize(ctx, v)
}
