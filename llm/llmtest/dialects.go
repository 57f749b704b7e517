package llmtest

import (
	"fmt"
	"net/http"
	"strings"
)

// ReasoningShape is where a server puts a reasoning model's thinking.
type ReasoningShape int

// The shapes servers use.
const (
	// NoReasoning: the model does not reason (or the server drops it).
	NoReasoning ReasoningShape = iota
	// ThinkTags: <think>…</think> before the answer, in the content (Qwen3, QwQ behind a server without a
	// reasoning parser).
	ThinkTags
	// ClosingTagOnly: the chat template opened <think>, so the content is "reasoning\n</think>\n\nanswer"
	// (DeepSeek-R1 distills on llama.cpp's server or vLLM without a parser).
	ClosingTagOnly
	// ReasoningContent: a reasoning_content field beside content (DeepSeek, Qwen on DashScope, vLLM with a
	// reasoning parser).
	ReasoningContent
	// ReasoningField: a reasoning field beside content (OpenRouter, Ollama's OpenAI-compatible endpoint).
	ReasoningField
	// ContentParts: content as a list of typed parts, [{"type":"thinking","thinking":[{"type":"text",…}]},
	// {"type":"text","text":…}] (Mistral's reasoning models).
	ContentParts
	// ThinkingBlocks: Anthropic's thinking content blocks, signed.
	ThinkingBlocks
)

// Dialect is how one server speaks its API, with the quirks its documentation and issue tracker show: where the
// reasoning goes, whether usage is reported, how tool calls finish, what its SSE streams carry besides data, and
// the exact error body it answers a prompt too long for its window with. Answer, Stream and ContextLength build
// its replies; Dialects lists them all.
type Dialect struct {
	Name string
	// Anthropic: the server speaks Anthropic's Messages API (otherwise OpenAI's Chat Completions).
	Anthropic bool
	Reasoning ReasoningShape
	// NoUsage: the server reports no usage, in bodies and streams (many local servers and proxies).
	NoUsage bool
	// ToolCallsStop: the server ends an answer of tool calls with finish_reason "stop" (older Ollama).
	ToolCallsStop bool
	// Comments: the server sends SSE comment lines in streams (OpenRouter's ": OPENROUTER PROCESSING").
	Comments bool
	// ContextWindowStated says whether the context-length error states the window (Limit can be parsed).
	ContextWindowStated bool
	// contextError builds the context-length answer for a window, a prompt size and an answer length.
	contextError func(limit, prompt, output int) Reply
}

