package scaletest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// batch --temporal runs every question as a durable run (ids derived from the questions' ids) and writes the
// DeepResearch Bench article lines; started again, it answers nothing twice.
func TestBatchOnTemporal(t *testing.T) {
	d := setup(t, 0)
	ctx := t.Context()
	for i := range 2 {
		d.startWorker(t, ctx, i, 4)
	}
	work := t.TempDir()
	in := filepath.Join(work, "questions.jsonl")
	out := filepath.Join(work, "results.jsonl")
	var lines []string
	for _, id := range []string{"1", "2", "three"} {
		b, _ := json.Marshal(map[string]string{"id": id, "prompt": question})
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	batch := func() string {
		p := d.command(ctx, "batch", in, "--out", out, "--temporal", d.temporal, "--namespace", d.namespace,
			"--corpus", d.docs, "--concurrency", "3")
		p.cmd.Dir = work
		if err := p.cmd.Run(); err != nil {
			t.Fatalf("batch: %v\n%s", err, p.stderr.String())
		}
		return p.stderr.String()
	}
	batch()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(got) != 3 {
		t.Fatalf("%d result lines, want 3:\n%s", len(got), b)
	}
	for _, l := range got {
		var r struct{ ID, Prompt, Article string }
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Article == "" || r.Prompt != question {
			t.Errorf("result line %q: %v", l, err)
		}
	}
	runs, err := state.ListRuns(ctx, d.state)
	if err != nil {
		t.Fatal(err)
	}
	batchRuns := 0
	for _, id := range runs {
		if strings.HasPrefix(id, "batch-") {
			batchRuns++
		}
	}
	if batchRuns != 3 {
		t.Errorf("runs in the shared state: %v", runs)
	}
	if stderr := batch(); !strings.Contains(stderr, "3 already answered, 0 to run") {
		t.Errorf("second batch:\n%s", stderr)
	}
	// Any machine sees the runs and their reports through the shared state.
	p := d.command(ctx, "runs", "--state", d.state, "--json")
	if err := p.cmd.Run(); err != nil {
		t.Fatalf("runs --state: %v\n%s", err, p.stderr.String())
	}
	var listed []research.RunSummary
	if err := json.Unmarshal([]byte(p.stdout.String()), &listed); err != nil || len(listed) != 3 {
		t.Fatalf("runs --state listed %d (%v):\n%s", len(listed), err, p.stdout.String())
	}
	for _, r := range listed {
		if r.Status != research.RunDone || r.Question != question || r.Evidence == 0 {
			t.Errorf("listed %+v", r)
		}
	}
	var first struct{ Article string }
	_ = json.Unmarshal([]byte(got[0]), &first)
	found := false
	for _, r := range listed {
		p := d.command(ctx, "show", "--state", d.state, r.ID)
		if err := p.cmd.Run(); err != nil {
			t.Fatalf("show --state %s: %v\n%s", r.ID, err, p.stderr.String())
		}
		found = found || p.stdout.String() == first.Article
	}
	if !found {
		t.Error("no show --state printed the article the batch wrote")
	}
	p = d.command(ctx, "show", "--state", d.state, "no-such-run")
	if err := p.cmd.Run(); err == nil || !strings.Contains(p.stderr.String(), "not found") {
		t.Errorf("show of a missing run: %v %s", err, p.stderr.String())
	}
}
