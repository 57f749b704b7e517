package mcptools

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
)

// Guard defaults.
const (
	DefaultMaxResultChars = 400_000
	DefaultCallTimeout    = 5 * time.Minute
	// DefaultAbandonAfter is how long a tool gets to return after its deadline before it is abandoned.
	DefaultAbandonAfter = 5 * time.Second
)

// NoTimeout in GuardConfig.Timeouts exempts a tool from the call timeout (the task tool bounds itself).
const NoTimeout time.Duration = -1

// GuardConfig tunes Guard. The zero value means the defaults.
type GuardConfig struct {
	// Timeout bounds each tool call; default 5 minutes, negative means none.
	Timeout time.Duration
	// Timeouts overrides Timeout per tool name; NoTimeout exempts a tool.
	Timeouts map[string]time.Duration
	// MaxResultChars is the hard ceiling on a result's length in characters (runes); default 400,000, negative
	// means none. The context middleware does the finer work (eviction to files, relevance); this only makes sure
	// no single result can block a task (Claude Code #45766).
	MaxResultChars int
	// AbandonAfter is how long a tool that ignores cancellation gets after its deadline before Guard gives up
	// waiting and answers with a timeout error; default 5s.
	AbandonAfter time.Duration
	// Redact, when set, rewrites the text of every error result before it enters the history: a failing call's
	// message may echo a request with a key in its URL or headers, and the history is sent to the model and kept
	// on disk. Nil keeps error texts as they are.
	Redact func(string) string
}

var _ agent.ToolWrapper = (*Guard)(nil)

// Guard is the one wrapper around every tool call, built-in and MCP. It is an agent.ToolWrapper
// middleware rather than a Tool decorator so that it also covers tools added later (MCP list changes, tool_search,
// other middleware's tools) and errors raised by inner middleware.
//
// Put it first in the middleware list, making it the outermost wrapper: the context middleware inside it then
// sees a tool's full output (and can offload it to a file, losing nothing), while Guard's ceiling still bounds
// what finally enters the history, and Guard also catches errors and panics of that middleware.
//
// A call that fails — the tool returns a Go error, panics or overruns its timeout — becomes an error result that
// names the tool and the error, so the model can carry on. Only the cancellation of the run itself is passed up.
// Guard is safe for concurrent use.
type Guard struct{ cfg GuardConfig }

// NewGuard returns a Guard.
func NewGuard(cfg GuardConfig) *Guard {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultCallTimeout
	}
	if cfg.MaxResultChars == 0 {
		cfg.MaxResultChars = DefaultMaxResultChars
	}
	if cfg.AbandonAfter <= 0 {
		cfg.AbandonAfter = DefaultAbandonAfter
	}
	return &Guard{cfg: cfg}
}

func (g *Guard) timeout(name string) time.Duration {
	if d, ok := g.cfg.Timeouts[name]; ok {
		return d
	}
	return g.cfg.Timeout
}

type handlerResult struct {
	res agent.Result
	err error
}

// WrapTool implements agent.ToolWrapper.
func (g *Guard) WrapTool(next agent.ToolHandler) agent.ToolHandler {
	return func(ctx context.Context, st *agent.State, call llm.ToolCall) (agent.Result, error) {
		cctx, cancel := ctx, context.CancelFunc(func() {})
		d := g.timeout(call.Name)
		if d > 0 {
			cctx, cancel = context.WithTimeout(ctx, d)
		}
		defer cancel()
		done := make(chan handlerResult, 1)
		go func() {
			var hr handlerResult
			defer func() {
				if p := recover(); p != nil {
					hr = handlerResult{res: agent.ErrorResult("tool %s panicked: %v", call.Name, p)}
				}
				done <- hr
			}()
			hr.res, hr.err = next(cctx, st, call)
		}()
		var hr handlerResult
		select {
		case hr = <-done:
		case <-cctx.Done():
			// Give a tool that honours cancellation time to return cleanly; one that does not is abandoned so
			// that the run goes on.
			select {
			case hr = <-done:
			case <-time.After(g.cfg.AbandonAfter):
				if ctx.Err() != nil {
					return agent.Result{}, ctx.Err()
				}
				return agent.ErrorResult("tool %s timed out after %s and did not stop; its result is abandoned", call.Name, d), nil
			}
		}
		if hr.err != nil {
			if ctx.Err() != nil {
				// The run itself was cancelled: not the tool's failure.
				return hr.res, hr.err
			}
			if errors.Is(cctx.Err(), context.DeadlineExceeded) {
				return g.finish(agent.ErrorResult("tool %s timed out after %s: %v", call.Name, d, hr.err)), nil
			}
			return g.finish(agent.ErrorResult("tool %s failed: %v", call.Name, hr.err)), nil
		}
		if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && hr.res.IsError {
			hr.res.Content = fmt.Sprintf("Error: tool %s timed out after %s. %s", call.Name, d, hr.res.Content)
		}
		return g.finish(hr.res), nil
	}
}

// finish applies the result ceiling and, to error results, Redact.
func (g *Guard) finish(res agent.Result) agent.Result {
	if res.IsError && g.cfg.Redact != nil {
		res.Content = g.cfg.Redact(res.Content)
	}
	return g.cap(res)
}

func (g *Guard) cap(res agent.Result) agent.Result {
	if g.cfg.MaxResultChars < 0 {
		return res
	}
	out, n, cut := Truncate(res.Content, g.cfg.MaxResultChars)
	if !cut {
		return res
	}
	res.Content = out
	meta := make(map[string]string, len(res.Meta)+1)
	for k, v := range res.Meta {
		meta[k] = v
	}
	meta["truncated_from_chars"] = strconv.Itoa(n)
	res.Meta = meta
	return res
}

// Truncate cuts s to at most max characters (runes) and appends a note with the original length. It returns the
// text, the original length in characters, and whether it cut.
func Truncate(s string, max int) (string, int, bool) {
	if len(s) <= max { // bytes ≥ runes, so this is the fast path for short results
		return s, utf8.RuneCountInString(s), false
	}
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s, n, false
	}
	i, count := 0, 0
	for i < len(s) && count < max {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i] + fmt.Sprintf("\n\n...(result truncated: the tool returned %d characters; only the first %d are shown. Ask for less, for example a narrower query or a page of the result.)", n, max), n, true
}
