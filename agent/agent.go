// Package agent is the runtime every deepresearch role runs on: a model, a set of tools, and a loop that calls the
// model, runs the tools it asks for (in parallel, under a bound), and feeds the results back until the model
// answers. Middleware hooks before each model call, after it, and around each tool call carry the context
// engineering; a typed event stream feeds progress displays and logs.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
)

// ErrStepLimit is returned when the agent used all its steps without a final answer.
var ErrStepLimit = errors.New("agent: step limit reached without a final answer")

// ErrLoop is returned when the model keeps repeating the same tool call after being told to stop.
var ErrLoop = errors.New("agent: the model is repeating the same tool call")

// Config configures an Agent. Zero fields take the documented defaults.
type Config struct {
	Model  llm.Model
	System string
	Tools  []Tool
	// Middleware are values implementing HistoryHook, RequestHook, ResponseHook, ToolWrapper or OverflowHook.
	Middleware []Middleware
	// MaxSteps bounds model calls in one Run; default 50.
	MaxSteps int
	// MaxParallelTools bounds concurrent tool calls of one step; default 8.
	MaxParallelTools int
	// RepeatLimit is how many identical consecutive tool calls are run before the model is told to stop
	// repeating; twice that ends the run with ErrLoop. Default 3.
	RepeatLimit int
	// MaxTokens caps each answer; 0 leaves it to the provider adapter.
	MaxTokens int
	// SessionID names this agent's conversation (history files, events); default a random id.
	SessionID string
	Observer  Observer
	// Stream forwards answer text as EventText while it arrives.
	Stream bool
}

// State is the conversation an agent carries. Hooks receive it; outside hooks, read it through Agent.State
// between runs only.
type State struct {
	SessionID string
	Messages  []llm.Message
	Step      int
	Model     llm.Model
	// Tools lists every tool spec the agent can run.
	Tools []llm.ToolSpec
	// RequestTools is the tool list the next request carries (and the latest one carried): Tools after every
	// ToolsHook, in middleware order. It is set before the HistoryHooks run, so that they measure the request
	// that will actually be sent. Hooks treat its elements as read-only.
	RequestTools []llm.ToolSpec
	emit         func(Event)
}

// Emit sends an event on the agent's stream (for middleware).
func (s *State) Emit(e Event) {
	if s.emit != nil {
		s.emit(e)
	}
}

// LatestUserRequest returns the text of the most recent user message, the agent's current intent.
func (s *State) LatestUserRequest() string {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if s.Messages[i].Role == llm.RoleUser && !s.Messages[i].Pinned {
			return s.Messages[i].Content
		}
	}
	return ""
}

// Agent runs a tool-using conversation. An Agent is not safe for concurrent Runs; create one per task.
type Agent struct {
	cfg   Config
	mu    sync.RWMutex
	tools map[string]Tool
	// pending holds specs set by SetTools; the loop moves them into State.Tools between steps, so hooks can read
	// State.Tools without locking even when another goroutine changes the tool set.
	pending []llm.ToolSpec
	st      *State
}

// New builds an agent.
func New(cfg Config) (*Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("agent: no model configured")
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 50
	}
	if cfg.MaxParallelTools <= 0 {
		cfg.MaxParallelTools = 8
	}
	if cfg.RepeatLimit <= 0 {
		cfg.RepeatLimit = 3
	}
	if cfg.SessionID == "" {
		cfg.SessionID = NewID()
	}
	a := &Agent{cfg: cfg}
	a.st = &State{SessionID: cfg.SessionID, Model: cfg.Model, emit: a.emit}
	if cfg.System != "" {
		a.st.Messages = append(a.st.Messages, llm.Message{Role: llm.RoleSystem, Content: cfg.System, Pinned: true})
	}
	if err := a.SetTools(cfg.Tools); err != nil {
		return nil, err
	}
	a.applyPendingTools()
	a.showTools()
	return a, nil
}

// NewID returns a short random identifier.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// SetTools replaces the tool set (MCP servers change their lists). Names must be unique. It is safe to call while
// the agent runs: new tools can be called at once and are shown to the model from its next step.
func (a *Agent) SetTools(tools []Tool) error {
	m := make(map[string]Tool, len(tools))
	specs := make([]llm.ToolSpec, 0, len(tools))
	for _, t := range tools {
		s := t.Spec()
		if _, dup := m[s.Name]; dup {
			return fmt.Errorf("agent: two tools named %q", s.Name)
		}
		m[s.Name] = t
		specs = append(specs, s)
	}
	a.mu.Lock()
	a.tools = m
	a.pending = specs
	a.mu.Unlock()
	return nil
}

