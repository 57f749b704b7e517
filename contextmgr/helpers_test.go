package contextmgr

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/workspace"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read golden %s (run with -update to create it): %v", p, err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

// newManager builds a manager over a fresh workspace with the persistent store off unless cfg sets it.
func newManager(t *testing.T, cfg Config) (*Manager, *workspace.Workspace) {
	t.Helper()
	ws, err := workspace.New(t.TempDir(), workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MemoryDir == "" {
		cfg.NoMemory = true
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := New(ws, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, ws
}

// noCallModel is a model that must not be called.
func noCallModel(t *testing.T, window int) *scripted.Model {
	return scripted.New(llm.Info{Name: "scripted", ContextWindow: window}, func(context.Context, *llm.Request) (*llm.Response, error) {
		t.Error("unexpected model call")
		return nil, fmt.Errorf("unexpected call")
	}, scripted.WithRecording())
}

// summaryModel answers summary requests with text and fails anything else.
func summaryModel(window int, text string) *scripted.Model {
	return scripted.New(llm.Info{Name: "scripted", ContextWindow: window}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Messages[0].Content != SummarizerPrompt {
			return nil, fmt.Errorf("not a summary request")
		}
		return scripted.Reply(text), nil
	}, scripted.WithRecording())
}

// conversation builds system + user request + n tool steps (each an assistant call and its result of size
// chars), with every parallel-th step carrying two calls.
func conversation(n, chars, parallel int) []llm.Message {
	ms := []llm.Message{
		{Role: llm.RoleSystem, Content: "You are a test agent.", Pinned: true},
		{Role: llm.RoleUser, Content: "Find the answer to the test question."},
	}
	call := 0
	for s := 0; s < n; s++ {
		calls := 1
		if parallel > 0 && s%parallel == parallel-1 {
			calls = 2
		}
		a := llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprintf("step %d", s)}
		var results []llm.Message
		for range calls {
			call++
			id := fmt.Sprintf("call_%d", call)
			a.ToolCalls = append(a.ToolCalls, llm.ToolCall{ID: id, Name: "search", Arguments: fmt.Sprintf(`{"q":"topic %d"}`, call)})
			results = append(results, llm.Message{Role: llm.RoleTool, ToolCallID: id, ToolName: "search", Content: resultText(call, chars)})
		}
		ms = append(ms, a)
		ms = append(ms, results...)
	}
	return ms
}

func resultText(call, chars int) string {
	line := fmt.Sprintf("result of call %d: some text\n", call)
	return strings.Repeat(line, chars/len(line)+1)[:chars]
}

// checkPairs fails when a tool call and its result were split: every call is followed by its result and every
// result follows its call.
func checkPairs(t *testing.T, ms []llm.Message) {
	t.Helper()
	for i, m := range ms {
		switch {
		case m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0:
			for j, tc := range m.ToolCalls {
				k := i + 1 + j
				if k >= len(ms) || ms[k].Role != llm.RoleTool || ms[k].ToolCallID != tc.ID {
					t.Fatalf("message %d: tool call %s is not followed by its result", i, tc.ID)
				}
			}
		case m.Role == llm.RoleTool:
			k := i - 1
			for k >= 0 && ms[k].Role == llm.RoleTool {
				k--
			}
			found := false
			if k >= 0 {
				for _, tc := range ms[k].ToolCalls {
					found = found || tc.ID == m.ToolCallID
				}
			}
			if !found {
				t.Fatalf("message %d: result of %s has no call before it", i, m.ToolCallID)
			}
		}
	}
}

func state(model llm.Model, session string, ms []llm.Message) *agent.State {
	return &agent.State{SessionID: session, Messages: ms, Model: model}
}

func readWS(t *testing.T, ws *workspace.Workspace, p string) string {
	t.Helper()
	b, err := ws.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
