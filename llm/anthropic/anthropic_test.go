package anthropic_test

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/anthropic"
	"github.com/deepresearch/deepresearch/llm/llmtest"
)

func newModel(t *testing.T, srv *llmtest.Server, info llm.Info) *anthropic.Model {
	t.Helper()
	m, err := anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: srv.URL, APIKey: "sk-ant-test", Info: info})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var tools = []llm.ToolSpec{
	{Name: "ls", Description: "List files", Schema: json.RawMessage(`{"type":"object","properties":{}}`)},
	{Name: "read_file", Description: "Read a file", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
}

func userReq() *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
}

func TestToolCallRoundTrip(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.Reply{Body: llmtest.AnthropicAnswer([]llmtest.AnthropicBlock{
			{Type: "thinking", Text: "The user wants the notes.", Signature: "sig-abc"},
			{Type: "redacted_thinking", Data: "ENCRYPTED=="},
			{Type: "text", Text: "Reading."},
			{Type: "tool_use", Call: llmtest.ToolCall{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"notes.txt"}`}},
		}, llmtest.Usage{Input: 30, Output: 40, CacheRead: 1000, CacheWrite: 200})},
		llmtest.AnthropicText("The notes say hello."),
	)
	m := newModel(t, srv, llm.Info{})
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: "You are terse."},
		{Role: llm.RoleUser, Content: "What do the notes say?"},
	}
	resp, err := m.Generate(t.Context(), &llm.Request{Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	wantReasoning := []llm.Reasoning{{Text: "The user wants the notes.", Signature: "sig-abc"}, {Redacted: "ENCRYPTED=="}}
	if len(resp.Message.Reasoning) != 2 || resp.Message.Reasoning[0] != wantReasoning[0] || resp.Message.Reasoning[1] != wantReasoning[1] {
		t.Errorf("reasoning %+v", resp.Message.Reasoning)
	}
	if resp.Message.Content != "Reading." || resp.StopReason != llm.StopToolUse {
		t.Errorf("content %q stop %q", resp.Message.Content, resp.StopReason)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0] != (llm.ToolCall{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"notes.txt"}`}) {
		t.Errorf("tool calls %+v", resp.Message.ToolCalls)
	}
	if resp.Usage != (llm.Usage{InputTokens: 30, OutputTokens: 40, CacheReadTokens: 1000, CacheWriteTokens: 200}) {
		t.Errorf("usage %+v", resp.Usage)
	}

	msgs = append(msgs, resp.Message,
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_1", ToolName: "read_file", Content: "Error: no such file", IsError: true})
	resp, err = m.Generate(t.Context(), &llm.Request{Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "The notes say hello." || resp.StopReason != llm.StopEnd {
		t.Errorf("final %q %q", resp.Message.Content, resp.StopReason)
	}

	reqs := srv.Requests()
	if reqs[0].Path != "/v1/messages" {
		t.Errorf("path %s", reqs[0].Path)
	}
	if reqs[0].Header.Get("X-Api-Key") != "sk-ant-test" || reqs[0].Header.Get("Anthropic-Version") == "" {
		t.Errorf("headers %v", reqs[0].Header)
	}
	body := reqs[1].JSON(t)
	if body["max_tokens"] != float64(anthropic.DefaultMaxTokens) {
		t.Errorf("max_tokens %v", body["max_tokens"])
	}
	system := body["system"].([]any)
	sys0 := system[0].(map[string]any)
	if sys0["text"] != "You are terse." || sys0["cache_control"].(map[string]any)["type"] != "ephemeral" {
		t.Errorf("system %v", system)
	}
	wireTools := body["tools"].([]any)
	if _, ok := wireTools[0].(map[string]any)["cache_control"]; ok {
		t.Error("cache breakpoint on a tool that is not the last")
	}
	last := wireTools[1].(map[string]any)
	if last["cache_control"].(map[string]any)["type"] != "ephemeral" {
		t.Errorf("last tool has no cache breakpoint: %v", last)
	}
	schema := last["input_schema"].(map[string]any)
	if schema["type"] != "object" || schema["required"].([]any)[0] != "path" || schema["additionalProperties"] != false {
		t.Errorf("input_schema %v", schema)
	}
	wire := llmtest.Messages(t, reqs[1])
	if len(wire) != 3 {
		t.Fatalf("%d messages: %s", len(wire), reqs[1].Body)
	}
	asst := wire[1]["content"].([]any)
	kinds := []string{}
	for _, b := range asst {
		kinds = append(kinds, b.(map[string]any)["type"].(string))
	}
	if strings.Join(kinds, ",") != "thinking,redacted_thinking,text,tool_use" {
		t.Errorf("assistant blocks %v", kinds)
	}
	if th := asst[0].(map[string]any); th["signature"] != "sig-abc" || th["thinking"] != "The user wants the notes." {
		t.Errorf("thinking replay %v", th)
	}
	if rt := asst[1].(map[string]any); rt["data"] != "ENCRYPTED==" {
		t.Errorf("redacted replay %v", rt)
	}
	if tu := asst[3].(map[string]any); tu["id"] != "toolu_1" || tu["input"].(map[string]any)["path"] != "notes.txt" {
		t.Errorf("tool_use replay %v", tu)
	}
	res := wire[2]["content"].([]any)[0].(map[string]any)
	if wire[2]["role"] != "user" || res["type"] != "tool_result" || res["tool_use_id"] != "toolu_1" || res["is_error"] != true {
		t.Errorf("tool_result %v", res)
	}
	if res["cache_control"].(map[string]any)["type"] != "ephemeral" {
		t.Errorf("last block has no cache breakpoint: %v", res)
	}
}

func TestConsecutiveToolResultsMergeIntoOneTurn(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.AnthropicText("done"))
	m := newModel(t, srv, llm.Info{MaxOutput: 1234})
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: "go"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "ls", Arguments: "{}"}, {ID: "b", Name: "read_file", Arguments: `{"path":`}}},
		{Role: llm.RoleTool, ToolCallID: "a", Content: "x.txt"},
		{Role: llm.RoleTool, ToolCallID: "b", Content: "Error: invalid JSON", IsError: true},
		{Role: llm.RoleSystem, Content: "Budget is low."},
	}
	if _, err := m.Generate(t.Context(), &llm.Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0].JSON(t)
	if body["max_tokens"] != float64(1234) {
		t.Errorf("max_tokens %v, want the catalogue's max output", body["max_tokens"])
	}
	if _, ok := body["system"]; ok {
		t.Errorf("late system note became the system prompt: %v", body["system"])
	}
	wire := llmtest.Messages(t, srv.Requests()[0])
	if len(wire) != 3 {
		t.Fatalf("%d turns: %s", len(wire), srv.Requests()[0].Body)
	}
	blocks := wire[2]["content"].([]any)
	if len(blocks) != 3 || blocks[0].(map[string]any)["tool_use_id"] != "a" || blocks[1].(map[string]any)["tool_use_id"] != "b" ||
		!strings.Contains(blocks[2].(map[string]any)["text"].(string), "Budget is low.") {
		t.Errorf("merged user turn %v", blocks)
	}
	// Malformed arguments are replayed as an object that shows them.
	bad := wire[1]["content"].([]any)[1].(map[string]any)["input"].(map[string]any)
	if bad["_malformed_arguments"] != `{"path":` {
		t.Errorf("malformed input replay %v", bad)
	}
}

