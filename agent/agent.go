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

	// The middleware sorted by hook, and the tool handler wrapped by every ToolWrapper, computed once.
	toolsHooks    []ToolsHook
	historyHooks  []HistoryHook
	requestHooks  []RequestHook
	responseHooks []ResponseHook
	overflowHooks []OverflowHook
	handler       ToolHandler

	// args holds the current step's calls with their arguments decoded once, for loop detection, schema
	// validation and the typed tool alike. Only the loop writes it, between steps.
	args []decodedCall
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
	for _, m := range cfg.Middleware {
		if h, ok := m.(ToolsHook); ok {
			a.toolsHooks = append(a.toolsHooks, h)
		}
		if h, ok := m.(HistoryHook); ok {
			a.historyHooks = append(a.historyHooks, h)
		}
		if h, ok := m.(RequestHook); ok {
			a.requestHooks = append(a.requestHooks, h)
		}
		if h, ok := m.(ResponseHook); ok {
			a.responseHooks = append(a.responseHooks, h)
		}
		if h, ok := m.(OverflowHook); ok {
			a.overflowHooks = append(a.overflowHooks, h)
		}
	}
	a.handler = a.baseHandler
	for i := len(cfg.Middleware) - 1; i >= 0; i-- {
		if w, ok := cfg.Middleware[i].(ToolWrapper); ok {
			a.handler = w.WrapTool(a.handler)
		}
	}
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
	for _, h := range a.toolsHooks {
		shown = h.ShowTools(a.st, shown)
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

// observed reports whether anyone listens to events; the loop builds them only then.
func (a *Agent) observed() bool { return a.cfg.Observer != nil }

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
		for _, h := range a.historyHooks {
			if err := h.BeforeHistory(ctx, st); err != nil {
				return lastText, fmt.Errorf("agent: before model call: %w", err)
			}
		}
		// The request shares the history (capacity clipped, so that a hook appending to it gets a new array);
		// RequestHooks copy what they edit.
		req := &llm.Request{Messages: st.Messages[:len(st.Messages):len(st.Messages)], Tools: st.RequestTools, MaxTokens: a.cfg.MaxTokens}
		if a.cfg.Stream {
			step := st.Step
			req.OnText = func(d string) { a.emit(Event{Kind: EventText, Step: step, Text: d}) }
			req.StreamUndecided = true // the display shows text as it comes; the history keeps the exact answer
		}
		for _, h := range a.requestHooks {
			if err := h.BeforeRequest(ctx, st, req); err != nil {
				return lastText, fmt.Errorf("agent: prepare request: %w", err)
			}
		}
		if a.observed() {
			a.emit(Event{Kind: EventStep, Step: st.Step})
		}
		resp, err := a.cfg.Model.Generate(ctx, req)
		if err != nil {
			if llm.IsContextLength(err) && !overflowRetried && len(a.overflowHooks) > 0 {
				overflowRetried = true
				a.emit(Event{Kind: EventError, Step: st.Step, Err: err.Error()})
				for _, h := range a.overflowHooks {
					if herr := h.OnOverflow(ctx, st, err); herr != nil {
						return lastText, fmt.Errorf("agent: recover from overflow: %w (after %w)", herr, err)
					}
				}
				steps--
				continue
			}
			a.emit(Event{Kind: EventError, Step: st.Step, Err: err.Error()})
			return lastText, fmt.Errorf("agent: model call: %w", err)
		}
		overflowRetried = false
		if a.observed() {
			usage := resp.Usage
			a.emit(Event{Kind: EventUsage, Step: st.Step, Usage: &usage, CostUSD: a.cfg.Model.Info().Price.Cost(usage)})
		}
		for _, h := range a.responseHooks {
			if err := h.AfterResponse(ctx, st, resp); err != nil {
				return lastText, fmt.Errorf("agent: after model call: %w", err)
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
		if err := a.runTools(ctx, st, msg.ToolCalls, &repeat); err != nil {
			return lastText, err
		}
	}
}

// decodedCall is a tool call with its arguments decoded once.
type decodedCall struct {
	id, raw string
	value   any
	err     error
}

// runTools executes one step's tool calls and appends their messages to the history in call order. A single
// call runs on the loop's goroutine; several run concurrently under MaxParallelTools.
func (a *Agent) runTools(ctx context.Context, st *State, calls []llm.ToolCall, repeat *repeatTracker) error {
	a.args = a.args[:0]
	for _, c := range calls {
		d := decodedCall{id: c.ID, raw: c.Arguments}
		d.value, d.err = decodeArgs(c.Arguments)
		a.args = append(a.args, d)
	}
	var verdictBuf [4]repeatVerdict
	verdicts := verdictBuf[:0]
	for i, c := range calls {
		v := repeat.observe(c.Name, a.args[i], a.cfg.RepeatLimit)
		if v == repeatStop {
			return fmt.Errorf("%w: %s %s", ErrLoop, c.Name, lexical.Clip(c.Arguments, 200))
		}
		verdicts = append(verdicts, v)
	}
	if a.observed() {
		for i := range calls {
			a.emit(Event{Kind: EventToolCall, Step: st.Step, Call: &calls[i]})
		}
	}
	out := make([]llm.Message, len(calls))
	run := func(ctx context.Context, i int) error {
		call := calls[i]
		var res Result
		if verdicts[i] == repeatWarn {
			res = ErrorResult("you have called %s with these exact arguments %d times in a row; the answer will not change. Use what you have or try different arguments.", call.Name, a.cfg.RepeatLimit)
		} else {
			var err error
			res, err = a.handler(ctx, st, call)
			if err != nil {
				return fmt.Errorf("agent: tool %s: %w", call.Name, err)
			}
		}
		if a.observed() {
			a.emit(Event{Kind: EventToolResult, Step: st.Step, Call: &call, Result: &res})
		}
		out[i] = llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, ToolName: call.Name, Content: res.Content, IsError: res.IsError, Meta: res.Meta}
		return nil
	}
	if len(calls) == 1 {
		if err := run(ctx, 0); err != nil {
			return err
		}
	} else {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(a.cfg.MaxParallelTools)
		for i := range calls {
			g.Go(func() error { return run(gctx, i) })
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	st.Messages = append(st.Messages, out...)
	return nil
}

// decodeArgs decodes a call's JSON arguments; empty arguments are the empty object.
func decodeArgs(raw string) (any, error) {
	if strings.TrimSpace(raw) == "" {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, err
	}
	return v, nil
}

// argsOf returns the decoded arguments of call when the loop decoded them (and no wrapper changed them since).
func (a *Agent) argsOf(call llm.ToolCall) (decodedCall, bool) {
	for _, d := range a.args {
		if d.id == call.ID && d.raw == call.Arguments {
			return d, true
		}
	}
	return decodedCall{}, false
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
	if dt, ok := t.(decodedRunner); ok {
		if d, ok := a.argsOf(call); ok {
			return dt.runDecoded(ctx, json.RawMessage(call.Arguments), d.value, d.err)
		}
	}
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

// repeatTracker counts consecutive identical tool calls across steps. Arguments compare by their canonical JSON
// (key order and spacing do not matter); the same raw text needs no canonical form.
type repeatTracker struct {
	name, raw, canon string
	count            int
}

func (r *repeatTracker) observe(name string, d decodedCall, limit int) repeatVerdict {
	same := r.count > 0 && name == r.name && d.raw == r.raw
	if !same {
		canon := canonicalJSON(d)
		same = r.count > 0 && name == r.name && canon == r.canon
		r.canon = canon
	}
	if same {
		r.count++
	} else {
		r.name, r.count = name, 1
	}
	r.raw = d.raw
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
func canonicalJSON(d decodedCall) string {
	if d.err != nil {
		return strings.TrimSpace(d.raw)
	}
	b, err := json.Marshal(d.value)
	if err != nil {
		return d.raw
	}
	return string(b)
}
