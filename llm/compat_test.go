package llm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/anthropic"
	"github.com/deepresearch/deepresearch/llm/llmtest"
	"github.com/deepresearch/deepresearch/llm/openai"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

// The answer and reasoning every dialect sends. The reasoning holds what must never reach a role: a draft JSON
// object with a paraphrased quote, a citation and the words of the answer.
const (
	compatAnswer    = `{"evidence":[{"claim":"Channels synchronise.","quote":"A send on a channel happens before the receive completes."}]}`
	compatReasoning = `Looking at the source, a draft: {"evidence":[{"claim":"x","quote":"sends happen before receives"}]} [1] — no, quote it verbatim.`
)

func dialectModel(t *testing.T, d llmtest.Dialect, url string) llm.Model {
	t.Helper()
	var m llm.Model
	var err error
	if d.Anthropic {
		m, err = anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: url, APIKey: "k"})
	} else {
		m, err = openai.New(openai.Config{Model: "test-model", BaseURL: url + "/v1", APIKey: "k"})
	}
	if err != nil {
		t.Fatal(err)
	}
	return llm.WithRetry(m, llm.RetryConfig{MaxAttempts: 3, Sleep: (&llmtest.Sleeps{}).Sleep})
}

func compatRequest(stream func(string)) *llm.Request {
	return &llm.Request{MaxTokens: 512, OnText: stream, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are an analyst. Answer with JSON."},
		{Role: llm.RoleUser, Content: "Source: A send on a channel happens before the receive completes."},
	}}
}

// TestProviderCompatibility runs every server's dialect through the real adapters, plain and streamed: the answer
// arrives without its reasoning, the reasoning is kept apart, the stream shows only the answer, usage is the
// server's or — where it reports none — counted here and marked estimated (reasoning included), tool calls arrive
// whatever their finish reason, and the context-length answer is classified with its numbers and never resent.
func TestProviderCompatibility(t *testing.T) {
	u := llmtest.Usage{Input: 321, Output: 123}
	for _, d := range llmtest.Dialects() {
		t.Run(d.Name, func(t *testing.T) {
			for _, streamed := range []bool{false, true} {
				srv := llmtest.NewServer(t, d.Answer(compatAnswer, compatReasoning, nil, u))
				if streamed {
					srv = llmtest.NewServer(t, d.Stream(compatAnswer, compatReasoning, nil, u, 7))
				}
				var shown strings.Builder
				var onText func(string)
				if streamed {
					onText = func(s string) { shown.WriteString(s) }
				}
				resp, err := dialectModel(t, d, srv.URL).Generate(t.Context(), compatRequest(onText))
				if err != nil {
					t.Fatalf("streamed=%v: %v", streamed, err)
				}
				if resp.Message.Content != compatAnswer {
					t.Fatalf("streamed=%v: answer %q, want %q", streamed, resp.Message.Content, compatAnswer)
				}
				if streamed && shown.String() != compatAnswer {
					t.Fatalf("streamed text %q, want only the answer %q", shown.String(), compatAnswer)
				}
				var reasoning string
				for _, r := range resp.Message.Reasoning {
					reasoning += r.Text
				}
				want := compatReasoning
				if d.Reasoning == llmtest.NoReasoning {
					want = "" // the server has no way to send it
				}
				if strings.TrimSpace(reasoning) != want {
					t.Fatalf("streamed=%v: reasoning %q, want %q", streamed, reasoning, want)
				}
				if d.NoUsage {
					c := tokens.ForModel("test-model")
					minOut := c.Count(compatAnswer) + c.Count(compatReasoning)
					if !resp.Usage.Estimated || resp.Usage.InputTokens <= 0 || resp.Usage.OutputTokens < minOut {
						t.Fatalf("streamed=%v: usage %+v, want estimated with at least %d output tokens (reasoning counted)", streamed, resp.Usage, minOut)
					}
				} else if resp.Usage.Estimated || resp.Usage.PromptTokens() != u.Input || resp.Usage.OutputTokens != u.Output {
					t.Fatalf("streamed=%v: usage %+v, want the server's %+v", streamed, resp.Usage, u)
				}
			}
			// Tool calls, whatever the finish reason says.
			calls := []llmtest.ToolCall{{ID: "call_1", Name: "search", Arguments: `{"q":"channels"}`}}
			for _, rep := range []llmtest.Reply{d.Answer("", compatReasoning, calls, u), d.Stream("", compatReasoning, calls, u, 5)} {
				srv := llmtest.NewServer(t, rep)
				var onText func(string)
				if rep.Events != nil {
					onText = func(string) {}
				}
				resp, err := dialectModel(t, d, srv.URL).Generate(t.Context(), compatRequest(onText))
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "search" ||
					resp.Message.ToolCalls[0].Arguments != `{"q":"channels"}` || resp.StopReason != llm.StopToolUse || resp.Message.Content != "" {
					t.Fatalf("tool call answer: %+v stop %s", resp.Message, resp.StopReason)
				}
			}
			// The context-length answer: classified, numbers parsed where stated, the prompt counted here, and
			// sent once (a retry would resend the identical request).
			srv := llmtest.NewServer(t, d.ContextLength(4096, 5000, 512))
			_, err := dialectModel(t, d, srv.URL).Generate(t.Context(), compatRequest(nil))
			var cl *llm.ContextLengthError
			if !errors.As(err, &cl) {
				t.Fatalf("context-length answer not classified: %T %v", err, err)
			}
			if srv.Calls() != 1 {
				t.Fatalf("the refused request was sent %d times", srv.Calls())
			}
			if d.ContextWindowStated && cl.Limit != 4096 {
				t.Errorf("window %d, want 4096 (%v)", cl.Limit, cl)
			}
			if cl.Sent <= 0 || cl.Output != 512 || cl.PromptBudget() <= 0 || cl.PromptBudget() >= cl.Sent && cl.Limit == 0 {
				t.Errorf("sent %d, output %d, budget %d: %v", cl.Sent, cl.Output, cl.PromptBudget(), cl)
			}
		})
	}
}