func TestStreamingText(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.AnthropicStream([]llmtest.AnthropicBlock{
		{Type: "thinking", Text: "Consider greeting.", Signature: "sig-1"},
		{Type: "text", Text: "Hello, world"},
	}, 4, 0, llmtest.Usage{Input: 12, Output: 9, CacheRead: 300, CacheWrite: 50}))
	m := newModel(t, srv, llm.Info{})
	var deltas []string
	req := userReq()
	req.OnText = func(d string) { deltas = append(deltas, d) }
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(deltas, "|") != "Hell|o, w|orld" {
		t.Errorf("deltas %q", deltas)
	}
	if resp.Message.Content != "Hello, world" || resp.StopReason != llm.StopEnd {
		t.Errorf("content %q stop %q", resp.Message.Content, resp.StopReason)
	}
	if len(resp.Message.Reasoning) != 1 || resp.Message.Reasoning[0] != (llm.Reasoning{Text: "Consider greeting.", Signature: "sig-1"}) {
		t.Errorf("reasoning %+v", resp.Message.Reasoning)
	}
	if resp.Usage != (llm.Usage{InputTokens: 12, OutputTokens: 9, CacheReadTokens: 300, CacheWriteTokens: 50}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	if srv.Requests()[0].JSON(t)["stream"] != true {
		t.Error("stream not requested")
	}
}

