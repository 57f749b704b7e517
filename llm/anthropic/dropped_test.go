package anthropic_test

import (
	"errors"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/llmtest"
)

func TestDroppedStreamIsRetried(t *testing.T) {
	whole := llmtest.AnthropicStream([]llmtest.AnthropicBlock{{Type: "text", Text: "whole answer"}}, 4, 0, llmtest.Usage{Input: 3, Output: 2})
	// The same stream cut after its first text delta: no message_delta, no message_stop.
	var cut llmtest.Reply
	for _, e := range whole.Events {
		cut.Events = append(cut.Events, e)
		if e.Name == "content_block_delta" {
			break
		}
	}
	srv := llmtest.NewServer(t, cut, whole)
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{Sleep: s.Sleep})
	req := userReq()
	req.OnText = func(string) {}
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "whole answer" || srv.Calls() != 2 {
		t.Errorf("content %q after %d calls", resp.Message.Content, srv.Calls())
	}
	srv2 := llmtest.NewServer(t, cut)
	if _, err := newModel(t, srv2, llm.Info{}).Generate(t.Context(), req); !errors.Is(err, llm.ErrIncompleteAnswer) {
		t.Errorf("dropped stream: %v", err)
	}
}
