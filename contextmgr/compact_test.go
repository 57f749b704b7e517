package contextmgr

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

func TestTier1RecoverableClearing(t *testing.T) {
	m, ws := newManager(t, Config{Window: 10_000, OutputReserve: 1_000})
	ms := conversation(6, 6_000, 0) // 6 × 1,500 tokens > 8,000
	orig := llm.CloneMessages(ms)
	st := state(noCallModel(t, 10_000), "s1", ms)
	if err := m.BeforeHistory(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	checkPairs(t, st.Messages)
	if len(st.Messages) != len(orig) {
		t.Fatalf("tier 1 must not remove messages: %d → %d", len(orig), len(st.Messages))
	}
	for i, msg := range st.Messages {
		if msg.Role != llm.RoleTool {
			continue
		}
		n := 0
		fmt.Sscanf(msg.ToolCallID, "call_%d", &n)
		p := path.Join(LargeResultsDir, msg.ToolCallID)
		if n <= 3 {
			if want := "[tool result cleared — full text at " + p + "]"; msg.Content != want {
				t.Errorf("%s: %q, want %q", msg.ToolCallID, msg.Content, want)
			}
			if readWS(t, ws, p) != orig[i].Content {
				t.Errorf("%s: the cleared result is not on disk", msg.ToolCallID)
			}
		} else if msg.Content != orig[i].Content {
			t.Errorf("%s is among the 3 most recent calls and must stay", msg.ToolCallID)
		}
	}
	if got := m.promptTokens(st); got >= 6_000 {
		t.Errorf("after tier 1 the prompt has %d tokens; it should be under 0.60 of the window", got)
	}
	if s := m.Stats(); s.Compactions != 1 || s.SummaryCalls != 0 || s.Cleared != 3 {
		t.Errorf("stats = %+v (tier 1 alone should have sufficed)", s)
	}
	// Below the trigger nothing happens.
	before := llm.CloneMessages(st.Messages)
	if err := m.BeforeHistory(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	if len(before) != len(st.Messages) || m.Stats().Compactions != 1 {
		t.Errorf("compaction ran under the trigger")
	}
}

func TestTier1Unrecoverable(t *testing.T) {
	cfg, _ := Preset(PresetClaudeCode)
	cfg.Window, cfg.OutputReserve = 10_000, 400
	m, ws := newManager(t, cfg)
	st := state(noCallModel(t, 10_000), "s", conversation(7, 6_000, 0))
	if err := m.BeforeHistory(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	cleared := 0
	for _, msg := range st.Messages {
		if msg.Content == "[Old tool result content cleared]" {
			cleared++
		}
	}
	if cleared != 4 {
		t.Errorf("cleared %d results, want the 4 older than the 3 most recent calls", cleared)
	}
	if _, err := ws.ReadFile(path.Join(LargeResultsDir, "call_1")); err == nil {
		t.Errorf("claude-code's clearing must not write files")
	}
	checkPairs(t, st.Messages)
}

const partialSummary = "## Summary\nSearched four topics; call 4 found the number 42.\n\n**Next steps:** read call 5."

func TestTier2SummaryAndHistory(t *testing.T) {
	m, ws := newManager(t, Config{Window: 10_000, OutputReserve: 1_000})
	model := summaryModel(10_000, partialSummary)
	ms := conversation(6, 10_000, 0)
	// A second, later user message: the first must survive verbatim inside the summary.
	ms = append(ms[:2], append([]llm.Message{{Role: llm.RoleUser, Content: "Also keep the units in metres."}}, ms[2:]...)...)
	ms[1], ms[2] = ms[2], ms[1] // "Also keep…" first, the request of the task last of the two
	ms[2].Content = "Find the answer to the test question."
	ms[1].Content = "Earlier instruction: keep the units in metres."
	ms = append(ms, llm.Message{Role: llm.RoleUser, Content: "Now summarise what call 6 found."})
	st := state(model, "sess-A", ms)
	if err := m.BeforeHistory(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	checkPairs(t, st.Messages)
	if m.Stats().SummaryCalls != 1 {
		t.Fatalf("summary calls = %d", m.Stats().SummaryCalls)
	}
	if st.Messages[0].Content != "You are a test agent." || !st.Messages[0].Pinned {
		t.Errorf("the system prompt must stay first and pinned")
	}
	sum := st.Messages[1]
	if kindOf(sum) != kindSummary || sum.Role != llm.RoleUser {
		t.Fatalf("message 1 is not the summary: %+v", sum)
	}
	golden(t, "summary.golden", sum.Content)
	for _, sec := range SummarySections {
		if !strings.Contains(sum.Content, "\n"+sec+"\n") {
			t.Errorf("summary lacks section %s", sec)
		}
	}
	if !strings.Contains(sum.Content, "SESSION INTENT\nNone") || !strings.Contains(sum.Content, "ARTIFACTS\nNone") {
		t.Errorf("empty sections must say None:\n%s", sum.Content)
	}
	for _, u := range []string{"Earlier instruction: keep the units in metres.", "Find the answer to the test question."} {
		if !strings.Contains(sum.Content, u) {
			t.Errorf("user message %q lost", u)
		}
	}
	if last := st.Messages[len(st.Messages)-1]; last.Content != "Now summarise what call 6 found." {
		t.Errorf("the latest user request must be kept verbatim, got %q", last.Content)
	}
	hist := historyPath("sess-A")
	if !strings.Contains(sum.Content, hist) {
		t.Errorf("summary does not name the history file %s", hist)
	}
	first := readWS(t, ws, hist)
	for _, want := range []string{"# Conversation history of session sess-A", "[tool result cleared — full text at large_tool_results/call_1]", "result of call 4", "result of call 5", "Earlier instruction"} {
		if !strings.Contains(first, want) {
			t.Errorf("history lacks %q", want)
		}
	}

	// A second compaction appends; it does not overwrite.
	for k := 7; k <= 10; k++ {
		id := fmt.Sprint("call_", k)
		st.Messages = append(st.Messages,
			llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "search", Arguments: "{}"}}},
			llm.Message{Role: llm.RoleTool, ToolCallID: id, ToolName: "search", Content: resultText(k, 10_000)})
	}
	checkPairs(t, st.Messages)
	res, err := m.Compact(t.Context(), st, "keep the numbers")
	if err != nil {
		t.Fatal(err)
	}
	second := readWS(t, ws, hist)
	if !strings.HasPrefix(second, first) || strings.Count(second, "## Compacted into a summary") != 2 || !strings.Contains(second, "### earlier summary") {
		t.Errorf("history was not appended to")
	}
	if res.Summarized == 0 || res.HistoryPath != hist || !strings.Contains(res.Line, "tier 2 summarised") {
		t.Errorf("result = %+v", res)
	}
	reqs := model.Requests()
	if !strings.Contains(reqs[len(reqs)-1].Messages[1].Content, "keep the numbers") {
		t.Errorf("manual instructions did not reach the summarizer")
	}
	sum2 := st.Messages[1]
	if !strings.Contains(sum2.Content, "Earlier instruction: keep the units in metres.") {
		t.Errorf("earlier user messages must be carried into the next summary")
	}
	checkPairs(t, st.Messages)
}

func TestNormalizeSummary(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "SESSION INTENT\nNone\n\nSUMMARY\nNone\n\nARTIFACTS\nNone\n\nNEXT STEPS\nNone"},
		{"just prose", "SESSION INTENT\nNone\n\nSUMMARY\njust prose\n\nARTIFACTS\nNone\n\nNEXT STEPS\nNone"},
		{"**Session intent:** find X\n# ARTIFACTS\nnone.\nNEXT STEPS:\n1. a", "SESSION INTENT\nfind X\n\nSUMMARY\nNone\n\nARTIFACTS\nNone\n\nNEXT STEPS\n1. a"},
	} {
		if got := NormalizeSummary(tc.in); got != tc.want {
			t.Errorf("NormalizeSummary(%q) =\n%s\nwant\n%s", tc.in, got, tc.want)
		}
	}
}

