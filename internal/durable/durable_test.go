package durable

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/state"
)

// fixture is a small research world: 3 sub-questions × 4 pages on a local site, and a first verdict that sends
// one sub-question back to search.
type fixture struct {
	site *researchtest.Site
	plan research.Plan
}

func newFixture(t *testing.T) *fixture {
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

func (f *fixture) activities(t *testing.T) *Activities {
	return &Activities{Dir: t.TempDir(), Build: func(context.Context, Input) (research.Config, func(), error) {
		return f.config(), func() {}, nil
	}}
}

func register(env *testsuite.TestWorkflowEnvironment, acts *Activities, searchRead any) {
	env.RegisterWorkflowWithOptions(Workflow, workflowRegisterOptions())
	env.RegisterActivityWithOptions(acts.Scope, activity.RegisterOptions{Name: actScope})
	env.RegisterActivityWithOptions(searchRead, activity.RegisterOptions{Name: actSearchRead})
	env.RegisterActivityWithOptions(acts.Verify, activity.RegisterOptions{Name: actVerify})
	env.RegisterActivityWithOptions(acts.Next, activity.RegisterOptions{Name: actNext})
	env.RegisterActivityWithOptions(acts.Synthesize, activity.RegisterOptions{Name: actSynthesize})
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
	register(env, acts, acts.SearchRead)
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
	if len(statuses) == 0 || statuses[0].RunID != "wf1" {
		t.Errorf("progress query answered %+v", statuses)
	}
}

// A step that dies halfway (its worker killed) is retried and continues from the step keys it left: the run ends
// with the evidence an uninterrupted run has, and no row twice.
func TestStepRetriedAfterDyingHalfway(t *testing.T) {
	f := newFixture(t)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	acts := f.activities(t)
	var died atomic.Int32
	flaky := func(ctx context.Context, in Input, round int, targets []research.Target) (bool, error) {
		if activity.GetInfo(ctx).Attempt == 1 && round == 1 {
			// The first attempt gets part of the way, then its worker is gone.
			cctx, cancel := context.WithTimeout(ctx, 40*time.Millisecond)
			defer cancel()
			_, _ = acts.SearchRead(cctx, in, round, targets)
			died.Add(1)
			return false, errors.New("worker lost")
		}
		return acts.SearchRead(ctx, in, round, targets)
	}
	register(env, acts, flaky)
	env.ExecuteWorkflow(WorkflowName, Input{RunID: "wf2", Question: question})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	if died.Load() != 1 {
		t.Fatalf("the step died %d times, want 1", died.Load())
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
	for _, e := range pool {
		k := state.EvidenceKey(e.Source, e.Quote)
		if seen[k] {
			t.Errorf("evidence %s twice", e.ID)
		}
		seen[k] = true
	}
	// 12 pages with two sentences each, then the deep dive's one in the second round: what an uninterrupted
	// run gathers.
	if len(pool) != 25 || rep.Stats.EvidenceAccepted != 25 || rep.Stats.Rounds != 2 {
		t.Errorf("pool %d, report %d, rounds %d; want 25, 25, 2", len(pool), rep.Stats.EvidenceAccepted, rep.Stats.Rounds)
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
	if sp.Calls < rep.Stats.Calls {
		t.Errorf("ledger calls %d < report calls %d", sp.Calls, rep.Stats.Calls)
	}
}
