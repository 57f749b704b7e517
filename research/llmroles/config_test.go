package llmroles

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
)

type roleRecorder struct {
	role string
	seen *[]string
	mu   *sync.Mutex
}

func (r roleRecorder) BeforeRequest(_ context.Context, _ *agent.State, _ *llm.Request) error {
	r.mu.Lock()
	*r.seen = append(*r.seen, r.role)
	r.mu.Unlock()
	return nil
}

func TestConfigWiresObserverMiddlewareAndTools(t *testing.T) {
	var mu sync.Mutex
	var events []agent.Event
	var hooked []string
	type noteIn struct {
		Text string `json:"text"`
	}
	note := agent.NewTool("note", "write a note", func(context.Context, noteIn) (string, error) { return "ok", nil })
	m := replies(goodPlan)
	roles := New(Config{
		Planner: m,
		Tools:   map[string][]agent.Tool{RolePlanner: {note}},
		Middleware: func(role string) []agent.Middleware {
			return []agent.Middleware{roleRecorder{role: role, seen: &hooked, mu: &mu}}
		},
		Observer: func(e agent.Event) { mu.Lock(); events = append(events, e); mu.Unlock() },
		Logger:   quietLogger(),
	})
	if _, err := roles.Planner.Plan(t.Context(), "question?"); err != nil {
		t.Fatal(err)
	}
	req := m.Requests()[0]
	if len(req.Tools) != 1 || req.Tools[0].Name != "note" {
		t.Errorf("planner tools %+v", req.Tools)
	}
	if len(hooked) != 1 || hooked[0] != RolePlanner {
		t.Errorf("middleware ran for %v", hooked)
	}
	done := false
	for _, e := range events {
		if !strings.HasPrefix(e.Session, "planner-") {
			t.Errorf("event session %q does not name the role", e.Session)
		}
		done = done || e.Kind == agent.EventDone
	}
	if !done {
		t.Error("no done event observed")
	}
}
