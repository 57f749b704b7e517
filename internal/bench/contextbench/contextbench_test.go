package contextbench

import (
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

// The heavy-MCP-traffic scenario: the hybrid preset must beat both anchors on cost while keeping everything
// recoverable and the planted facts in view.
func TestBenchTargets(t *testing.T) {
	rows, err := Run(t.Context(), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + FormatTable(rows))
	by := map[string]Row{}
	for _, r := range rows {
		by[r.Preset] = r
	}
	h, d, c := by[contextmgr.PresetHybrid], by[contextmgr.PresetDeepAgents], by[contextmgr.PresetClaudeCode]
	if h.BilledInputTokens*2 > d.BilledInputTokens {
		t.Errorf("hybrid bills %d, more than 50%% of deepagents' %d", h.BilledInputTokens, d.BilledInputTokens)
	}
	if h.BilledInputTokens*5 > c.BilledInputTokens*4 {
		t.Errorf("hybrid bills %d, more than 80%% of claude-code's %d", h.BilledInputTokens, c.BilledInputTokens)
	}
	if h.RecoverableShare != 1 {
		t.Errorf("hybrid recoverable share %v", h.RecoverableShare)
	}
	if h.FactRecall < 0.95 {
		t.Errorf("hybrid fact recall %v", h.FactRecall)
	}
	// The anchors behave as their designs intend: both keep every fact in view (nothing is filtered), DeepAgents
	// summarises, Claude Code clears unrecoverably.
	if d.FactRecall != 1 || c.FactRecall != 1 || d.SummaryCalls == 0 || c.RecoverableShare != 0 || c.Compactions == 0 {
		t.Errorf("anchor rows look wrong: %+v %+v", d, c)
	}
	for _, r := range rows {
		if r.PeakPromptTokens > Window {
			t.Errorf("%s peak %d over the window", r.Preset, r.PeakPromptTokens)
		}
	}
}

// The scenario is honest: results have the promised size, every fact is planted once in its own result, and
// facts look like the filler (the same sentence forms about the same kind of settings).
func TestBenchScenario(t *testing.T) {
	tasks := benchTasks()
	if len(tasks) != Calls {
		t.Fatalf("%d tasks", len(tasks))
	}
	for k, tk := range tasks {
		if n := len(tk.result); n < ResultChars || n > ResultChars+2_000 {
			t.Errorf("task %d: %d characters", k, n)
		}
		if n := (tokens.Approx{}).Count(tk.result); n < 9_000 || n > 11_000 {
			t.Errorf("task %d: %d tokens", k, n)
		}
		for _, f := range tk.facts {
			if strings.Count(tk.result, f) != 1 {
				t.Errorf("task %d: fact %q planted %d times", k, f, strings.Count(tk.result, f))
			}
			for j, other := range tasks {
				if j != k && strings.Contains(other.result, f) {
					t.Errorf("fact of task %d appears in task %d", k, j)
				}
			}
			if strings.Index(tk.result, f) < 2_000 || strings.Index(tk.result, f) > len(tk.result)-2_000 {
				t.Errorf("task %d: fact at the edge of the result, where a preview would show it", k)
			}
		}
		// The subject of the query also appears in filler, and so do the attributes asked about.
		subject := strings.SplitN(tk.query, " ", 3)
		if strings.Count(tk.result, subject[0]+" "+subject[1]) <= len(tk.facts) {
			t.Errorf("task %d: the subject appears only in the facts; the gate would have it too easy", k)
		}
	}
}
