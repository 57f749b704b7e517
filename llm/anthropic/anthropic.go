// Package anthropic adapts Anthropic's Messages API to llm.Model, on the official SDK.
//
// Prompt caching: cache_control breakpoints go on the system prompt, on the last tool definition and on the last
// block of the conversation, so an agent loop re-reads its stable prefix from the cache on every step. Thinking
// blocks become llm.Reasoning and are replayed with their signatures (redacted ones verbatim), as the API
// requires; <think> blocks in the text (a reasoning model behind an Anthropic-format proxy) are split off the same
// way as for every provider (llm.SplitAnswer). A proxy that reports no usage gets the call counted here
// (estimated). The SDK's own retries are off: llm.WithRetry owns retrying, and error answers are classified into
// *llm.APIError and *llm.ContextLengthError.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/internal/httperr"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

// DefaultMaxTokens caps an answer when neither the request nor the catalogue says otherwise.
const DefaultMaxTokens = 8192

// Config configures a Model. Only Model is required.
type Config struct {
	Model string
	// BaseURL is the API root without /v1; empty means Anthropic's.
	BaseURL string
	APIKey  string
	// Info carries catalogue facts. Provider defaults to "anthropic", Name to Model; MaxOutput, when set, is the
	// default max_tokens.
	Info       llm.Info
	HTTPClient *http.Client
	Headers    map[string]string
}

// Model is an Anthropic chat model. It is safe for concurrent use.
type Model struct {
	client  sdk.Client
	cfg     Config
	info    llm.Info
	counter tokens.Counter
}

// New builds a Model.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("anthropic: no model name")
	}
	info := cfg.Info
	if info.Provider == "" {
		info.Provider = "anthropic"
	}
	if info.Name == "" {
		info.Name = cfg.Model
	}
	// The SDK must not read credentials or a base URL from the environment behind the configuration's back.
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithMaxRetries(0),
		option.WithMiddleware(httperr.Middleware(info.Provider)),
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("anthropic: base URL %q is not an absolute URL", cfg.BaseURL)
		}
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.APIKey != "" {
		// The SDK sends the key as a bearer token; Anthropic-format proxies (LiteLLM, DeepSeek's and Kimi's
		// Anthropic endpoints) read x-api-key, so send it there too.
		opts = append(opts, option.WithAPIKey(cfg.APIKey), option.WithHeader("X-Api-Key", cfg.APIKey))
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
	params, opts, err := m.params(req)
	if err != nil {
		return nil, err
	}
	var resp *llm.Response
	if req.OnText != nil {
		resp, err = m.stream(ctx, params, opts, req.OnText, req.StreamUndecided)
	} else {
		// The SDK refuses non-streaming calls whose max_tokens suggests more than ten minutes unless a timeout
		// is given; llm.WithRetry's per-call timeout is the real bound.
		opts = append(opts, option.WithRequestTimeout(time.Hour))
		var msg *sdk.Message
		if msg, err = m.client.Messages.New(ctx, params, opts...); err == nil {
			resp = m.fromMessage(msg)
		} else {
			err = m.wrap(err)
		}
	}
	if err != nil {
		return nil, tokens.Refused(m.counter, req, err)
	}
	// Anthropic always reports usage; a proxy speaking its format may send zeros.
	reported := resp.Usage.PromptTokens() > 0 || resp.Usage.OutputTokens > 0
	return tokens.Account(m.counter, m.info.Provider, req, resp, reported)
}

func (m *Model) wrap(err error) error {
	var api *llm.APIError
	var cl *llm.ContextLengthError
	if errors.As(err, &api) || errors.As(err, &cl) {
		return err
	}
	// An error event inside a 200 stream (overloaded_error, api_error) arrives as the SDK's error type.
	var se *sdk.Error
	if errors.As(err, &se) && se.StatusCode < 400 {
		return httperr.ClassifyStreamError(m.info.Provider, []byte(se.RawJSON()))
	}
	if msg := err.Error(); strings.HasPrefix(msg, "received error while streaming: ") {
		return httperr.ClassifyStreamError(m.info.Provider, []byte(strings.TrimPrefix(msg, "received error while streaming: ")))
	}
	return fmt.Errorf("%s %s: %w", m.info.Provider, m.cfg.Model, err)
}

