package contextmgr

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/base/syncio"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

// handler returns a tool handler answering content, wrapped by the manager.
func wrapped(m *Manager, content string) agent.ToolHandler {
	return m.WrapTool(func(context.Context, *agent.State, llm.ToolCall) (agent.Result, error) {
		return agent.Result{Content: content}, nil
	})
}

// linesOf returns text of exactly chars characters made of 100-character lines.
func linesOf(chars int) string {
	var b strings.Builder
	for i := 0; b.Len() < chars; i++ {
		fmt.Fprintf(&b, "%-99s\n", fmt.Sprintf("line %d of a large MCP result", i+1))
	}
	return b.String()[:chars]
}

func TestPreviewGolden(t *testing.T) {
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("row %d", i))
	}
	lines[1] = strings.Repeat("é", 1_500) // clipped at 1,000 characters, not bytes
	lines[2] = strings.Repeat("x", 1_000) // exactly at the limit: kept whole
	got := Preview(strings.Join(lines, "\n")+"\n", "large_tool_results/call_1", 12_345)
	golden(t, "preview.golden", got)

	out := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(out) != 1+5+1+5 {
		t.Fatalf("preview has %d lines, want header + 5 + marker + 5", len(out))
	}
	if out[6] != "... [20 lines truncated] ..." {
		t.Errorf("marker line = %q", out[6])
	}
	if !strings.HasPrefix(out[1], "     1\trow 1") || !strings.HasPrefix(out[11], "    30\trow 30") {
		t.Errorf("numbering wrong: %q … %q", out[1], out[11])
	}
	if n := utf8.RuneCountInString(strings.SplitN(out[2], "\t", 2)[1]); n <= 1_000 || !strings.Contains(out[2], "[line clipped: 1,500 characters]") {
		t.Errorf("long line not clipped with a note: %d runes", n)
	}
	if strings.SplitN(out[3], "\t", 2)[1] != strings.Repeat("x", 1_000) {
		t.Errorf("a line of exactly 1,000 characters was altered")
	}
	// Ten lines or fewer: no truncation marker.
	if short := Preview("a\nb\nc\n", "p", 1); strings.Contains(short, "truncated") || !strings.Contains(short, "     3\tc") {
		t.Errorf("short preview = %q", short)
	}
}

func TestEvictionThresholdAndFile(t *testing.T) {
	m, ws := newManager(t, Config{GateTokens: -1})
	st := state(noCallModel(t, 128_000), "s", conversation(0, 0, 0))
	for _, tc := range []struct {
		chars int
		evict bool
	}{{20_000, false}, {20_001, true}} { // 5,000 tokens stays, 5,001 is evicted
		content := linesOf(tc.chars)
		if got := (tokens.Approx{}).Count(content); got != (tc.chars+3)/4 {
			t.Fatalf("setup: %d tokens", got)
		}
		id := fmt.Sprintf("call_%d", tc.chars)
		res, err := wrapped(m, content)(t.Context(), st, llm.ToolCall{ID: id, Name: "mcp_search"})
		if err != nil {
			t.Fatal(err)
		}
		if !tc.evict {
			if res.Content != content || res.Meta[metaPath] != "" {
				t.Errorf("%d chars: result was changed", tc.chars)
			}
			continue
		}
		p := path.Join(LargeResultsDir, id)
		if res.Meta[metaPath] != p {
			t.Errorf("meta path = %q, want %q", res.Meta[metaPath], p)
		}
		if readWS(t, ws, p) != content {
			t.Errorf("offloaded file does not hold the full result")
		}
		if !strings.Contains(res.Content, "saved at "+p) || !strings.Contains(res.Content, "read_file using offset and limit") ||
			!strings.Contains(res.Content, "... [191 lines truncated] ...") {
			t.Errorf("preview lacks path, how to read, or the truncation marker:\n%s", res.Content)
		}
	}
	if s := m.Stats(); s.Evicted != 1 || s.Gated != 0 {
		t.Errorf("stats = %+v", s)
	}
}

