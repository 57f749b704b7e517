// Package durable runs the research graph on Temporal. The graph's control flow is research.Drive, run unchanged
// as deterministic workflow code; each of its steps (research.Steps) is an activity with a timeout, a heartbeat
// and a retry policy, executed by whichever worker polls the step's task queue. Activities open the run's shared
// state (PostgreSQL) through research.OpenSession, so a step retried on another machine continues from the step
// keys the last attempt left: no evidence, fetch or spend is added twice.
package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/deepresearch/deepresearch/research"
)

// Names registered with Temporal.
const (
	WorkflowName  = "deepresearch.Research"
	QueryProgress = "progress"
	// DefaultTaskQueue is the base task queue: workflows poll it, each model tier polls base-tier.
	DefaultTaskQueue = "deepresearch"
)

// Model tiers, each with a task queue of its own so that steps can go to the workers holding that tier's keys
// or rate limits.
const (
	TierStrong = "strong" // planner, verifier, synthesizer
	TierMid    = "mid"    // analysts (reading)
	TierFast   = "fast"   // searchers
)

// Tiers lists the model tiers.
var Tiers = []string{TierStrong, TierMid, TierFast}

// TierQueue is the task queue of a tier under a base queue.
func TierQueue(base, tier string) string { return base + "-" + tier }

// Input starts one durable run.
type Input struct {
	RunID    string `json:"run_id"`
	Question string `json:"question"`
	// Request is what the workers need to build the run's roles, searchers and fetcher with their own keys (the
	// surface's request, opaque here).
	Request json.RawMessage `json:"request,omitempty"`
	Budget  research.Budget `json:"budget"`
	// TaskQueue is the base task queue; default DefaultTaskQueue.
	TaskQueue string `json:"task_queue,omitempty"`
}

// Status is what the progress query answers.
type Status struct {
	RunID  string `json:"run_id"`
	Stage  string `json:"stage"`
	Round  int    `json:"round"`
	Steps  int    `json:"steps"` // steps completed
	Done   bool   `json:"done"`
	Failed string `json:"failed,omitempty"`
}

// Activity names.
const (
	actScope      = "deepresearch.Scope"
	actSearchRead = "deepresearch.SearchRead"
	actVerify     = "deepresearch.Verify"
	actNext       = "deepresearch.Next"
	actSynthesize = "deepresearch.Synthesize"
)

// Workflow is the research graph as a Temporal workflow.
func Workflow(ctx workflow.Context, in Input) (*research.Report, error) {
	st := &Status{RunID: in.RunID, Stage: research.StageScope}
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (Status, error) { return *st, nil }); err != nil {
		return nil, err
	}
	rep, err := research.Drive(&workflowSteps{ctx: ctx, in: in, st: st})
	if err != nil {
		st.Failed = err.Error()
		return nil, err
	}
	st.Done, st.Stage = true, research.StageSynth
	return rep, nil
}

// workflowSteps runs each step as an activity on its tier's task queue.
type workflowSteps struct {
	ctx workflow.Context
	in  Input
	st  *Status
}

func (w *workflowSteps) exec(stage, tier, name string, out any, args ...any) error {
	w.st.Stage = stage
	base := w.in.TaskQueue
	if base == "" {
		base = DefaultTaskQueue
	}
	stageTimeout := w.in.Budget.StageTimeout
	if stageTimeout <= 0 {
		stageTimeout = 10 * time.Minute
	}
	ctx := workflow.WithActivityOptions(w.ctx, workflow.ActivityOptions{
		TaskQueue: TierQueue(base, tier),
		// A step is at most a stage (two for search and read) plus its bookkeeping.
		StartToCloseTimeout: 2*stageTimeout + time.Minute,
		// A worker that dies is noticed within the heartbeat timeout and the step is retried elsewhere.
		HeartbeatTimeout: 15 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second, MaximumAttempts: 10,
			NonRetryableErrorTypes: []string{errConfig}},
	})
	err := workflow.ExecuteActivity(ctx, name, append([]any{w.in}, args...)...).Get(ctx, out)
	if err == nil {
		w.st.Steps++
	}
	return err
}

