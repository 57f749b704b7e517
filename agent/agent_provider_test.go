package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/anthropic"
	"github.com/deepresearch/deepresearch/llm/llmtest"
	"github.com/deepresearch/deepresearch/llm/openai"
)

type readIn struct {
	Path string `json:"path" jsonschema:"file to read"`
}

// readTool serves one fixed file and counts how often it really ran.
func readTool(runs *atomic.Int32) agent.Tool {
	return agent.NewTool("read_file", "Read a file", func(_ context.Context, in readIn) (string, error) {
		runs.Add(1)
		if in.Path != "notes.txt" {
			return "", fmt.Errorf("no such file %q", in.Path)
		}
		return "hello from notes", nil
	})
}

// lastToolResult returns the content of the last tool message in an OpenAI request, and its call id.
func lastOpenAIToolResult(t *testing.T, req llmtest.Request) (id, content string) {
	msgs := llmtest.Messages(t, req)
	last := msgs[len(msgs)-1]
	if last["role"] != "tool" {
		t.Errorf("last message is %v, want a tool result", last["role"])
		return "", ""
	}
	id, _ = last["tool_call_id"].(string)
	content, _ = last["content"].(string)
	return id, content
}

// The model sends malformed tool arguments; the loop must not fail but return a tool error explaining the JSON
// problem, and the model's corrected call must then succeed — over the real OpenAI wire format.
func TestMalformedToolArgumentsOpenAI(t *testing.T) {
	var runs atomic.Int32
	srv := llmtest.NewFuncServer(t, func(n int, req llmtest.Request) llmtest.Reply {
		switch n {
		case 0:
			return llmtest.OpenAICalls(llmtest.ToolCall{ID: "call_bad", Name: "read_file", Arguments: `{"path": "notes.txt"`})
		case 1:
			id, content := lastOpenAIToolResult(t, req)
			if id != "call_bad" || !strings.Contains(content, "invalid JSON arguments for read_file") || !strings.Contains(content, "unexpected end of JSON input") {
				t.Errorf("model was told %q for %s; want an explanation of the JSON problem", content, id)
			}
			return llmtest.OpenAICalls(llmtest.ToolCall{ID: "call_good", Name: "read_file", Arguments: `{"path": "notes.txt"}`})
		case 2:
			id, content := lastOpenAIToolResult(t, req)
			if id != "call_good" || content != "hello from notes" {
				t.Errorf("second tool result %s %q", id, content)
			}
			return llmtest.OpenAIText("The notes say: hello from notes.")
		}
		return llmtest.OpenAIError(500, "", "unexpected extra call")
	})
	m, err := openai.New(openai.Config{Model: "m", BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	var events []agent.Event
	ag, err := agent.New(agent.Config{Model: llm.WithRetry(m, llm.RetryConfig{}), Tools: []agent.Tool{readTool(&runs)},
		Observer: func(e agent.Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	answer, err := ag.Run(t.Context(), "What do the notes say?")
	if err != nil {
		t.Fatal(err)
	}
	if answer != "The notes say: hello from notes." || srv.Calls() != 3 {
		t.Errorf("answer %q after %d calls", answer, srv.Calls())
	}
	if runs.Load() != 1 {
		t.Errorf("tool body ran %d times; the malformed call must not reach it", runs.Load())
	}
	errResults := 0
	for _, e := range events {
		if e.Kind == agent.EventToolResult && e.Result.IsError {
			errResults++
		}
	}
	if errResults != 1 {
		t.Errorf("%d error results in the event stream, want 1", errResults)
	}
}

// The same over Anthropic's streaming format, where the arguments arrive as input_json_delta fragments and a
// cut-off object must survive to the agent instead of being replaced by {}.
func TestMalformedToolArgumentsAnthropicStreaming(t *testing.T) {
	var runs atomic.Int32
	srv := llmtest.NewFuncServer(t, func(n int, req llmtest.Request) llmtest.Reply {
		usage := llmtest.Usage{Input: 10, Output: 5}
		switch n {
		case 0:
			return llmtest.AnthropicStream([]llmtest.AnthropicBlock{{Type: "tool_use",
				Call: llmtest.ToolCall{ID: "toolu_bad", Name: "read_file", Arguments: `{"path": notes.txt}`}}}, 0, 6, usage)
		case 1:
			msgs := llmtest.Messages(t, req)
			last := msgs[len(msgs)-1]["content"].([]any)[0].(map[string]any)
			text := fmt.Sprint(last["content"])
			if last["type"] != "tool_result" || last["tool_use_id"] != "toolu_bad" || last["is_error"] != true ||
				!strings.Contains(text, "invalid JSON arguments") || !strings.Contains(text, "invalid character") {
				t.Errorf("tool result sent to the model: %v", last)
			}
			return llmtest.AnthropicStream([]llmtest.AnthropicBlock{{Type: "tool_use",
				Call: llmtest.ToolCall{ID: "toolu_good", Name: "read_file", Arguments: `{"path": "notes.txt"}`}}}, 0, 6, usage)
		case 2:
			return llmtest.AnthropicStream([]llmtest.AnthropicBlock{{Type: "text", Text: "They say hello."}}, 5, 0, usage)
		}
		return llmtest.AnthropicError(500, "api_error", "unexpected extra call")
	})
	m, err := anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	ag, err := agent.New(agent.Config{Model: m, Tools: []agent.Tool{readTool(&runs)}, Stream: true,
		Observer: func(e agent.Event) {
			if e.Kind == agent.EventText {
				streamed.WriteString(e.Text)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	answer, err := ag.Run(t.Context(), "What do the notes say?")
	if err != nil {
		t.Fatal(err)
	}
	if answer != "They say hello." || streamed.String() != "They say hello." || runs.Load() != 1 {
		t.Errorf("answer %q, streamed %q, tool runs %d", answer, streamed.String(), runs.Load())
	}
	// The malformed call is replayed in a form the API accepts.
	var body map[string]any
	if err := json.Unmarshal(srv.Requests()[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	if !srv.Requests()[1].Contains(`_malformed_arguments`) {
		t.Errorf("malformed call not replayed as an object: %s", srv.Requests()[1].Body)
	}
}
