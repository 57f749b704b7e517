package openai_test

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/llmtest"
	"github.com/deepresearch/deepresearch/llm/openai"
)

// sleeps records the waits the retry layer asked for instead of sleeping.
func newModel(t *testing.T, srv *llmtest.Server, info llm.Info) *openai.Model {
	t.Helper()
	m, err := openai.New(openai.Config{Model: "test-model", BaseURL: srv.URL + "/v1", APIKey: "sk-test", Info: info})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var readFileTool = llm.ToolSpec{Name: "read_file", Description: "Read a file",
	Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}

func TestToolCallRoundTrip(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.Reply{Body: llmtest.OpenAIAnswer("", "I should read the file.",
			[]llmtest.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"notes.txt"}`}},
			llmtest.Usage{Input: 120, Output: 30, CacheRead: 100})},
		llmtest.OpenAIText("The notes say hello."),
	)
	m := newModel(t, srv, llm.Info{})
	ctx := t.Context()
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: "You are terse."},
		{Role: llm.RoleUser, Content: "What do the notes say?"},
	}
	resp, err := m.Generate(ctx, &llm.Request{Messages: msgs, Tools: []llm.ToolSpec{readFileTool}, MaxTokens: 500})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("stop reason %q, want tool_use", resp.StopReason)
	}
	want := []llm.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"notes.txt"}`}}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0] != want[0] {
		t.Fatalf("tool calls %+v, want %+v", resp.Message.ToolCalls, want)
	}
	if len(resp.Message.Reasoning) != 1 || resp.Message.Reasoning[0].Text != "I should read the file." {
		t.Errorf("reasoning %+v", resp.Message.Reasoning)
	}
	// prompt_tokens 120 includes 100 cached: 20 fresh + 100 cache read.
	if got := resp.Usage; got != (llm.Usage{InputTokens: 20, OutputTokens: 30, CacheReadTokens: 100}) {
		t.Errorf("usage %+v", got)
	}

	msgs = append(msgs, resp.Message,
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "read_file", Content: "hello"})
	resp, err = m.Generate(ctx, &llm.Request{Messages: msgs, Tools: []llm.ToolSpec{readFileTool}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "The notes say hello." || resp.StopReason != llm.StopEnd {
		t.Errorf("final %q %q", resp.Message.Content, resp.StopReason)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	first := reqs[0]
	if first.Path != "/v1/chat/completions" {
		t.Errorf("path %s", first.Path)
	}
	if got := first.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("authorization %q", got)
	}
	body := first.JSON(t)
	if body["model"] != "test-model" || body["max_tokens"] != float64(500) {
		t.Errorf("model/max_tokens: %v %v", body["model"], body["max_tokens"])
	}
	if _, ok := body["stream"]; ok {
		t.Error("non-streaming call sent stream")
	}
	tools := body["tools"].([]any)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "read_file" || fn["parameters"].(map[string]any)["required"].([]any)[0] != "path" {
		t.Errorf("tool wire %v", fn)
	}
	wire := llmtest.Messages(t, reqs[1])
	if len(wire) != 4 {
		t.Fatalf("second request has %d messages: %s", len(wire), reqs[1].Body)
	}
	if wire[0]["role"] != "system" || wire[0]["content"] != "You are terse." {
		t.Errorf("system %v", wire[0])
	}
	asst := wire[2]
	if asst["role"] != "assistant" {
		t.Fatalf("message 2 %v", asst)
	}
	tc := asst["tool_calls"].([]any)[0].(map[string]any)
	if tc["id"] != "call_1" || tc["type"] != "function" || tc["function"].(map[string]any)["arguments"] != `{"path":"notes.txt"}` {
		t.Errorf("assistant tool call wire %v", tc)
	}
	if reqs[1].Contains("reasoning_content") || reqs[1].Contains("I should read the file") {
		t.Error("reasoning was sent back to the server")
	}
	if wire[3]["role"] != "tool" || wire[3]["tool_call_id"] != "call_1" || wire[3]["content"] != "hello" {
		t.Errorf("tool message %v", wire[3])
	}
}

func TestJSONModeAndTemperature(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.OpenAIText(`{"ok":true}`))
	m := newModel(t, srv, llm.Info{})
	temp := 0.2
	if _, err := m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, JSON: true, Temperature: &temp}); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0].JSON(t)
	rf, _ := body["response_format"].(map[string]any)
	if rf["type"] != "json_object" {
		t.Errorf("response_format %v", body["response_format"])
	}
	if body["temperature"] != 0.2 {
		t.Errorf("temperature %v", body["temperature"])
	}
}

