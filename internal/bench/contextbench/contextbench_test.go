package contextbench

import (
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

// The heavy-MCP-traffic scenario, plain and beside 300 deferred MCP tools in a 128K and a 32K window: the hybrid
// preset must beat both anchors on cost while every result reaches the model, everything stays recoverable and
// the planted facts stay in view.
func TestBenchTargets(t *testing.T) {
	rows, err := Run(t.Context(), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + FormatTable(rows))
	type key struct{ w, n int }
	by := map[key]map[string]Row{}
	for _, r := range rows {
		k := key{r.Window, r.MCPTools}
		if by[k] == nil {
			by[k] = map[string]Row{}
		}
		by[k][r.Preset] = r
	}
	if len(by) != len(Cases()) {
		t.Fatalf("%d cases, want %d", len(by), len(Cases()))
	}
	for k, rs := range by {
		h, d, c := rs[contextmgr.PresetHybrid], rs[contextmgr.PresetDeepAgents], rs[contextmgr.PresetClaudeCode]
		if h.BilledInputTokens*2 > d.BilledInputTokens {
			t.Errorf("%v: hybrid bills %d, more than 50%% of deepagents' %d", k, h.BilledInputTokens, d.BilledInputTokens)
		}
		if h.BilledInputTokens*2 > c.BilledInputTokens {
			t.Errorf("%v: hybrid bills %d, more than 50%% of claude-code's %d", k, h.BilledInputTokens, c.BilledInputTokens)
		}
		if h.RecoverableShare != 1 || h.ResultsSeen != 1 {
			t.Errorf("%v: hybrid recoverable share %v, results seen %v", k, h.RecoverableShare, h.ResultsSeen)
		}
		if h.FactRecall < 0.95 {
			t.Errorf("%v: hybrid fact recall %v", k, h.FactRecall)
		}
		if k.w >= Window && h.SummaryCalls != 0 {
			t.Errorf("%v: hybrid made %d summary calls in the large window", k, h.SummaryCalls)
		}
		for _, r := range rs {
			if r.OverReserve != 0 || r.PeakPromptTokens > k.w {
				t.Errorf("%v %s: %d requests over the window minus the reserve, peak %d", k, r.Preset, r.OverReserve, r.PeakPromptTokens)
			}
			// Each result fits the window whole, so every preset shows every result at least once.
			if r.ResultsSeen != 1 {
				t.Errorf("%v %s: results seen %v", k, r.Preset, r.ResultsSeen)
			}
		}
		// The anchors behave as their designs do: both keep every fact in view (nothing is filtered),
		// DeepAgents summarises, Claude Code clears unrecoverably.
		if d.FactRecall != 1 || c.FactRecall != 1 || d.SummaryCalls == 0 || c.RecoverableShare != 0 || c.Compactions == 0 {
			t.Errorf("%v: anchor rows look wrong: %+v %+v", k, d, c)
		}
	}
	// 300 deferred tools cost nothing in the requests: the MCP-heavy rows bill what the plain ones do, give or
	// take the tool_search schema.
	plain, heavy := by[key{Window, 0}][contextmgr.PresetHybrid], by[key{Window, MCPToolCount}][contextmgr.PresetHybrid]
	if heavy.BilledInputTokens > plain.BilledInputTokens*11/10 {
		t.Errorf("with deferred tools hybrid bills %d, without %d", heavy.BilledInputTokens, plain.BilledInputTokens)
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