func (m *Model) maxTokens(req *llm.Request) int64 {
	switch {
	case req.MaxTokens > 0:
		return int64(req.MaxTokens)
	case m.info.MaxOutput > 0:
		return int64(m.info.MaxOutput)
	default:
		return DefaultMaxTokens
	}
}

// params maps the request to the wire.
func (m *Model) params(req *llm.Request) (sdk.MessageNewParams, []option.RequestOption, error) {
	p := sdk.MessageNewParams{Model: sdk.Model(m.cfg.Model), MaxTokens: m.maxTokens(req)}
	var opts []option.RequestOption
	// System messages before the conversation form the system prompt; later ones (notes injected by middleware)
	// stay where they are as user text, so that the cached prefix is not invalidated.
	leading := true
	var turns []turn
	for i, msg := range req.Messages {
		if msg.Role == llm.RoleSystem && leading {
			if msg.Content != "" {
				p.System = append(p.System, sdk.TextBlockParam{Text: msg.Content})
			}
			continue
		}
		leading = false
		blocks, role, err := toBlocks(msg)
		if err != nil {
			return p, nil, fmt.Errorf("anthropic: message %d: %w", i, err)
		}
		if len(blocks) == 0 {
			continue
		}
		// The API wants user and assistant turns to alternate: consecutive tool results and user text merge.
		if n := len(turns); n > 0 && turns[n-1].role == role {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
		} else {
			turns = append(turns, turn{role: role, blocks: blocks})
		}
	}
	if req.JSON {
		p.System = append(p.System, sdk.TextBlockParam{Text: "Answer with a single JSON object and nothing else."})
	}
	if n := len(p.System); n > 0 {
		p.System[n-1].CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	if n := len(turns); n > 0 {
		last := turns[n-1].blocks
		if cc := last[len(last)-1].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
		}
	}
	for _, t := range turns {
		if t.role == llm.RoleAssistant {
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(t.blocks...))
		} else {
			p.Messages = append(p.Messages, sdk.NewUserMessage(t.blocks...))
		}
	}
	for _, t := range req.Tools {
		schema, err := inputSchema(t.Schema)
		if err != nil {
			return p, nil, fmt.Errorf("anthropic: tool %s: %w", t.Name, err)
		}
		tp := &sdk.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: tp})
	}
	if n := len(p.Tools); n > 0 {
		p.Tools[n-1].OfTool.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	if req.Temperature != nil {
		// The SDK's params have no temperature field; the API still accepts it.
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	return p, opts, nil
}

type turn struct {
	role   llm.Role
	blocks []sdk.ContentBlockParamUnion
}

// toBlocks maps one message to content blocks and the wire role it belongs to.
func toBlocks(msg llm.Message) ([]sdk.ContentBlockParamUnion, llm.Role, error) {
	switch msg.Role {
	case llm.RoleSystem:
		if msg.Content == "" {
			return nil, llm.RoleUser, nil
		}
		return []sdk.ContentBlockParamUnion{sdk.NewTextBlock("<system>\n" + msg.Content + "\n</system>")}, llm.RoleUser, nil
	case llm.RoleUser:
		if msg.Content == "" {
			return nil, llm.RoleUser, nil
		}
		return []sdk.ContentBlockParamUnion{sdk.NewTextBlock(msg.Content)}, llm.RoleUser, nil
	case llm.RoleAssistant:
		var blocks []sdk.ContentBlockParamUnion
		for _, r := range msg.Reasoning {
			switch {
			case r.Redacted != "":
				blocks = append(blocks, sdk.NewRedactedThinkingBlock(r.Redacted))
			case r.Signature != "":
				blocks = append(blocks, sdk.NewThinkingBlock(r.Signature, r.Text))
			}
			// Unsigned reasoning (from another provider) cannot be replayed; the API would reject it.
		}
		if msg.Content != "" {
			blocks = append(blocks, sdk.NewTextBlock(msg.Content))
		}
		for _, tc := range msg.ToolCalls {
			blocks = append(blocks, sdk.NewToolUseBlock(tc.ID, toolInput(tc.Arguments), tc.Name))
		}
		return blocks, llm.RoleAssistant, nil
	case llm.RoleTool:
		if msg.ToolCallID == "" {
			return nil, "", errors.New("tool message without tool_call_id")
		}
		content := msg.Content
		if content == "" {
			// Empty text blocks are rejected.
			content = "(no output)"
		}
		return []sdk.ContentBlockParamUnion{sdk.NewToolResultBlock(msg.ToolCallID, content, msg.IsError)}, llm.RoleUser, nil
	default:
		return nil, "", fmt.Errorf("unknown role %q", msg.Role)
	}
}

// toolInput replays a call's arguments. tool_use input must be a JSON object; when the model produced something
// else, the raw text is kept under a key so that the conversation still shows what went wrong.
func toolInput(args string) json.RawMessage {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(trimmed), &obj) == nil && obj != nil {
		return json.RawMessage(trimmed)
	}
	b, _ := json.Marshal(map[string]string{"_malformed_arguments": args})
	return b
}

