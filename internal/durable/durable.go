// Package durable runs the research graph on Temporal. The graph's control flow is research.Drive, run unchanged
// as deterministic workflow code; each of its steps (a row of research.Graph) is an activity with a timeout, a heartbeat
// and a retry policy, executed by whichever worker polls the step's task queue. Activities open the run's shared
// state (PostgreSQL) through research.OpenSession, so a step retried on another machine continues from the step
// keys the last attempt left: no evidence, fetch or spend is added twice.
package durable

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/deepresearch/deepresearch/base/redact"
	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/providers"
	"github.com/deepresearch/deepresearch/research"
)

// Names registered with Temporal.
const (
	WorkflowName  = "deepresearch.Research"
	QueryProgress = "progress"
	// DefaultTaskQueue is the base task queue: workflows poll it, each model tier polls base-tier.
	DefaultTaskQueue = "deepresearch"
)

// Model tiers (declared once, in llm/providers), each with a task queue of its own so that steps can go to the
// workers holding that tier's keys or rate limits.
const (
	TierStrong = providers.TierStrong // planner, verifier, synthesizer
	TierMid    = providers.TierMid    // analysts (reading)
	TierFast   = providers.TierFast   // searchers
)

// Tiers lists the model tiers.
var Tiers = providers.Tiers()

// TierQueue is the task queue of a tier under a base queue.
func TierQueue(base, tier string) string { return base + "-" + tier }

// Input starts one durable run.
type Input struct {
	// Request is the run as the surface asked for it, validated and named (its RunID set) by the submitter; the
	// workers build the run's roles, searchers and fetcher from it with their own configuration and keys.
	Request request.Research `json:"request"`
	// Roles maps each role to the model tier whose task queue runs its steps (the submitter's configuration,
	// config.Config.Roles); a role it leaves out takes the default configuration's tier.
	Roles map[string]string `json:"roles,omitempty"`
	// TaskQueue is the base task queue; default DefaultTaskQueue.
	TaskQueue string `json:"task_queue,omitempty"`
	// Steps are the timeouts and retries of the run's steps; zero values keep the defaults.
	Steps StepPolicy `json:"steps,omitzero"`
}

// RunID is the run's id.
func (in Input) RunID() string { return in.Request.RunID }

// UnmarshalJSON reads an input as this version writes it and as the previous one did — the run id, question and
// budget beside the request rather than in it — so that a run started before an upgrade goes on after it.
func (in *Input) UnmarshalJSON(b []byte) error {
	type current Input
	var v struct {
		current
		RunID    string           `json:"run_id"`
		Question string           `json:"question"`
		Budget   *research.Budget `json:"budget"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*in = Input(v.current)
	r := &in.Request
	r.RunID = cmp.Or(r.RunID, v.RunID)
	r.Question = cmp.Or(r.Question, v.Question)
	if v.Budget != nil && r.Budget == (research.Budget{}) {
		r.Budget = *v.Budget
	}
	return nil
}

// StepPolicy is how the engine runs a run's steps. Zero values mean the defaults in brackets.
type StepPolicy struct {
	// HeartbeatTimeout is how soon a worker that stopped heartbeating is taken for dead and its step retried
	// elsewhere [15s]; workers heartbeat three times within it.
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`
	// StartToClose bounds one attempt of a step [the stage timeout + 1m].
	StartToClose time.Duration `json:"start_to_close,omitempty"`
	// MaxAttempts bounds a step's attempts [10]; InitialInterval and MaxInterval the wait between them [1s, 30s].
	MaxAttempts     int           `json:"max_attempts,omitempty"`
	InitialInterval time.Duration `json:"initial_interval,omitempty"`
	MaxInterval     time.Duration `json:"max_interval,omitempty"`
}

// Check refuses a policy that cannot work.
func (p StepPolicy) Check() error {
	switch {
	case p.HeartbeatTimeout < 0 || p.StartToClose < 0 || p.MaxAttempts < 0 || p.InitialInterval < 0 || p.MaxInterval < 0:
		return errors.New("durable: step policy: negative timeout, interval or attempts")
	case p.HeartbeatTimeout > 0 && p.HeartbeatTimeout < 3*time.Second:
		return fmt.Errorf("durable: step policy: heartbeat timeout %s is under 3s", p.HeartbeatTimeout)
	case p.MaxInterval > 0 && p.InitialInterval > p.MaxInterval:
		return fmt.Errorf("durable: step policy: initial interval %s is over the maximum interval %s", p.InitialInterval, p.MaxInterval)
	}
	return nil
}

func (p StepPolicy) withDefaults(stage time.Duration) StepPolicy {
	or := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	or(&p.HeartbeatTimeout, 15*time.Second)
	or(&p.StartToClose, stage+time.Minute)
	or(&p.InitialInterval, time.Second)
	or(&p.MaxInterval, max(30*time.Second, p.InitialInterval))
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 10
	}
	return p
}