func TestStreamingToolCalls(t *testing.T) {
	calls := []llmtest.ToolCall{
		{ID: "toolu_a", Name: "read_file", Arguments: `{"path":"a/very/long/path/notes.txt"}`},
		{ID: "toolu_b", Name: "ls", Arguments: ``},
	}
	srv := llmtest.NewServer(t, llmtest.AnthropicStream([]llmtest.AnthropicBlock{
		{Type: "text", Text: "Looking."}, {Type: "tool_use", Call: calls[0]}, {Type: "tool_use", Call: calls[1]},
	}, 3, 5, llmtest.Usage{Input: 10, Output: 20}))
	m := newModel(t, srv, llm.Info{})
	req := userReq()
	req.OnText = func(string) {}
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "toolu_a", Name: "read_file", Arguments: calls[0].Arguments}, {ID: "toolu_b", Name: "ls", Arguments: "{}"}}
	if len(resp.Message.ToolCalls) != 2 || resp.Message.ToolCalls[0] != want[0] || resp.Message.ToolCalls[1] != want[1] {
		t.Fatalf("tool calls %+v, want %+v", resp.Message.ToolCalls, want)
	}
	if resp.StopReason != llm.StopToolUse || resp.Message.Content != "Looking." {
		t.Errorf("stop %q content %q", resp.StopReason, resp.Message.Content)
	}
}

// A stream cut off inside a tool input keeps the malformed text, so the agent can tell the model what was wrong.
func TestStreamingMalformedToolInputKept(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.AnthropicStream([]llmtest.AnthropicBlock{
		{Type: "tool_use", Call: llmtest.ToolCall{ID: "toolu_x", Name: "read_file", Arguments: `{"path": "notes.txt"`}},
	}, 0, 4, llmtest.Usage{Input: 1, Output: 1}))
	m := newModel(t, srv, llm.Info{})
	req := userReq()
	req.OnText = func(string) {}
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Arguments != `{"path": "notes.txt"` {
		t.Errorf("tool calls %+v", resp.Message.ToolCalls)
	}
}

func TestRateLimitThenSuccessWaitsAsTold(t *testing.T) {
	limited := llmtest.AnthropicError(http.StatusTooManyRequests, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")
	limited.Header = map[string]string{"Retry-After": "9"}
	srv := llmtest.NewServer(t, limited, llmtest.AnthropicText("ok"))
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{Sleep: s.Sleep})
	resp, err := m.Generate(t.Context(), userReq())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "ok" || srv.Calls() != 2 {
		t.Errorf("content %q after %d calls", resp.Message.Content, srv.Calls())
	}
	if w := s.Waits(); len(w) != 1 || w[0] != 9*time.Second {
		t.Errorf("waits %v, want [9s]", w)
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	limited := llmtest.AnthropicError(529, "overloaded_error", "Overloaded")
	limited.Header = map[string]string{"Retry-After": time.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat)}
	srv := llmtest.NewServer(t, limited, llmtest.AnthropicText("ok"))
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{Sleep: s.Sleep})
	if _, err := m.Generate(t.Context(), userReq()); err != nil {
		t.Fatal(err)
	}
	// HTTP dates have one-second resolution; the wait is what remains until then.
	if w := s.Waits(); len(w) != 1 || w[0] < 8*time.Second || w[0] > 10*time.Second {
		t.Errorf("waits %v, want about 10s", w)
	}
}

func TestOverloadedTwiceThenSuccess(t *testing.T) {
	over := llmtest.AnthropicError(529, "overloaded_error", "Overloaded")
	boom := llmtest.AnthropicError(500, "api_error", "Internal server error")
	srv := llmtest.NewServer(t, over, boom, llmtest.AnthropicText("recovered"))
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{Sleep: s.Sleep})
	resp, err := m.Generate(t.Context(), userReq())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "recovered" || srv.Calls() != 3 || len(s.Waits()) != 2 {
		t.Errorf("content %q after %d calls, %d waits", resp.Message.Content, srv.Calls(), len(s.Waits()))
	}
}

