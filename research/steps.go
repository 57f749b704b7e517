package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Target is one sub-question sent to search in a round, with the queries to run for it.
type Target struct {
	SubQuestion SubQuestion `json:"sub_question"`
	Queries     []string    `json:"queries"`
}

// RoundPlan is what a round starts with: whether the fuse has fired (the run goes to synthesis) and the run's
// bounds on the searches and reads in flight (within the fleet bound).
type RoundPlan struct {
	Fused    bool `json:"fused"`
	Searches int  `json:"searches"`
	Reads    int  `json:"reads"`
}

// Reading is what one read (fetch and analyst call over one document) found, before it enters the pool.
// Skipped says why there is nothing to admit ("done", "early stop", "cut short", "failed").
type Reading struct {
	Items   []Evidence `json:"items,omitempty"`
	Skipped string     `json:"skipped,omitempty"`
}

// Admission is what admitting one read's items to the pool did.
type Admission struct {
	Accepted int `json:"accepted"`
}

// Steps are the research graph's steps as an executor runs them, and the executor's two concurrency primitives.
// Each step is idempotent, keyed by the graph's step keys in the run's state: a step run again after a crash, a
// retry or a second delivery continues where the last attempt stopped and never duplicates evidence, fetches or
// spend. The model calls are steps of their own — one search, one read (one analyst call over one document),
// one verification, one synthesis — so a durable executor sends each to the task queue of its model tier; the
// bookkeeping between them (begin a round, collect, admit, end a round, route gaps) touches only the state.
// Local runs call the steps directly in goroutines (localSteps); durable runs call each one as an activity from
// workflow coroutines (internal/durable).
type Steps interface {
	// Scope plans the run (once) and returns the plan.
	Scope() (*Plan, error)
	// BeginRound starts a round: early-stop state from the pool, the fuse, the bounds of its fan-outs.
	BeginRound(round int) (RoundPlan, error)
	// Search runs one sub-question's searches; a search that failed for good is logged and finds nothing.
	Search(round int, t Target) ([]Candidate, error)
	// Collect picks the round's reads from what the searches found.
	Collect(round int, targets []Target, found [][]Candidate) ([]Candidate, error)
	// Read fetches one picked source and has the analyst read it for its sub-question.
	Read(round int, c Candidate) (Reading, error)
	// Admit grounds a read's items and writes them to the pool; reads are admitted in the collector's order.
	Admit(round int, c Candidate, rd Reading) (Admission, error)
	// EndRound closes the round's reading; fused reports that the budget fuse fired, so the run goes to
	// synthesis with the evidence at hand.
	EndRound(round int) (fused bool, err error)
	// Verify runs the verifier over the pool; nil (with no error) means the verifier failed or the fuse fired, and
	// the run goes to synthesis with the unverified pool.
	Verify(round int) (*Verdict, error)
	// Next routes a failed verdict's gaps back to search: the targets of the next round, none when the rounds are
	// exhausted or no gap names a known sub-question.
	Next(round int, v *Verdict) ([]Target, error)
	// Synthesize writes, checks and publishes the report.
	Synthesize(v *Verdict) (*Report, error)

	// FanOut calls fn(lane, i) for every i in [0, n), at most limit at once (limit ≤ 0: all), starting them in
	// index order, and returns when all have returned. Each call gets the Steps of its own lane (a goroutine, a
	// workflow coroutine) and calls steps through it.
	FanOut(n, limit int, fn func(lane Steps, i int))
	// Turnstile returns n gates passed in index order.
	Turnstile(n int) Turnstile
}

// Turnstile lets parallel lanes pass one point in index order.
type Turnstile interface {
	// Wait returns once gates 0..i-1 are done, or with an error when the lane ends first.
	Wait(lane Steps, i int) error
	// Done marks gate i done; calling it again does nothing.
	Done(i int)
}

