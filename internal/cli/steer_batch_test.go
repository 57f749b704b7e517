package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
)

// TestBatchNeverAsks: a configuration that lets runs ask clarifying questions (research.clarify) does not make
// batch wait, even with a terminal on its standard input: every question is answered, the planner is never asked
// whether to clarify, nothing is put on the terminal, and batch says once that it does not ask.
func TestBatchNeverAsks(t *testing.T) {
	isolateHome(t)
	docs := kilnCorpus(t)
	srv := openaifake.New(t, openaifake.Config{APIKey: "fake-key", GapSubQuestion: -1, Clarify: []string{"Which kiln do you mean?"}})
	work := t.TempDir()
	in, out := filepath.Join(work, "questions.jsonl"), filepath.Join(work, "results.jsonl")
	var lines []string
	for _, id := range []string{"1", "2"} {
		b, _ := json.Marshal(map[string]string{"id": id, "prompt": "What does a Kestrel kiln cost?"})
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "research:\n  clarify: true\n  out_dir: "+filepath.Join(work, "runs")+"\n")
	term, tty := newPTY(t)
	done := runOnPTY(t, tty, map[string]string{"OPENAI_API_KEY": "fake-key", "TERM": "dumb"},
		"--config", cfg, "batch", in, "--out", out, "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "fake-research",
		"--corpus", docs, "--concurrency", "2")
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("batch exited %d:\n%s", code, term.all())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("batch is still going (waiting on the terminal?):\n%s", term.all())
	}
	b, err := os.ReadFile(out)
	if err != nil || len(strings.Split(strings.TrimSpace(string(b)), "\n")) != 2 {
		t.Fatalf("results (%v):\n%s", err, b)
	}
	for _, c := range srv.Calls() {
		if c.Clarify {
			t.Fatal("batch asked the planner to clarify")
		}
	}
	shown := term.all()
	if n := strings.Count(shown, "asks no clarifying questions"); n != 1 {
		t.Errorf("batch said %d times that it does not ask:\n%s", n, shown)
	}
	if strings.Contains(shown, "Which kiln do you mean?") || strings.Contains(shown, "Before planning") {
		t.Errorf("batch put a question on the terminal:\n%s", shown)
	}
}

// all is everything the terminal has shown.
func (p *ptyTerm) all() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen.String()
}

// The runner of the viewer and the MCP server on Temporal refuses a request that would ask the person before it
// submits anything (its client is never used).
func TestDurableRunnerRefusesAsking(t *testing.T) {
	run := durableRunner(nil, temporalFlags{}, "")
	for name, req := range map[string]request.Research{
		"review":  {Question: "q?", ReviewPlan: func(context.Context, *research.Plan) (*research.Plan, error) { return nil, nil }},
		"clarify": {Question: "q?", Clarify: func(context.Context, []string) ([]string, error) { return nil, nil }},
	} {
		if _, err := run(t.Context(), req); err == nil || !strings.Contains(err.Error(), "no one can be asked") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
