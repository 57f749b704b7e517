// Package llmtest provides loopback fake model servers for tests: an httptest server that answers each request
// with the next scripted reply and records what it was sent, and builders for the wire formats of the OpenAI Chat
// Completions API and the Anthropic Messages API (JSON bodies and server-sent event streams), so that adapters,
// the agent loop and the CLI are tested against real HTTP without any network.
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Reply is one scripted HTTP answer.
type Reply struct {
	Status int // default 200
	Header map[string]string
	// Body is sent as application/json, unless Events is set.
	Body string
	// Events are server-sent events, sent as text/event-stream and flushed one by one.
	Events []Event
	// Delay holds the answer back (or, for a stream, the first event), ending early when the client gives up.
	Delay time.Duration
}

// Event is one server-sent event. An empty Name sends only the data line (OpenAI's format); a Comment is sent as
// an SSE comment line (": …"), which clients must skip.
type Event struct {
	Name    string
	Data    string
	Comment string
}

// Request is what the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// JSON decodes the request body into a generic map.
func (r Request) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.Body)
	}
	return m
}

// Server is a fake model server. Each request gets the next reply; when the script runs out the last reply
// repeats, so "500 forever" is a script of one.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	replies  []Reply
	requests []Request
	// Respond, when set, decides the reply from the request count (0-based) and the request, instead of the list.
	respond func(n int, req Request) Reply
}

// NewServer starts a server answering with replies in order. It is closed when the test ends.
func NewServer(t testing.TB, replies ...Reply) *Server {
	s := &Server{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// NewFuncServer starts a server whose replies are computed by respond.
func NewFuncServer(t testing.TB, respond func(n int, req Request) Reply) *Server {
	s := &Server{respond: respond}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Requests returns what the server received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Calls is the number of requests received.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	var rep Reply
	switch {
	case s.respond != nil:
		s.mu.Unlock()
		rep = s.respond(n, req)
	case len(s.replies) == 0:
		s.mu.Unlock()
		http.Error(w, "no reply scripted", http.StatusInternalServerError)
		return
	default:
		rep = s.replies[min(n, len(s.replies)-1)]
		s.mu.Unlock()
	}
	rep.Write(w, r)
}

// Write sends the reply: its delay, headers, status, and its body or events.
func (rep Reply) Write(w http.ResponseWriter, r *http.Request) {
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if rep.Events != nil {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(status)
		fl, _ := w.(http.Flusher)
		for _, e := range rep.Events {
			if e.Comment != "" {
				fmt.Fprintf(w, ": %s\n\n", e.Comment)
				if fl != nil {
					fl.Flush()
				}
				continue
			}
			if e.Name != "" {
				fmt.Fprintf(w, "event: %s\n", e.Name)
			}
			fmt.Fprintf(w, "data: %s\n\n", e.Data)
			if fl != nil {
				fl.Flush()
			}
		}
		return
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, rep.Body)
}

// mustJSON marshals test data; the values are built by this package and always marshal.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// ToolCall is a tool call to put in a scripted answer. Arguments is raw text (it may be malformed on purpose).
type ToolCall struct {
	ID, Name, Arguments string
}

// Usage is the token counts of a scripted answer.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int
}

// ---- OpenAI Chat Completions ----

// OpenAIAnswer builds a non-streaming chat.completion body. For OpenAI, Usage.Input is prompt_tokens, which
// includes the CacheRead tokens (prompt_tokens_details.cached_tokens).
func OpenAIAnswer(text, reasoning string, calls []ToolCall, u Usage) string {
	msg := map[string]any{"role": "assistant", "content": nil}
	if text != "" {
		msg["content"] = text
	}
	if reasoning != "" {
		msg["reasoning_content"] = reasoning
	}
	finish := "stop"
	if len(calls) > 0 {
		var tcs []map[string]any
		for _, c := range calls {
			tcs = append(tcs, map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
		}
		msg["tool_calls"] = tcs
		finish = "tool_calls"
	}
	return mustJSON(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000, "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   openAIUsage(u),
	})
}

func openAIUsage(u Usage) map[string]any {
	return map[string]any{
		"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CacheRead},
	}
}

// OpenAIText is a plain final answer.
func OpenAIText(text string) Reply {
	return Reply{Body: OpenAIAnswer(text, "", nil, Usage{Input: 100, Output: 20})}
}

// OpenAICalls is an answer that asks for tool calls.
func OpenAICalls(calls ...ToolCall) Reply {
	return Reply{Body: OpenAIAnswer("", "", calls, Usage{Input: 100, Output: 20})}
}

func openAIChunk(delta map[string]any, finish any) string {
	return mustJSON(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1700000000, "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
	})
}