// Drive is the research graph's control flow: scope, then rounds of parallel searches, collection, parallel
// reads admitted to the pool in the collector's order, verification and directed re-search, then synthesis. It
// makes no decision from anything but the steps' results, so it runs unchanged as deterministic workflow code
// on a durable-execution engine.
func Drive(s Steps) (*Report, error) {
	plan, err := s.Scope()
	if err != nil {
		return nil, err
	}
	targets := InitialTargets(plan)
	var verdict *Verdict
	for round := 1; ; round++ {
		fused, err := driveRound(s, round, targets)
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

// driveRound is one round of search and read.
func driveRound(s Steps, round int, targets []Target) (fused bool, err error) {
	rp, err := s.BeginRound(round)
	if err != nil || rp.Fused {
		return rp.Fused, err
	}
	// A step that failed on the state store (after the engine's retries) fails the round, and so the run, which
	// can be resumed: what the step would have added is not silently missing from the report.
	var lost laneError
	// ② One search per targeted sub-question, in parallel. A failed search has been logged; it finds nothing.
	found := make([][]Candidate, len(targets))
	s.FanOut(len(targets), rp.Searches, func(lane Steps, i int) {
		var err error
		found[i], err = lane.Search(round, targets[i])
		lost.note(err)
	})
	if err := lost.get(); err != nil {
		return false, err
	}
	picked, err := s.Collect(round, targets, found)
	if err != nil {
		return false, err
	}
	// ③ One read per picked source, at most rp.Reads in flight. Reads run in parallel but enter the pool in the
	// collector's order (a turnstile), so evidence ids, the sub-question a shared quote is pooled under and
	// early stops do not depend on which read finished first.
	turns := s.Turnstile(len(picked))
	s.FanOut(len(picked), rp.Reads, func(lane Steps, i int) {
		defer turns.Done(i)
		rd, err := lane.Read(round, picked[i])
		lost.note(err)
		if err != nil || rd.Skipped != "" {
			return // logged by the step
		}
		if turns.Wait(lane, i) != nil {
			return
		}
		_, err = lane.Admit(round, picked[i], rd)
		lost.note(err)
	})
	if err := lost.get(); err != nil {
		return false, err
	}
	return s.EndRound(round)
}

// laneError keeps the first state-store failure of a fan-out's lanes.
type laneError struct {
	mu  sync.Mutex
	err error
}

func (l *laneError) note(err error) {
	if err == nil || !errors.Is(err, ErrStateStore) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = err
	}
}

func (l *laneError) get() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// InitialTargets are the first round's targets: every sub-question with its own queries.
func InitialTargets(plan *Plan) []Target {
	out := make([]Target, len(plan.SubQuestions))
	for i, sq := range plan.SubQuestions {
		out[i] = Target{SubQuestion: sq, Queries: sq.Queries}
	}
	return out
}

// localSteps runs each step in this process, under one context, lanes in goroutines. A stage's context (its
// timeout, the run's time limit) spans the steps of the stage: the searches, then the reads.
type localSteps struct {
	ctx  context.Context
	r    *runner
	mu   sync.Mutex
	st   stageRun
	sctx context.Context // the stage in progress (search or read), ctx between stages
}

type stageRun struct {
	name   string
	round  int
	start  time.Time
	tokens int
	cost   float64
	cancel context.CancelFunc
}

func (l *localSteps) stage() context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sctx == nil {
		return l.ctx
	}
	return l.sctx
}

// beginStage opens a stage's context and emits its start.
func (l *localSteps) beginStage(name string, round int) {
	start, t0, c0 := l.r.stageStart(name, round)
	sctx, cancel := l.r.stageCtx(l.ctx, name)
	l.mu.Lock()
	l.st = stageRun{name: name, round: round, start: start, tokens: t0, cost: c0, cancel: cancel}
	l.sctx = sctx
	l.mu.Unlock()
}

// endStage releases the stage's context and explains how it ended.
func (l *localSteps) endStage() error {
	l.mu.Lock()
	st, sctx := l.st, l.sctx
	l.sctx = nil
	l.mu.Unlock()
	if st.cancel == nil {
		return nil
	}
	st.cancel()
	return l.r.stageEnded(l.ctx, sctx, st.name, st.round)
}

func (l *localSteps) Scope() (*Plan, error) { return l.r.scopeStep(l.ctx) }

func (l *localSteps) BeginRound(round int) (RoundPlan, error) {
	rp, err := l.r.beginRound(l.ctx, round)
	if err != nil || rp.Fused {
		return rp, err
	}
	l.beginStage(StageSearch, round)
	return rp, nil
}

func (l *localSteps) Search(round int, t Target) ([]Candidate, error) {
	return l.r.searchStep(l.stage(), round, t)
}

func (l *localSteps) Collect(round int, targets []Target, found [][]Candidate) ([]Candidate, error) {
	st := l.st
	if err := l.endStage(); err != nil {
		return nil, err
	}
	picked, err := l.r.collectStep(l.ctx, round, targets, found)
	if err != nil {
		return nil, err
	}
	l.r.stageDone(l.ctx, StageSearch, round, st.start, st.tokens, st.cost,
		fmt.Sprintf("%d sub-questions searched, %d candidates picked", len(targets), len(picked)))
	l.beginStage(StageRead, round)
	return picked, nil
}

func (l *localSteps) Read(round int, c Candidate) (Reading, error) {
	return l.r.readStep(l.stage(), round, c)
}

