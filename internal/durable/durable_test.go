package durable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources"
)

// fixture is a small research world: 3 sub-questions × 4 pages on a local site, and a first verdict that sends
// one sub-question back to search.
type fixture struct {
	site *researchtest.Site
	plan research.Plan
	// onCall, when set, sees every role call before the model is asked.
	onCall func(role, key string) error
}

func newFixture(t testing.TB) *fixture {
	f := &fixture{plan: research.Plan{Language: "en"}}
	var pages []researchtest.Page
	for i, topic := range []string{"alpha", "bravo", "charlie"} {
		f.plan.SubQuestions = append(f.plan.SubQuestions, research.SubQuestion{ID: fmt.Sprintf("q%d", i+1),
			Question: "What is known about " + topic + "?", Queries: []string{topic + " facts"}})
		for j := range 4 {
			pages = append(pages, researchtest.Page{Path: fmt.Sprintf("/%s/%d", topic, j), Title: fmt.Sprintf("%s facts %d", topic, j),
				Body: fmt.Sprintf("The %s facts page %d reports a value of %d units. Observers of %s noted trend %d in the series.", topic, j, 10*i+j, topic, j)})
		}
		pages = append(pages, researchtest.Page{Path: "/" + topic + "/deep", Title: topic + " deep dive",
			Body: fmt.Sprintf("The %s deep dive covers the missing details of %s in full.", topic, topic)})
	}
	f.site = researchtest.NewSite(pages)
	t.Cleanup(f.site.Close)
	return f
}

func (f *fixture) config() research.Config {
	ledger := &llm.Ledger{}
	roles := &researchtest.Roles{Site: f.site, Plan: f.plan, Ledger: ledger, PerQuery: 4}
	roles.NewModel(5 * time.Millisecond)
	roles.Fail = f.onCall
	// The verdict depends on the pool only (a worker's roles keep nothing between steps): the gap is the deep
	// dive, until it is read.
	roles.Verify = func(_ int, _ *research.Plan, pool []research.Evidence) research.Verdict {
		for _, e := range pool {
			if strings.HasSuffix(e.Source, "/alpha/deep") {
				return research.Verdict{Pass: true}
			}
		}
		return research.Verdict{Gaps: []research.Gap{{SubQuestion: "q1", Missing: "details", Queries: []string{"alpha deep dive"}}}}
	}
	return research.Config{Roles: roles.Set(), Fetcher: f.site.Fetcher(), Ledger: ledger, EarlyStopWindow: -1}
}

const question = "What is known about alpha, bravo and charlie?"

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
	for _, tier := range append([]string{""}, Tiers...) {
		acts.register(overriding{env, override}, tier)
	}
}

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
	env.ExecuteWorkflow(WorkflowName, Input{RunID: "wf1", Question: question})
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
		TierQueue(DefaultTaskQueue, TierFast):   {actSearch: 4},
		TierQueue(DefaultTaskQueue, TierMid):    {actRead: rep.Stats.SourcesRead},
		TierQueue(DefaultTaskQueue, TierStrong): {actScope: 1, actVerify: 2, actSynthesize: 1},
		"local":                                 {actBeginRound: 2, actCollect: 2, actAdmit: rep.Stats.SourcesRead, actEndRound: 2, actNext: 1},
	}
	if fmt.Sprint(queues) != fmt.Sprint(want) {
		t.Errorf("activities per queue:\n got %v\nwant %v", queues, want)
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
		actRead: func(ctx context.Context, in Input, round int, c research.Candidate) (research.Reading, error) {
			rd, err := acts.Read(ctx, in, round, c)
			if err == nil && activity.GetInfo(ctx).Attempt == 1 && strings.HasSuffix(c.URL, "/1") {
				died.Add(1)
				return research.Reading{}, lost
			}
			return rd, err
		},
		// An admission that wrote its evidence, then its worker was gone before it marked the read done.
		actAdmit: func(ctx context.Context, in Input, round int, c research.Candidate, rd research.Reading) (research.Admission, error) {
			a, err := acts.Admit(ctx, in, round, c, rd)
			if err == nil && activity.GetInfo(ctx).Attempt == 1 && strings.HasSuffix(c.URL, "/2") {
				died.Add(1)
				// Undo only the marker, as if the worker had died between the pool write and the marker.
				raw, oerr := sql.Open("sqlite", filepath.Join(acts.Dir, in.RunID, research.StateFile))
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
	env.ExecuteWorkflow(WorkflowName, Input{RunID: "wf2", Question: question})
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
	env.ExecuteWorkflow(WorkflowName, Input{RunID: "wf3", Question: question, Budget: research.Budget{MaxCalls: limit}})
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
