package durable

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources"
)

// fixture is the durable tests' research world (researchtest.World): 3 sub-questions × 4 pages on a local site,
// and a first verdict that sends one sub-question back to search.
type fixture struct {
	world *researchtest.World
	site  *researchtest.Site
	plan  research.Plan
	// onCall, when set, sees every role call before the model is asked.
	onCall func(role, key string) error
}

func newFixture(t testing.TB) *fixture {
	w := researchtest.NewWorld()
	t.Cleanup(w.Site.Close)
	return &fixture{world: w, site: w.Site, plan: w.Plan}
}

// config is one worker's configuration over the world, with the fixture's plan and call hook.
func (f *fixture) config() research.Config {
	w := *f.world // steps build at once: each gets its own copy
	w.Plan, w.Fail = f.plan, f.onCall
	return w.Config()
}

const question = researchtest.WorldQuestion

func (f *fixture) activities(t testing.TB) *Activities {
	return &Activities{Dir: t.TempDir(), Build: func(context.Context, Input) (research.Config, func(), error) {
		return f.config(), func() {}, nil
	}}
}

// register registers the workflow and every queue's activities; override replaces activities by name.
func register(env *testsuite.TestWorkflowEnvironment, acts *Activities, override map[string]any) {
	// The test environment takes a workflow task over a second for a deadlock; on a loaded machine under -race
	// the graph's bookkeeping between two yields can take that long.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	env.RegisterWorkflowWithOptions(Workflow, workflowRegisterOptions())
	// The test environment has one registry for every queue: the base queue's steps and one tier's (each tier's
	// queue registers every model step).
	for _, tier := range []string{"", TierStrong} {
		acts.register(overriding{env, override}, tier)
	}
}

// step is the row of the step table named name; a name the table lacks panics the test.
func step(name string) research.Step {
	for _, st := range research.Graph() {
		if st.Name == name {
			return st
		}
	}
	panic("the step table has no step " + name)
}

// act is the activity name of the step named name.
func act(name string) string { return ActivityName(step(name)) }

type overriding struct {
	env      *testsuite.TestWorkflowEnvironment
	override map[string]any
}

func (o overriding) RegisterActivityWithOptions(fn any, opts activity.RegisterOptions) {
	if f, ok := o.override[opts.Name]; ok {
		fn = f
	}
	o.env.RegisterActivityWithOptions(fn, opts)
}