// Dialects are the servers deepresearch is run against, one entry each.
func Dialects() []Dialect {
	openAIEnvelope := func(status int, code any, typ, msg string) Reply {
		return Reply{Status: status, Body: mustJSON(map[string]any{"error": map[string]any{
			"message": msg, "type": typ, "param": nil, "code": code}})}
	}
	return []Dialect{
		{Name: "openai", ContextWindowStated: true, contextError: func(limit, prompt, _ int) Reply {
			return openAIEnvelope(http.StatusBadRequest, "context_length_exceeded", "invalid_request_error", fmt.Sprintf(
				"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", limit, prompt))
		}},
		{Name: "ollama", Reasoning: ReasoningField, ToolCallsStop: true, contextError: func(_, _, _ int) Reply {
			return openAIEnvelope(http.StatusBadRequest, nil, "invalid_request_error",
				"the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length")
		}},
		{Name: "vllm", Reasoning: ReasoningContent, ContextWindowStated: true, contextError: func(limit, prompt, output int) Reply {
			return Reply{Status: http.StatusBadRequest, Body: mustJSON(map[string]any{"error": map[string]any{
				"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d output tokens and your prompt contains %d input tokens, for a total of %d tokens. Please reduce the length of the input prompt or the number of requested output tokens.", limit, output, prompt, prompt+output),
				"type":    "BadRequestError", "param": "input_tokens", "code": 400}})}
		}},
		{Name: "vllm, Qwen3 without a reasoning parser", Reasoning: ThinkTags, ContextWindowStated: true, contextError: func(limit, prompt, output int) Reply {
			return Reply{Status: http.StatusBadRequest, Body: mustJSON(map[string]any{"object": "error",
				"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", limit, prompt+output, prompt, output),
				"type":    "BadRequestError", "param": nil, "code": 400})}
		}},
		{Name: "llama.cpp server, R1 distill", Reasoning: ClosingTagOnly, ContextWindowStated: true, contextError: func(limit, prompt, _ int) Reply {
			return Reply{Status: http.StatusBadRequest, Body: mustJSON(map[string]any{"error": map[string]any{
				"code": 400, "message": "the request exceeds the available context size, try increasing it",
				"type": "exceed_context_size_error", "n_prompt_tokens": prompt, "n_ctx": limit}})}
		}},
		{Name: "tgi", ContextWindowStated: true, contextError: func(limit, prompt, output int) Reply {
			return Reply{Status: http.StatusUnprocessableEntity, Body: mustJSON(map[string]any{
				"error":      fmt.Sprintf("Input validation error: `inputs` tokens + `max_new_tokens` must be <= %d. Given: %d `inputs` tokens and %d `max_new_tokens`", limit, prompt, output),
				"error_type": "validation"})}
		}},
		{Name: "lm studio", Reasoning: ThinkTags, ContextWindowStated: true, contextError: func(limit, prompt, _ int) Reply {
			return Reply{Status: http.StatusBadRequest, Body: mustJSON(map[string]any{"error": fmt.Sprintf(
				"Trying to keep the first %d tokens when context the overflows. However, the model is loaded with context length of only %d tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input", prompt, limit)})}
		}},
		{Name: "litellm proxy", ContextWindowStated: true, contextError: func(limit, prompt, output int) Reply {
			return openAIEnvelope(http.StatusBadRequest, "400", "", fmt.Sprintf(
				"litellm.ContextWindowExceededError: litellm.BadRequestError: Hosted_vllmException - This model's maximum context length is %d tokens. However, you requested %d output tokens and your prompt contains at least %d input tokens, for a total of at least %d tokens.", limit, output, prompt, prompt+output))
		}},
		{Name: "deepseek", Reasoning: ReasoningContent, ContextWindowStated: true, contextError: func(limit, prompt, output int) Reply {
			return openAIEnvelope(http.StatusBadRequest, "invalid_request_error", "invalid_request_error", fmt.Sprintf(
				"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", limit, prompt+output, prompt, output))
		}},
		{Name: "qwen (dashscope)", Reasoning: ReasoningContent, ContextWindowStated: true, contextError: func(limit, _, _ int) Reply {
			return Reply{Status: http.StatusBadRequest, Body: mustJSON(map[string]any{"error": map[string]any{
				"code": "invalid_parameter_error", "message": fmt.Sprintf("<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, %d]", limit),
				"param": nil, "type": "invalid_request_error"}, "request_id": "81a373d6-28bd-9968-8335-e22a2127c41b"})}
		}},
		{Name: "mistral", Reasoning: ContentParts, ContextWindowStated: true, contextError: func(limit, prompt, _ int) Reply {
			return Reply{Status: http.StatusBadRequest, Body: mustJSON(map[string]any{"object": "error",
				"message": fmt.Sprintf("Prompt contains %d tokens, too large for model with %d maximum context length", prompt, limit),
				"type":    "invalid_request_error", "param": nil, "code": nil})}
		}},
		{Name: "openrouter", Reasoning: ReasoningField, Comments: true, ContextWindowStated: true, contextError: func(limit, prompt, output int) Reply {
			return Reply{Status: http.StatusBadRequest, Body: mustJSON(map[string]any{"error": map[string]any{"code": 400,
				"message":  fmt.Sprintf("This endpoint's maximum context length is %d tokens. However, you requested about %d tokens (%d of text input, %d in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.", limit, prompt+output, prompt, output),
				"metadata": map[string]any{"provider_name": "Chutes"}}})}
		}},
		{Name: "proxy without usage", Reasoning: ThinkTags, NoUsage: true, contextError: func(_, _, _ int) Reply {
			return openAIEnvelope(http.StatusBadRequest, nil, "invalid_request_error", "Your input exceeds the context window of this model. Please adjust your input and try again.")
		}},
		{Name: "anthropic", Anthropic: true, Reasoning: ThinkingBlocks, ContextWindowStated: true, contextError: func(limit, prompt, _ int) Reply {
			return AnthropicError(http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("prompt is too long: %d tokens > %d maximum", prompt, limit))
		}},
	}
}

// ContextLength is the server's answer to a prompt of prompt tokens (asking for output more) that does not fit
// its window of limit tokens.
func (d Dialect) ContextLength(limit, prompt, output int) Reply {
	return d.contextError(limit, prompt, output)
}

// thinkText puts reasoning into the content the way the dialect's template does.
func (d Dialect) thinkText(text, reasoning string) string {
	switch {
	case reasoning == "":
		return text
	case d.Reasoning == ThinkTags:
		return "<think>\n" + reasoning + "\n</think>\n\n" + text
	case d.Reasoning == ClosingTagOnly:
		return reasoning + "\n</think>\n\n" + text
	}
	return text
}

