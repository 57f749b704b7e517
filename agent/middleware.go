package agent

import (
	"context"

	"github.com/deepresearch/deepresearch/llm"
)

// ToolSearchName is the tool that loads deferred tool schemas (mcptools.Lazy provides it). Context management
// and subagents recognise it by this name without depending on the MCP client.
const ToolSearchName = "tool_search"

// Middleware is any value implementing one or more of the hook interfaces below; the agent calls each hook a
// middleware implements, in the order the middleware were configured.
type Middleware any

// ToolsHook chooses the tool specs the model is shown (lazy schemas show fewer). It runs before the HistoryHooks
// of each step, in middleware order, each hook receiving the previous one's list; the result is
// State.RequestTools, which the request carries and context management measures. A hook returns a new slice
// when it changes anything and never modifies the elements it is given.
type ToolsHook interface {
	ShowTools(st *State, tools []llm.ToolSpec) []llm.ToolSpec
}

// HistoryHook runs before each model call and may rewrite the persistent history (compaction, eviction).
type HistoryHook interface {
	BeforeHistory(ctx context.Context, st *State) error
}

// RequestHook runs before each model call, after HistoryHooks, and may rewrite this call's request only (for
// example drop old reasoning blocks) without touching the history. The request shares the history's messages and
// the tool list: a hook copies what it edits (a new slice, a new message) instead of writing through them.
type RequestHook interface {
	BeforeRequest(ctx context.Context, st *State, req *llm.Request) error
}

// ResponseHook runs after each successful model call.
type ResponseHook interface {
	AfterResponse(ctx context.Context, st *State, resp *llm.Response) error
}

// ToolHandler executes one tool call.
type ToolHandler func(ctx context.Context, st *State, call llm.ToolCall) (Result, error)

// ToolWrapper wraps every tool call (timeouts, result caps, eviction, relevance gating).
type ToolWrapper interface {
	WrapTool(next ToolHandler) ToolHandler
}

// OverflowHook is asked to shrink the history after the provider answered that the prompt is too long; the call
// is then retried once.
type OverflowHook interface {
	OnOverflow(ctx context.Context, st *State, err error) error
}