// The workflow drives the same graph as a local run: the same steps, the same evidence, the same citations.
func TestWorkflowMatchesLocalRun(t *testing.T) {
	f := newFixture(t)
	local, err := research.Run(t.Context(), func() research.Config {
		c := f.config()
		c.Question, c.OutDir = question, filepath.Join(t.TempDir(), "local")
		return c
	}())
	if err != nil {
		t.Fatal(err)
	}

	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	acts := f.activities(t)
	register(env, acts, nil)
	queues := map[string]map[string]int{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if queues[info.TaskQueue] == nil {
			queues[info.TaskQueue] = map[string]int{}
		}
		queues[info.TaskQueue][info.ActivityType.Name]++
	})
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		if queues["local"] == nil {
			queues["local"] = map[string]int{}
		}
		queues["local"][info.ActivityType.Name]++
	})
	var statuses []Status
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryProgress)
		if err == nil {
			var st Status
			if v.Get(&st) == nil {
				statuses = append(statuses, st)
			}
		}
	}, time.Millisecond)
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "wf1", Question: question}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var rep research.Report
	if err := env.GetWorkflowResult(&rep); err != nil {
		t.Fatal(err)
	}
	if rep.Stats.Rounds != local.Stats.Rounds || rep.Stats.EvidenceAccepted != local.Stats.EvidenceAccepted ||
		len(rep.Citations) != len(local.Citations) || rep.Stats.SourcesRead != local.Stats.SourcesRead {
		t.Errorf("durable run: rounds %d, evidence %d, citations %d, reads %d; local run: %d, %d, %d, %d",
			rep.Stats.Rounds, rep.Stats.EvidenceAccepted, len(rep.Citations), rep.Stats.SourcesRead,
			local.Stats.Rounds, local.Stats.EvidenceAccepted, len(local.Citations), local.Stats.SourcesRead)
	}
	if rep.Stats.Rounds != 2 {
		t.Errorf("rounds = %d, want 2 (one directed re-search)", rep.Stats.Rounds)
	}
	// The footer's spend is the local run's: every step attempt has its own row in the ledger, the bookkeeping
	// steps' included, and none overwrites another's.
	if rep.Stats.Calls != local.Stats.Calls || rep.Stats.Tokens != local.Stats.Tokens ||
		fmt.Sprintf("%.6f", rep.Stats.CostUSD) != fmt.Sprintf("%.6f", local.Stats.CostUSD) || rep.Stats.FusesTripped != local.Stats.FusesTripped {
		t.Errorf("durable footer: %d calls, %d tokens, $%.6f, %d fuses; local: %d, %d, $%.6f, %d",
			rep.Stats.Calls, rep.Stats.Tokens, rep.Stats.CostUSD, rep.Stats.FusesTripped,
			local.Stats.Calls, local.Stats.Tokens, local.Stats.CostUSD, local.Stats.FusesTripped)
	}
	if rep.Stats.Tokens == 0 {
		t.Error("the run spent no tokens: the comparison above proves nothing")
	}
	// Every model call went to its tier's queue: one search per sub-question and round on fast, one read per
	// source on mid, scope, verifications and synthesis on strong; the bookkeeping ran as local activities.
	want := map[string]map[string]int{
		TierQueue(DefaultTaskQueue, TierFast):   {act("Search"): 4},
		TierQueue(DefaultTaskQueue, TierMid):    {act("Read"): rep.Stats.SourcesRead},
		TierQueue(DefaultTaskQueue, TierStrong): {act("Scope"): 1, act("Verify"): 2, act("Synthesize"): 1},
		"local":                                 {act("BeginRound"): 2, act("Collect"): 2, act("Admit"): rep.Stats.SourcesRead, act("EndRound"): 2, act("Next"): 1},
	}
	if fmt.Sprint(queues) != fmt.Sprint(want) {
		t.Errorf("activities per queue:\n got %v\nwant %v", queues, want)
	}
	for _, st := range research.Graph() {
		n := 0
		for _, q := range queues {
			n += q[ActivityName(st)]
		}
		if n == 0 {
			t.Errorf("the workflow never ran step %s", st.Name)
		}
	}
	// The steps' events are in the run's state, in one sequence, for whoever follows the run.
	feed := research.NewEventFeed(filepath.Join(acts.Dir, "wf1", research.StateFile), "wf1")
	defer feed.Close()
	evs, err := feed.Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for i, e := range evs {
		kinds[e.Kind]++
		if i > 0 && e.Seq <= evs[i-1].Seq || e.RunID != "wf1" {
			t.Fatalf("event %d: seq %d after %d, run %q", i, e.Seq, evs[i-1].Seq, e.RunID)
		}
	}
	if kinds[research.EventSearch] != 4 || kinds[research.EventRead] != rep.Stats.SourcesRead ||
		kinds[research.EventEvidence] != rep.Stats.EvidenceAccepted || kinds[research.EventStageStart] == 0 {
		t.Errorf("events in the state by kind: %v", kinds)
	}
	if len(statuses) == 0 || statuses[0].RunID != "wf1" {
		t.Errorf("progress query answered %+v", statuses)
	}
}

