// Package openai adapts the OpenAI Chat Completions API to llm.Model, on the official SDK. Because the base URL
// and key are configurable it serves every OpenAI-compatible server: OpenAI, Ollama, vLLM, llama.cpp's server,
// DeepSeek, Qwen (DashScope), OpenRouter.
//
// Reasoning, in whatever shape the server sends it — reasoning_content (DeepSeek, Qwen, vLLM), reasoning
// (OpenRouter, Ollama), content as a list of typed parts (Mistral's reasoning models), or <think> blocks in the
// text (Qwen3, QwQ and R1 distills behind servers that do not parse them) — is kept as llm.Reasoning and never
// sent back; the answer is the text without it (llm.SplitAnswer, llm.ThinkSplitter). A server that reports no usage
// gets its call counted here (estimated), and one that reports a prompt far smaller than what was sent truncated
// it (tokens.Account). The SDK's own retries are off: llm.WithRetry owns retrying, and error
// answers are classified into *llm.APIError and *llm.ContextLengthError before the SDK sees them.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/internal/httperr"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Model. Only Model is required.
type Config struct {
	Model string
	// BaseURL is the API root including /v1; empty means OpenAI.
	BaseURL string
	// APIKey is sent as a bearer token; local servers usually need none.
	APIKey string
	// Info carries catalogue facts (window, prices). Provider defaults to "openai", Name to Model.
	Info llm.Info
	// HTTPClient replaces the default client (proxies, tests).
	HTTPClient *http.Client
	// Headers are added to every request (OpenRouter's HTTP-Referer, for example).
	Headers map[string]string
	// MaxTokensField names the answer-length parameter: "max_completion_tokens" (OpenAI, required by its reasoning
	// models) or "max_tokens" (what most compatible servers understand). Empty picks by base URL.
	MaxTokensField string
}

// Model is an OpenAI-compatible chat model. It is safe for concurrent use.
type Model struct {
	client  sdk.Client
	cfg     Config
	info    llm.Info
	counter tokens.Counter
}

// New builds a Model.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("openai: no model name")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q is not an absolute URL", cfg.BaseURL)
	}
	if cfg.MaxTokensField == "" {
		cfg.MaxTokensField = "max_tokens"
		if strings.EqualFold(u.Hostname(), "api.openai.com") {
			cfg.MaxTokensField = "max_completion_tokens"
		}
	}
	info := cfg.Info
	if info.Provider == "" {
		info.Provider = "openai"
	}
	if info.Name == "" {
		info.Name = cfg.Model
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		// Always set, even empty, so that OPENAI_API_KEY from the environment never leaks to another server.
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
		option.WithMiddleware(httperr.Middleware(info.Provider)),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return &Model{client: sdk.NewClient(opts...), cfg: cfg, info: info, counter: tokens.ForModel(cfg.Model)}, nil
}

// Info implements llm.Model.
func (m *Model) Info() llm.Info { return m.info }

// Generate implements llm.Model: streaming when req.OnText is set, one request/response otherwise.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	var resp *llm.Response
	var reported bool
	if req.OnText != nil {
		resp, reported, err = m.stream(ctx, params, req.OnText, req.StreamUndecided)
	} else {
		var cc *sdk.ChatCompletion
		if cc, err = m.client.Chat.Completions.New(ctx, params); err == nil {
			resp, reported, err = m.fromCompletion(cc)
		} else {
			err = m.wrap(err)
		}
	}
	if err != nil {
		return nil, tokens.Refused(m.counter, req, err)
	}
	return tokens.Account(m.counter, m.info.Provider, req, resp, reported)
}

func (m *Model) wrap(err error) error {
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return httperr.ClassifyStreamError(m.info.Provider, se.Event.Data)
	}
	var api *llm.APIError
	var cl *llm.ContextLengthError
	if errors.As(err, &api) || errors.As(err, &cl) {
		return err
	}
	return fmt.Errorf("%s %s: %w", m.info.Provider, m.cfg.Model, err)
}