// Answer is a whole (non-streamed) answer in the dialect: text, the reasoning where the dialect puts it, tool
// calls, and usage unless the dialect reports none.
func (d Dialect) Answer(text, reasoning string, calls []ToolCall, u Usage) Reply {
	if d.Anthropic {
		blocks := d.anthropicBlocks(text, reasoning, calls)
		body := AnthropicAnswer(blocks, u)
		if d.NoUsage {
			body = strings.Replace(body, mustJSON(anthropicUsage(u)), `{"input_tokens":0,"output_tokens":0}`, 1)
		}
		return Reply{Body: body}
	}
	msg := map[string]any{"role": "assistant", "content": nil}
	content := d.thinkText(text, reasoning)
	switch {
	case d.Reasoning == ContentParts && reasoning != "":
		msg["content"] = []any{
			map[string]any{"type": "thinking", "thinking": []any{map[string]any{"type": "text", "text": reasoning}}},
			map[string]any{"type": "text", "text": text},
		}
	case content != "":
		msg["content"] = content
	}
	if reasoning != "" {
		switch d.Reasoning {
		case ReasoningContent:
			msg["reasoning_content"] = reasoning
		case ReasoningField:
			msg["reasoning"] = reasoning
		}
	}
	finish := "stop"
	if len(calls) > 0 {
		msg["tool_calls"] = toolCallsJSON(calls)
		if !d.ToolCallsStop {
			finish = "tool_calls"
		}
	}
	body := map[string]any{
		"id": "chatcmpl-" + strings.ReplaceAll(d.Name, " ", "-"), "object": "chat.completion", "created": 1700000000, "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
	}
	if !d.NoUsage {
		body["usage"] = openAIUsage(u)
	}
	return Reply{Body: mustJSON(body)}
}

func toolCallsJSON(calls []ToolCall) []map[string]any {
	var tcs []map[string]any
	for i, c := range calls {
		tcs = append(tcs, map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
	}
	return tcs
}

func (d Dialect) anthropicBlocks(text, reasoning string, calls []ToolCall) []AnthropicBlock {
	var blocks []AnthropicBlock
	if reasoning != "" {
		blocks = append(blocks, AnthropicBlock{Type: "thinking", Text: reasoning, Signature: "sig-" + fmt.Sprint(len(reasoning))})
	}
	if text != "" {
		blocks = append(blocks, AnthropicBlock{Type: "text", Text: text})
	}
	for _, c := range calls {
		blocks = append(blocks, AnthropicBlock{Type: "tool_use", Call: c})
	}
	return blocks
}

// Stream is the same answer streamed in the dialect: reasoning and text in pieces of at most chunk bytes (a think
// tag split across pieces where the dialect writes tags), each tool call sent whole at index 0 the way servers
// that do not stream arguments send it, the finish chunk, the usage chunk unless the dialect reports none, and
// [DONE]; comment lines too where the dialect sends them.
func (d Dialect) Stream(text, reasoning string, calls []ToolCall, u Usage, chunk int) Reply {
	if d.Anthropic {
		rep := AnthropicStream(d.anthropicBlocks(text, reasoning, calls), chunk, chunk, u)
		if d.NoUsage {
			for i := range rep.Events {
				rep.Events[i].Data = strings.NewReplacer(fmt.Sprintf(`"input_tokens":%d`, u.Input), `"input_tokens":0`,
					fmt.Sprintf(`"output_tokens":%d`, u.Output), `"output_tokens":0`, `"output_tokens":1`, `"output_tokens":0`).Replace(rep.Events[i].Data)
			}
		}
		return rep
	}
	ev := []Event{{Data: openAIChunk(map[string]any{"role": "assistant", "content": ""}, nil)}}
	if d.Comments {
		ev = append(ev, Event{Comment: "OPENROUTER PROCESSING"})
	}
	if reasoning != "" {
		for _, p := range split(reasoning, chunk) {
			switch d.Reasoning {
			case ReasoningContent:
				ev = append(ev, Event{Data: openAIChunk(map[string]any{"reasoning_content": p}, nil)})
			case ReasoningField:
				ev = append(ev, Event{Data: openAIChunk(map[string]any{"reasoning": p}, nil)})
			case ContentParts:
				ev = append(ev, Event{Data: openAIChunk(map[string]any{"content": []any{map[string]any{"type": "thinking",
					"thinking": []any{map[string]any{"type": "text", "text": p}}}}}, nil)})
			}
		}
	}
	for _, p := range split(d.thinkText(text, reasoning), chunk) {
		if d.Reasoning == ContentParts {
			ev = append(ev, Event{Data: openAIChunk(map[string]any{"content": []any{map[string]any{"type": "text", "text": p}}}, nil)})
			continue
		}
		ev = append(ev, Event{Data: openAIChunk(map[string]any{"content": p}, nil)})
	}
	for _, c := range calls {
		ev = append(ev, Event{Data: openAIChunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}}}, nil)})
	}
	finish := "stop"
	if len(calls) > 0 && !d.ToolCallsStop {
		finish = "tool_calls"
	}
	ev = append(ev, Event{Data: openAIChunk(map[string]any{}, finish)})
	if !d.NoUsage {
		ev = append(ev, Event{Data: mustJSON(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1700000000, "model": "test-model",
			"choices": []any{}, "usage": openAIUsage(u)})})
	}
	ev = append(ev, Event{Data: "[DONE]"})
	return Reply{Events: ev}
}
