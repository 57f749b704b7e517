package scaletest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/research/state"
)

// run --temporal --plan FILE researches the plan file on the workers: the plan travels in the workflow's input,
// the planner is never asked, and the plan in the shared state is the file's. --review and --clarify are refused
// before anything is submitted: the shared state holds no run of theirs.
func TestPlanFileOnTemporal(t *testing.T) {
	d := setup(t, 0)
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	d.startWorker(t, ctx, 0, 4)
	work := t.TempDir()
	plan := filepath.Join(work, "plan.yaml")
	if err := os.WriteFile(plan, []byte("sub_questions:\n  - question: What does a Kestrel kiln cost to build and run?\n"+
		"    queries: [Kestrel kiln cost, materials electricity euros]\n  - How fast does the Kestrel kiln dry oak boards?\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	on := []string{"--temporal", d.temporal, "--namespace", d.namespace, "--state", d.state, "--corpus", d.docs}
	p := d.command(ctx, append(append([]string{"run"}, on...), "--plan", plan, "--json", "--out", filepath.Join(work, "out"), question)...)
	if err := p.cmd.Run(); err != nil {
		t.Fatalf("run --temporal --plan: %v\n%s", err, p.stderr.String())
	}
	var sum struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(p.stdout.String()), &sum); err != nil || sum.Status != research.RunDone {
		t.Fatalf("summary %q: %v", p.stdout.String(), err)
	}
	if n := d.model.Count(openaifake.RolePlanner); n != 0 {
		t.Errorf("the planner was asked %d times for a run given its plan", n)
	}
	db, err := state.OpenRunReadOnly(ctx, d.state, sum.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got research.Plan
	ok, err := db.Step(ctx, "scope", &got)
	db.Close()
	if err != nil || !ok {
		t.Fatalf("no plan in the shared state: %v", err)
	}
	if len(got.SubQuestions) != 2 || got.SubQuestions[0].Question != "What does a Kestrel kiln cost to build and run?" ||
		got.SubQuestions[1].Question != "How fast does the Kestrel kiln dry oak boards?" ||
		strings.Join(got.SubQuestions[0].Queries, "|") != "Kestrel kiln cost|materials electricity euros" {
		t.Errorf("the workers researched %+v", got.SubQuestions)
	}

	before, err := state.ListRuns(ctx, d.state)
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--review", "--clarify"} {
		p := d.command(ctx, append(append([]string{"run"}, on...), flag, question)...)
		err := p.cmd.Run()
		if code := p.cmd.ProcessState.ExitCode(); err == nil || code != 2 || !strings.Contains(p.stderr.String(), "no one can be asked") {
			t.Errorf("run --temporal %s: exit %d\n%s", flag, code, p.stderr.String())
		}
	}
	if after, err := state.ListRuns(ctx, d.state); err != nil || len(after) != len(before) {
		t.Errorf("a refused run reached the shared state: %v → %v (%v)", before, after, err)
	}
}