// Status is what the progress query answers.
type Status struct {
	RunID  string `json:"run_id"`
	Stage  string `json:"stage"`
	Round  int    `json:"round"`
	Steps  int    `json:"steps"` // steps completed
	Done   bool   `json:"done"`
	Failed string `json:"failed,omitempty"`
	// Outage is filled by Follow, not by the workflow: what keeps the run from going on while its steps are
	// retried — the state store (a step's last attempt failed on it), or the engine itself (unreachable from
	// here). Empty when nothing is wrong.
	Outage string `json:"outage,omitempty"`
}

// ActivityName is the name a step of the research graph (research.Graph) is registered under. Model calls are
// activities of their own on the task queue of their role's tier (the configuration's roles: map): by default
// searches on fast, reads (one analyst call over one document) on mid, scope, verification and synthesis on
// strong. The bookkeeping between them — begin and end a round, collect the reads, admit a read's items to the
// pool, route gaps — only touches the state and runs as local activities of whichever worker runs the workflow
// (every worker serves the base queue's workflows).
func ActivityName(st research.Step) string { return "deepresearch." + st.Name }

// stepTier is the model tier whose task queue runs a step: its role's tier in roles (the submitter's
// configuration), else in the default configuration; "" for bookkeeping.
func stepTier(roles map[string]string, st research.Step) string {
	if st.Role == "" {
		return ""
	}
	if t := roles[st.Role]; t != "" {
		return t
	}
	return config.Defaults().Roles[st.Role]
}

// checkTiers refuses roles under which a model step would go to no tier's queue.
func checkTiers(roles map[string]string) error {
	for _, st := range research.Graph() {
		if st.Role == "" {
			continue
		}
		if t := stepTier(roles, st); !slices.Contains(Tiers, t) {
			return fmt.Errorf("durable: step %s calls the %s, whose tier %q is not one of %s", st.Name, st.Role, t, strings.Join(Tiers, ", "))
		}
	}
	return nil
}

// Workflow is the research graph as a Temporal workflow.
func Workflow(ctx workflow.Context, in Input) (*research.Report, error) {
	st := &Status{RunID: in.RunID(), Stage: research.StageScope}
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (Status, error) { return *st, nil }); err != nil {
		return nil, err
	}
	rep, err := research.Drive(&workflowExec{ctx: ctx, run: &workflowRun{in: in, st: st}})
	if err != nil {
		st.Failed = err.Error()
		return nil, err
	}
	st.Done, st.Stage = true, research.StageSynth
	return rep, nil
}

// workflowRun is what the lanes of one workflow share.
type workflowRun struct {
	in Input
	st *Status
	// stage is the stage whose staged steps (searches, reads) are in progress, and stageEnd when it times out:
	// its steps are scheduled to close by then, retries included. The first staged step of a stage starts it;
	// a step of another stage ends it.
	stage    string
	stageEnd time.Time
}

// workflowExec runs each step as an activity; ctx is its lane's (a coroutine's) context.
type workflowExec struct {
	ctx workflow.Context
	run *workflowRun
}

func (w *workflowExec) stageTimeout() time.Duration {
	if t := w.run.in.Request.Budget.StageTimeout; t > 0 {
		return t
	}
	return 10 * time.Minute
}