func TestMaxCompletionTokensForOpenAI(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.OpenAIText("ok"))
	m, err := openai.New(openai.Config{Model: "o3", BaseURL: srv.URL + "/v1", MaxTokensField: "max_completion_tokens"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, MaxTokens: 77}); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0].JSON(t)
	if body["max_completion_tokens"] != float64(77) || body["max_tokens"] != nil {
		t.Errorf("max tokens fields: %v / %v", body["max_completion_tokens"], body["max_tokens"])
	}
}

func TestStreamingText(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.OpenAIStream([]string{"Let me ", "think."}, []string{"Hel", "lo, ", "world"}, nil, 0,
		llmtest.Usage{Input: 50, Output: 7, CacheRead: 10}))
	m := newModel(t, srv, llm.Info{})
	var deltas []string
	resp, err := m.Generate(t.Context(), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}},
		OnText:   func(d string) { deltas = append(deltas, d) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(deltas, "|") != "Hel|lo, |world" {
		t.Errorf("deltas %q", deltas)
	}
	if resp.Message.Content != "Hello, world" || resp.StopReason != llm.StopEnd {
		t.Errorf("content %q stop %q", resp.Message.Content, resp.StopReason)
	}
	if len(resp.Message.Reasoning) != 1 || resp.Message.Reasoning[0].Text != "Let me think." {
		t.Errorf("reasoning %+v", resp.Message.Reasoning)
	}
	if resp.Usage != (llm.Usage{InputTokens: 40, OutputTokens: 7, CacheReadTokens: 10}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	body := srv.Requests()[0].JSON(t)
	if body["stream"] != true {
		t.Error("streaming call did not set stream")
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options %v", body["stream_options"])
	}
}

func TestStreamingToolCalls(t *testing.T) {
	calls := []llmtest.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: `{"path":"a/very/long/path/notes.txt"}`},
		{ID: "call_b", Name: "grep", Arguments: `{"pattern":"hello","path":"."}`},
	}
	srv := llmtest.NewServer(t, llmtest.OpenAIStream(nil, []string{"Looking."}, calls, 5, llmtest.Usage{Input: 10, Output: 20}))
	m := newModel(t, srv, llm.Info{})
	resp, err := m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, OnText: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 2 {
		t.Fatalf("tool calls %+v", resp.Message.ToolCalls)
	}
	for i, c := range calls {
		got := resp.Message.ToolCalls[i]
		if got.ID != c.ID || got.Name != c.Name || got.Arguments != c.Arguments {
			t.Errorf("call %d: got %+v want %+v", i, got, c)
		}
	}
	if resp.StopReason != llm.StopToolUse || resp.Message.Content != "Looking." {
		t.Errorf("stop %q content %q", resp.StopReason, resp.Message.Content)
	}
}