// DeepAgents #5913: the summarizer must never be sent more than its own window.
func TestSummarizerInputTrimmedToItsWindow(t *testing.T) {
	small := summaryModel(4_000, "SUMMARY\nCondensed.")
	m, _ := newManager(t, Config{Window: 100_000, Summarizer: small})
	st := state(noCallModel(t, 100_000), "s", conversation(20, 8_000, 3))
	if _, err := m.Compact(t.Context(), st, ""); err != nil {
		t.Fatal(err)
	}
	reqs := small.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d summary requests", len(reqs))
	}
	if n := tokens.CountRequest(tokens.Approx{}, reqs[0]); n > 4_000 {
		t.Errorf("summarizer request has %d tokens, window 4,000", n)
	}
	if !strings.Contains(reqs[0].Messages[1].Content, "Find the answer to the test question.") {
		t.Errorf("the user's request must survive trimming")
	}
	if !strings.Contains(st.Messages[1].Content, "Condensed.") {
		t.Errorf("the model's summary was not used: %s", st.Messages[1].Content)
	}
	checkPairs(t, st.Messages)
}

func TestTier3DropsOldestUnpinned(t *testing.T) {
	m, ws := newManager(t, Config{Window: 10_000, OutputReserve: 1_000, Clearing: ClearOff, NoSummary: true})
	st := state(noCallModel(t, 10_000), "s3", conversation(8, 6_000, 3))
	if err := m.BeforeHistory(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	checkPairs(t, st.Messages)
	if n := m.promptTokens(st); n > 8_000 {
		t.Errorf("prompt still %d tokens after tier 3", n)
	}
	if !st.Messages[0].Pinned || st.Messages[1].Content != "Find the answer to the test question." {
		t.Errorf("pinned system prompt or the user request was dropped")
	}
	if m.Stats().Dropped == 0 {
		t.Fatal("nothing dropped")
	}
	if h := readWS(t, ws, historyPath("s3")); !strings.Contains(h, "Dropped to fit the window") || !strings.Contains(h, "result of call 1") {
		t.Errorf("dropped messages are not on disk")
	}
}

func TestToolPairsSurviveEveryTier(t *testing.T) {
	dd, _ := Preset(PresetDeepAgents)
	cc, _ := Preset(PresetClaudeCode)
	for _, tc := range []struct {
		name string
		cfg  Config
		op   string
	}{
		{"tier1", Config{}, "auto"},
		{"tier2", Config{Clearing: ClearOff}, "auto"},
		{"tier3", Config{Clearing: ClearOff, NoSummary: true}, "auto"},
		{"deepagents", dd, "auto"},
		{"claude-code", cc, "auto"},
		{"overflow", Config{}, "overflow"},
		{"manual", Config{}, "manual"},
		{"keep-all-tool-calls", Config{KeepToolCalls: 50, KeepShare: 0.5}, "auto"},
	} {
		for _, parallel := range []int{0, 1, 2} {
			t.Run(fmt.Sprint(tc.name, "/", parallel), func(t *testing.T) {
				cfg := tc.cfg
				cfg.Window, cfg.OutputReserve = 12_000, 1_000
				m, _ := newManager(t, cfg)
				st := state(summaryModel(12_000, "SUMMARY\nok"), "p", conversation(9, 6_000, parallel))
				var err error
				switch tc.op {
				case "auto":
					err = m.BeforeHistory(t.Context(), st)
				case "overflow":
					err = m.OnOverflow(t.Context(), st, &llm.ContextLengthError{})
				case "manual":
					_, err = m.Compact(t.Context(), st, "")
				}
				if err != nil {
					t.Fatal(err)
				}
				if m.Stats().Compactions == 0 {
					t.Fatal("no compaction happened")
				}
				checkPairs(t, st.Messages)
				if tc.op == "auto" && m.promptTokens(st) > m.budgetFor(st.Model).limit {
					t.Errorf("prompt %d over the trigger after compaction", m.promptTokens(st))
				}
			})
		}
	}
}

func TestArgumentTruncation(t *testing.T) {
	long := func(n int) string { return strings.Repeat("ab", n)[:n] }
	args := func(fields map[string]string) string { b, _ := json.Marshal(fields); return string(b) }
	old := []llm.ToolCall{
		{ID: "w2000", Name: "write_file", Arguments: args(map[string]string{"path": "a.txt", "content": long(2_000)})},
		{ID: "w2001", Name: "write_file", Arguments: args(map[string]string{"path": "b.txt", "content": long(2_001)})},
		{ID: "e2001", Name: "edit_file", Arguments: args(map[string]string{"path": "c.txt", "old_string": "x", "new_string": long(2_001)})},
		{ID: "s5000", Name: "search", Arguments: args(map[string]string{"q": long(5_000)})},
	}
	ms := []llm.Message{{Role: llm.RoleSystem, Content: "sys", Pinned: true}, {Role: llm.RoleUser, Content: "write files"}}
	for _, c := range old {
		ms = append(ms, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{c}}, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: "ok"})
	}
	for i := range 8 {
		ms = append(ms, llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprint("thinking ", i)})
	}
	recent := llm.ToolCall{ID: "recent", Name: "write_file", Arguments: args(map[string]string{"path": "d.txt", "content": long(3_000)})}
	ms = append(ms, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{recent}}, llm.Message{Role: llm.RoleTool, ToolCallID: "recent", ToolName: "write_file", Content: "ok"})
	m, _ := newManager(t, Config{})
	st := state(noCallModel(t, 128_000), "s", ms)
	if err := m.BeforeHistory(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, msg := range st.Messages {
		for _, c := range msg.ToolCalls {
			var f map[string]string
			if err := json.Unmarshal([]byte(c.Arguments), &f); err != nil {
				t.Fatalf("%s: arguments no longer JSON: %v", c.ID, err)
			}
			got[c.ID] = f
		}
	}
	want := long(20) + "...(argument truncated)"
	if got["w2000"]["content"] != long(2_000) {
		t.Errorf("2,000 characters must stay")
	}
	if got["w2001"]["content"] != want || got["w2001"]["path"] != "b.txt" {
		t.Errorf("2,001 characters: %q", got["w2001"]["content"])
	}
	if got["e2001"]["new_string"] != want || got["e2001"]["old_string"] != "x" {
		t.Errorf("edit_file new_string: %q", got["e2001"]["new_string"])
	}
	if got["s5000"]["q"] != long(5_000) {
		t.Errorf("other tools' arguments must stay")
	}
	if got["recent"]["content"] != long(3_000) {
		t.Errorf("arguments inside the kept window must stay")
	}
	if TruncateArguments("{not json", 10) != "{not json" {
		t.Errorf("malformed arguments must be left alone")
	}
}

