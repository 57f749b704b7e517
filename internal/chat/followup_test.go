package chat

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/research"
)

// TestDeepResearchFollowsUpTheSessionsLastRun: a second /deep-research of a session follows up the first's run,
// --new starts afresh, and /clear (a fresh session) follows up nothing.
func TestDeepResearchFollowsUpTheSessionsLastRun(t *testing.T) {
	runs := t.TempDir()
	var froms, questions []string
	in := strings.Join([]string{
		"/deep-research How do bees dance?",
		"/deep-research And how far do they fly?",
		"/deep-research --new What is beeswax?",
		"/deep-research --new",
		"/clear",
		"/deep-research Why is honey sweet?",
		"/exit",
	}, "\n") + "\n"
	var out bytes.Buffer
	err := Run(t.Context(), Config{
		In: strings.NewReader(in), Out: &out,
		Agent:  agent.Config{Model: scripted.New(llm.Info{Name: "scripted"}, nil)},
		Ledger: &llm.Ledger{}, Sessions: Store{Dir: t.TempDir()}, Workspace: t.TempDir(),
		Research: func(_ context.Context, q, from string, _ func(research.Event)) (*research.Report, error) {
			froms, questions = append(froms, from), append(questions, q)
			dir := filepath.Join(runs, fmt.Sprintf("run%d", len(froms)))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			return &research.Report{Dir: dir, Markdown: "# R\n\nA report.\n"}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"", filepath.Join(runs, "run1"), "", ""}
	if fmt.Sprint(froms) != fmt.Sprint(want) {
		t.Fatalf("followed %q; want %q\n%s", froms, want, out.String())
	}
	if questions[2] != "What is beeswax?" {
		t.Fatalf("--new was kept in the question: %q", questions[2])
	}
	if !strings.Contains(out.String(), "usage: /deep-research [--new] <question>") ||
		!strings.Contains(out.String(), "Following up on "+filepath.Join(runs, "run1")) {
		t.Fatalf("output:\n%s", out.String())
	}
}
