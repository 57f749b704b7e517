package openaifake

import (
	"strings"

	"github.com/deepresearch/deepresearch/llm/llmtest"
)

// Dialect makes the fake answer in one server's wire shape (llmtest.Dialects: Ollama, vLLM, llama.cpp's server,
// TGI, LM Studio, LiteLLM, DeepSeek, Qwen, Mistral, OpenRouter, a proxy without usage): reasoning where that server
// puts it (think tags, a closing tag only, reasoning_content, reasoning, content parts), usage or none, its tool
// call and stream quirks, and its own context-length error body for Misbehaviour.ContextLimit. The answers stay
// honest; the reasoning is not: it carries a draft JSON object with a paraphrased quote and a cited sentence
// (ReasoningMarker), which a run must never use or publish.
type Dialect struct {
	llmtest.Dialect
	// NumCtx, when set, plays a server with a small context window that truncates instead of refusing (Ollama's
	// num_ctx): a prompt of more tokens is answered anyway, reporting NumCtx prompt tokens.
	NumCtx int
}

// ReasoningMarker opens the reasoning every dialect answer carries; it must never reach a report.
const ReasoningMarker = "Looking at the pool, the first item says"

// reasoningFor is what a reasoning model thinks before its answer: a cited sentence and a draft of the answer
// whose quote is a paraphrase (a role that read it would publish an ungrounded quote).
func reasoningFor(role string) string {
	draft := `{"evidence":[{"claim":"The kiln is fast.","quote":"the kiln dries wood quickly"}],"pass":true,"verdicts":[]}`
	return ReasoningMarker + " the kiln is the fastest ever built [1]. Let me draft the " + role + " answer first: " + draft +
		"\nNo — quote the source verbatim and answer in the format asked."
}

// Truncated counts the answers given to prompts the NumCtx window could not hold.
func (s *Server) Truncated() int {
	n := 0
	for _, c := range s.Calls() {
		if c.Error == errTruncated {
			n++
		}
	}
	return n
}

const errTruncated = "prompt truncated to the context window"

// reply builds the answer in the dialect and fixes the call's reported usage to what the dialect reports.
func (d *Dialect) reply(call *Call, stream bool, answer, finish string) llmtest.Reply {
	u := llmtest.Usage{Input: call.PromptTokens, Output: call.CompletionTokens}
	if d.NumCtx > 0 && u.Input > d.NumCtx {
		u.Input = d.NumCtx
		call.Error = errTruncated
	}
	call.PromptTokens = u.Input
	if d.NoUsage {
		call.PromptTokens, call.CompletionTokens = 0, 0
	}
	reasoning := reasoningFor(call.Role)
	var rep llmtest.Reply
	if stream {
		rep = d.Stream(answer, reasoning, nil, u, 48)
	} else {
		rep = d.Answer(answer, reasoning, nil, u)
	}
	if finish != "stop" {
		// A draft cut by the output limit.
		r := strings.NewReplacer(`"finish_reason":"stop"`, `"finish_reason":"`+finish+`"`, `"stop_reason":"end_turn"`, `"stop_reason":"max_tokens"`)
		rep.Body = r.Replace(rep.Body)
		for i := range rep.Events {
			rep.Events[i].Data = r.Replace(rep.Events[i].Data)
		}
	}
	return rep
}