func (a *Agent) applyPendingTools() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pending != nil {
		a.st.Tools = a.pending
		a.pending = nil
	}
}

// showTools sets State.RequestTools from State.Tools through every ToolsHook.
func (a *Agent) showTools() {
	shown := a.st.Tools
	for _, m := range a.cfg.Middleware {
		if h, ok := m.(ToolsHook); ok {
			shown = h.ShowTools(a.st, shown)
		}
	}
	a.st.RequestTools = shown
}

// Tool returns the tool registered under name.
func (a *Agent) Tool(name string) (Tool, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	t, ok := a.tools[name]
	return t, ok
}

// State returns the agent's conversation state. Do not use it while Run is in progress.
func (a *Agent) State() *State { return a.st }

// Config returns the agent's effective configuration.
func (a *Agent) Config() Config { return a.cfg }

func (a *Agent) emit(e Event) {
	if a.cfg.Observer == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	if e.Session == "" {
		e.Session = a.st.SessionID
	}
	a.cfg.Observer(e)
}

// Run adds prompt as a user message and loops until the model answers without tool calls. It returns that
// answer's text.
func (a *Agent) Run(ctx context.Context, prompt string) (string, error) {
	a.st.Messages = append(a.st.Messages, llm.Message{Role: llm.RoleUser, Content: prompt})
	return a.Continue(ctx)
}

// Continue resumes the loop on the current history (after a resume from disk, or a manual edit).
func (a *Agent) Continue(ctx context.Context) (string, error) {
	st := a.st
	overflowRetried := false
	var repeat repeatTracker
	lastText := ""
	for steps := 0; ; {
		if err := ctx.Err(); err != nil {
			return lastText, err
		}
		if steps >= a.cfg.MaxSteps {
			return lastText, fmt.Errorf("%w (%d steps)", ErrStepLimit, a.cfg.MaxSteps)
		}
		steps++
		st.Step++
		a.applyPendingTools()
		a.showTools()
		for _, m := range a.cfg.Middleware {
			if h, ok := m.(HistoryHook); ok {
				if err := h.BeforeHistory(ctx, st); err != nil {
					return lastText, fmt.Errorf("agent: before model call: %w", err)
				}
			}
		}
		req := &llm.Request{Messages: llm.CloneMessages(st.Messages), Tools: st.RequestTools, MaxTokens: a.cfg.MaxTokens}
		if a.cfg.Stream {
			step := st.Step
			req.OnText = func(d string) { a.emit(Event{Kind: EventText, Step: step, Text: d}) }
		}
		for _, m := range a.cfg.Middleware {
			if h, ok := m.(RequestHook); ok {
				if err := h.BeforeRequest(ctx, st, req); err != nil {
					return lastText, fmt.Errorf("agent: prepare request: %w", err)
				}
			}
		}
		a.emit(Event{Kind: EventStep, Step: st.Step})
		resp, err := a.cfg.Model.Generate(ctx, req)
		if err != nil {
			if llm.IsContextLength(err) && !overflowRetried && a.hasOverflowHook() {
				overflowRetried = true
				a.emit(Event{Kind: EventError, Step: st.Step, Err: err.Error()})
				for _, m := range a.cfg.Middleware {
					if h, ok := m.(OverflowHook); ok {
						if herr := h.OnOverflow(ctx, st, err); herr != nil {
							return lastText, fmt.Errorf("agent: recover from overflow: %w (after %w)", herr, err)
						}
					}
				}
				steps--
				continue
			}
			a.emit(Event{Kind: EventError, Step: st.Step, Err: err.Error()})
			return lastText, fmt.Errorf("agent: model call: %w", err)
		}
		overflowRetried = false
		info := a.cfg.Model.Info()
		usage := resp.Usage
		a.emit(Event{Kind: EventUsage, Step: st.Step, Usage: &usage, CostUSD: info.Price.Cost(usage)})
		for _, m := range a.cfg.Middleware {
			if h, ok := m.(ResponseHook); ok {
				if err := h.AfterResponse(ctx, st, resp); err != nil {
					return lastText, fmt.Errorf("agent: after model call: %w", err)
				}
			}
		}
		msg := resp.Message
		msg.Role = llm.RoleAssistant
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" {
				msg.ToolCalls[i].ID = "call_" + NewID()
			}
		}
		st.Messages = append(st.Messages, msg)
		if msg.Content != "" {
			lastText = msg.Content
		}
		if len(msg.ToolCalls) == 0 {
			a.emit(Event{Kind: EventDone, Step: st.Step, Text: msg.Content})
			return msg.Content, nil
		}
		results, err := a.runTools(ctx, st, msg.ToolCalls, &repeat)
		if err != nil {
			return lastText, err
		}
		st.Messages = append(st.Messages, results...)
	}
}

