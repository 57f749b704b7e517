// Package scripted provides a deterministic in-process model for tests, benchmarks and demos: a function decides
// each answer from the request, and usage is counted from the prompt so that token and cost figures are real.
package scripted

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

// Func produces the answer to one request. It must not retain or mutate req.
type Func func(ctx context.Context, req *llm.Request) (*llm.Response, error)

// Model is a scripted llm.Model. It is safe for concurrent use when its Func is.
type Model struct {
	info    llm.Info
	fn      Func
	latency time.Duration
	counter tokens.Counter

	calls    atomic.Int64
	inFlight atomic.Int64
	peak     atomic.Int64

	mu       sync.Mutex
	requests []*llm.Request
	record   bool
}

// Option configures a Model.
type Option func(*Model)

// WithLatency makes every call take d (honouring cancellation), to simulate a remote model.
func WithLatency(d time.Duration) Option { return func(m *Model) { m.latency = d } }

// WithRecording keeps a deep copy of every request for assertions.
func WithRecording() Option { return func(m *Model) { m.record = true } }

// New returns a scripted model. A zero ContextWindow defaults to 128,000 tokens.
func New(info llm.Info, fn Func, opts ...Option) *Model {
	if info.Provider == "" {
		info.Provider = "scripted"
	}
	if info.Name == "" {
		info.Name = "scripted"
	}
	if info.ContextWindow == 0 {
		info.ContextWindow = 128_000
	}
	if info.MaxOutput == 0 {
		info.MaxOutput = 8_000
	}
	m := &Model{info: info, fn: fn, counter: tokens.Approx{}}
	for _, o := range opts {
		o(m)
	}
	return m
}

// Info implements llm.Model.
func (m *Model) Info() llm.Info { return m.info }

// Calls is the number of Generate calls so far.
func (m *Model) Calls() int { return int(m.calls.Load()) }

// PeakConcurrency is the largest number of calls that were in flight at once.
func (m *Model) PeakConcurrency() int { return int(m.peak.Load()) }

// Requests returns the recorded requests (WithRecording).
func (m *Model) Requests() []*llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*llm.Request(nil), m.requests...)
}

// Generate implements llm.Model.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	m.calls.Add(1)
	n := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for {
		p := m.peak.Load()
		if n <= p || m.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if m.record {
		cp := *req
		cp.Messages = llm.CloneMessages(req.Messages)
		cp.Tools = append([]llm.ToolSpec(nil), req.Tools...)
		cp.OnText = nil
		m.mu.Lock()
		m.requests = append(m.requests, &cp)
		m.mu.Unlock()
	}
	if m.latency > 0 {
		t := time.NewTimer(m.latency)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	if prompt := tokens.CountRequest(m.counter, req); prompt > m.info.ContextWindow {
		return nil, &llm.ContextLengthError{Provider: m.info.Provider,
			Message: fmt.Sprintf("prompt has %d tokens, window is %d", prompt, m.info.ContextWindow)}
	}
	resp, err := m.fn(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp.Model == "" {
		resp.Model = m.info.Name
	}
	if resp.Message.Role == "" {
		resp.Message.Role = llm.RoleAssistant
	}
	if resp.StopReason == "" {
		resp.StopReason = llm.StopEnd
		if len(resp.Message.ToolCalls) > 0 {
			resp.StopReason = llm.StopToolUse
		}
	}
	if resp.Usage == (llm.Usage{}) {
		resp.Usage = llm.Usage{
			InputTokens:  tokens.CountRequest(m.counter, req),
			OutputTokens: tokens.CountMessage(m.counter, resp.Message),
		}
	}
	if req.OnText != nil && resp.Message.Content != "" {
		req.OnText(resp.Message.Content)
	}
	return resp, nil
}

// Reply is a convenience for building responses.
func Reply(text string, calls ...llm.ToolCall) *llm.Response {
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: text, ToolCalls: calls}}
}

// Sequence answers with the given responses in order, then fails; for short linear scripts.
func Sequence(resps ...*llm.Response) Func {
	var mu sync.Mutex
	i := 0
	return func(context.Context, *llm.Request) (*llm.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		if i >= len(resps) {
			return nil, fmt.Errorf("scripted: no reply left after %d calls", i)
		}
		r := resps[i]
		i++
		cp := *r
		cp.Message = r.Message.Clone()
		return &cp, nil
	}
}
