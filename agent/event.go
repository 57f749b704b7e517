package agent

import (
	"time"

	"github.com/deepresearch/deepresearch/llm"
)

// EventKind names what happened.
type EventKind string

// Event kinds, in the order they typically occur.
const (
	EventStep       EventKind = "step"        // a model call is about to be made
	EventText       EventKind = "text"        // streamed answer text
	EventToolCall   EventKind = "tool_call"   // the model asked for a tool
	EventToolResult EventKind = "tool_result" // a tool finished
	EventUsage      EventKind = "usage"       // a model call finished
	EventCompaction EventKind = "compaction"  // context middleware rewrote history
	EventError      EventKind = "error"       // a failure the loop reports (the run may continue)
	EventDone       EventKind = "done"        // the agent produced its final answer
)

// Event is one item of an agent's typed event stream.
type Event struct {
	Kind    EventKind     `json:"kind"`
	Time    time.Time     `json:"time"`
	Session string        `json:"session"`
	Step    int           `json:"step"`
	Text    string        `json:"text,omitempty"`
	Call    *llm.ToolCall `json:"call,omitempty"`
	Result  *Result       `json:"result,omitempty"`
	Usage   *llm.Usage    `json:"usage,omitempty"`
	CostUSD float64       `json:"cost_usd,omitempty"`
	Err     string        `json:"error,omitempty"`
}

// Observer receives events. It is called from the agent's goroutines, possibly concurrently (parallel tools), so
// it must be safe for concurrent use and should not block.
type Observer func(Event)