// Steps that die halfway (their worker killed after the model answered, or in the middle of admitting) are
// retried and continue from the step keys they left: the run ends with the evidence an uninterrupted run has,
// no row twice, and no model call made twice.
func TestStepRetriedAfterDyingHalfway(t *testing.T) {
	f := newFixture(t)
	var calls atomic.Int32
	f.onCall = func(string, string) error { calls.Add(1); return nil }
	_, err := research.Run(t.Context(), func() research.Config {
		c := f.config()
		c.Question, c.OutDir = question, filepath.Join(t.TempDir(), "local")
		return c
	}())
	if err != nil {
		t.Fatal(err)
	}
	localCalls := calls.Swap(0)

	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	acts := f.activities(t)
	var died atomic.Int32
	lost := errors.New("worker lost")
	register(env, acts, map[string]any{
		// A read whose model call finished, then its worker was gone before the engine heard of it.
		act("Read"): func(ctx context.Context, in Input, round int, c research.Candidate) (research.Reading, error) {
			rd, err := acts.Activity(step("Read")).(func(context.Context, Input, int, research.Candidate) (research.Reading, error))(ctx, in, round, c)
			if err == nil && activity.GetInfo(ctx).Attempt == 1 && strings.HasSuffix(c.URL, "/1") {
				died.Add(1)
				return research.Reading{}, lost
			}
			return rd, err
		},
		// An admission that wrote its evidence, then its worker was gone before it marked the read done.
		act("Admit"): func(ctx context.Context, in Input, round int, c research.Candidate, rd research.Reading) (research.Admission, error) {
			a, err := acts.Activity(step("Admit")).(func(context.Context, Input, int, research.Candidate, research.Reading) (research.Admission, error))(ctx, in, round, c, rd)
			if err == nil && activity.GetInfo(ctx).Attempt == 1 && strings.HasSuffix(c.URL, "/2") {
				died.Add(1)
				// Undo only the marker, as if the worker had died between the pool write and the marker.
				raw, oerr := sql.Open("sqlite", filepath.Join(acts.Dir, in.RunID(), research.StateFile))
				if oerr != nil {
					return a, oerr
				}
				defer raw.Close()
				if _, derr := raw.ExecContext(ctx, `DELETE FROM steps WHERE name = ?`,
					"read:"+c.SubQuestion+":"+sources.NormalizeURL(c.URL)); derr != nil {
					return a, derr
				}
				return research.Admission{}, lost
			}
			return a, err
		},
	})
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "wf2", Question: question}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	if died.Load() != 6 {
		t.Fatalf("%d steps died, want 6 (a read and an admission for each of 3 sub-questions)", died.Load())
	}
	var rep research.Report
	if err := env.GetWorkflowResult(&rep); err != nil {
		t.Fatal(err)
	}
	db, err := state.OpenReadOnly(t.Context(), filepath.Join(acts.Dir, "wf2", research.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pool, _ := db.Evidence(t.Context(), "")
	seen := map[string]bool{}
	for i, e := range pool {
		k := state.EvidenceKey(e.Source, e.Quote)
		if seen[k] {
			t.Errorf("evidence %s twice", e.ID)
		}
		seen[k] = true
		if e.ID != fmt.Sprintf("e%d", i+1) {
			t.Errorf("row %d has id %s", i, e.ID)
		}
	}
	// 12 pages with two sentences each, then the deep dive's one in the second round: what an uninterrupted
	// run gathers.
	if len(pool) != 25 || rep.Stats.EvidenceAccepted != 25 || rep.Stats.Rounds != 2 {
		t.Errorf("pool %d, report %d, rounds %d; want 25, 25, 2", len(pool), rep.Stats.EvidenceAccepted, rep.Stats.Rounds)
	}
	if got := calls.Load(); got != localCalls {
		t.Errorf("%d model calls, an uninterrupted local run made %d: a retried step called the model again", got, localCalls)
	}
	keys, _ := db.SpendKeys(t.Context())
	retried := false
	for _, k := range keys {
		retried = retried || strings.HasSuffix(k, "#2")
	}
	if !retried {
		t.Errorf("no second attempt in the spend ledger: %v", keys)
	}
	sp, _ := db.TotalSpend(t.Context())
	if sp.Calls != int(localCalls) {
		t.Errorf("ledger calls %d, want %d", sp.Calls, localCalls)
	}
}

// The run's call cap holds across steps running at once: reads in parallel reserve their calls in the shared
// ledger, and the run stops at the cap exactly, cut short, with a report.
func TestCallCapHoldsAcrossParallelSteps(t *testing.T) {
	f := newFixture(t)
	var calls atomic.Int32
	f.onCall = func(string, string) error { calls.Add(1); return nil }
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	acts := f.activities(t)
	register(env, acts, nil)
	const limit = 10 // scope, 3 searches, then 6 of the 12 reads the round wants
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "wf3", Question: question, Budget: research.Budget{MaxCalls: limit}}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var rep research.Report
	if err := env.GetWorkflowResult(&rep); err != nil {
		t.Fatal(err)
	}
	db, err := state.OpenReadOnly(t.Context(), filepath.Join(acts.Dir, "wf3", research.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sp, err := db.TotalSpend(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The synthesis after the cut is the report's own (the extractive fallback when no call is left).
	if sp.Calls != limit || int(calls.Load()) != limit {
		t.Errorf("ledger %d calls, roles asked %d times; want exactly %d", sp.Calls, calls.Load(), limit)
	}
	if !strings.Contains(rep.CutShort, "call cap") {
		t.Errorf("report not cut short by the call cap: %q", rep.CutShort)
	}
}

type recorder func(name string)

func (r recorder) RegisterActivityWithOptions(fn any, opts activity.RegisterOptions) { r(opts.Name) }

// Every step of the table has a tier and is registered where the workflow sends it: bookkeeping on the base
// queue, each model step on its role's tier's queue, whichever tier the configuration gives the role. Roles
// that send a step to no tier are refused when the run is submitted.
func TestEveryStepIsRegisteredOnItsTier(t *testing.T) {
	acts := &Activities{}
	registered := map[string][]string{}
	for _, tier := range append([]string{""}, Tiers...) {
		acts.register(recorder(func(name string) { registered[tier] = append(registered[tier], name) }), tier)
	}
	moved := map[string]string{research.RoleSearcher: TierMid, research.RoleSynthesizer: TierFast}
	for _, roles := range []map[string]string{nil, moved} {
		for _, st := range research.Graph() {
			tier := stepTier(roles, st)
			if st.Role != "" && !slices.Contains(Tiers, tier) {
				t.Errorf("step %s (the %s) has no tier: %q", st.Name, st.Role, tier)
			}
			if !slices.Contains(registered[tier], ActivityName(st)) {
				t.Errorf("roles %v: step %s goes to the queue of tier %q, where it is not registered (%v)", roles, st.Name, tier, registered[tier])
			}
		}
	}
	if got := stepTier(moved, step("Search")); got != TierMid {
		t.Errorf("a searcher configured on mid runs on %q", got)
	}
	if got := stepTier(nil, step("Read")); got != TierMid {
		t.Errorf("the analyst's default tier is %q, want mid", got)
	}
	for name, fn := range map[string]any{"Read": acts.Activity(step("Read")), "Scope": acts.Activity(step("Scope"))} {
		if _, ok := fn.(func(context.Context, Input, int, research.Candidate) (research.Reading, error)); name == "Read" && !ok {
			t.Errorf("the Read activity is a %T", fn)
		}
		if _, ok := fn.(func(context.Context, Input) (*research.Plan, error)); name == "Scope" && !ok {
			t.Errorf("the Scope activity is a %T", fn)
		}
	}
	if _, err := Submit(t.Context(), nil, Input{Request: request.Research{RunID: "x", Question: question}, Roles: map[string]string{research.RoleAnalyst: "tiny"}}); err == nil ||
		!strings.Contains(err.Error(), `"tiny"`) {
		t.Errorf("roles with an unknown tier: %v", err)
	}
}

// The workflow sends each model step to the queue of the tier the submitter's roles give it.
func TestStepsGoToTheQueueOfTheirRolesTier(t *testing.T) {
	f := newFixture(t)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	register(env, f.activities(t), nil)
	queues := map[string]map[string]int{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if queues[info.TaskQueue] == nil {
			queues[info.TaskQueue] = map[string]int{}
		}
		queues[info.TaskQueue][info.ActivityType.Name]++
	})
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "tiers", Question: question},
		Roles: map[string]string{research.RoleSearcher: TierMid, research.RoleVerifier: TierFast}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	mid, fast, strong := queues[TierQueue(DefaultTaskQueue, TierMid)], queues[TierQueue(DefaultTaskQueue, TierFast)], queues[TierQueue(DefaultTaskQueue, TierStrong)]
	if mid[act("Search")] != 4 || mid[act("Read")] == 0 || fast[act("Verify")] != 2 || strong[act("Verify")] != 0 ||
		strong[act("Scope")] != 1 || len(fast) != 1 {
		t.Errorf("activities per queue: %v", queues)
	}
}

// stageLines are the "stage done" lines of a run's research log, by stage and round.
func stageLines(t *testing.T, path string) map[string]state.LogEntry {
	t.Helper()
	db, err := state.OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	log, err := db.Log(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]state.LogEntry{}
	for _, e := range log {
		if e.Decision == "stage done" {
			out[fmt.Sprintf("%s/r%d", e.Stage, e.Round)] = e
		}
	}
	return out
}

// A durable run's research log says what a local run's says of each stage: its detail, and its own spend — not
// the run's running total — and a real duration, not the instant of the step that ended it. The steps of a
// stage run in sessions of their own, so where a stage began is kept in the run's state.
func TestDurableStagesLogWhatLocalStagesLog(t *testing.T) {
	f := newFixture(t)
	const latency = 5 * time.Millisecond // the scripted model's, per call: every search and read stage makes calls
	localDir := filepath.Join(t.TempDir(), "local")
	if _, err := research.Run(t.Context(), func() research.Config {
		c := f.config()
		c.Question, c.OutDir = question, localDir
		return c
	}()); err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	acts := f.activities(t)
	register(env, acts, nil)
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "stages", Question: question}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	local := stageLines(t, filepath.Join(localDir, research.StateFile))
	durable := stageLines(t, filepath.Join(acts.Dir, "stages", research.StateFile))
	for _, k := range []string{"search/r1", "read/r1", "search/r2", "read/r2"} {
		l, d := local[k], durable[k]
		if l.Decision == "" || d.Decision == "" {
			t.Errorf("%s: no stage line (local %v, durable %v)", k, l.Decision != "", d.Decision != "")
			continue
		}
		if l.Tokens == 0 || d.Tokens != l.Tokens || fmt.Sprintf("%.6f", d.CostUSD) != fmt.Sprintf("%.6f", l.CostUSD) || d.Detail != l.Detail {
			t.Errorf("%s: durable logs %d tokens, $%.6f, %q; local %d, $%.6f, %q", k, d.Tokens, d.CostUSD, d.Detail, l.Tokens, l.CostUSD, l.Detail)
		}
		if d.Duration < latency || l.Duration < latency {
			t.Errorf("%s: durable stage took %s, local %s: under one model call (%s)", k, d.Duration, l.Duration, latency)
		}
	}
	if len(durable) != len(local) {
		t.Errorf("stage lines: durable %v, local %v", durable, local)
	}
}

