package contextmgr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/workspace"
)

func TestReportByCategory(t *testing.T) {
	proj := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "AGENTS.md"), []byte("Use British spelling."), 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ := newManager(t, Config{ProjectDirs: []string{proj}})
	st := state(noCallModel(t, 100_000), "s", conversation(3, 4_000, 0))
	st.Tools = []llm.ToolSpec{{Name: "search", Description: "Search things.", Schema: []byte(`{"type":"object"}`)}}
	if err := m.BeforeHistory(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	r := m.Report(st)
	want := []string{CatSystem, CatMemory, CatToolSchemas, CatMessages, CatToolResults}
	sum := 0
	for i, c := range r.Categories {
		if c.Name != want[i] {
			t.Fatalf("category %d = %s, want %s", i, c.Name, want[i])
		}
		if c.Tokens <= 0 {
			t.Errorf("%s has no tokens", c.Name)
		}
		if c.Share != float64(c.Tokens)/100_000 {
			t.Errorf("%s share %v", c.Name, c.Share)
		}
		sum += c.Tokens
	}
	c := tokens.Approx{}
	if total := tokens.CountMessages(c, st.Messages) + tokens.CountTools(c, st.Tools); r.Total != sum || r.Total != total {
		t.Errorf("total %d, categories %d, prompt %d", r.Total, sum, total)
	}
	if r.Categories[4].Tokens < 3*1_000 {
		t.Errorf("tool results undercounted: %d", r.Categories[4].Tokens)
	}
	text := r.String()
	for _, s := range append(want, "Context: ", "of 100,000 tokens", "compaction above 80,000", "free") {
		if !strings.Contains(text, s) {
			t.Errorf("report text lacks %q:\n%s", s, text)
		}
	}
}

func TestPresets(t *testing.T) {
	if _, err := Preset("gemini"); err == nil {
		t.Error("unknown preset accepted")
	}
	for _, tc := range []struct {
		name                    string
		trigger                 float64
		clearing                string
		evict, gate, cap, trunc int
		history, reasoning      bool
	}{
		{PresetHybrid, 0.80, ClearRecoverable, 5_000, 2_000, 0, 2_000, true, false},
		{PresetDeepAgents, 0.85, ClearOff, 20_000, -1, 0, 2_000, true, true},
		{PresetClaudeCode, 0.95, ClearUnrecoverable, -1, -1, 25_000, -1, false, false},
	} {
		cfg, err := Preset(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := newManager(t, cfg)
		c := m.Config()
		if c.Trigger != tc.trigger || c.Clearing != tc.clearing || c.EvictTokens != tc.evict || c.GateTokens != tc.gate ||
			c.OutputCapTokens != tc.cap || c.ArgTruncateChars != tc.trunc || c.NoHistory == tc.history || c.KeepReasoning != tc.reasoning ||
			c.KeepShare != 0.10 || c.Preset != tc.name {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
	if _, err := New(nil, Config{}); err == nil {
		t.Error("nil workspace accepted")
	}
	m, _ := newManager(t, Config{})
	for _, bad := range []Config{{Trigger: 1.5}, {Clearing: "sometimes"}} {
		bad.NoMemory = true
		if _, err := New(m.ws, bad); err == nil {
			t.Errorf("bad config %+v accepted", bad)
		}
	}
}

func TestReportCountsOnlyToolsSentAndShowsDeferredSaving(t *testing.T) {
	ws, err := workspace.New(t.TempDir(), workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(ws, Config{NoMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	big := llm.ToolSpec{Name: "mcp__x__big", Description: strings.Repeat("a long description ", 200), Schema: []byte(`{"type":"object"}`)}
	small := llm.ToolSpec{Name: "read_file", Description: "Read a file.", Schema: []byte(`{"type":"object"}`)}
	st := &agent.State{SessionID: "s1", Model: scripted.New(llm.Info{}, nil), Tools: []llm.ToolSpec{small, big}}
	before := m.Report(st)
	// The next request, from which lazy schemas removed the big tool.
	st.RequestTools = []llm.ToolSpec{small}
	after := m.Report(st)
	if after.DeferredSchemas == 0 || after.Total >= before.Total {
		t.Fatalf("deferred=%d, total before %d after %d: the hidden schema must move out of the total", after.DeferredSchemas, before.Total, after.Total)
	}
	if before.Total-after.Total != after.DeferredSchemas {
		t.Errorf("total dropped by %d, deferred counts %d", before.Total-after.Total, after.DeferredSchemas)
	}
	if !strings.Contains(after.String(), "tokens not sent") {
		t.Errorf("report text does not show the saving:\n%s", after.String())
	}
}

// Lazy schemas leave tool_search out of the request when nothing is deferred. That is not a saving to report:
// with no other tool hidden, /context must not claim deferred schemas.
func TestReportHiddenToolSearchIsNotDeferred(t *testing.T) {
	ws, err := workspace.New(t.TempDir(), workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(ws, Config{NoMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	search := llm.ToolSpec{Name: "tool_search", Description: "Find tools that are available but not yet loaded.", Schema: []byte(`{"type":"object"}`)}
	small := llm.ToolSpec{Name: "read_file", Description: "Read a file.", Schema: []byte(`{"type":"object"}`)}
	big := llm.ToolSpec{Name: "mcp__x__big", Description: strings.Repeat("a long description ", 50), Schema: []byte(`{"type":"object"}`)}
	for _, tc := range []struct {
		name     string
		tools    []llm.ToolSpec
		sent     []llm.ToolSpec
		deferred bool
	}{
		{"nothing deferred, tool_search hidden", []llm.ToolSpec{small, search}, []llm.ToolSpec{small}, false},
		{"an MCP tool deferred behind tool_search", []llm.ToolSpec{small, search, big}, []llm.ToolSpec{small, search}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &agent.State{SessionID: tc.name, Model: scripted.New(llm.Info{}, nil), Tools: tc.tools, RequestTools: tc.sent}
			r := m.Report(st)
			if got := r.DeferredSchemas > 0; got != tc.deferred {
				t.Errorf("deferred schemas = %d, want deferred %v", r.DeferredSchemas, tc.deferred)
			}
			if got := strings.Contains(r.String(), "Deferred tool schemas"); got != tc.deferred {
				t.Errorf("report mentions deferred schemas = %v, want %v:\n%s", got, tc.deferred, r.String())
			}
		})
	}
}