// Exec runs one step as an activity on its model tier's queue, or (bookkeeping) as a local activity of the
// workflow's worker. A step of a stage with a deadline (a search, a read) is scheduled to close by it.
func (w *workflowExec) Exec(st *research.Step, out any, args ...any) error {
	run := w.run
	run.st.Stage = st.Stage
	if len(args) > 0 {
		if round, ok := args[0].(int); ok { // a step's first int argument is its round
			run.st.Round = round
		}
	}
	switch {
	case st.Staged && run.stage != st.Stage:
		run.stage, run.stageEnd = st.Stage, workflow.Now(w.ctx).Add(w.stageTimeout())
	case !st.Staged && run.stage != st.Stage:
		run.stage, run.stageEnd = "", time.Time{}
	}
	base := run.in.TaskQueue
	if base == "" {
		base = DefaultTaskQueue
	}
	tier := stepTier(run.in.Roles, *st)
	p := run.in.Steps.withDefaults(w.stageTimeout())
	opts := workflow.ActivityOptions{
		TaskQueue: TierQueue(base, tier),
		// A step is at most a stage plus its bookkeeping.
		StartToCloseTimeout: p.StartToClose,
		// A worker that dies is noticed within the heartbeat timeout and the step is retried elsewhere.
		HeartbeatTimeout: p.HeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: p.InitialInterval, BackoffCoefficient: 2,
			MaximumInterval: p.MaxInterval, MaximumAttempts: int32(min(p.MaxAttempts, 1000)),
			NonRetryableErrorTypes: []string{errConfig, errAuth}},
	}
	if st.Staged && !run.stageEnd.IsZero() {
		opts.ScheduleToCloseTimeout = max(run.stageEnd.Sub(workflow.Now(w.ctx)), time.Second)
	}
	name, in := ActivityName(*st), append([]any{run.in}, args...)
	var f workflow.Future
	if tier == "" {
		// Bookkeeping is a local activity: run by the worker that runs the workflow, recorded in its history,
		// with no trip through a task queue.
		ctx := workflow.WithLocalActivityOptions(w.ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: 2 * time.Minute, RetryPolicy: opts.RetryPolicy})
		f = workflow.ExecuteLocalActivity(ctx, name, in...)
	} else {
		f = workflow.ExecuteActivity(workflow.WithActivityOptions(w.ctx, opts), name, in...)
	}
	err := f.Get(w.ctx, out)
	if err == nil {
		run.st.Steps++
	}
	return stepError(err)
}

// FanOut runs the lanes as workflow coroutines, at most limit at once.
func (w *workflowExec) FanOut(n, limit int, fn func(research.Executor, int)) {
	if n == 0 {
		return
	}
	if limit <= 0 || limit > n {
		limit = n
	}
	sem := workflow.NewSemaphore(w.ctx, int64(limit))
	wg := workflow.NewWaitGroup(w.ctx)
	for i := range n {
		if err := sem.Acquire(w.ctx, 1); err != nil {
			break // the workflow is cancelled: start no more lanes
		}
		wg.Add(1)
		workflow.Go(w.ctx, func(ctx workflow.Context) {
			defer wg.Done()
			defer sem.Release(1)
			fn(&workflowExec{ctx: ctx, run: w.run}, i)
		})
	}
	wg.Wait(w.ctx)
}

// Turnstile returns n gates as settable futures.
func (w *workflowExec) Turnstile(n int) research.Turnstile {
	t := &workflowTurnstile{gates: make([]workflow.Future, n), set: make([]workflow.Settable, n)}
	for i := range n {
		t.gates[i], t.set[i] = workflow.NewFuture(w.ctx)
	}
	return t
}

type workflowTurnstile struct {
	gates []workflow.Future
	set   []workflow.Settable
}