// legacyInput is a run's input as the previous version wrote it: the run id, question and budget beside the
// surface's request, which travelled as opaque JSON.
type legacyInput struct {
	RunID     string          `json:"run_id"`
	Question  string          `json:"question"`
	Request   json.RawMessage `json:"request,omitempty"`
	Budget    research.Budget `json:"budget"`
	TaskQueue string          `json:"task_queue,omitempty"`
	Steps     StepPolicy      `json:"steps,omitzero"`
}

// A run started by the previous version — its workflow's input, and the input of its steps still pending —
// decodes to the same request and runs on to its report; this version's input reads back as it was written.
func TestInputOfThePreviousVersionDecodes(t *testing.T) {
	req := request.Research{Question: question, RunID: "legacy", Web: "tavily", Budget: research.Budget{MaxCalls: 40}, Depth: "quick"}
	raw, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	old := legacyInput{RunID: "legacy", Question: question, Request: raw, Budget: req.Budget, Steps: StepPolicy{MaxAttempts: 3}}
	b, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	var in Input
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	if in.RunID() != "legacy" || in.Request.Question != question || in.Request.Web != "tavily" || in.Request.Budget.MaxCalls != 40 ||
		in.Request.Depth != "quick" || in.Steps.MaxAttempts != 3 {
		t.Errorf("the previous version's input decoded to %+v", in)
	}
	// The oldest form: no request at all.
	if err := json.Unmarshal([]byte(`{"run_id":"bare","question":"Why?","budget":{"max_calls":7}}`), &in); err != nil {
		t.Fatal(err)
	}
	if in.RunID() != "bare" || in.Request.Question != "Why?" || in.Request.Budget.MaxCalls != 7 {
		t.Errorf("an input with no request decoded to %+v", in)
	}
	now := Input{Request: req, Roles: map[string]string{research.RoleSearcher: TierMid}, TaskQueue: "q"}
	b, _ = json.Marshal(now)
	var back Input
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.RunID() != "legacy" || back.Request.Web != "tavily" || back.Roles[research.RoleSearcher] != TierMid || back.TaskQueue != "q" {
		t.Errorf("this version's input read back as %+v", back)
	}
	if !bytes.HasPrefix(b, []byte(`{"request":{"question":`)) {
		t.Errorf("this version's input is not the request and what goes with it: %s", b)
	}
	// Submitting checks the request as every surface does, and a run folder to resume is not the engine's.
	for _, bad := range []request.Research{
		{RunID: "x", Question: question, Budget: research.Budget{MaxCalls: -1}},
		{RunID: "x", Question: question, ResumeDir: "/tmp/run"},
		{RunID: "x", Question: " "},
		{Question: question},
	} {
		if _, err := Submit(t.Context(), nil, Input{Request: bad}); err == nil {
			t.Errorf("submitted %+v", bad)
		}
	}

	// A workflow started with the previous version's input runs to its report.
	f := newFixture(t)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	acts := f.activities(t)
	register(env, acts, nil)
	raw, _ = json.Marshal(request.Research{Question: question, RunID: "legacy"})
	env.ExecuteWorkflow(WorkflowName, legacyInput{RunID: "legacy", Question: question, Request: raw})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var rep research.Report
	if err := env.GetWorkflowResult(&rep); err != nil {
		t.Fatal(err)
	}
	if rep.Stats.EvidenceAccepted == 0 || rep.Stats.Rounds != 2 {
		t.Errorf("the previous version's run: %d evidence, %d rounds", rep.Stats.EvidenceAccepted, rep.Stats.Rounds)
	}
}
