package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
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

// Step is one step of the research graph, declared once in the table below (Graph). Drive calls the steps
// through an Executor, and both executors are built from the table: this process's (Run, Resume: each step
// called in a goroutine, under one resident session) and the durable one (internal/durable: each step an
// activity, registered under its name, on the task queue of its role's model tier, opening a session of its
// own). Each step is idempotent, keyed by its step key in the run's state: a step run again after a crash, a
// retry or a second delivery continues where the last attempt stopped and never duplicates evidence, fetches or
// spend. The model calls are steps of their own — one search, one read (one analyst call over one document), one
// verification, one synthesis — so a durable executor sends each to the task queue of its model tier; the
// bookkeeping between them (begin a round, collect, admit, end a round, route gaps) touches only the state.
type Step struct {
	// Name names the step; a durable engine registers its activity under it.
	Name string
	// Stage is the stage whose progress the step shows.
	Stage string
	// Role is the role whose model the step calls, and so the model tier it runs on (the configuration's
	// roles: map); empty for bookkeeping, which touches only the run's state.
	Role string
	// Key is the step key (a pattern) under which the step records what it did in the run's state, so that it
	// is not done twice; empty for a step that only reads the state or derives what it returns from it.
	Key string
	// Staged says the step runs under its stage's deadline (the stage timeout of a search or a read stage).
	Staged bool
	// Final says the run is over when the step has returned: an executor may release what it holds of it.
	Final bool
	// Args are the types of the step's arguments in order, Result the type of its result.
	Args   []reflect.Type
	Result reflect.Type

	run func(ctx context.Context, s *Session, args []any, out any) error
}

// Run runs the step in session s over args (values of the types Args), writing its result to out (a pointer
// to a Result).
func (st Step) Run(ctx context.Context, s *Session, args []any, out any) error {
	if len(args) != len(st.Args) {
		return fmt.Errorf("research: step %s takes %d arguments, not %d", st.Name, len(st.Args), len(args))
	}
	return st.run(ctx, s, args, out)
}

// The steps, each a typed handle on its row of the table: Drive calls them with their arguments' types checked
// by the compiler, executors see only the row.
var (
	stepScope = step0(Step{Name: "Scope", Stage: StageScope, Role: RolePlanner, Key: "scope"},
		(*Session).Scope)
	stepBeginRound = step1(Step{Name: "BeginRound", Stage: StageSearch},
		(*Session).BeginRound)
	stepSearch = step2(Step{Name: "Search", Stage: StageSearch, Role: RoleSearcher, Key: "search:r<round>:<sub-question>", Staged: true},
		(*Session).Search)
	stepCollect = step3(Step{Name: "Collect", Stage: StageSearch, Key: "pick:r<round>"},
		(*Session).Collect)
	stepRead = step2(Step{Name: "Read", Stage: StageRead, Role: RoleAnalyst, Key: "analysis:<sub-question>:<url>", Staged: true},
		(*Session).Read)
	stepAdmit = step3(Step{Name: "Admit", Stage: StageRead, Key: "read:<sub-question>:<url>", Staged: true},
		(*Session).Admit)
	stepEndRound = step1(Step{Name: "EndRound", Stage: StageRead},
		(*Session).EndRound)
	stepVerify = step1(Step{Name: "Verify", Stage: StageVerify, Role: RoleVerifier, Key: "verify:r<round>"},
		(*Session).Verify)
	stepNext = step2(Step{Name: "Next", Stage: StageVerify},
		(*Session).Next)
	stepSynthesize = step1(Step{Name: "Synthesize", Stage: StageSynth, Role: RoleSynthesizer, Key: "synth", Final: true},
		(*Session).Synthesize)
)

// graph is the table, in the order a run first calls the steps.
var graph = []*Step{stepScope.Step, stepBeginRound.Step, stepSearch.Step, stepCollect.Step, stepRead.Step,
	stepAdmit.Step, stepEndRound.Step, stepVerify.Step, stepNext.Step, stepSynthesize.Step}

// Graph returns the research graph's steps, in the order a run first calls them.
func Graph() []Step {
	out := make([]Step, len(graph))
	for i, st := range graph {
		out[i] = *st
		out[i].Args = slices.Clone(st.Args)
	}
	return out
}