func (t *workflowTurnstile) Wait(lane research.Executor, i int) error {
	ctx := lane.(*workflowExec).ctx
	for j := range i {
		if err := t.gates[j].Get(ctx, nil); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func (t *workflowTurnstile) Done(i int) {
	if !t.gates[i].IsReady() {
		t.set[i].SetValue(nil)
	}
}

// Error types of the application errors activities return. Every error an activity returns is rebuilt as one of
// them with its message scrubbed (Activities.Redact) and no cause attached, so that what reaches Temporal — the
// workflow history, a pending activity's last failure, the SDK's log lines — holds no secret.
const (
	// errConfig is a failure no retry can fix (a worker that cannot build the run's roles).
	errConfig = "ConfigError"
	// errAuth is a provider refusing this worker's credentials (HTTP 401, 403): not retried.
	errAuth = "AuthError"
	// ErrStateStore is a step that failed on the shared state (a database outage): retried, and shown to whoever
	// follows the run as research.StateStoreRetrying.
	ErrStateStore = "StateStoreError"
	// errStep is any other failure of a step: retried.
	errStep = "StepError"
)

// failure turns an activity's error into what Temporal may see: scrubbed, classified, without its cause chain.
// opening says the error came from opening the run's session, which touches nothing but the state.
func (a *Activities) failure(ctx context.Context, err error, opening bool) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err // the engine's cancellation or timeout, as the SDK expects it
	}
	msg := a.scrub(err.Error())
	var ae *temporal.ApplicationError
	switch {
	case errors.As(err, &ae) && ae.Type() == errConfig:
		return temporal.NewNonRetryableApplicationError(a.scrub(ae.Message()), errConfig, nil)
	case llm.IsAuth(err):
		return temporal.NewNonRetryableApplicationError(msg, errAuth, nil)
	case opening || errors.Is(err, research.ErrStateStore):
		return temporal.NewApplicationError(msg, ErrStateStore)
	}
	return temporal.NewApplicationError(msg, errStep)
}

func (a *Activities) scrub(s string) string {
	a.scrubOnce.Do(func() { a.scrubber = redact.New(a.Secrets...) })
	return a.scrubber.Scrub(s)
}

// stepError is the error a step's activity ended with, as the workflow hands it to research.Drive: a state-store
// failure is research.ErrStateStore again, so that the graph fails the run rather than go on without the step.
func stepError(err error) error {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Type() == ErrStateStore {
		return fmt.Errorf("%w: %s", research.ErrStateStore, ae.Error())
	}
	return err
}

// BuildFunc turns a run's input into the research configuration (roles, fetcher, ledger) with this worker's
// models, keys and sources; cleanup releases what it opened. An error says what this worker cannot give the run,
// as the user should read it ("worker cannot read corpus DIR: …"): the step fails with it, not retried, and the
// run is marked failed with it in the shared state.
type BuildFunc func(ctx context.Context, in Input) (cfg research.Config, cleanup func(), err error)

// Activities executes the steps.
type Activities struct {
	Build BuildFunc
	// State is the shared state: a postgres:// URL (empty: a SQLite file per run under Dir, for one process).
	State string
	// Dir is this worker's folder for runs (cached texts, events), one sub-folder per run.
	Dir string
	Log *slog.Logger
	// Secrets are this worker's keys: removed from the messages of the errors activities return, before
	// Temporal or a log sees them, and from everything the runs store, emit and log (research.Config.Secrets).
	// The shapes secrets take (redact.Scrubber) are removed in any case.
	Secrets []string
	// Metrics, when set, counts the steps, model spend, fetch failures and state-store errors (metrics.go).
	Metrics *Metrics
	// KeepBuilds keeps what Build made for a step of a run for the run's next steps on this worker (one step at
	// a time each, see heldRun), instead of building for every step: Build must then make a configuration that
	// may serve any step of the run, as `deepresearch worker`'s does.
	KeepBuilds bool
	// Ceiling is the operator's bound on every run this worker serves (its configured research limits): a run's
	// limits are its request's, and each limit set here bounds them, the smaller winning (research.SessionConfig).
	Ceiling research.Budget

	scrubOnce sync.Once
	scrubber  *redact.Scrubber

	runsOnce sync.Once
	runs     *runCache[*heldRun]
}

// openRuns is the runs this worker keeps open between their steps.
func (a *Activities) openRuns() *runCache[*heldRun] {
	a.runsOnce.Do(func() { a.runs = newRunCache[*heldRun](sessionsMax, sessionsIdle) })
	return a.runs
}

