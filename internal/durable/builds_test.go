package durable

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// countingBuilds wraps a fixture's build, counting builds and their cleanups.
type countingBuilds struct {
	builds, cleanups atomic.Int32
}

func (c *countingBuilds) build(f *fixture) BuildFunc {
	return func(context.Context, Input) (research.Config, func(), error) {
		c.builds.Add(1)
		return f.config(), func() { c.cleanups.Add(1) }, nil
	}
}

// A worker builds a run's configuration for its first steps and reuses it for the next ones; the run ends as a
// local run does, every attempt's spend its own, and the builds are released when the run is over.
func TestWorkerReusesARunsBuild(t *testing.T) {
	f := newFixture(t)
	var calls atomic.Int32
	f.onCall = func(string, string) error { calls.Add(1); return nil }
	var cb countingBuilds
	acts := f.activities(t)
	acts.Build, acts.KeepBuilds = cb.build(f), true
	steps := atomic.Int32{}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	register(env, acts, nil)
	env.SetOnLocalActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) { steps.Add(1) })
	env.SetOnActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) { steps.Add(1) })
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "builds", Question: question}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var rep research.Report
	if err := env.GetWorkflowResult(&rep); err != nil {
		t.Fatal(err)
	}
	if rep.Stats.EvidenceAccepted != 25 || rep.Stats.Rounds != 2 {
		t.Errorf("report: %d evidence, %d rounds; want 25, 2", rep.Stats.EvidenceAccepted, rep.Stats.Rounds)
	}
	n := cb.builds.Load()
	if n == 0 || int(n) > int(steps.Load())/3 {
		t.Errorf("%d builds for %d steps: a step should reuse the build an earlier step of the run left", n, steps.Load())
	}
	if c := cb.cleanups.Load(); c != n {
		t.Errorf("%d of %d builds released once the run was over", c, n)
	}
	// Each attempt's spend is its own, though its roles are another step's: the ledger adds up to the calls.
	db, err := state.OpenReadOnly(t.Context(), filepath.Join(acts.Dir, "builds", research.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sp, err := db.TotalSpend(t.Context())
	if err != nil || sp.Calls != int(calls.Load()) || rep.Stats.Calls != int(calls.Load()) {
		t.Errorf("ledger %d calls, footer %d, made %d (%v)", sp.Calls, rep.Stats.Calls, calls.Load(), err)
	}
}

// Without KeepBuilds, every step builds its own configuration (a BuildFunc that is not made to serve many steps).
func TestEveryStepBuildsWithoutKeepBuilds(t *testing.T) {
	f := newFixture(t)
	var cb countingBuilds
	acts := f.activities(t)
	acts.Build = cb.build(f)
	var steps atomic.Int32
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	register(env, acts, nil)
	env.SetOnLocalActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) { steps.Add(1) })
	env.SetOnActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) { steps.Add(1) })
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "every", Question: question}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	if b, c, n := cb.builds.Load(), cb.cleanups.Load(), steps.Load(); b != n || c != b {
		t.Errorf("%d builds, %d released, for %d steps; want one each per step", b, c, n)
	}
}