// In the hybrid preset a result over the eviction threshold with nothing relevant in it gets the eviction
// preview; one with relevant parts gets the gate.
func TestHybridGateOrEvict(t *testing.T) {
	m, _ := newManager(t, Config{})
	st := state(noCallModel(t, 128_000), "s", conversation(0, 0, 0))
	content := linesOf(24_000) // 6,000 tokens
	irrelevant, _ := wrapped(m, content)(t.Context(), st, llm.ToolCall{ID: "a", Name: "mcp", Arguments: `{"query":"zebra"}`})
	if !strings.HasPrefix(irrelevant.Content, "Tool result too large (6,000 tokens") || !strings.Contains(irrelevant.Content, "lines truncated") {
		t.Errorf("irrelevant large result should be previewed:\n%.300s", irrelevant.Content)
	}
	relevant, _ := wrapped(m, content)(t.Context(), st, llm.ToolCall{ID: "b", Name: "mcp", Arguments: `{"query":"line 120"}`})
	if !strings.Contains(relevant.Content, "[Relevance gate: showing") || !strings.Contains(relevant.Content, "line 120 of a large MCP result") {
		t.Errorf("relevant large result should be gated:\n%.300s", relevant.Content)
	}
	if s := m.Stats(); s.Evicted != 1 || s.Gated != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestUnsafeIDsAreHashed(t *testing.T) {
	m, ws := newManager(t, Config{GateTokens: -1, EvictTokens: 10})
	st := state(noCallModel(t, 128_000), "s", nil)
	for _, id := range []string{strings.Repeat("toolu_", 40), "../../escape", "call 1/2", ""} {
		res, err := wrapped(m, linesOf(400))(t.Context(), st, llm.ToolCall{ID: id, Name: "mcp"})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Meta[metaPath]
		name := strings.TrimPrefix(p, LargeResultsDir+"/")
		if !strings.HasPrefix(name, "id-") || len(name) != 35 || strings.ContainsAny(name, "/ .") {
			t.Errorf("id %q → %q, want a hashed name", id, p)
		}
		if readWS(t, ws, p) != linesOf(400) {
			t.Errorf("id %q: file missing", id)
		}
	}
	if SafeName("call_01") != "call_01" || SafeName("toolu_01A.b-c") != "toolu_01A.b-c" {
		t.Errorf("safe ids must be kept as they are")
	}
	if SafeName("a/b") == SafeName("a\\b") {
		t.Errorf("distinct ids must hash differently")
	}
}

func TestFileToolsAreExempt(t *testing.T) {
	m, ws := newManager(t, Config{ExemptTools: []string{"my_bounded"}})
	st := state(noCallModel(t, 128_000), "s", nil)
	big := linesOf(60_000)
	for _, name := range []string{"read_file", "grep", "ls", "glob", "write_file", "edit_file", "my_bounded"} {
		res, _ := wrapped(m, big)(t.Context(), st, llm.ToolCall{ID: "c_" + name, Name: name})
		if res.Content != big {
			t.Errorf("%s output was rewritten", name)
		}
	}
	if _, err := os.Stat(ws.Root() + "/" + LargeResultsDir); !os.IsNotExist(err) {
		t.Errorf("exempt tools must not offload anything: %v", err)
	}
	if got := BoundedNames(ws.Tools()); len(got) != 6 {
		t.Errorf("BoundedNames(file tools) = %v", got)
	}
}

// deepagentsjs #82: an evicted single enormous line read back with read_file must not be evicted again.
func TestNoEvictReadEvictLoop(t *testing.T) {
	for _, preset := range []string{PresetHybrid, PresetDeepAgents} {
		t.Run(preset, func(t *testing.T) {
			cfg, _ := Preset(preset)
			m, ws := newManager(t, cfg)
			st := state(noCallModel(t, 128_000), "s", conversation(0, 0, 0))
			line := strings.Repeat("lorem ipsum dolor sit amet ", 15_000) // one 405,000-character line
			res, err := wrapped(m, line)(t.Context(), st, llm.ToolCall{ID: "call_big", Name: "mcp_fetch", Arguments: `{"url":"x"}`})
			if err != nil {
				t.Fatal(err)
			}
			p := res.Meta[metaPath]
			if p == "" || (tokens.Approx{}).Count(res.Content) > 5_000 {
				t.Fatalf("the enormous line was not evicted/gated: %d tokens", (tokens.Approx{}).Count(res.Content))
			}
			var read agent.Tool
			for _, tl := range ws.Tools() {
				if tl.Spec().Name == "read_file" {
					read = tl
				}
			}
			h := m.WrapTool(func(ctx context.Context, _ *agent.State, call llm.ToolCall) (agent.Result, error) {
				return read.Run(ctx, json.RawMessage(call.Arguments))
			})
			args, _ := json.Marshal(map[string]any{"path": p, "offset": 1, "limit": 100})
			back, err := h(t.Context(), st, llm.ToolCall{ID: "call_read", Name: "read_file", Arguments: string(args)})
			if err != nil || back.IsError {
				t.Fatalf("read_file: %v %s", err, back.Content)
			}
			if back.Meta[metaPath] != "" || strings.Contains(back.Content, LargeResultsDir+"/call_read") {
				t.Errorf("read_file output was evicted again")
			}
			if !strings.Contains(back.Content, "line clipped") || (tokens.Approx{}).Count(back.Content) > 1_000 {
				t.Errorf("read_file did not clip the line: %d tokens", (tokens.Approx{}).Count(back.Content))
			}
			entries, _ := os.ReadDir(ws.Root() + "/" + LargeResultsDir)
			if len(entries) != 1 {
				t.Errorf("%d offloaded files, want 1", len(entries))
			}
		})
	}
}

func TestGateBoundaryAndFormat(t *testing.T) {
	m, ws := newManager(t, Config{})
	st := state(noCallModel(t, 128_000), "s", conversation(0, 0, 0))
	for _, tc := range []struct {
		chars int
		gated bool
	}{{8_000, false}, {8_001, true}} { // 2,000 tokens stays, 2,001 is gated
		content := linesOf(tc.chars)
		res, _ := wrapped(m, content)(t.Context(), st, llm.ToolCall{ID: fmt.Sprint("g", tc.chars), Name: "mcp", Arguments: `{"query":"line 7"}`})
		if gated := res.Content != content; gated != tc.gated {
			t.Errorf("%d chars: gated = %v", tc.chars, gated)
		}
		if tc.gated && readWS(t, ws, res.Meta[metaPath]) != content {
			t.Errorf("gate did not save the full result")
		}
	}
}

func gateFixture() (string, []string) {
	var paras []string
	for i := 0; i < 60; i++ {
		paras = append(paras, fmt.Sprintf("Paragraph %d reports the weather in district %d, the tram timetable and the results of the local football league.", i, i))
	}
	relevant := []string{
		"The zebra migration count this season reached 4,512 animals crossing at the northern ford.",
		"Rangers expect the zebra migration to return through the river valley in early March.",
	}
	paras[12] = relevant[0]
	paras[47] = relevant[1]
	return strings.Join(paras, "\n\n") + "\n", relevant
}

func TestGateKeepsRelevantChunksInOrder(t *testing.T) {
	content, relevant := gateFixture()
	out := Gate(tokens.Approx{}, GateInput{Request: "Tell me about wildlife.", Arguments: `{"query":"zebra migration count"}`,
		Content: content, Path: "large_tool_results/call_9", Budget: 120, ChunkChars: 300})
	golden(t, "gate.golden", out)
	i0, i1 := strings.Index(out, relevant[0]), strings.Index(out, relevant[1])
	if i0 < 0 || i1 < 0 || i0 > i1 {
		t.Fatalf("relevant passages missing or out of order:\n%s", out)
	}
	if !strings.Contains(out[i0:i1], "\n[…]\n") {
		t.Errorf("no […] between non-adjacent chunks")
	}
	if !strings.HasSuffix(out, "Full result: large_tool_results/call_9 — read it with read_file (offset/limit) or grep for anything not shown.]") {
		t.Errorf("the full result's path must come last:\n%s", out)
	}
	body := out[:strings.LastIndex(out, "\n[Relevance gate:")]
	if n := (tokens.Approx{}).Count(strings.ReplaceAll(body, "\n[…]\n", "")); n > 120 {
		t.Errorf("inline chunks use %d tokens, budget 120", n)
	}
	if strings.Count(out, "football") > 2 {
		t.Errorf("too much irrelevant text kept:\n%s", out)
	}
	// Nothing relevant: the beginning is kept, contiguously.
	none := Gate(tokens.Approx{}, GateInput{Arguments: `{"query":"quantum chromodynamics"}`, Content: content, Path: "p", Budget: 120, ChunkChars: 300})
	if !strings.HasPrefix(none, "Paragraph 0 ") || strings.Contains(none, "[…]\nParagraph") || !strings.Contains(none, "nothing matched") {
		t.Errorf("fallback should show the beginning:\n%s", none)
	}
}

func TestOutputCapClaudeCode(t *testing.T) {
	cfg, _ := Preset(PresetClaudeCode)
	m, ws := newManager(t, cfg)
	st := state(noCallModel(t, 200_000), "s", nil)
	exact := linesOf(100_000) // 25,000 tokens
	if res, _ := wrapped(m, exact)(t.Context(), st, llm.ToolCall{ID: "a", Name: "mcp"}); res.Content != exact {
		t.Errorf("a result at the cap was cut")
	}
	over := linesOf(100_004) // 25,001 tokens
	res, _ := wrapped(m, over)(t.Context(), st, llm.ToolCall{ID: "b", Name: "mcp"})
	if !strings.HasSuffix(res.Content, "[output truncated: the result had 25,001 tokens; tool output is capped at 25,000 tokens. Full result: large_tool_results/b — read it with read_file (offset/limit) or grep.]") {
		t.Errorf("cap marker missing: %q", res.Content[len(res.Content)-200:])
	}
	if !strings.HasPrefix(over, strings.SplitN(res.Content, "\n[output truncated", 2)[0]) {
		t.Errorf("capped output is not a prefix of the original")
	}
	// Unlike Claude Code, the capped result is saved first: the model is told where the rest is.
	if got := readWS(t, ws, "large_tool_results/b"); got != over || res.Meta[metaPath] != "large_tool_results/b" {
		t.Errorf("capped result not saved whole (meta %v)", res.Meta)
	}
}

func TestOffloadQuota(t *testing.T) {
	logs := &syncio.Buffer{}
	m, ws := newManager(t, Config{GateTokens: -1, EvictTokens: 100, OffloadQuota: 2_500,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	st := state(noCallModel(t, 128_000), "s", nil)
	base := time.Now().Add(-time.Hour)
	for k := 1; k <= 3; k++ {
		id := fmt.Sprint("call_", k)
		if _, err := wrapped(m, linesOf(1_000))(t.Context(), st, llm.ToolCall{ID: id, Name: "mcp"}); err != nil {
			t.Fatal(err)
		}
		abs, _ := ws.Resolve(path.Join(LargeResultsDir, id))
		// Distinct modification times make "oldest" unambiguous whatever the filesystem's clock resolution.
		if err := os.Chtimes(abs, base.Add(time.Duration(k)*time.Minute), base.Add(time.Duration(k)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ws.ReadFile(path.Join(LargeResultsDir, "call_1")); !os.IsNotExist(err) {
		t.Errorf("the oldest offloaded file should be gone: %v", err)
	}
	for _, id := range []string{"call_2", "call_3"} {
		if readWS(t, ws, path.Join(LargeResultsDir, id)) != linesOf(1_000) {
			t.Errorf("%s was removed", id)
		}
	}
	if !strings.Contains(logs.String(), "removed oldest offloaded tool result") || !strings.Contains(logs.String(), "large_tool_results/call_1") {
		t.Errorf("removal not logged: %s", logs.String())
	}
	if m.Stats().QuotaRemovals != 1 {
		t.Errorf("quota removals = %d", m.Stats().QuotaRemovals)
	}
}