func (a *Agent) hasOverflowHook() bool {
	for _, m := range a.cfg.Middleware {
		if _, ok := m.(OverflowHook); ok {
			return true
		}
	}
	return false
}

// runTools executes one step's tool calls concurrently (bounded) and returns their messages in call order.
func (a *Agent) runTools(ctx context.Context, st *State, calls []llm.ToolCall, repeat *repeatTracker) ([]llm.Message, error) {
	handler := a.baseHandler
	for i := len(a.cfg.Middleware) - 1; i >= 0; i-- {
		if w, ok := a.cfg.Middleware[i].(ToolWrapper); ok {
			handler = w.WrapTool(handler)
		}
	}
	out := make([]llm.Message, len(calls))
	verdicts := make([]repeatVerdict, len(calls))
	for i, c := range calls {
		verdicts[i] = repeat.observe(c, a.cfg.RepeatLimit)
		if verdicts[i] == repeatStop {
			return nil, fmt.Errorf("%w: %s %s", ErrLoop, c.Name, lexical.Clip(c.Arguments, 200))
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(a.cfg.MaxParallelTools)
	for i, call := range calls {
		a.emit(Event{Kind: EventToolCall, Step: st.Step, Call: &call})
		g.Go(func() error {
			var res Result
			if verdicts[i] == repeatWarn {
				res = ErrorResult("you have called %s with these exact arguments %d times in a row; the answer will not change. Use what you have or try different arguments.", call.Name, a.cfg.RepeatLimit)
			} else {
				var err error
				res, err = handler(gctx, st, call)
				if err != nil {
					return fmt.Errorf("agent: tool %s: %w", call.Name, err)
				}
			}
			a.emit(Event{Kind: EventToolResult, Step: st.Step, Call: &call, Result: &res})
			out[i] = llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, ToolName: call.Name, Content: res.Content, IsError: res.IsError, Meta: res.Meta}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// baseHandler finds and runs the tool, converting panics into error results so one bad tool cannot kill a run.
func (a *Agent) baseHandler(ctx context.Context, _ *State, call llm.ToolCall) (res Result, err error) {
	t, ok := a.Tool(call.Name)
	if !ok {
		return ErrorResult("unknown tool %q; available tools: %s", call.Name, strings.Join(a.toolNames(), ", ")), nil
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = ErrorResult("tool %s panicked: %v", call.Name, p), nil
		}
	}()
	return t.Run(ctx, json.RawMessage(call.Arguments))
}

func (a *Agent) toolNames() []string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	names := make([]string, 0, len(a.tools))
	for n := range a.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

type repeatVerdict int

const (
	repeatRun repeatVerdict = iota
	repeatWarn
	repeatStop
)

// repeatTracker counts consecutive identical tool calls across steps.
type repeatTracker struct {
	last  string
	count int
}

func (r *repeatTracker) observe(c llm.ToolCall, limit int) repeatVerdict {
	sig := c.Name + "\x00" + canonicalJSON(c.Arguments)
	if sig == r.last {
		r.count++
	} else {
		r.last, r.count = sig, 1
	}
	switch {
	case r.count > 2*limit:
		return repeatStop
	case r.count > limit:
		return repeatWarn
	default:
		return repeatRun
	}
}

// canonicalJSON makes argument order and spacing irrelevant to loop detection.
func canonicalJSON(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return strings.TrimSpace(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return s
	}
	return string(b)
}