// Executor runs the steps Drive calls, and offers the two concurrency primitives Drive needs.
type Executor interface {
	// Exec runs step st over args (values of st.Args), writing its result to out (a pointer to an st.Result).
	Exec(st *Step, out any, args ...any) error
	// FanOut calls fn(lane, i) for every i in [0, n), at most limit at once (limit ≤ 0: all), starting them in
	// index order, and returns when all have returned. Each call gets the Executor of its own lane (a goroutine,
	// a workflow coroutine) and calls steps through it.
	FanOut(n, limit int, fn func(lane Executor, i int))
	// Turnstile returns n gates passed in index order.
	Turnstile(n int) Turnstile
}

// Turnstile lets parallel lanes pass one point in index order.
type Turnstile interface {
	// Wait returns once gates 0..i-1 are done, or with an error when the lane ends first.
	Wait(lane Executor, i int) error
	// Done marks gate i done; calling it again does nothing.
	Done(i int)
}

// typed handles of the table's rows, by the number of their arguments.
type (
	typed0[R any]          struct{ *Step }
	typed1[A, R any]       struct{ *Step }
	typed2[A, B, R any]    struct{ *Step }
	typed3[A, B, C, R any] struct{ *Step }
)

func (t typed0[R]) call(x Executor) (r R, err error) { err = x.Exec(t.Step, &r); return }
func (t typed1[A, R]) call(x Executor, a A) (r R, err error) {
	err = x.Exec(t.Step, &r, a)
	return
}
func (t typed2[A, B, R]) call(x Executor, a A, b B) (r R, err error) {
	err = x.Exec(t.Step, &r, a, b)
	return
}
func (t typed3[A, B, C, R]) call(x Executor, a A, b B, c C) (r R, err error) {
	err = x.Exec(t.Step, &r, a, b, c)
	return
}

func step0[R any](st Step, fn func(*Session, context.Context) (R, error)) typed0[R] {
	return typed0[R]{define(st, nil, func(ctx context.Context, s *Session, _ []any) (R, error) {
		return fn(s, ctx)
	})}
}

func step1[A, R any](st Step, fn func(*Session, context.Context, A) (R, error)) typed1[A, R] {
	return typed1[A, R]{define(st, []reflect.Type{reflect.TypeFor[A]()}, func(ctx context.Context, s *Session, args []any) (R, error) {
		return fn(s, ctx, arg[A](args[0]))
	})}
}

func step2[A, B, R any](st Step, fn func(*Session, context.Context, A, B) (R, error)) typed2[A, B, R] {
	return typed2[A, B, R]{define(st, []reflect.Type{reflect.TypeFor[A](), reflect.TypeFor[B]()}, func(ctx context.Context, s *Session, args []any) (R, error) {
		return fn(s, ctx, arg[A](args[0]), arg[B](args[1]))
	})}
}

func step3[A, B, C, R any](st Step, fn func(*Session, context.Context, A, B, C) (R, error)) typed3[A, B, C, R] {
	return typed3[A, B, C, R]{define(st, []reflect.Type{reflect.TypeFor[A](), reflect.TypeFor[B](), reflect.TypeFor[C]()}, func(ctx context.Context, s *Session, args []any) (R, error) {
		return fn(s, ctx, arg[A](args[0]), arg[B](args[1]), arg[C](args[2]))
	})}
}

// define completes row st with its argument types (in order) and its result type, and its run: every argument is
// checked against its type (a nil one stands for its type's zero value), then call calls the step's method with
// them, and the result goes to out.
func define[R any](st Step, argTypes []reflect.Type, call func(context.Context, *Session, []any) (R, error)) *Step {
	st.Args, st.Result = argTypes, reflect.TypeFor[R]()
	st.run = func(ctx context.Context, s *Session, args []any, out any) error {
		for i, a := range args {
			if want := st.Args[i]; a != nil && !isA(reflect.TypeOf(a), want) {
				return fmt.Errorf("research: step %s: argument %d is a %T, not a %s", st.Name, i+1, a, want)
			}
		}
		return put[R](out, st.Name)(call(ctx, s, args))
	}
	return &st
}

// isA says whether a value of dynamic type t asserts to type want: t itself, or an interface t implements.
func isA(t, want reflect.Type) bool {
	return t == want || want.Kind() == reflect.Interface && t.Implements(want)
}

// arg is an argument define has checked: a value of type T, or nil for T's zero value.
func arg[T any](v any) T {
	t, _ := v.(T)
	return t
}