// inputSchema splits a JSON schema into the SDK's typed fields and the rest.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var s sdk.ToolInputSchemaParam
	if len(raw) == 0 || string(raw) == "null" {
		s.Properties = map[string]any{}
		return s, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return s, fmt.Errorf("schema is not a JSON object: %w", err)
	}
	if p, ok := m["properties"]; ok {
		s.Properties = p
	} else {
		s.Properties = map[string]any{}
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	delete(m, "properties")
	delete(m, "required")
	delete(m, "type")
	if len(m) > 0 {
		s.ExtraFields = m
	}
	return s, nil
}

func (m *Model) fromMessage(msg *sdk.Message) *llm.Response {
	out := llm.Message{Role: llm.RoleAssistant}
	var text strings.Builder
	var blocks []llm.Reasoning
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			blocks = append(blocks, llm.Reasoning{Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			blocks = append(blocks, llm.Reasoning{Redacted: b.Data})
		case "tool_use":
			args := string(b.Input)
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			out.ToolCalls = append(out.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out.Content, out.Reasoning = llm.SplitAnswer(text.String(), blocks)
	return &llm.Response{
		Message: out,
		Usage: llm.Usage{
			InputTokens:      int(msg.Usage.InputTokens),
			OutputTokens:     int(msg.Usage.OutputTokens),
			CacheReadTokens:  int(msg.Usage.CacheReadInputTokens),
			CacheWriteTokens: int(msg.Usage.CacheCreationInputTokens),
		},
		StopReason: stopReason(string(msg.StopReason), len(out.ToolCalls) > 0),
		Model:      modelName(string(msg.Model), m.cfg.Model),
	}
}

func stopReason(s string, hasCalls bool) llm.StopReason {
	switch s {
	case "end_turn", "stop_sequence", "":
		if hasCalls {
			return llm.StopToolUse
		}
		return llm.StopEnd
	case "tool_use":
		return llm.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
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

// block is one content block being assembled from stream events. The SDK's accumulator is not used because it
// replaces a cut-off tool input with {} — the model's malformed arguments must reach the agent loop as they are,
// so that it can explain the JSON problem back to the model.
type block struct {
	kind      string
	text      strings.Builder
	signature string
	data      string
	id, name  string
	input     strings.Builder
	startJSON string
}

// stream makes a streaming call and assembles the answer from its events.
func (m *Model) stream(ctx context.Context, p sdk.MessageNewParams, opts []option.RequestOption, onText func(string), eager bool) (*llm.Response, error) {
	s := m.client.Messages.NewStreaming(ctx, p, opts...)
	defer s.Close()
	var (
		blocks []*block
		usage  llm.Usage
		stop   string
		model  string
		split  llm.ThinkSplitter
	)
	split.Eager = eager
	// Only the answer is streamed: text passes through the splitter, which holds back what may be reasoning.
	show := func(t string) {
		if t = split.Write(t); t != "" {
			onText(t)
		}
	}
	at := func(i int64) (*block, error) {
		if i < 0 || int(i) >= len(blocks) {
			return nil, fmt.Errorf("anthropic: stream event for unknown content block %d", i)
		}
		return blocks[i], nil
	}
	for s.Next() {
		ev := s.Current()
		switch ev.Type {
		case "message_start":
			model = string(ev.Message.Model)
			u := ev.Message.Usage
			usage = llm.Usage{InputTokens: int(u.InputTokens), OutputTokens: int(u.OutputTokens),
				CacheReadTokens: int(u.CacheReadInputTokens), CacheWriteTokens: int(u.CacheCreationInputTokens)}
		case "content_block_start":
			for int(ev.Index) >= len(blocks) {
				blocks = append(blocks, &block{})
			}
			cb := ev.ContentBlock
			b := blocks[ev.Index]
			b.kind, b.id, b.name, b.signature, b.data = cb.Type, cb.ID, cb.Name, cb.Signature, cb.Data
			b.text.WriteString(cb.Text)
			b.text.WriteString(cb.Thinking)
			if cb.Type == "thinking" || cb.Type == "redacted_thinking" {
				split.Separate()
			}
			show(cb.Text)
			if cb.Type == "tool_use" && cb.JSON.Input.Valid() {
				b.startJSON = cb.JSON.Input.Raw()
			}
		case "content_block_delta":
			b, err := at(ev.Index)
			if err != nil {
				return nil, err
			}
			d := ev.Delta
			switch d.Type {
			case "text_delta":
				b.text.WriteString(d.Text)
				show(d.Text)
			case "thinking_delta":
				b.text.WriteString(d.Thinking)
			case "signature_delta":
				b.signature += d.Signature
			case "input_json_delta":
				b.input.WriteString(d.PartialJSON)
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				stop = string(ev.Delta.StopReason)
			}
			// message_delta's counts are cumulative totals, so they replace rather than add.
			usage.OutputTokens = int(ev.Usage.OutputTokens)
			if ev.Usage.JSON.InputTokens.Valid() {
				usage.InputTokens = int(ev.Usage.InputTokens)
			}
			if ev.Usage.JSON.CacheReadInputTokens.Valid() {
				usage.CacheReadTokens = int(ev.Usage.CacheReadInputTokens)
			}
			if ev.Usage.JSON.CacheCreationInputTokens.Valid() {
				usage.CacheWriteTokens = int(ev.Usage.CacheCreationInputTokens)
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, m.wrap(err)
	}
	if stop == "" {
		// A finished stream always carries the stop reason in message_delta; without it the stream was dropped
		// mid-way and what arrived is not the answer.
		return nil, fmt.Errorf("anthropic %s: %w: the stream ended without a stop reason", m.info.Name, llm.ErrIncompleteAnswer)
	}
	if t := split.Close(); t != "" {
		onText(t)
	}
	out := llm.Message{Role: llm.RoleAssistant}
	var apart []llm.Reasoning
	for _, b := range blocks {
		switch b.kind {
		case "thinking":
			apart = append(apart, llm.Reasoning{Text: b.text.String(), Signature: b.signature})
		case "redacted_thinking":
			apart = append(apart, llm.Reasoning{Redacted: b.data})
		case "tool_use":
			args := b.input.String()
			if strings.TrimSpace(args) == "" {
				args = b.startJSON
			}
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			out.ToolCalls = append(out.ToolCalls, llm.ToolCall{ID: b.id, Name: b.name, Arguments: args})
		}
	}
	out.Content, out.Reasoning = split.Result(apart)
	return &llm.Response{Message: out, Usage: usage, StopReason: stopReason(stop, len(out.ToolCalls) > 0), Model: modelName(model, m.cfg.Model)}, nil
}