func TestServerErrorForever(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.AnthropicError(500, "api_error", "Internal server error"))
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{MaxAttempts: 4, Sleep: s.Sleep})
	_, err := m.Generate(t.Context(), userReq())
	var api *llm.APIError
	if !errors.As(err, &api) || api.StatusCode != 500 || !strings.Contains(api.Message, "Internal server error") {
		t.Fatalf("error %v", err)
	}
	if srv.Calls() != 4 || len(s.Waits()) != 3 {
		t.Errorf("%d calls, %d waits; want 4 and 3", srv.Calls(), len(s.Waits()))
	}
}

func TestSlowReplyTimesOut(t *testing.T) {
	slow := llmtest.AnthropicText("late")
	slow.Delay = 5 * time.Second
	srv := llmtest.NewServer(t, slow)
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{MaxAttempts: 2, CallTimeout: 300 * time.Millisecond, Sleep: s.Sleep})
	_, err := m.Generate(t.Context(), userReq())
	if !errors.Is(err, llm.ErrCallTimeout) || !strings.Contains(err.Error(), "timed out after 300ms") {
		t.Fatalf("error %v", err)
	}
	if srv.Calls() != 2 || len(s.Waits()) != 1 {
		t.Errorf("%d calls, %d waits; want 2 and 1", srv.Calls(), len(s.Waits()))
	}
}

func TestContextLengthNotRetried(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.AnthropicContextLength(), llmtest.AnthropicText("unreachable"))
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{Sleep: s.Sleep})
	_, err := m.Generate(t.Context(), userReq())
	var cl *llm.ContextLengthError
	if !errors.As(err, &cl) || !strings.Contains(cl.Message, "prompt is too long") {
		t.Fatalf("error %v (%T)", err, err)
	}
	if srv.Calls() != 1 || len(s.Waits()) != 0 {
		t.Errorf("%d calls, %d waits", srv.Calls(), len(s.Waits()))
	}
}

func TestOverloadedEventInsideStreamIsRetried(t *testing.T) {
	broken := llmtest.Reply{Events: []llmtest.Event{
		{Name: "message_start", Data: `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`},
		{Name: "error", Data: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
	}}
	srv := llmtest.NewServer(t, broken, llmtest.AnthropicStream([]llmtest.AnthropicBlock{{Type: "text", Text: "fine"}}, 0, 0, llmtest.Usage{Input: 1, Output: 1}))
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{Sleep: s.Sleep})
	req := userReq()
	req.OnText = func(string) {}
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "fine" || srv.Calls() != 2 {
		t.Errorf("content %q after %d calls", resp.Message.Content, srv.Calls())
	}
}

func TestLedgerRecordsUsageAndCost(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Reply{Body: llmtest.AnthropicAnswer([]llmtest.AnthropicBlock{{Type: "text", Text: "ok"}},
		llmtest.Usage{Input: 100_000, Output: 200_000, CacheRead: 1_000_000, CacheWrite: 400_000})})
	info := llm.Info{Provider: "anthropic", Name: "claude-test", Price: llm.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	ledger := &llm.Ledger{}
	m := llm.Metered(llm.WithRetry(newModel(t, srv, info), llm.RetryConfig{}), ledger, "planner")
	if _, err := m.Generate(t.Context(), userReq()); err != nil {
		t.Fatal(err)
	}
	u, cost, calls := ledger.Totals()
	if calls != 1 || u.CacheReadTokens != 1_000_000 || u.CacheWriteTokens != 400_000 {
		t.Fatalf("totals %+v over %d calls", u, calls)
	}
	// 0.1M × 3 + 0.2M × 15 + 1M × 0.3 + 0.4M × 3.75
	if want := 0.3 + 3 + 0.3 + 1.5; math.Abs(cost-want) > 1e-9 {
		t.Errorf("cost %v, want %v", cost, want)
	}
}

func TestTemperatureSent(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.AnthropicText("ok"))
	m := newModel(t, srv, llm.Info{})
	temp := 0.5
	req := userReq()
	req.Temperature = &temp
	req.MaxTokens = 99
	if _, err := m.Generate(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0].JSON(t)
	if body["temperature"] != 0.5 || body["max_tokens"] != float64(99) {
		t.Errorf("temperature %v max_tokens %v", body["temperature"], body["max_tokens"])
	}
}

func TestEnvironmentNotRead(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	srv := llmtest.NewServer(t, llmtest.AnthropicText("ok"))
	m, err := anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), userReq()); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	if strings.Contains(h.Get("Authorization")+h.Get("X-Api-Key"), "from-env") {
		t.Errorf("environment key sent: %v", h)
	}
}
