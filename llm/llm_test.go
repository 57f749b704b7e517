package llm

import (
	"context"
	"math"
	"sync"
	"testing"
)

func TestPriceCost(t *testing.T) {
	p := Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	u := Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheReadTokens: 2_000_000, CacheWriteTokens: 400_000}
	if got, want := p.Cost(u), 3+1.5+0.6+1.5; math.Abs(got-want) > 1e-9 {
		t.Errorf("cost %v, want %v", got, want)
	}
	if u.PromptTokens() != 3_400_000 {
		t.Errorf("prompt tokens %d", u.PromptTokens())
	}
	if sum := u.Add(u); sum.CacheWriteTokens != 800_000 || sum.InputTokens != 2_000_000 {
		t.Errorf("add %+v", sum)
	}
}

func TestCloneIsDeep(t *testing.T) {
	m := Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "a"}}, Reasoning: []Reasoning{{Text: "r"}}, Meta: map[string]string{"k": "v"}}
	c := m.Clone()
	c.ToolCalls[0].ID = "b"
	c.Reasoning[0].Text = "changed"
	c.Meta["k"] = "changed"
	if m.ToolCalls[0].ID != "a" || m.Reasoning[0].Text != "r" || m.Meta["k"] != "v" {
		t.Errorf("clone shares memory with the original: %+v", m)
	}
}

func TestLooksLikeContextLength(t *testing.T) {
	for body, want := range map[string]bool{
		`{"error":{"code":"context_length_exceeded"}}`:                true,
		`prompt is too long: 210000 tokens > 200000 maximum`:          true,
		`the request exceeds the available context size`:              true,
		`{"error":{"message":"Invalid API key","type":"auth_error"}}`: false,
		`Rate limit reached for requests`:                             false,
	} {
		if got := LooksLikeContextLength(body); got != want {
			t.Errorf("%q: %v, want %v", body, got, want)
		}
	}
}

type fixed struct{ usage Usage }

func (f fixed) Generate(context.Context, *Request) (*Response, error) {
	return &Response{Message: Message{Role: RoleAssistant, Content: "ok"}, Usage: f.usage}, nil
}
func (fixed) Info() Info {
	return Info{Provider: "p", Name: "m", Price: Price{Input: 1, Output: 2}}
}

func TestMeteredLedgerConcurrent(t *testing.T) {
	l := &Ledger{}
	var hooked int
	var mu sync.Mutex
	l.OnEntry = func(Entry) { mu.Lock(); hooked++; mu.Unlock() }
	m := Metered(fixed{usage: Usage{InputTokens: 1000, OutputTokens: 500}}, l, "searcher")
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := m.Generate(t.Context(), &Request{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	u, cost, calls := l.Totals()
	if calls != 20 || u.InputTokens != 20_000 || u.OutputTokens != 10_000 || hooked != 20 {
		t.Fatalf("totals %+v calls %d hooked %d", u, calls, hooked)
	}
	if want := 20 * (1000*1.0 + 500*2.0) / 1e6; math.Abs(cost-want) > 1e-12 {
		t.Errorf("cost %v, want %v", cost, want)
	}
	if e := l.Entries()[0]; e.Label != "searcher" || e.Provider != "p" || e.Model != "m" {
		t.Errorf("entry %+v", e)
	}
}