// OpenAIStream builds a streamed answer: reasoning_content deltas, then the text in the given pieces, then each
// tool call split into a head (id, name) and argument fragments of at most argChunk bytes, a finish chunk, a
// usage chunk with empty choices (stream_options.include_usage) and [DONE].
func OpenAIStream(reasoning []string, text []string, calls []ToolCall, argChunk int, u Usage) Reply {
	ev := []Event{{Data: openAIChunk(map[string]any{"role": "assistant", "content": ""}, nil)}}
	for _, r := range reasoning {
		ev = append(ev, Event{Data: openAIChunk(map[string]any{"reasoning_content": r}, nil)})
	}
	for _, t := range text {
		ev = append(ev, Event{Data: openAIChunk(map[string]any{"content": t}, nil)})
	}
	for i, c := range calls {
		ev = append(ev, Event{Data: openAIChunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)})
		for _, part := range split(c.Arguments, argChunk) {
			ev = append(ev, Event{Data: openAIChunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": part}}}}, nil)})
		}
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	ev = append(ev, Event{Data: openAIChunk(map[string]any{}, finish)})
	ev = append(ev, Event{Data: mustJSON(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1700000000, "model": "test-model",
		"choices": []any{}, "usage": openAIUsage(u)})})
	ev = append(ev, Event{Data: "[DONE]"})
	return Reply{Events: ev}
}

// OpenAIError is an error answer in OpenAI's envelope.
func OpenAIError(status int, code, message string) Reply {
	return Reply{Status: status, Body: mustJSON(map[string]any{"error": map[string]any{
		"message": message, "type": "invalid_request_error", "param": nil, "code": code}})}
}

// OpenAIContextLength is OpenAI's context-overflow answer.
func OpenAIContextLength() Reply {
	return OpenAIError(http.StatusBadRequest, "context_length_exceeded",
		"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.")
}

func split(s string, n int) []string {
	if n <= 0 || len(s) <= n {
		if s == "" {
			return nil
		}
		return []string{s}
	}
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // never inside a character: servers stream whole characters
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// ---- Anthropic Messages ----

// AnthropicBlock is a content block of a scripted Anthropic answer.
type AnthropicBlock struct {
	Type      string // text | thinking | redacted_thinking | tool_use
	Text      string // text, or thinking text
	Signature string // thinking
	Data      string // redacted_thinking
	Call      ToolCall
}

func anthropicUsage(u Usage) map[string]any {
	return map[string]any{"input_tokens": u.Input, "output_tokens": u.Output,
		"cache_read_input_tokens": u.CacheRead, "cache_creation_input_tokens": u.CacheWrite}
}

func stopFor(blocks []AnthropicBlock) string {
	for _, b := range blocks {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

// AnthropicAnswer builds a non-streaming message body. Tool-call arguments must be a JSON object here, as the
// API always returns one.
func AnthropicAnswer(blocks []AnthropicBlock, u Usage) string {
	var content []any
	for _, b := range blocks {
		switch b.Type {
		case "text":
			content = append(content, map[string]any{"type": "text", "text": b.Text})
		case "thinking":
			content = append(content, map[string]any{"type": "thinking", "thinking": b.Text, "signature": b.Signature})
		case "redacted_thinking":
			content = append(content, map[string]any{"type": "redacted_thinking", "data": b.Data})
		case "tool_use":
			content = append(content, map[string]any{"type": "tool_use", "id": b.Call.ID, "name": b.Call.Name,
				"input": json.RawMessage(b.Call.Arguments)})
		}
	}
	return mustJSON(map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test",
		"content": content, "stop_reason": stopFor(blocks), "stop_sequence": nil, "usage": anthropicUsage(u),
	})
}

// AnthropicText is a plain final answer.
func AnthropicText(text string) Reply {
	return Reply{Body: AnthropicAnswer([]AnthropicBlock{{Type: "text", Text: text}}, Usage{Input: 100, Output: 20})}
}

// AnthropicCalls is an answer that asks for tool calls.
func AnthropicCalls(calls ...ToolCall) Reply {
	var blocks []AnthropicBlock
	for _, c := range calls {
		blocks = append(blocks, AnthropicBlock{Type: "tool_use", Call: c})
	}
	return Reply{Body: AnthropicAnswer(blocks, Usage{Input: 100, Output: 20})}
}

// AnthropicStream builds a streamed answer in the Messages API's event sequence: message_start, per block
// content_block_start / deltas / content_block_stop (text split into pieces of textChunk bytes, tool input into
// input_json_delta fragments of argChunk bytes — sent as given, even if malformed), a ping, message_delta with
// the stop reason and output tokens, message_stop.
func AnthropicStream(blocks []AnthropicBlock, textChunk, argChunk int, u Usage) Reply {
	ev := []Event{{Name: "message_start", Data: mustJSON(map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": anthropicUsage(Usage{Input: u.Input, Output: 1, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite})}})}}
	ev = append(ev, Event{Name: "ping", Data: `{"type": "ping"}`})
	for i, b := range blocks {
		var start map[string]any
		var deltas []map[string]any
		switch b.Type {
		case "text":
			start = map[string]any{"type": "text", "text": ""}
			for _, p := range split(b.Text, textChunk) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": p})
			}
		case "thinking":
			start = map[string]any{"type": "thinking", "thinking": ""}
			for _, p := range split(b.Text, textChunk) {
				deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": p})
			}
			deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": b.Signature})
		case "redacted_thinking":
			start = map[string]any{"type": "redacted_thinking", "data": b.Data}
		case "tool_use":
			start = map[string]any{"type": "tool_use", "id": b.Call.ID, "name": b.Call.Name, "input": map[string]any{}}
			for _, p := range split(b.Call.Arguments, argChunk) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": p})
			}
		}
		ev = append(ev, Event{Name: "content_block_start", Data: mustJSON(map[string]any{"type": "content_block_start", "index": i, "content_block": start})})
		for _, d := range deltas {
			ev = append(ev, Event{Name: "content_block_delta", Data: mustJSON(map[string]any{"type": "content_block_delta", "index": i, "delta": d})})
		}
		ev = append(ev, Event{Name: "content_block_stop", Data: mustJSON(map[string]any{"type": "content_block_stop", "index": i})})
	}
	ev = append(ev, Event{Name: "message_delta", Data: mustJSON(map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopFor(blocks), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.Output}})})
	ev = append(ev, Event{Name: "message_stop", Data: `{"type":"message_stop"}`})
	return Reply{Events: ev}
}

// AnthropicError is an error answer in Anthropic's envelope.
func AnthropicError(status int, typ, message string) Reply {
	return Reply{Status: status, Body: mustJSON(map[string]any{"type": "error",
		"error": map[string]any{"type": typ, "message": message}})}
}

// AnthropicContextLength is Anthropic's prompt-too-long answer.
func AnthropicContextLength() Reply {
	return AnthropicError(http.StatusBadRequest, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum")
}

// Messages returns the "messages" array of a recorded request body.
func Messages(t testing.TB, r Request) []map[string]any {
	t.Helper()
	raw, _ := r.JSON(t)["messages"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, m := range raw {
		mm, ok := m.(map[string]any)
		if !ok {
			t.Fatalf("message is not an object: %v", m)
		}
		out = append(out, mm)
	}
	return out
}

// Contains reports whether the request body contains s (for quick wire assertions).
func (r Request) Contains(s string) bool { return strings.Contains(string(r.Body), s) }

// Sleeps records the waits a retrying model asks for instead of sleeping; pass its Sleep as
// llm.RetryConfig.Sleep. It is safe for concurrent use.
type Sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

// Sleep records d and returns at once.
func (s *Sleeps) Sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

// Waits returns the recorded waits in order.
func (s *Sleeps) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}
