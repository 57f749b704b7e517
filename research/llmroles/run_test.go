package llmroles

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// replies is a recording scripted model answering with texts in order.
func replies(texts ...string) *scripted.Model {
	rs := make([]*llm.Response, len(texts))
	for i, t := range texts {
		rs[i] = scripted.Reply(t)
	}
	return scripted.New(llm.Info{Name: "test-model"}, scripted.Sequence(rs...), scripted.WithRecording())
}

// lastUser returns the last user message of a recorded request.
func lastUser(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

func system(req *llm.Request) string { return llm.Text(req.Messages, llm.RoleSystem) }

type answer struct {
	Name  string   `json:"name" jsonschema:"a name"`
	Score float64  `json:"score"`
	Tags  []string `json:"tags,omitempty"`
}

func TestRunRoleHappyPath(t *testing.T) {
	m := replies(`{"name": "alpha", "score": 0.5, "tags": ["x"]}`)
	got, err := RunRole[answer](t.Context(), RoleSpec{Name: "tester", Model: m, System: "be terse", Logger: quietLogger()}, "give me an answer")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "alpha" || got.Score != 0.5 || len(got.Tags) != 1 {
		t.Fatalf("got %+v", got)
	}
	reqs := m.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	u := lastUser(reqs[0])
	if !strings.Contains(u, "give me an answer") || !strings.Contains(u, `"score"`) || !strings.Contains(u, "JSON Schema") {
		t.Errorf("prompt lacks the task or the schema:\n%s", u)
	}
	if !reqs[0].JSON {
		t.Error("JSON mode not requested for a tool-less structured run")
	}
	if system(reqs[0]) != "be terse" {
		t.Errorf("system prompt = %q", system(reqs[0]))
	}
}

func TestRunRoleRepairsMalformedJSON(t *testing.T) {
	tests := []struct{ name, reply string }{
		{"fenced with prose", "Sure! Here is the answer:\n```json\n{\"name\": \"alpha\", \"score\": 0.5}\n```\nLet me know if you need more."},
		{"trailing comma", `{"name": "alpha", "score": 0.5, "tags": ["x",],}`},
		{"truncated", `{"score": 0.5, "name": "alpha", "tags": ["x", "y`},
		{"single quotes and bare keys", `{name: 'alpha', score: 0.5}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := replies(tt.reply)
			got, err := RunRole[answer](t.Context(), RoleSpec{Name: "tester", Model: m, Logger: quietLogger()}, "task")
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != "alpha" || got.Score != 0.5 {
				t.Fatalf("got %+v", got)
			}
			if m.Calls() != 1 {
				t.Fatalf("%d calls: repair should not need a re-ask", m.Calls())
			}
		})
	}
}

func TestRunRoleReasksWithValidationError(t *testing.T) {
	m := replies(`{"name": 42, "score": 1}`, `{"name": "beta", "score": 1}`)
	got, err := RunRole[answer](t.Context(), RoleSpec{Name: "tester", Model: m, Logger: quietLogger()}, "task")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "beta" {
		t.Fatalf("got %+v", got)
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d calls, want 2", len(reqs))
	}
	u := lastUser(reqs[1])
	if !strings.Contains(u, "does not match the schema") || !strings.Contains(u, "/properties/name") {
		t.Errorf("re-ask does not carry the validation error:\n%s", u)
	}
	// The re-ask continues the conversation: the bad answer is in the history.
	if !strings.Contains(llm.Text(reqs[1].Messages, llm.RoleAssistant), `"name": 42`) {
		t.Error("re-ask lost the previous answer")
	}
}

func TestRunRoleNeverValid(t *testing.T) {
	m := replies("I cannot do that.", "Still no.", "Sorry, no JSON today.", "unused")
	_, err := RunRole[answer](t.Context(), RoleSpec{Name: "verifier", Model: m, Logger: quietLogger()}, "task")
	if err == nil {
		t.Fatal("want an error")
	}
	if !errors.Is(err, ErrInvalidOutput) {
		t.Errorf("error %v is not ErrInvalidOutput", err)
	}
	var oe *OutputError
	if !errors.As(err, &oe) || oe.Role != "verifier" || oe.Attempts != 3 {
		t.Fatalf("error = %#v", err)
	}
	if !strings.Contains(err.Error(), "verifier") || !strings.Contains(err.Error(), "no JSON") {
		t.Errorf("error does not name the role and the problem: %v", err)
	}
	if m.Calls() != 1+DefaultMaxReasks {
		t.Errorf("%d calls, want %d", m.Calls(), 1+DefaultMaxReasks)
	}
}

func TestRunRoleReaskBounds(t *testing.T) {
	for _, tt := range []struct{ reasks, calls int }{{-1, 1}, {1, 2}, {4, 5}} {
		m := replies("no", "no", "no", "no", "no", "no")
		_, err := RunRole[answer](t.Context(), RoleSpec{Name: "r", Model: m, MaxReasks: tt.reasks, Logger: quietLogger()}, "task")
		if err == nil || m.Calls() != tt.calls {
			t.Errorf("MaxReasks %d: err %v, calls %d, want %d", tt.reasks, err, m.Calls(), tt.calls)
		}
	}
}

func TestRunRoleCheckSoftAndHard(t *testing.T) {
	check := func(a *answer) error {
		if a.Score < 1 {
			return Soft(errors.New("score too low"))
		}
		return nil
	}
	m := replies(`{"name": "a", "score": 0}`, `{"name": "b", "score": 0}`, `{"name": "c", "score": 0}`)
	got, err := RunRoleCheck(t.Context(), RoleSpec{Name: "r", Model: m, Logger: quietLogger()}, "task", check)
	if err != nil {
		t.Fatalf("soft failure on the last attempt should be accepted: %v", err)
	}
	if got.Name != "c" || m.Calls() != 3 {
		t.Fatalf("got %+v after %d calls", got, m.Calls())
	}
	hard := func(a *answer) error { return errors.New("never good") }
	m = replies(`{"name": "a", "score": 0}`, `{"name": "b", "score": 0}`, `{"name": "c", "score": 0}`)
	if _, err := RunRoleCheck(t.Context(), RoleSpec{Name: "r", Model: m, Logger: quietLogger()}, "task", hard); !errors.Is(err, ErrInvalidOutput) {
		t.Fatalf("hard check failure: err = %v", err)
	}
}

func TestRunRoleModelErrorNamesRole(t *testing.T) {
	m := scripted.New(llm.Info{}, func(context.Context, *llm.Request) (*llm.Response, error) {
		return nil, errors.New("provider down")
	})
	_, err := RunRole[answer](t.Context(), RoleSpec{Name: "planner", Model: m, Logger: quietLogger()}, "task")
	if err == nil || !strings.Contains(err.Error(), "planner") || !strings.Contains(err.Error(), "provider down") {
		t.Fatalf("err = %v", err)
	}
	if _, err := RunText(t.Context(), RoleSpec{Name: "analyst"}, "task"); err == nil || !strings.Contains(err.Error(), "analyst: no model") {
		t.Fatalf("nil model: err = %v", err)
	}
}

func TestRunRoleUsesTools(t *testing.T) {
	var ran atomic.Int32
	type lookupIn struct {
		Key string `json:"key"`
	}
	tool := agent.NewTool("lookup", "look a key up", func(_ context.Context, in lookupIn) (string, error) {
		ran.Add(1)
		return "value-of-" + in.Key, nil
	})
	m := scripted.New(llm.Info{}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == llm.RoleTool {
			return scripted.Reply(`{"name": "` + last.Content + `", "score": 1}`), nil
		}
		return scripted.Reply("", llm.ToolCall{ID: "c1", Name: "lookup", Arguments: `{"key": "k"}`}), nil
	}, scripted.WithRecording())
	got, err := RunRole[answer](t.Context(), RoleSpec{Name: "r", Model: m, Tools: []agent.Tool{tool}, Logger: quietLogger()}, "task")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "value-of-k" || ran.Load() != 1 {
		t.Fatalf("got %+v, tool ran %d times", got, ran.Load())
	}
	if m.Requests()[0].JSON {
		t.Error("JSON mode must stay off when tools are offered")
	}
}

func TestRunTextCheck(t *testing.T) {
	m := replies("", "hello")
	got, err := RunText(t.Context(), RoleSpec{Name: "r", Model: m, Logger: quietLogger()}, "say hello")
	if err != nil || got != "hello" || m.Calls() != 2 {
		t.Fatalf("got %q, %v after %d calls", got, err, m.Calls())
	}
	if !strings.Contains(lastUser(m.Requests()[1]), "empty") {
		t.Error("re-ask does not say the answer was empty")
	}
}

func TestRunRoleArray(t *testing.T) {
	m := replies("The list: [1, 2, 3,]")
	got, err := RunRole[[]int](t.Context(), RoleSpec{Name: "r", Model: m, Logger: quietLogger()}, "numbers")
	if err != nil || len(got) != 3 || got[2] != 3 {
		t.Fatalf("got %v, %v", got, err)
	}
}