func (l *localSteps) Admit(round int, c Candidate, rd Reading) (Admission, error) {
	return l.r.admitStep(l.stage(), round, c, rd)
}

func (l *localSteps) EndRound(round int) (bool, error) {
	st := l.st
	l.r.update(func(p *Progress) { p.ReadsPending = 0 })
	if err := l.endStage(); err != nil {
		return false, err
	}
	l.r.stageDone(l.ctx, StageRead, round, st.start, st.tokens, st.cost, fmt.Sprintf("%d candidates", l.r.picked(round)))
	return l.r.endRound(l.ctx, round), nil
}

func (l *localSteps) Verify(round int) (*Verdict, error) { return l.r.verifyStep(l.ctx, round) }
func (l *localSteps) Next(round int, v *Verdict) ([]Target, error) {
	return l.r.nextStep(l.ctx, round, v)
}
func (l *localSteps) Synthesize(v *Verdict) (*Report, error) { return l.r.synthesizeStep(l.ctx, v) }

func (l *localSteps) FanOut(n, limit int, fn func(Steps, int)) {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	FanOut(l.stage(), idx, limit, func(_ context.Context, i int) (struct{}, error) {
		fn(l, i)
		return struct{}{}, nil
	})
}

func (l *localSteps) Turnstile(n int) Turnstile { return localTurnstile{newTurnstile(n)} }

type localTurnstile struct{ t *turnstile }

func (t localTurnstile) Wait(lane Steps, i int) error {
	ctx := context.Background()
	if l, ok := lane.(*localSteps); ok {
		ctx = l.stage()
	}
	return t.t.wait(ctx, i)
}

func (t localTurnstile) Done(i int) { t.t.done(i) }

func (r *runner) execute(ctx context.Context) (*Report, error) {
	return Drive(&localSteps{ctx: ctx, r: r})
}

func (r *runner) scopeStep(ctx context.Context) (*Plan, error) {
	plan, err := r.scope(ctx)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.plan = plan
	r.applyDepth(plan)
	r.prog.SubQuestions = len(plan.SubQuestions)
	r.mu.Unlock()
	if b, err := json.Marshal(r.rc); err == nil {
		_ = r.db.SetMeta(ctx, "config", string(b)) // the limits in effect, now that the depth is settled
	}
	if err := r.restoreProgress(ctx); err != nil {
		return nil, err
	}
	return plan, nil
}

// beginRound sets the round, rebuilds early-stop state from the pool and reads the fuse.
func (r *runner) beginRound(ctx context.Context, round int) (RoundPlan, error) {
	r.mu.Lock()
	r.rounds, r.prog.Round = round, round
	r.mu.Unlock()
	if err := r.rebuildNovelty(ctx, round); err != nil {
		return RoundPlan{}, err
	}
	c := r.rc.Budget.Concurrency
	return RoundPlan{Fused: r.fused(), Searches: c, Reads: min(r.rc.BatchSize, c)}, nil
}

// searchStep is one sub-question's searches. A search that failed for good (logged and emitted) or was not run
// because the fuse fired finds nothing, without an error; errors are the state's or the context's.
func (r *runner) searchStep(ctx context.Context, round int, t Target) ([]Candidate, error) {
	cands, err := r.search(ctx, round, target{sq: t.SubQuestion, queries: t.Queries})
	var rf *roleFailure
	if errors.Is(err, errFuse) || errors.As(err, &rf) {
		return nil, nil
	}
	return cands, err
}

func (r *runner) collectStep(ctx context.Context, round int, targets []Target, found [][]Candidate) ([]Candidate, error) {
	ts := make([]target, len(targets))
	for i, t := range targets {
		ts[i] = target{sq: t.SubQuestion, queries: t.Queries}
	}
	if len(found) != len(ts) {
		return nil, fmt.Errorf("research: collect: %d search results for %d targets", len(found), len(ts))
	}
	picked, err := r.collect(ctx, round, ts, found)
	if err != nil {
		return nil, err
	}
	r.update(func(p *Progress) { p.ReadsPending = len(picked) })
	return picked, nil
}

// picked is how many reads the round's collector picked.
func (r *runner) picked(round int) int {
	var picked []Candidate
	_, _ = r.db.Step(context.Background(), fmt.Sprintf("pick:r%d", round), &picked)
	return len(picked)
}

// endRound reports whether the fuse fired during the round; the run then goes to synthesis.
func (r *runner) endRound(ctx context.Context, round int) bool {
	if !r.fused() {
		return false
	}
	r.logf(ctx, StageVerify, round, "", "skipped", "cut short: going to synthesis with the evidence at hand", nil)
	r.snapshotEvidence(ctx, round)
	return true
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