// inputSig names what a run's builds are made from: its input as the workflow carries it.
func inputSig(in Input) string {
	b, _ := json.Marshal(in)
	sum := sha256.Sum256(b)
	return string(sum[:])
}

// runKey names a run's open hold on this worker: its state (for one process, the SQLite file of its folder) and id.
func (a *Activities) runKey(in Input) runKey {
	location := a.State
	if location == "" {
		location = filepath.Join(a.Dir, in.RunID(), research.StateFile)
	}
	return runKey{state: location, runID: in.RunID()}
}

// session opens the run's session for one step, from the run this worker keeps open (research.SharedRun, opened
// by the run's first step here) and a configuration built for the run's input by an earlier step of it here (or
// built now); done(err) closes it with the step's error, which decides whether the run and the build stay kept for
// the next step.
func (a *Activities) session(ctx context.Context, in Input) (*research.Session, func(error), error) {
	t0 := time.Now()
	info := activity.GetInfo(ctx)
	key := a.runKey(in)
	dir := filepath.Join(a.Dir, in.RunID())
	held, release, err := a.openRuns().acquire(ctx, key, func(ctx context.Context) (*heldRun, error) {
		if a.Log != nil {
			a.Log.Debug("open run", "run", in.RunID())
		}
		run, err := research.OpenSharedRun(ctx, key.state, in.RunID(), dir)
		if err != nil {
			return nil, err
		}
		return &heldRun{run: run}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	t1 := time.Now()
	sig := inputSig(in)
	var b *built
	if a.KeepBuilds {
		b = held.take(sig)
	}
	if b == nil {
		cfg, cleanup, err := a.Build(ctx, in)
		if err != nil && ctx.Err() != nil {
			release(false)
			return nil, nil, ctx.Err() // the step was cancelled or timed out while building: not the run's failure
		}
		if err != nil {
			// The run asks for what this worker cannot give it (a corpus folder it cannot read, an engine it has no
			// model for): no retry helps, so the run fails now, and says why where everyone looks.
			msg := a.scrub(err.Error())
			if merr := held.run.MarkFailed(context.WithoutCancel(ctx), in.Request.Question, msg); merr != nil && a.Log != nil {
				a.Log.Error("mark the run failed", "run", in.RunID(), "err", a.scrub(merr.Error()))
			}
			release(false)
			a.openRuns().forget(key)
			return nil, nil, temporal.NewNonRetryableApplicationError(msg, errConfig, nil)
		}
		b = newBuilt(cfg, cleanup)
	}
	t2 := time.Now()
	// The step's spend is its own: the build's roles record into the build's ledger, which passes each call on
	// to this step's.
	ledger := &llm.Ledger{}
	b.step.Store(ledger)
	cfg := b.cfg
	cfg.Ledger = ledger
	a.Metrics.ledger(ledger, queueTier(info))
	cfg.Fetcher = a.Metrics.fetcher(cfg.Fetcher, queueTier(info))
	// The run is the request's, whatever the build made of it: its id, question and budget as submitted, in
	// this worker's folder for runs.
	req := in.Request
	cfg.RunID, cfg.Question, cfg.Budget = req.RunID, req.Question, req.Budget
	cfg.OutDir = dir
	cfg.OnEvent = nil
	cfg.Secrets = append(slices.Clone(cfg.Secrets), a.Secrets...)
	if a.Log != nil {
		cfg.Log = a.Log
	}
	s, err := held.run.OpenSession(ctx, cfg, research.SessionConfig{SpendKey: spendKey(info), Retry: info.Attempt > 1, Ceiling: a.Ceiling})
	if err != nil {
		release(true) // the run's state may be what failed: the next step opens it afresh
		a.giveBack(held, sig, b, false)
		return nil, nil, err
	}
	t3 := time.Now()
	// Heartbeats tell the engine this worker is alive (a dead one's step is retried elsewhere) and deliver
	// cancellation.
	hctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		every := 3 * time.Second
		if hb := info.HeartbeatTimeout; hb > 0 {
			every = max(min(every, hb/3), 100*time.Millisecond)
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx, s.Progress())
			select {
			case <-hctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s, func(stepErr error) {
		t4 := time.Now()
		stop()
		<-done
		closeErr := s.Close()
		if closeErr != nil && a.Log != nil {
			a.Log.Error("close session", "run", in.RunID(), "err", a.scrub(closeErr.Error()))
		}
		// What failed may be something the build holds (an MCP server gone): the next step builds afresh.
		a.giveBack(held, sig, b, stepErr != nil)
		release(closeErr != nil || errors.Is(stepErr, research.ErrStateStore))
		if stepErr != nil && runEnds(ctx, info, stepErr) {
			a.openRuns().forget(key)
		}
		if a.Log != nil {
			a.Log.Debug("step", "run", in.RunID(), "activity", info.ActivityType.Name, "attempt", info.Attempt,
				"build", t2.Sub(t1), "open", t1.Sub(t0)+t3.Sub(t2), "step", t4.Sub(t3), "close", time.Since(t4), "acquire", t1.Sub(t0))
		}
	}, nil
}

// giveBack keeps a step's build for the run's next step (KeepBuilds), or closes it (broken: its step failed).
func (a *Activities) giveBack(held *heldRun, sig string, b *built, broken bool) {
	if a.KeepBuilds && !broken {
		held.put(sig, b)
		return
	}
	b.step.Store(nil)
	closeBuilds([]*built{b})
}

// runEnds says a step's failure ends its run's workflow (or the run was cancelled): not retried, or its last
// attempt. The worker then stops keeping the run open.
func runEnds(ctx context.Context, info activity.Info, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.NonRetryable() || llm.IsAuth(err) {
		return true
	}
	if rp := info.RetryPolicy; rp != nil && rp.MaximumAttempts > 0 && info.Attempt >= rp.MaximumAttempts {
		return true
	}
	return false
}

// spendKey names one attempt of one step in the run's spend ledger. Activities and local activities are numbered
// apart (both start at 1), so the kind is part of the key: otherwise a bookkeeping step's row would overwrite the
// spend of the model step numbered like it.
func spendKey(info activity.Info) string {
	kind := "a"
	if info.IsLocalActivity {
		kind = "la"
	}
	return fmt.Sprintf("%s/%s/%s%s#%d", info.WorkflowExecution.ID, info.WorkflowExecution.RunID, kind, info.ActivityID, info.Attempt)
}

// runStep opens a session for one activity, runs step st in it over args (its result written to out) and
// closes it. After the final step, the run's state handle is released (the run is over).
func (a *Activities) runStep(ctx context.Context, in Input, st research.Step, args []any, out any) error {
	s, done, err := a.session(ctx, in)
	if err != nil {
		err = a.failure(ctx, err, true)
		a.Metrics.step(ctx, activity.GetInfo(ctx), err)
		return err
	}
	err = st.Run(ctx, s, args, out)
	done(err)
	if err == nil && st.Final {
		a.openRuns().forget(a.runKey(in)) // the run is over: the worker stops keeping it open
	}
	err = a.failure(ctx, err, false)
	a.Metrics.step(ctx, activity.GetInfo(ctx), err)
	return err
}

var (
	contextType = reflect.TypeFor[context.Context]()
	inputType   = reflect.TypeFor[Input]()
	errorType   = reflect.TypeFor[error]()
)

// Activity is step st as the function Temporal registers: func(ctx, Input, the step's arguments…) (its result,
// error), built from the step's row of the table, so that its arguments and result travel as they always have.
func (a *Activities) Activity(st research.Step) any {
	params := append([]reflect.Type{contextType, inputType}, st.Args...)
	ft := reflect.FuncOf(params, []reflect.Type{st.Result, errorType}, false)
	return reflect.MakeFunc(ft, func(vs []reflect.Value) []reflect.Value {
		ctx, _ := vs[0].Interface().(context.Context)
		if ctx == nil {
			ctx = context.Background()
		}
		in := vs[1].Interface().(Input)
		args := make([]any, len(st.Args))
		for i := range args {
			args[i] = vs[2+i].Interface()
		}
		out := reflect.New(st.Result)
		errv := reflect.Zero(errorType)
		if err := a.runStep(ctx, in, st, args, out.Interface()); err != nil {
			errv = reflect.ValueOf(&err).Elem()
		}
		return []reflect.Value{out.Elem(), errv}
	}).Interface()
}

// Close closes the run states the activities hold open.
func (a *Activities) Close() { a.openRuns().closeAll() }

// register registers the steps of a queue on a worker, from the step table: on the base queue ("" tier) the
// bookkeeping, on a tier's queue every model step, since the submitter's roles decide which tier runs which.
func (a *Activities) register(w interface {
	RegisterActivityWithOptions(any, activity.RegisterOptions)
}, tier string) {
	for _, st := range research.Graph() {
		if (st.Role == "") == (tier == "") {
			w.RegisterActivityWithOptions(a.Activity(st), activity.RegisterOptions{Name: ActivityName(st)})
		}
	}
}

// WorkerOptions configures a worker process.
type WorkerOptions struct {
	// TaskQueue is the base task queue; default DefaultTaskQueue.
	TaskQueue string
	// Tiers are the model tiers whose steps this worker executes; default all. Workflows are served always.
	Tiers []string
	// Concurrency bounds the steps this worker runs at once; default 8.
	Concurrency int
	// Health, when set, is told when the pollers run and when a worker stops on a fatal error (its /readyz).
	Health *Health
}

// Serve runs workers for the workflow and the tiers' activities until ctx ends.
func Serve(ctx context.Context, c client.Client, opts WorkerOptions, acts *Activities) error {
	if acts == nil || acts.Build == nil || !strings.HasPrefix(strings.ToLower(acts.State), "postgres") {
		return errors.New("durable: a worker needs a build function and a postgres:// state")
	}
	base := opts.TaskQueue
	if base == "" {
		base = DefaultTaskQueue
	}
	tiers := opts.Tiers
	if len(tiers) == 0 {
		tiers = Tiers
	}
	n := opts.Concurrency
	if n <= 0 {
		n = 8
	}
	defer acts.Close()
	wopts := worker.Options{MaxConcurrentActivityExecutionSize: n, OnFatalError: opts.Health.setFatal}
	if acts.Metrics != nil {
		wopts.Interceptors = append(wopts.Interceptors, acts.Metrics.interceptor())
	}
	wf := worker.New(c, base, wopts)
	wf.RegisterWorkflowWithOptions(Workflow, workflowRegisterOptions())
	acts.register(wf, "")
	ws := []worker.Worker{wf}
	for _, tier := range tiers {
		known := false
		for _, t := range Tiers {
			known = known || t == tier
		}
		if !known {
			return fmt.Errorf("durable: unknown tier %q (want %s)", tier, strings.Join(Tiers, ", "))
		}
		w := worker.New(c, TierQueue(base, tier), wopts)
		acts.register(w, tier)
		ws = append(ws, w)
	}
	for i, w := range ws {
		if err := w.Start(); err != nil {
			for _, s := range ws[:i] {
				s.Stop()
			}
			return fmt.Errorf("durable: start worker: %w", err)
		}
	}
	opts.Health.setPolling(true)
	<-ctx.Done()
	opts.Health.setPolling(false)
	for _, w := range ws {
		w.Stop()
	}
	return nil
}

func workflowRegisterOptions() workflow.RegisterOptions {
	return workflow.RegisterOptions{Name: WorkflowName}
}

// WorkflowID is the workflow id of a run.
func WorkflowID(runID string) string { return "deepresearch-" + runID }

// Submit starts a durable run; starting the same run id again attaches to the running workflow.
func Submit(ctx context.Context, c client.Client, in Input) (client.WorkflowRun, error) {
	if strings.TrimSpace(in.RunID()) == "" {
		return nil, errors.New("durable: a run needs a run id")
	}
	if in.Request.ResumeDir != "" {
		return nil, errors.New("durable: a run on Temporal is resumed by the engine, not from a run folder")
	}
	if err := in.Request.Validate(); err != nil {
		return nil, err // the request's one check, its messages as every surface shows them
	}
	if err := in.Steps.Check(); err != nil {
		return nil, err
	}
	if err := checkTiers(in.Roles); err != nil {
		return nil, err
	}
	q := in.TaskQueue
	if q == "" {
		q = DefaultTaskQueue
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: WorkflowID(in.RunID()), TaskQueue: q,
		WorkflowExecutionErrorWhenAlreadyStarted: false}, WorkflowName, in)
	if err != nil {
		return nil, fmt.Errorf("durable: submit %s: %w", in.RunID(), err)
	}
	return run, nil
}

// Follow waits for a run's report, calling onStatus with the progress query's answer about every interval
// (0 means a second). Cancelling ctx stops following; it does not cancel the run (see Cancel).
func Follow(ctx context.Context, c client.Client, run client.WorkflowRun, interval time.Duration, onStatus func(Status)) (*research.Report, error) {
	if interval <= 0 {
		interval = time.Second
	}
	type result struct {
		rep *research.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		var rep research.Report
		err := run.Get(ctx, &rep)
		if err != nil {
			done <- result{nil, runFailure(err)}
			return
		}
		done <- result{&rep, nil}
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case r := <-done:
			return r.rep, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			if onStatus == nil {
				continue
			}
			if st, ok := status(ctx, c, run, interval); ok {
				onStatus(st)
			}
		}
	}
}

// status asks the engine for a run's progress and for its steps waiting on a retry; ok is false when there is
// nothing to say (ctx ended, or the workflow cannot answer the query yet: no worker has run it).
func status(ctx context.Context, c client.Client, run client.WorkflowRun, interval time.Duration) (Status, bool) {
	qctx, cancel := context.WithTimeout(ctx, max(interval, 5*time.Second))
	defer cancel()
	var st Status
	// Describing a workflow needs only the engine, not a worker: its failure is the engine's.
	d, err := c.DescribeWorkflowExecution(qctx, run.GetID(), run.GetRunID())
	if err != nil {
		if ctx.Err() != nil {
			return st, false
		}
		st.Outage = "Temporal unreachable, retrying: " + err.Error()
		return st, true
	}
	for _, pa := range d.GetPendingActivities() {
		f := pa.GetLastFailure()
		if pa.GetAttempt() > 1 && f.GetApplicationFailureInfo().GetType() == ErrStateStore {
			st.Outage = fmt.Sprintf("%s (%s, attempt %d): %s", research.StateStoreRetrying, pa.GetActivityType().GetName(),
				pa.GetAttempt(), f.GetMessage())
			break
		}
	}
	outage := st.Outage
	v, err := c.QueryWorkflow(qctx, run.GetID(), run.GetRunID(), QueryProgress)
	if err == nil {
		err = v.Get(&st)
	}
	st.Outage = outage
	return st, err == nil || outage != ""
}

// RunError is a run that failed on a step: the step's own message, without the engine's wrapping of it (the
// workflow's and the activity's ids, types and retry flags). The engine's error stays reachable with errors.As.
type RunError struct {
	// Step is the activity the run failed on (deepresearch.Scope, …).
	Step string
	// Msg is the step's error message.
	Msg string
	err error
}

func (e *RunError) Error() string {
	step := stepName(e.Step)
	if step == "" {
		return e.Msg
	}
	return strings.ToLower(step) + ": " + e.Msg
}

func (e *RunError) Unwrap() error { return e.err }

// runFailure turns a workflow's failure on a step into a RunError; any other error is returned as it is.
func runFailure(err error) error {
	// The step's own error is the innermost application error: the workflow's failure wraps it again.
	var ae *temporal.ApplicationError
	for e := err; e != nil; e = errors.Unwrap(e) {
		if a, ok := e.(*temporal.ApplicationError); ok {
			ae = a
		}
	}
	if ae == nil {
		return err
	}
	re := &RunError{Msg: ae.Message(), err: err}
	var act *temporal.ActivityError
	if errors.As(err, &act) {
		re.Step = act.ActivityType().GetName()
	}
	return re
}

// Cancel cancels a run's workflow; the step in flight is cancelled through its heartbeat.
func Cancel(ctx context.Context, c client.Client, runID string) error {
	if err := c.CancelWorkflow(ctx, WorkflowID(runID), ""); err != nil {
		return fmt.Errorf("durable: cancel %s: %w", runID, err)
	}
	return nil
}