// params maps the request to the wire.
func (m *Model) params(req *llm.Request) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{Model: shared.ChatModel(m.cfg.Model)}
	for i, msg := range req.Messages {
		wm, err := toWire(msg)
		if err != nil {
			return p, fmt.Errorf("openai: message %d: %w", i, err)
		}
		if wm != nil {
			p.Messages = append(p.Messages, *wm)
		}
	}
	for _, t := range req.Tools {
		params, err := schemaMap(t.Schema)
		if err != nil {
			return p, fmt.Errorf("openai: tool %s: %w", t.Name, err)
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
		if t.Description != "" {
			fd.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(fd))
	}
	if req.MaxTokens > 0 {
		if m.cfg.MaxTokensField == "max_completion_tokens" {
			p.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = sdk.Int(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		p.Temperature = sdk.Float(*req.Temperature)
	}
	if req.JSON {
		p.ResponseFormat = sdk.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	}
	return p, nil
}

// toWire maps one message. Reasoning is dropped: compatible servers reject or ignore it on input, and DeepSeek
// documents that it must not be sent back.
func toWire(msg llm.Message) (*sdk.ChatCompletionMessageParamUnion, error) {
	switch msg.Role {
	case llm.RoleSystem:
		u := sdk.SystemMessage(msg.Content)
		return &u, nil
	case llm.RoleUser:
		u := sdk.UserMessage(msg.Content)
		return &u, nil
	case llm.RoleAssistant:
		var a sdk.ChatCompletionAssistantMessageParam
		if msg.Content != "" || len(msg.ToolCalls) == 0 {
			a.Content.OfString = sdk.String(msg.Content)
		}
		for _, tc := range msg.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
				},
			})
		}
		return &sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	case llm.RoleTool:
		if msg.ToolCallID == "" {
			return nil, errors.New("tool message without tool_call_id")
		}
		u := sdk.ToolMessage(msg.Content, msg.ToolCallID)
		return &u, nil
	default:
		return nil, fmt.Errorf("unknown role %q", msg.Role)
	}
}

// schemaMap decodes a tool's JSON schema; an empty schema means no parameters.
func schemaMap(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("schema is not a JSON object: %w", err)
	}
	return m, nil
}

// fromCompletion maps a whole answer; reported says whether the server reported usage.
func (m *Model) fromCompletion(cc *sdk.ChatCompletion) (*llm.Response, bool, error) {
	if len(cc.Choices) == 0 {
		return nil, false, &llm.APIError{Provider: m.info.Provider, StatusCode: http.StatusBadGateway, Message: "response has no choices"}
	}
	ch := cc.Choices[0]
	msg := llm.Message{Role: llm.RoleAssistant}
	text, partsReasoning := contentOf(ch.Message.Content, ch.Message.JSON.Content)
	if text == "" && ch.Message.Refusal != "" {
		text = ch.Message.Refusal
	}
	var apart []llm.Reasoning
	if r := reasoningOf(ch.Message.JSON.ExtraFields); r != "" {
		apart = append(apart, llm.Reasoning{Text: r})
	}
	if partsReasoning != "" {
		apart = append(apart, llm.Reasoning{Text: partsReasoning})
	}
	msg.Content, msg.Reasoning = llm.SplitAnswer(text, apart)
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return &llm.Response{
		Message:    msg,
		Usage:      usageOf(cc.Usage),
		StopReason: stopReason(ch.FinishReason, len(msg.ToolCalls) > 0),
		Model:      modelName(cc.Model, m.cfg.Model),
	}, hasUsage(cc.JSON.Usage.Valid(), cc.Usage), nil
}

// hasUsage says whether a usage object was sent with counts in it: many local servers and proxies send none,
// some an object of zeros.
func hasUsage(present bool, u sdk.CompletionUsage) bool {
	return present && (u.PromptTokens > 0 || u.CompletionTokens > 0)
}

// contentOf reads a message's or delta's content: a string, or a list of typed parts (Mistral's reasoning
// models send [{"type":"thinking","thinking":[{"type":"text","text":…}]},{"type":"text","text":…}]), whose text
// parts are the answer and thinking parts reasoning. Other parts (references, images) are not text.
func contentOf(s string, f respjson.Field) (text, reasoning string) {
	raw := strings.TrimSpace(f.Raw())
	if !strings.HasPrefix(raw, "[") {
		return s, ""
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if json.Unmarshal([]byte(raw), &parts) != nil {
		return "", ""
	}
	var t, r strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text", "":
			t.WriteString(p.Text)
		case "thinking", "reasoning":
			r.WriteString(p.Text)
			r.WriteString(thinkingText(p.Thinking))
		}
	}
	return t.String(), r.String()
}