// An Ollama-like server with a small num_ctx reads a fraction of a long prompt and answers as if it had read it
// all, reporting the prompt_tokens it kept. The adapter turns that into a truncation error (so the caller shrinks
// and retries), the ledger still records what the call consumed, and a prompt that fits passes.
func TestSilentTruncationIsAnError(t *testing.T) {
	ollama := llmtest.Dialects()[1]
	if ollama.Name != "ollama" {
		t.Fatalf("dialect 1 is %s", ollama.Name)
	}
	long := strings.Repeat("The kiln dried the oak boards in thirty-eight days during the summer trial. ", 600) // ~11k tokens counted here
	srv := llmtest.NewFuncServer(t, func(n int, req llmtest.Request) llmtest.Reply {
		if req.Contains("thirty-eight") {
			return ollama.Answer("A confident answer from the end of the prompt.", "", nil, llmtest.Usage{Input: 2048, Output: 12})
		}
		return ollama.Answer("ok", "", nil, llmtest.Usage{Input: 40, Output: 1})
	})
	m, err := openai.New(openai.Config{Model: "qwen3:8b", BaseURL: srv.URL + "/v1", Info: llm.Info{Provider: "ollama"}})
	if err != nil {
		t.Fatal(err)
	}
	ledger := &llm.Ledger{}
	model := llm.Metered(llm.WithRetry(m, llm.RetryConfig{Sleep: (&llmtest.Sleeps{}).Sleep}), ledger, "analyst")
	_, err = model.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: long}}})
	var cl *llm.ContextLengthError
	if !errors.As(err, &cl) || !cl.Truncated {
		t.Fatalf("truncation not reported: %v", err)
	}
	if cl.Limit != 2048 || cl.Requested < 8000 || cl.Sent != cl.Requested || cl.PromptBudget() != 2048 {
		t.Fatalf("truncation numbers %+v, budget %d", cl, cl.PromptBudget())
	}
	if !strings.Contains(cl.Error(), "truncated") || !strings.Contains(cl.Error(), "2048") {
		t.Errorf("the error does not say what happened: %v", cl)
	}
	if srv.Calls() != 1 {
		t.Fatalf("a truncated prompt was resent unchanged: %d calls", srv.Calls())
	}
	if u, _, n := ledger.Totals(); n != 1 || u.PromptTokens() != 2048 {
		t.Fatalf("the truncated call's usage was not recorded: %d calls, %+v", n, u)
	}
	resp, err := model.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "short"}}})
	if err != nil || resp.Message.Content != "ok" {
		t.Fatalf("a prompt that fits: %v %+v", err, resp)
	}
}

// Budget fuses read the ledger: a server that never reports usage still fills it, marked estimated.
func TestEstimatedUsageReachesTheLedger(t *testing.T) {
	d := llmtest.Dialects()[len(llmtest.Dialects())-2]
	if !d.NoUsage {
		t.Fatalf("dialect %s reports usage", d.Name)
	}
	srv := llmtest.NewServer(t, d.Answer("fine", "", nil, llmtest.Usage{}), d.Stream("fine", "", nil, llmtest.Usage{}, 3))
	ledger := &llm.Ledger{}
	model := llm.Metered(dialectModel(t, d, srv.URL), ledger, "planner")
	for _, stream := range []func(string){nil, func(string) {}} {
		if _, err := model.Generate(t.Context(), compatRequest(stream)); err != nil {
			t.Fatal(err)
		}
	}
	u, _, n := ledger.Totals()
	if n != 2 || !u.Estimated || u.InputTokens < 20 || u.OutputTokens <= 0 || ledger.EstimatedCalls() != 2 {
		t.Fatalf("ledger %+v over %d calls, %d estimated", u, n, ledger.EstimatedCalls())
	}
}