func TestOldReasoningDropped(t *testing.T) {
	m, _ := newManager(t, Config{})
	req := &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "q"},
		{Role: llm.RoleAssistant, Reasoning: []llm.Reasoning{{Text: "old"}}, ToolCalls: []llm.ToolCall{{ID: "1", Name: "t"}}},
		{Role: llm.RoleTool, ToolCallID: "1", Content: "r"},
		{Role: llm.RoleAssistant, Reasoning: []llm.Reasoning{{Text: "older turn 2"}}, Content: "a"},
		{Role: llm.RoleUser, Content: "q2"},
		{Role: llm.RoleAssistant, Reasoning: []llm.Reasoning{{Text: "latest", Signature: "sig"}}, ToolCalls: []llm.ToolCall{{ID: "2", Name: "t"}}},
		{Role: llm.RoleTool, ToolCallID: "2", Content: "r"},
	}}
	if err := m.BeforeRequest(t.Context(), nil, req); err != nil {
		t.Fatal(err)
	}
	if req.Messages[1].Reasoning != nil || req.Messages[3].Reasoning != nil {
		t.Errorf("old reasoning kept")
	}
	if len(req.Messages[5].Reasoning) != 1 || req.Messages[5].Reasoning[0].Signature != "sig" {
		t.Errorf("the latest assistant turn's reasoning must stay intact")
	}
	dd, _ := Preset(PresetDeepAgents)
	keep, _ := newManager(t, dd)
	req.Messages[1].Reasoning = []llm.Reasoning{{Text: "old"}}
	_ = keep.BeforeRequest(t.Context(), nil, req)
	if req.Messages[1].Reasoning == nil {
		t.Errorf("deepagents keeps reasoning")
	}
}