// Some servers send each complete tool call at index 0 with its own id.
func TestStreamingToolCallsSameIndex(t *testing.T) {
	chunk := func(delta string, finish string) llmtest.Event {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return llmtest.Event{Data: `{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`}
	}
	srv := llmtest.NewServer(t, llmtest.Reply{Events: []llmtest.Event{
		chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"id":"c2","type":"function","function":{"name":"glob","arguments":"{\"pattern\":\"*\"}"}}]}`, ""),
		chunk(`{}`, "stop"),
		{Data: "[DONE]"},
	}})
	m := newModel(t, srv, llm.Info{})
	resp, err := m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, OnText: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 2 || resp.Message.ToolCalls[0].Name != "ls" || resp.Message.ToolCalls[1].Arguments != `{"pattern":"*"}` {
		t.Fatalf("tool calls %+v", resp.Message.ToolCalls)
	}
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("stop %q", resp.StopReason)
	}
}

func userReq() *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
}

func TestRateLimitThenSuccessWaitsAsTold(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"milliseconds", map[string]string{"retry-after-ms": "1500", "Retry-After": "2"}, 1500 * time.Millisecond},
		{"capped at MaxDelay", map[string]string{"Retry-After": "3600"}, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limited := llmtest.OpenAIError(http.StatusTooManyRequests, "rate_limit_exceeded", "Rate limit reached")
			limited.Header = tc.header
			srv := llmtest.NewServer(t, limited, llmtest.OpenAIText("ok"))
			var s llmtest.Sleeps
			m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{MaxDelay: 20 * time.Second, Sleep: s.Sleep})
			resp, err := m.Generate(t.Context(), userReq())
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != "ok" || srv.Calls() != 2 {
				t.Errorf("content %q after %d calls", resp.Message.Content, srv.Calls())
			}
			if w := s.Waits(); len(w) != 1 || w[0] != tc.want {
				t.Errorf("waits %v, want [%v]", w, tc.want)
			}
		})
	}
}

func TestServerErrorTwiceThenSuccess(t *testing.T) {
	boom := llmtest.Reply{Status: 500, Body: `{"error":{"message":"internal error","type":"server_error"}}`}
	srv := llmtest.NewServer(t, boom, boom, llmtest.OpenAIText("recovered"))
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{BaseDelay: time.Second, Sleep: s.Sleep})
	resp, err := m.Generate(t.Context(), userReq())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "recovered" || srv.Calls() != 3 {
		t.Errorf("content %q after %d calls", resp.Message.Content, srv.Calls())
	}
	w := s.Waits()
	if len(w) != 2 {
		t.Fatalf("waits %v", w)
	}
	// Full jitter: attempt n waits in (0, BaseDelay·2^(n-1)].
	for i, d := range w {
		if limit := time.Second << i; d <= 0 || d > limit {
			t.Errorf("wait %d = %v outside (0, %v]", i, d, limit)
		}
	}
}

func TestServerErrorForever(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Reply{Status: 503, Body: `upstream unavailable`})
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{MaxAttempts: 3, Sleep: s.Sleep})
	_, err := m.Generate(t.Context(), userReq())
	var api *llm.APIError
	if !errors.As(err, &api) || api.StatusCode != 503 || !strings.Contains(api.Message, "upstream unavailable") {
		t.Fatalf("error %v (%T)", err, err)
	}
	if srv.Calls() != 3 || len(s.Waits()) != 2 {
		t.Errorf("%d calls, %d waits; want 3 and 2", srv.Calls(), len(s.Waits()))
	}
}

func TestSlowReplyTimesOut(t *testing.T) {
	slow := llmtest.OpenAIText("too late")
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

func TestSlowStreamTimesOut(t *testing.T) {
	slow := llmtest.OpenAIStream(nil, []string{"late"}, nil, 0, llmtest.Usage{})
	slow.Delay = 5 * time.Second
	srv := llmtest.NewServer(t, slow)
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{MaxAttempts: 2, CallTimeout: 300 * time.Millisecond, Sleep: s.Sleep})
	req := userReq()
	req.OnText = func(string) {}
	_, err := m.Generate(t.Context(), req)
	if !errors.Is(err, llm.ErrCallTimeout) {
		t.Fatalf("error %v", err)
	}
	if srv.Calls() != 2 {
		t.Errorf("%d calls, waits %v, err %v", srv.Calls(), s.Waits(), err)
	}
}

func TestContextLengthNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
	}{
		{"openai", llmtest.OpenAIContextLength()},
		{"vllm", llmtest.Reply{Status: 400, Body: `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}`}},
		{"llama.cpp", llmtest.Reply{Status: 400, Body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tc.reply, llmtest.OpenAIText("unreachable"))
			var s llmtest.Sleeps
			m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{Sleep: s.Sleep})
			_, err := m.Generate(t.Context(), userReq())
			var cl *llm.ContextLengthError
			if !errors.As(err, &cl) {
				t.Fatalf("error %v (%T), want *llm.ContextLengthError", err, err)
			}
			if srv.Calls() != 1 || len(s.Waits()) != 0 {
				t.Errorf("%d calls, %d waits; want no retry", srv.Calls(), len(s.Waits()))
			}
		})
	}
}

func TestClientErrorNotRetried(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.OpenAIError(401, "invalid_api_key", "Incorrect API key provided"))
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{Sleep: s.Sleep})
	_, err := m.Generate(t.Context(), userReq())
	var api *llm.APIError
	if !errors.As(err, &api) || api.StatusCode != 401 || !strings.Contains(err.Error(), "Incorrect API key") {
		t.Fatalf("error %v", err)
	}
	if srv.Calls() != 1 {
		t.Errorf("%d calls", srv.Calls())
	}
}

func TestErrorInsideStreamIsRetried(t *testing.T) {
	broken := llmtest.Reply{Events: []llmtest.Event{{Data: `{"error":{"message":"model overloaded","type":"server_error","code":"503"}}`}}}
	srv := llmtest.NewServer(t, broken, llmtest.OpenAIStream(nil, []string{"fine"}, nil, 0, llmtest.Usage{Input: 1, Output: 1}))
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
	srv := llmtest.NewServer(t, llmtest.Reply{Body: llmtest.OpenAIAnswer("ok", "", nil, llmtest.Usage{Input: 1_000_000, Output: 500_000, CacheRead: 400_000})})
	info := llm.Info{Provider: "openai", Name: "test-model", Price: llm.Price{Input: 2, Output: 8, CacheRead: 0.5}}
	ledger := &llm.Ledger{}
	m := llm.Metered(llm.WithRetry(newModel(t, srv, info), llm.RetryConfig{}), ledger, "agent")
	if _, err := m.Generate(t.Context(), userReq()); err != nil {
		t.Fatal(err)
	}
	u, cost, calls := ledger.Totals()
	if calls != 1 || u != (llm.Usage{InputTokens: 600_000, OutputTokens: 500_000, CacheReadTokens: 400_000}) {
		t.Fatalf("totals %+v over %d calls", u, calls)
	}
	// 0.6M × $2 + 0.5M × $8 + 0.4M × $0.5
	if want := 1.2 + 4 + 0.2; math.Abs(cost-want) > 1e-9 {
		t.Errorf("cost %v, want %v", cost, want)
	}
	if e := ledger.Entries()[0]; e.Label != "agent" || e.Model != "test-model" || e.Provider != "openai" {
		t.Errorf("entry %+v", e)
	}
}

func TestEnvironmentKeyNotLeaked(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	srv := llmtest.NewServer(t, llmtest.OpenAIText("ok"))
	m, err := openai.New(openai.Config{Model: "m", BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), userReq()); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); strings.Contains(got, "sk-from-env") {
		t.Errorf("environment key sent to a server it was not configured for: %q", got)
	}
}

func TestBadBaseURL(t *testing.T) {
	if _, err := openai.New(openai.Config{Model: "m", BaseURL: "localhost:8080"}); err == nil {
		t.Error("relative base URL accepted")
	}
	if _, err := openai.New(openai.Config{}); err == nil {
		t.Error("empty model accepted")
	}
}