// put returns a function writing a step's result to out.
func put[R any](out any, step string) func(R, error) error {
	return func(r R, err error) error {
		p, ok := out.(*R)
		if !ok {
			return fmt.Errorf("research: step %s: result goes to a %T, not a *%s", step, out, reflect.TypeFor[R]())
		}
		*p = r
		return err
	}
}

// Drive is the research graph's control flow: scope, then rounds of parallel searches, collection, parallel
// reads admitted to the pool in the collector's order, verification and directed re-search, then synthesis. It
// makes no decision from anything but the steps' results, so it runs unchanged as deterministic workflow code
// on a durable-execution engine.
func Drive(x Executor) (*Report, error) {
	plan, err := stepScope.call(x)
	if err != nil {
		return nil, err
	}
	targets := InitialTargets(plan)
	var verdict *Verdict
	for round := 1; ; round++ {
		fused, err := driveRound(x, round, targets)
		if err != nil {
			return nil, err
		}
		if fused {
			break
		}
		v, err := stepVerify.call(x, round)
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
		if targets, err = stepNext.call(x, round, v); err != nil {
			return nil, err
		}
		if len(targets) == 0 {
			break
		}
	}
	return stepSynthesize.call(x, verdict)
}

// driveRound is one round of search and read.
func driveRound(x Executor, round int, targets []Target) (fused bool, err error) {
	rp, err := stepBeginRound.call(x, round)
	if err != nil || rp.Fused {
		return rp.Fused, err
	}
	// A step that failed on the state store (after the engine's retries) fails the round, and so the run, which
	// can be resumed: what the step would have added is not silently missing from the report.
	var lost laneError
	// ② One search per targeted sub-question, in parallel. A failed search has been logged; it finds nothing.
	found := make([][]Candidate, len(targets))
	x.FanOut(len(targets), rp.Searches, func(lane Executor, i int) {
		var err error
		found[i], err = stepSearch.call(lane, round, targets[i])
		lost.note(err)
	})
	if err := lost.get(); err != nil {
		return false, err
	}
	picked, err := stepCollect.call(x, round, targets, found)
	if err != nil {
		return false, err
	}
	// ③ One read per picked source, at most rp.Reads in flight. Reads run in parallel but enter the pool in the
	// collector's order (a turnstile), so evidence ids, the sub-question a shared quote is pooled under and
	// early stops do not depend on which read finished first.
	turns := x.Turnstile(len(picked))
	x.FanOut(len(picked), rp.Reads, func(lane Executor, i int) {
		defer turns.Done(i)
		rd, err := stepRead.call(lane, round, picked[i])
		lost.note(err)
		if err != nil || rd.Skipped != "" {
			return // logged by the step
		}
		if turns.Wait(lane, i) != nil {
			return
		}
		_, err = stepAdmit.call(lane, round, picked[i], rd)
		lost.note(err)
	})
	if err := lost.get(); err != nil {
		return false, err
	}
	return stepEndRound.call(x, round)
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

// localExecutor runs each step in this process, in the run's one resident session, lanes in goroutines. A
// staged step runs under its stage's context (the stage timeout, the run's time limit), which the session
// opens when the stage begins and releases when it ends.
type localExecutor struct {
	ctx context.Context
	s   *Session
}

func (l *localExecutor) Exec(st *Step, out any, args ...any) error {
	ctx := l.ctx
	if st.Staged {
		ctx = l.s.stageContext(ctx)
	}
	return st.Run(ctx, l.s, args, out)
}

func (l *localExecutor) FanOut(n, limit int, fn func(Executor, int)) {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	FanOut(l.s.stageContext(l.ctx), idx, limit, func(_ context.Context, i int) (struct{}, error) {
		fn(l, i)
		return struct{}{}, nil
	})
}

func (l *localExecutor) Turnstile(n int) Turnstile { return localTurnstile{newTurnstile(n)} }

type localTurnstile struct{ t *turnstile }

func (t localTurnstile) Wait(lane Executor, i int) error {
	ctx := context.Background()
	if l, ok := lane.(*localExecutor); ok {
		ctx = l.s.stageContext(l.ctx)
	}
	return t.t.wait(ctx, i)
}

func (t localTurnstile) Done(i int) { t.t.done(i) }

func (r *runner) execute(ctx context.Context) (*Report, error) {
	s := &Session{r: r, resident: true}
	defer s.releaseStage()
	return Drive(&localExecutor{ctx: ctx, s: s})
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
