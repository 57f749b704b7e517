package contextmgr

import (
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/mcptools"
)

func benchLazy() (agent.ToolsHook, agent.Tool) {
	l := mcptools.NewLazy(mcptools.LazyConfig{})
	return l, l.Tool()
}

// The seed's §2.4 scenario, plain and beside 300 deferred MCP tools in a 128K and a 32K window: the hybrid
// preset must beat both anchors on cost while every result reaches the model, everything stays recoverable and
// the planted facts stay in view.
func TestBenchTargets(t *testing.T) {
	rows, err := RunBench(t.Context(), BenchOptions{Dir: t.TempDir(), Lazy: benchLazy})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + FormatBenchTable(rows))
	type key struct{ w, n int }
	by := map[key]map[string]BenchRow{}
	for _, r := range rows {
		k := key{r.Window, r.MCPTools}
		if by[k] == nil {
			by[k] = map[string]BenchRow{}
		}
		by[k][r.Preset] = r
	}
	if len(by) != len(BenchCases()) {
		t.Fatalf("%d cases, want %d", len(by), len(BenchCases()))
	}
	for k, rs := range by {
		h, d, c := rs[PresetHybrid], rs[PresetDeepAgents], rs[PresetClaudeCode]
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
		if k.w >= BenchWindow && h.SummaryCalls != 0 {
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
		// The anchors behave as the seed describes: both keep every fact in view (nothing is filtered),
		// DeepAgents summarises, Claude Code clears unrecoverably.
		if d.FactRecall != 1 || c.FactRecall != 1 || d.SummaryCalls == 0 || c.RecoverableShare != 0 || c.Compactions == 0 {
			t.Errorf("%v: anchor rows look wrong: %+v %+v", k, d, c)
		}
	}
	// 300 deferred tools cost nothing in the requests: the MCP-heavy rows bill what the plain ones do, give or
	// take the tool_search schema.
	plain, heavy := by[key{BenchWindow, 0}][PresetHybrid], by[key{BenchWindow, BenchMCPTools}][PresetHybrid]
	if heavy.BilledInputTokens > plain.BilledInputTokens*11/10 {
		t.Errorf("with deferred tools hybrid bills %d, without %d", heavy.BilledInputTokens, plain.BilledInputTokens)
	}
}

// The scenario is honest: results have the promised size, every fact is planted once in its own result, and
// facts look like the filler (the same sentence forms about the same kind of settings).
func TestBenchScenario(t *testing.T) {
	tasks := benchTasks()
	if len(tasks) != BenchCalls {
		t.Fatalf("%d tasks", len(tasks))
	}
	for k, tk := range tasks {
		if n := len(tk.result); n < BenchResultChars || n > BenchResultChars+2_000 {
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
