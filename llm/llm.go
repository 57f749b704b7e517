// Package llm defines the one interface every chat model in deepresearch implements, the message and usage types
// that flow through it, and the provider-independent machinery around it: retries, error classification and the
// per-run ledger of tokens and money.
package llm

import (
	"context"
	"encoding/json"
	"strings"
)

// Role is who wrote a message.
type Role string

// The four roles of a conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Reasoning is a thinking block an assistant produced before its answer. It is kept apart from the text because
// providers bill and replay it differently, and context management drops old ones.
type Reasoning struct {
	Text string `json:"text,omitempty"`
	// Signature is the provider's opaque proof that the block is unaltered (Anthropic requires it on replay).
	Signature string `json:"signature,omitempty"`
	// Redacted holds provider-encrypted thinking that must be replayed verbatim.
	Redacted string `json:"redacted,omitempty"`
}

// ToolCall is one tool invocation requested by the model.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the raw JSON text the model produced; it may be malformed.
	Arguments string `json:"arguments"`
}

// Message is one entry of a conversation.
type Message struct {
	Role      Role        `json:"role"`
	Content   string      `json:"content,omitempty"`
	Reasoning []Reasoning `json:"reasoning,omitempty"`
	ToolCalls []ToolCall  `json:"tool_calls,omitempty"`
	// ToolCallID and ToolName identify the call a RoleTool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
	// Pinned messages are never compacted, cleared or dropped (system prompt, project memory).
	Pinned bool `json:"pinned,omitempty"`
	// Meta carries bookkeeping for middleware (for example where an evicted result lives on disk). Providers
	// never see it.
	Meta map[string]string `json:"meta,omitempty"`
}

// Clone returns a deep copy, so that a per-call view can be rewritten without touching the history.
func (m Message) Clone() Message {
	c := m
	c.Reasoning = append([]Reasoning(nil), m.Reasoning...)
	c.ToolCalls = append([]ToolCall(nil), m.ToolCalls...)
	if m.Meta != nil {
		c.Meta = make(map[string]string, len(m.Meta))
		for k, v := range m.Meta {
			c.Meta[k] = v
		}
	}
	return c
}

// CloneMessages deep-copies a message list.
func CloneMessages(ms []Message) []Message {
	out := make([]Message, len(ms))
	for i, m := range ms {
		out[i] = m.Clone()
	}
	return out
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"input_schema"`
}

// Request is one model call.
type Request struct {
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int // 0 means the provider adapter's default
	// Temperature is nil for the provider's default.
	Temperature *float64
	// JSON asks for a JSON object answer where the provider supports it.
	JSON bool
	// OnText, when set, streams the answer's text as it arrives; the full Response is still returned.
	OnText func(delta string)
	// StreamUndecided lets OnText show prose at once even while it may still turn out to be reasoning that a lone
	// closing think tag ends (a chat display wants text as it comes); the Response's Content is split exactly
	// either way. Without it such prose is held back until it is known to be the answer.
	StreamUndecided bool
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, normalised across providers.
const (
	StopEnd       StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopOther     StopReason = "other"
)

// Usage is what one call consumed. The three input counts are disjoint, as Anthropic reports them: InputTokens are
// the prompt tokens billed at the full input price, CacheReadTokens those served from the provider's prompt cache
// and CacheWriteTokens those written to it. Adapters for providers that report a total (OpenAI's prompt_tokens
// includes cached_tokens) subtract, so that Price.Cost never bills a token twice. OutputTokens include the
// reasoning tokens, as every provider bills them.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// Estimated marks counts made here (llm/tokens) because the server reported none — many local servers and
	// proxies omit usage. A sum is estimated when any part of it is.
	Estimated bool `json:"estimated,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + o.InputTokens,
		OutputTokens:     u.OutputTokens + o.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
		Estimated:        u.Estimated || o.Estimated,
	}
}

// PromptTokens is the whole prompt's size: fresh, cache-read and cache-written input together.
func (u Usage) PromptTokens() int { return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens }

// Response is a model's answer.
type Response struct {
	Message    Message
	Usage      Usage
	StopReason StopReason
	Model      string
}

// Price is USD per million tokens.
type Price struct {
	Input      float64 `json:"input" yaml:"input"`
	Output     float64 `json:"output" yaml:"output"`
	CacheRead  float64 `json:"cache_read" yaml:"cache_read"`
	CacheWrite float64 `json:"cache_write" yaml:"cache_write"`
}

// Cost is the USD price of a usage.
func (p Price) Cost(u Usage) float64 {
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead + float64(u.CacheWriteTokens)*p.CacheWrite) / 1e6
}

// Info describes a configured model.
type Info struct {
	Provider      string `json:"provider"`
	Name          string `json:"name"`
	ContextWindow int    `json:"context_window"`
	MaxOutput     int    `json:"max_output"`
	Price         Price  `json:"price"`
}

// Model is a chat model with tool calling. Implementations are safe for concurrent use; a call never mutates the
// Request it is given.
type Model interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
	Info() Info
}

// Text returns the concatenated text of the messages of a role, for tests and simple callers.
func Text(ms []Message, role Role) string {
	var b strings.Builder
	for _, m := range ms {
		if m.Role == role {
			b.WriteString(m.Content)
		}
	}
	return b.String()
}