// thinkingText reads a thinking part's body: a string, or a list of text parts.
func thinkingText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// reasoningOf reads the non-standard reasoning fields: reasoning_content (DeepSeek, Qwen, vLLM) or reasoning
// (OpenRouter, Ollama).
func reasoningOf(extra map[string]respjson.Field) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		f, ok := extra[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// usageOf normalises usage so that the three input counts are disjoint (see llm.Usage).
func usageOf(u sdk.CompletionUsage) llm.Usage {
	cached := int(u.PromptTokensDetails.CachedTokens)
	if cached == 0 {
		// DeepSeek reports its cache at the top level.
		if f, ok := u.JSON.ExtraFields["prompt_cache_hit_tokens"]; ok {
			var n int
			if json.Unmarshal([]byte(f.Raw()), &n) == nil {
				cached = n
			}
		}
	}
	written := int(u.PromptTokensDetails.CacheWriteTokens)
	in := int(u.PromptTokens) - cached - written
	if in < 0 {
		in = 0
	}
	return llm.Usage{InputTokens: in, OutputTokens: int(u.CompletionTokens), CacheReadTokens: cached, CacheWriteTokens: written}
}

func stopReason(finish string, hasCalls bool) llm.StopReason {
	switch {
	case hasCalls:
		// Some servers (Ollama among them) say "stop" even when the answer is tool calls.
		return llm.StopToolUse
	case finish == "stop" || finish == "":
		return llm.StopEnd
	case finish == "tool_calls" || finish == "function_call":
		return llm.StopToolUse
	case finish == "length":
		return llm.StopMaxTokens
	default:
		return llm.StopOther
	}
}

func modelName(got, asked string) string {
	if got != "" {
		return got
	}
	return asked
}

// stream makes a streaming call and assembles the answer from its deltas. Only the answer is streamed to onText:
// reasoning fields and parts never are, and text passes through a ThinkSplitter, which holds back what may still
// turn out to be reasoning.
func (m *Model) stream(ctx context.Context, p sdk.ChatCompletionNewParams, onText func(string), eager bool) (*llm.Response, bool, error) {
	p.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
	s := m.client.Chat.Completions.NewStreaming(ctx, p)
	defer s.Close()
	var (
		reasoning, parts strings.Builder
		split            llm.ThinkSplitter
		calls            toolCallAssembler
		finish, model    string
		usage            llm.Usage
		reported         bool
		chars            int
	)
	split.Eager = eager
	show := func(t string) {
		if t != "" {
			onText(t)
		}
	}
	for s.Next() {
		chunk := s.Current()
		if chunk.Model != "" {
			model = chunk.Model
		}
		if hasUsage(chunk.JSON.Usage.Valid(), chunk.Usage) {
			usage, reported = usageOf(chunk.Usage), true
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			d := ch.Delta
			if r := reasoningOf(d.JSON.ExtraFields); r != "" {
				reasoning.WriteString(r)
				split.Separate()
			}
			text, partR := contentOf(d.Content, d.JSON.Content)
			if partR != "" {
				parts.WriteString(partR)
				split.Separate()
			}
			chars += len(text)
			show(split.Write(text))
			for _, tc := range d.ToolCalls {
				calls.add(int(tc.Index), tc.ID, tc.Function.Name, tc.Function.Arguments)
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, false, m.wrap(err)
	}
	if finish == "" {
		// Every OpenAI-compatible server ends a finished stream with a finish reason; a stream that stops
		// without one was dropped mid-way, and what arrived is not the answer.
		return nil, false, fmt.Errorf("%s %s: %w: the stream ended without a finish reason after %d characters",
			m.info.Provider, m.cfg.Model, llm.ErrIncompleteAnswer, chars)
	}
	show(split.Close())
	var apart []llm.Reasoning
	for _, r := range []string{reasoning.String(), parts.String()} {
		if r != "" {
			apart = append(apart, llm.Reasoning{Text: r})
		}
	}
	msg := llm.Message{Role: llm.RoleAssistant, ToolCalls: calls.calls()}
	msg.Content, msg.Reasoning = split.Result(apart)
	return &llm.Response{
		Message:    msg,
		Usage:      usage,
		StopReason: stopReason(finish, len(msg.ToolCalls) > 0),
		Model:      modelName(model, m.cfg.Model),
	}, reported, nil
}

// toolCallAssembler joins streamed tool-call fragments. Fragments are keyed by index; a fragment that brings a new
// id for an index already holding another call starts a new call, because some servers send every complete call
// at index 0.
type toolCallAssembler struct {
	list    []llm.ToolCall
	byIndex map[int]int
}

func (a *toolCallAssembler) add(index int, id, name, args string) {
	if a.byIndex == nil {
		a.byIndex = map[int]int{}
	}
	pos, ok := a.byIndex[index]
	if ok && id != "" && a.list[pos].ID != "" && a.list[pos].ID != id {
		ok = false
	}
	if !ok {
		a.list = append(a.list, llm.ToolCall{})
		pos = len(a.list) - 1
		a.byIndex[index] = pos
	}
	tc := &a.list[pos]
	if id != "" {
		tc.ID = id
	}
	// Names arrive whole in the first fragment; servers that repeat them must not double them.
	if name != "" && tc.Name != name {
		tc.Name += name
	}
	tc.Arguments += args
}

func (a *toolCallAssembler) calls() []llm.ToolCall {
	out := make([]llm.ToolCall, 0, len(a.list))
	for _, tc := range a.list {
		if tc.Name == "" && tc.Arguments == "" {
			continue
		}
		out = append(out, tc)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
