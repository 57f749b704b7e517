package llm

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Entry is one model call in a ledger.
type Entry struct {
	Time     time.Time `json:"time"`
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	// Label says who made the call (an agent role or session id).
	Label    string        `json:"label,omitempty"`
	Usage    Usage         `json:"usage"`
	CostUSD  float64       `json:"cost_usd"`
	Duration time.Duration `json:"duration_ns"`
}

// Ledger accumulates every call's usage and cost for a run. It is safe for concurrent use.
type Ledger struct {
	mu      sync.Mutex
	entries []Entry
	// OnEntry, if set, is called after each record (outside the lock) — budget fuses hook here.
	OnEntry func(Entry)
}

// Record adds an entry.
func (l *Ledger) Record(e Entry) {
	l.mu.Lock()
	l.entries = append(l.entries, e)
	hook := l.OnEntry
	l.mu.Unlock()
	if hook != nil {
		hook(e)
	}
}

// Entries returns a copy of what was recorded.
func (l *Ledger) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Entry(nil), l.entries...)
}

// Totals returns the summed usage, cost and number of calls. The usage is Estimated when any call's was (see
// EstimatedCalls).
func (l *Ledger) Totals() (Usage, float64, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var u Usage
	var c float64
	for _, e := range l.entries {
		u = u.Add(e.Usage)
		c += e.CostUSD
	}
	return u, c, len(l.entries)
}

// EstimatedCalls is how many of the recorded calls had no usage from their server, so that their tokens (and
// cost) were counted locally with llm/tokens: reports and `deepresearch models` say such figures are estimated.
func (l *Ledger) EstimatedCalls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.entries {
		if e.Usage.Estimated {
			n++
		}
	}
	return n
}

// Metered wraps a model so that every successful call is recorded in the ledger under label, and so is a call
// refused after the server did the work: a prompt it silently truncated (*ContextLengthError with Usage).
func Metered(m Model, l *Ledger, label string) Model {
	return &metered{Model: m, ledger: l, label: label}
}

type metered struct {
	Model
	ledger *Ledger
	label  string
}

func (m *metered) Generate(ctx context.Context, req *Request) (*Response, error) {
	start := time.Now()
	resp, err := m.Model.Generate(ctx, req)
	if err != nil {
		var cl *ContextLengthError
		if errors.As(err, &cl) && cl.Usage != (Usage{}) {
			m.record(start, cl.Usage)
		}
		return nil, err
	}
	m.record(start, resp.Usage)
	return resp, nil
}

func (m *metered) record(start time.Time, u Usage) {
	info := m.Info()
	m.ledger.Record(Entry{
		Time: start, Provider: info.Provider, Model: info.Name, Label: m.label,
		Usage: u, CostUSD: info.Price.Cost(u), Duration: time.Since(start),
	})
}