// Two workers keeping the run's builds take its steps in turn: the report is a local run's, text, evidence and
// footer, though each step's roles may be another step's.
func TestTwoWorkersKeepingBuildsMatchLocalRun(t *testing.T) {
	pg := pgtest.New(t)
	f := newFixture(t)
	local, err := research.Run(t.Context(), func() research.Config {
		c := f.config()
		c.RunID, c.Question, c.OutDir = "alternate-builds", question, filepath.Join(t.TempDir(), "local")
		return c
	}())
	if err != nil {
		t.Fatal(err)
	}
	al := &alternate{}
	var builds [2]countingBuilds
	for i := range al.acts {
		al.acts[i] = &Activities{Dir: t.TempDir(), State: pg.URL, KeepBuilds: true, Build: builds[i].build(f)}
		defer al.acts[i].Close()
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	register(env, al.acts[0], al.overrides())
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "alternate-builds", Question: question}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var rep research.Report
	if err := env.GetWorkflowResult(&rep); err != nil {
		t.Fatal(err)
	}
	for i := range al.acts {
		if n, ran := builds[i].builds.Load(), len(al.ran[i]); n == 0 || 3*int(n) > ran {
			t.Errorf("worker %d built %d times for %d steps: it did not keep its builds", i, n, ran)
		}
	}
	minute := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d UTC`)
	if minute.ReplaceAllString(rep.Markdown, "") != minute.ReplaceAllString(local.Markdown, "") {
		t.Errorf("report of two workers keeping builds:\n%s\nlocal run's:\n%s", rep.Markdown, local.Markdown)
	}
	if rep.Stats.Calls != local.Stats.Calls || rep.Stats.Tokens != local.Stats.Tokens || rep.Stats.EvidenceAccepted != local.Stats.EvidenceAccepted {
		t.Errorf("two workers: %d calls, %d tokens, %d evidence; local: %d, %d, %d", rep.Stats.Calls, rep.Stats.Tokens,
			rep.Stats.EvidenceAccepted, local.Stats.Calls, local.Stats.Tokens, local.Stats.EvidenceAccepted)
	}
}

// fakeBuild is a built configuration whose cleanup is counted.
func fakeBuild(closed *atomic.Int32) *built {
	return newBuilt(research.Config{}, func() { closed.Add(1) })
}

func TestHeldRunKeepsBuildsOfOneInput(t *testing.T) {
	h := &heldRun{}
	var closed atomic.Int32
	if b := h.take("in1"); b != nil {
		t.Fatal("a run held afresh has a build")
	}
	a, b := fakeBuild(&closed), fakeBuild(&closed)
	h.put("in1", a)
	h.put("in1", b)
	if got := h.take("in1"); got != b {
		t.Fatal("take did not return the build given back last")
	}
	// Another input (the run submitted again under its id, with other sources) does not get in1's builds: they
	// are closed, and so is a build of in1 given back afterwards.
	if got := h.take("in2"); got != nil || closed.Load() != 1 {
		t.Fatalf("take of another input: %v, %d closed; want none, the stale build closed", got, closed.Load())
	}
	h.put("in1", b)
	if closed.Load() != 2 || h.builds() != 0 {
		t.Fatalf("a stale build given back: %d closed, %d kept", closed.Load(), h.builds())
	}
	// At most buildsMax are kept idle.
	for range buildsMax + 2 {
		h.put("in2", fakeBuild(&closed))
	}
	if h.builds() != buildsMax || closed.Load() != 4 {
		t.Fatalf("%d builds kept, %d closed; want %d kept", h.builds(), closed.Load(), buildsMax)
	}
}

func TestHeldRunClosesItsBuilds(t *testing.T) {
	var closed atomic.Int32
	pg := pgtest.New(t)
	run, err := research.OpenSharedRun(t.Context(), pg.URL, "held", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &heldRun{run: run}
	inUse := fakeBuild(&closed)
	h.put("in", fakeBuild(&closed))
	h.put("in", fakeBuild(&closed))
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if closed.Load() != 2 {
		t.Fatalf("%d idle builds closed with the run, want 2", closed.Load())
	}
	h.put("in", inUse) // a step that held a build while the run closed
	if closed.Load() != 3 || h.builds() != 0 {
		t.Fatalf("a build given back to a closed run: %d closed, %d kept", closed.Load(), h.builds())
	}
}

// A build's ledger passes each call to the ledger of the step holding the build, and to none once it is given
// back.
func TestBuiltLedgerFollowsItsStep(t *testing.T) {
	var closed atomic.Int32
	b := fakeBuild(&closed)
	step1, step2 := &llm.Ledger{}, &llm.Ledger{}
	b.step.Store(step1)
	b.cfg.Ledger.Record(llm.Entry{Usage: llm.Usage{InputTokens: 5}})
	b.step.Store(nil)
	b.cfg.Ledger.Record(llm.Entry{Usage: llm.Usage{InputTokens: 7}})
	b.step.Store(step2)
	b.cfg.Ledger.Record(llm.Entry{Usage: llm.Usage{InputTokens: 11}})
	for i, c := range []struct {
		l    *llm.Ledger
		want int
	}{{step1, 5}, {step2, 11}} {
		if u, _, n := c.l.Totals(); n != 1 || u.InputTokens != c.want {
			t.Errorf("step %d: %d calls, %d tokens; want 1 call of %d", i+1, n, u.InputTokens, c.want)
		}
	}
}

// A step that fails gives its build up: the next step of the run builds afresh (what failed may be something the
// build holds).
func TestFailedStepDropsItsBuild(t *testing.T) {
	f := newFixture(t)
	var cb countingBuilds
	acts := f.activities(t)
	acts.Build, acts.KeepBuilds = cb.build(f), true
	defer acts.Close()
	fail := errors.New("the step broke")
	step := func(ctx context.Context, in Input, broken bool) (int, error) {
		_, done, err := acts.session(ctx, in)
		if err != nil {
			return 0, err
		}
		if broken {
			done(fail)
		} else {
			done(nil)
		}
		return 0, nil
	}
	var s testsuite.WorkflowTestSuite
	aenv := s.NewTestActivityEnvironment()
	aenv.RegisterActivity(step)
	in := Input{Request: request.Research{RunID: "drop", Question: question}}
	for _, broken := range []bool{false, false, true, false} {
		if _, err := aenv.ExecuteActivity(step, in, broken); err != nil {
			t.Fatal(err)
		}
	}
	// Steps 1 and 2 share a build; step 3 fails and drops it; step 4 builds again.
	if b, c := cb.builds.Load(), cb.cleanups.Load(); b != 2 || c != 1 {
		t.Fatalf("%d builds, %d released; want 2 builds, the failed step's released", b, c)
	}
}

// Two workers share a run: what one's steps change — spend, the fuse — the other's next step sees, though that
// worker keeps the run and its build open between its steps.
func TestKeptRunSeesTheOtherWorkersChanges(t *testing.T) {
	pg := pgtest.New(t)
	f := newFixture(t)
	newWorker := func() *Activities {
		a := f.activities(t)
		a.State, a.KeepBuilds = pg.URL, true
		return a
	}
	first, second := newWorker(), newWorker()
	defer first.Close()
	defer second.Close()
	in := Input{Request: request.Research{RunID: "seen", Question: question}}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	register(env, first, nil)
	// The activity environment below names its attempts as the workflow environment does by default: the
	// workflow gets an id of its own, so that the second worker's attempts are not taken for the first's.
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: WorkflowID("seen")})
	env.ExecuteWorkflow(WorkflowName, in)
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	type seen struct {
		Evidence, Tokens, Calls int
		Fused                   bool
	}
	look := func(ctx context.Context, in Input) (seen, error) {
		sess, done, err := second.session(ctx, in)
		if err != nil {
			return seen{}, err
		}
		defer done(nil)
		rp, err := sess.BeginRound(ctx, 9)
		p := sess.Progress()
		return seen{Evidence: p.Evidence, Tokens: p.Tokens, Calls: p.Calls, Fused: rp.Fused}, err
	}
	aenv := s.NewTestActivityEnvironment()
	aenv.RegisterActivity(look)
	get := func() seen {
		t.Helper()
		v, err := aenv.ExecuteActivity(look, in)
		if err != nil {
			t.Fatal(err)
		}
		var got seen
		if err := v.Get(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	before := get()
	if before.Evidence != 25 || before.Fused {
		t.Fatalf("the second worker's first step saw %+v; want the 25 items, no fuse", before)
	}
	db, err := state.OpenRun(t.Context(), pg.URL, "seen")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.SetSpend(t.Context(), "elsewhere#1", state.Spend{Tokens: 1000, Calls: 3, CostUSD: 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetMeta(t.Context(), "fuse", `{"fused":true,"cut_short":["cost fuse: elsewhere"],"round":2}`); err != nil {
		t.Fatal(err)
	}
	after := get()
	if after.Tokens != before.Tokens+1000 || after.Calls != before.Calls+3 || !after.Fused {
		t.Fatalf("after the other worker's step: %+v (before %+v); want 1000 tokens and 3 calls more, the fuse fired", after, before)
	}
}

// A worker that cannot build a run (its input names what the worker lacks) fails the step for good and marks the
// run failed in the shared state with the build's message, whether or not an earlier step created the run; a run
// that has finished stays finished.
func TestUnmetInputFailsTheRun(t *testing.T) {
	pg := pgtest.New(t)
	f := newFixture(t)
	acts := f.activities(t)
	acts.State = pg.URL
	defer acts.Close()
	lack := errors.New("worker cannot read corpus /srv/corpus: stat /srv/corpus: no such file or directory")
	acts.Build = func(context.Context, Input) (research.Config, func(), error) { return research.Config{}, nil, lack }
	step := func(ctx context.Context, in Input) error {
		_, done, err := acts.session(ctx, in)
		if err == nil {
			done(nil)
		}
		return acts.failure(ctx, err, true)
	}
	var s testsuite.WorkflowTestSuite
	aenv := s.NewTestActivityEnvironment()
	aenv.RegisterActivity(step)
	_, err := aenv.ExecuteActivity(step, Input{Request: request.Research{RunID: "unmet", Question: question}})
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || !ae.NonRetryable() || ae.Type() != errConfig || ae.Message() != lack.Error() {
		t.Fatalf("step error %v; want the build's message, not retryable", err)
	}
	runs, err := research.ListSharedRuns(t.Context(), pg.URL)
	if err != nil || len(runs) != 1 || runs[0].Status != research.RunFailed || runs[0].Error != lack.Error() || runs[0].Question != question {
		t.Fatalf("listed %+v %v; want the run failed with the build's message and its question", runs, err)
	}
	// A finished run is not marked failed by a late step on a worker that lacks its corpus.
	db, err := state.OpenRun(t.Context(), pg.URL, "unmet")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.SetMeta(t.Context(), "status", research.RunDone); err != nil {
		t.Fatal(err)
	}
	if _, err := aenv.ExecuteActivity(step, Input{Request: request.Research{RunID: "unmet", Question: question}}); err == nil {
		t.Fatal("the step did not fail")
	}
	if v, _, _ := db.Meta(t.Context(), "status"); v != research.RunDone {
		t.Errorf("a finished run is now %q", v)
	}
}