// A provider's context-length error leads to compaction and one successful retry.
func TestOverflowCompactsAndRetries(t *testing.T) {
	var mu sync.Mutex
	var prompts []int
	model := scripted.New(llm.Info{Name: "scripted", ContextWindow: 3_000}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Messages[0].Content == SummarizerPrompt {
			return scripted.Reply("SUMMARY\nEarlier calls found nothing useful."), nil
		}
		mu.Lock()
		prompts = append(prompts, tokens.CountRequest(tokens.Approx{}, req))
		mu.Unlock()
		return scripted.Reply("final answer"), nil
	})
	// The manager believes the window is much larger (an unknown local model), so only the provider's error
	// reveals the overflow.
	m, _ := newManager(t, Config{Window: 100_000})
	var events []agent.Event
	ag, err := agent.New(agent.Config{Model: model, System: "You are a test agent.", Middleware: []agent.Middleware{m},
		Observer: func(e agent.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	ag.State().Messages = conversation(8, 2_000, 0) // about 4,000 tokens
	answer, err := ag.Run(t.Context(), "What did you find?")
	if err != nil {
		t.Fatalf("run died of overflow: %v", err)
	}
	if answer != "final answer" {
		t.Errorf("answer = %q", answer)
	}
	if model.Calls() < 2 || len(prompts) != 1 || prompts[0] > 3_000 {
		t.Errorf("calls = %d, successful prompts = %v", model.Calls(), prompts)
	}
	var sawErr, sawCompaction bool
	for _, e := range events {
		sawErr = sawErr || (e.Kind == agent.EventError && strings.Contains(e.Err, "context length"))
		sawCompaction = sawCompaction || (e.Kind == agent.EventCompaction && strings.Contains(e.Text, "context compacted (overflow"))
	}
	if !sawErr || !sawCompaction {
		t.Errorf("events: error %v, compaction %v", sawErr, sawCompaction)
	}
	checkPairs(t, ag.State().Messages)
}

// Parallel subagents in one workspace each get their own history file (DeepAgents wrote one per thread and the
// subagents overwrote each other).
func TestParallelSubagentsHaveOwnHistory(t *testing.T) {
	m1, ws := newManager(t, Config{Window: 6_000, OutputReserve: 500, Clearing: ClearOff, GateTokens: -1, EvictTokens: -1})
	m2, err := New(ws, m1.Config())
	if err != nil {
		t.Fatal(err)
	}
	run := func(m *Manager, session, word string) error {
		calls := 0
		var mu sync.Mutex
		model := scripted.New(llm.Info{Name: "scripted", ContextWindow: 6_000}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
			if req.Messages[0].Content == SummarizerPrompt {
				return scripted.Reply("SUMMARY\nworked on " + word), nil
			}
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls <= 8 {
				return scripted.Reply("", llm.ToolCall{ID: fmt.Sprintf("call_%d", calls), Name: "fetch", Arguments: fmt.Sprintf(`{"n":%d}`, calls)}), nil
			}
			return scripted.Reply("done " + word), nil
		})
		fetch := agent.NewTool("fetch", "fetch", func(_ context.Context, in struct {
			N int `json:"n"`
		}) (string, error) {
			return strings.Repeat(fmt.Sprintf("%s result %d. ", word, in.N), 250), nil
		})
		ag, err := agent.New(agent.Config{Model: model, Tools: []agent.Tool{fetch}, Middleware: []agent.Middleware{m}, SessionID: session})
		if err != nil {
			return err
		}
		_, err = ag.Run(t.Context(), "research "+word)
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = run(m1, "sub-alpha", "alpha") }()
	go func() { defer wg.Done(); errs[1] = run(m2, "sub-beta", "beta") }()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	a, b := readWS(t, ws, historyPath("sub-alpha")), readWS(t, ws, historyPath("sub-beta"))
	if !strings.Contains(a, "alpha result 1.") || strings.Contains(a, "beta") {
		t.Errorf("alpha's history is wrong")
	}
	if !strings.Contains(b, "beta result 1.") || strings.Contains(b, "alpha") {
		t.Errorf("beta's history is wrong")
	}
	if m1.Stats().SummaryCalls == 0 || m2.Stats().SummaryCalls == 0 {
		t.Errorf("both subagents should have summarised")
	}
}

func TestFitTranscriptLeavesOutOldestButKeepsUsers(t *testing.T) {
	ms := conversation(100, 3_000, 0)
	ms = append(ms, llm.Message{Role: llm.RoleUser, Content: "second request, verbatim"})
	out := FitTranscript(tokens.Approx{}, ms, 1_000)
	if n := (tokens.Approx{}).Count(out); n > 1_000 {
		t.Errorf("transcript has %d tokens, limit 1,000", n)
	}
	for _, want := range []string{"earlier messages were left out", "Find the answer to the test question.", "second request, verbatim", "result of call 100"} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	if strings.Contains(out, "result of call 1:") {
		t.Errorf("the oldest results should be left out first")
	}
	if small := FitTranscript(tokens.Approx{}, ms[:4], 10_000); !strings.Contains(small, "result of call 1: some text\nresult of call 1") {
		t.Errorf("a transcript that fits must not be clipped")
	}
}

// A second /compact with nothing new since the last one must not spend a call re-summarising the summary.
func TestRepeatedCompactWithNothingNewIsFree(t *testing.T) {
	small := summaryModel(100_000, "SUMMARY\nCondensed.")
	m, _ := newManager(t, Config{Window: 100_000, Summarizer: small})
	st := state(noCallModel(t, 100_000), "s", conversation(6, 2_000, 3))
	if _, err := m.Compact(t.Context(), st, ""); err != nil {
		t.Fatal(err)
	}
	calls := len(small.Requests())
	res, err := m.Compact(t.Context(), st, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(small.Requests()); got != calls || res.Summarized != 0 {
		t.Errorf("second compaction made %d more summary calls and summarised %d messages", got-calls, res.Summarized)
	}
	if _, err := m.Compact(t.Context(), st, "focus on the numbers"); err != nil {
		t.Fatal(err)
	}
	if len(small.Requests()) != calls+1 {
		t.Error("new instructions are a reason to summarise again")
	}
}