func (w *workflowSteps) Scope() (*research.Plan, error) {
	var p research.Plan
	if err := w.exec(research.StageScope, TierStrong, actScope, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

func (w *workflowSteps) SearchRead(round int, targets []research.Target) (bool, error) {
	w.st.Round = round
	var fused bool
	err := w.exec(research.StageRead, TierMid, actSearchRead, &fused, round, targets)
	return fused, err
}

func (w *workflowSteps) Verify(round int) (*research.Verdict, error) {
	var v *research.Verdict
	err := w.exec(research.StageVerify, TierStrong, actVerify, &v, round)
	return v, err
}

func (w *workflowSteps) Next(round int, v *research.Verdict) ([]research.Target, error) {
	var ts []research.Target
	err := w.exec(research.StageVerify, TierStrong, actNext, &ts, round, v)
	return ts, err
}

func (w *workflowSteps) Synthesize(v *research.Verdict) (*research.Report, error) {
	var rep research.Report
	if err := w.exec(research.StageSynth, TierStrong, actSynthesize, &rep, v); err != nil {
		return nil, err
	}
	return &rep, nil
}

// errConfig is the error type of failures no retry can fix (a worker that cannot build the run's roles).
const errConfig = "ConfigError"

// BuildFunc turns a run's input into the research configuration (roles, fetcher, ledger) with this worker's
// models, keys and sources; cleanup releases what it opened.
type BuildFunc func(ctx context.Context, in Input) (cfg research.Config, cleanup func(), err error)

// Activities executes the steps.
type Activities struct {
	Build BuildFunc
	// State is the shared state: a postgres:// URL.
	State string
	// Dir is this worker's folder for runs (cached texts, events), one sub-folder per run.
	Dir string
	Log *slog.Logger
}

func (a *Activities) session(ctx context.Context, in Input) (*research.Session, func(), error) {
	cfg, cleanup, err := a.Build(ctx, in)
	if err != nil {
		return nil, nil, temporal.NewNonRetryableApplicationError("build the run's roles: "+err.Error(), errConfig, err)
	}
	info := activity.GetInfo(ctx)
	cfg.RunID, cfg.Question, cfg.Budget = in.RunID, in.Question, in.Budget
	cfg.OutDir = filepath.Join(a.Dir, in.RunID)
	cfg.OnEvent = nil
	if a.Log != nil {
		cfg.Log = a.Log
	}
	key := fmt.Sprintf("%s/%s/%s#%d", info.WorkflowExecution.ID, info.WorkflowExecution.RunID, info.ActivityID, info.Attempt)
	s, err := research.OpenSession(ctx, cfg, research.SessionConfig{State: a.State, SpendKey: key})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	// Heartbeats tell the engine this worker is alive (a dead one's step is retried elsewhere) and deliver
	// cancellation.
	hctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(3 * time.Second)
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
	return s, func() {
		stop()
		<-done
		if err := s.Close(); err != nil && a.Log != nil {
			a.Log.Error("close session", "run", in.RunID, "err", err)
		}
		cleanup()
	}, nil
}

// Scope is the scope step.
func (a *Activities) Scope(ctx context.Context, in Input) (*research.Plan, error) {
	s, done, err := a.session(ctx, in)
	if err != nil {
		return nil, err
	}
	defer done()
	return s.Scope(ctx)
}

// SearchRead is one round's search and read step.
func (a *Activities) SearchRead(ctx context.Context, in Input, round int, targets []research.Target) (bool, error) {
	s, done, err := a.session(ctx, in)
	if err != nil {
		return false, err
	}
	defer done()
	return s.SearchRead(ctx, round, targets)
}

// Verify is one round's verification step.
func (a *Activities) Verify(ctx context.Context, in Input, round int) (*research.Verdict, error) {
	s, done, err := a.session(ctx, in)
	if err != nil {
		return nil, err
	}
	defer done()
	return s.Verify(ctx, round)
}

// Next routes a verdict's gaps to the next round.
func (a *Activities) Next(ctx context.Context, in Input, round int, v *research.Verdict) ([]research.Target, error) {
	s, done, err := a.session(ctx, in)
	if err != nil {
		return nil, err
	}
	defer done()
	return s.Next(ctx, round, v)
}

// Synthesize is the synthesis step.
func (a *Activities) Synthesize(ctx context.Context, in Input, v *research.Verdict) (*research.Report, error) {
	s, done, err := a.session(ctx, in)
	if err != nil {
		return nil, err
	}
	defer done()
	return s.Synthesize(ctx, v)
}

// WorkerOptions configures a worker process.
type WorkerOptions struct {
	// TaskQueue is the base task queue; default DefaultTaskQueue.
	TaskQueue string
	// Tiers are the model tiers whose steps this worker executes; default all. Workflows are served always.
	Tiers []string
	// Concurrency bounds the steps this worker runs at once; default 8.
	Concurrency int
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
	wf := worker.New(c, base, worker.Options{})
	wf.RegisterWorkflowWithOptions(Workflow, workflowRegisterOptions())
	ws := []worker.Worker{wf}
	for _, tier := range tiers {
		known := false
		for _, t := range Tiers {
			known = known || t == tier
		}
		if !known {
			return fmt.Errorf("durable: unknown tier %q (want %s)", tier, strings.Join(Tiers, ", "))
		}
		w := worker.New(c, TierQueue(base, tier), worker.Options{MaxConcurrentActivityExecutionSize: n})
		w.RegisterActivityWithOptions(acts.Scope, activity.RegisterOptions{Name: actScope})
		w.RegisterActivityWithOptions(acts.SearchRead, activity.RegisterOptions{Name: actSearchRead})
		w.RegisterActivityWithOptions(acts.Verify, activity.RegisterOptions{Name: actVerify})
		w.RegisterActivityWithOptions(acts.Next, activity.RegisterOptions{Name: actNext})
		w.RegisterActivityWithOptions(acts.Synthesize, activity.RegisterOptions{Name: actSynthesize})
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
	<-ctx.Done()
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
	if strings.TrimSpace(in.RunID) == "" {
		return nil, errors.New("durable: a run needs a run id")
	}
	if err := research.CheckQuestion(in.Question); err != nil {
		return nil, fmt.Errorf("durable: %w", err)
	}
	q := in.TaskQueue
	if q == "" {
		q = DefaultTaskQueue
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: WorkflowID(in.RunID), TaskQueue: q,
		WorkflowExecutionErrorWhenAlreadyStarted: false}, WorkflowName, in)
	if err != nil {
		return nil, fmt.Errorf("durable: submit %s: %w", in.RunID, err)
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
			done <- result{nil, err}
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
			if v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), QueryProgress); err == nil {
				var st Status
				if v.Get(&st) == nil {
					onStatus(st)
				}
			}
		}
	}
}

// Cancel cancels a run's workflow; the step in flight is cancelled through its heartbeat.
func Cancel(ctx context.Context, c client.Client, runID string) error {
	if err := c.CancelWorkflow(ctx, WorkflowID(runID), ""); err != nil {
		return fmt.Errorf("durable: cancel %s: %w", runID, err)
	}
	return nil
}
