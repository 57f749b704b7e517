package mcptools_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/mcptools"
)

func TestGuard(t *testing.T) {
	call := llm.ToolCall{ID: "c1", Name: "probe", Arguments: "{}"}
	tests := []struct {
		name     string
		cfg      mcptools.GuardConfig
		handler  agent.ToolHandler
		want     string // substring of the result
		isError  bool
		maxRunes int
	}{
		{
			name: "plain result passes",
			handler: func(context.Context, *agent.State, llm.ToolCall) (agent.Result, error) {
				return agent.Result{Content: "ok"}, nil
			},
			want: "ok",
		},
		{
			name: "go error becomes an error result naming the tool",
			handler: func(context.Context, *agent.State, llm.ToolCall) (agent.Result, error) {
				return agent.Result{}, errors.New("socket closed")
			},
			want: "tool probe failed: socket closed", isError: true,
		},
		{
			name:    "panic becomes an error result",
			handler: func(context.Context, *agent.State, llm.ToolCall) (agent.Result, error) { panic("nil map") },
			want:    "tool probe panicked: nil map", isError: true,
		},
		{
			name: "timeout",
			cfg:  mcptools.GuardConfig{Timeout: 50 * time.Millisecond},
			handler: func(ctx context.Context, _ *agent.State, _ llm.ToolCall) (agent.Result, error) {
				<-ctx.Done()
				return agent.Result{}, ctx.Err()
			},
			want: "tool probe timed out after 50ms", isError: true,
		},
		{
			name: "a tool that ignores cancellation is abandoned",
			cfg:  mcptools.GuardConfig{Timeout: 20 * time.Millisecond, AbandonAfter: 20 * time.Millisecond},
			handler: func(context.Context, *agent.State, llm.ToolCall) (agent.Result, error) {
				time.Sleep(2 * time.Second)
				return agent.Result{Content: "late"}, nil
			},
			want: "did not stop; its result is abandoned", isError: true,
		},
		{
			name: "per-tool override exempts from the timeout",
			cfg:  mcptools.GuardConfig{Timeout: time.Nanosecond, Timeouts: map[string]time.Duration{"probe": mcptools.NoTimeout}},
			handler: func(ctx context.Context, _ *agent.State, _ llm.ToolCall) (agent.Result, error) {
				time.Sleep(10 * time.Millisecond)
				return agent.Result{Content: "finished"}, ctx.Err()
			},
			want: "finished",
		},
		{
			name: "oversized result is truncated with the original length",
			cfg:  mcptools.GuardConfig{MaxResultChars: 1000},
			handler: func(context.Context, *agent.State, llm.ToolCall) (agent.Result, error) {
				return agent.Result{Content: strings.Repeat("é", 5000)}, nil
			},
			want: "the tool returned 5000 characters; only the first 1000 are shown", maxRunes: 1000 + 200,
		},
		{
			name: "redact rewrites a failed call's message",
			cfg:  mcptools.GuardConfig{Redact: func(s string) string { return strings.ReplaceAll(s, "sk-live-123456", "[redacted]") }},
			handler: func(context.Context, *agent.State, llm.ToolCall) (agent.Result, error) {
				return agent.Result{}, errors.New("GET https://api.example.com/?key=sk-live-123456: 401")
			},
			want: "tool probe failed: GET https://api.example.com/?key=[redacted]: 401", isError: true,
		},
		{
			name: "redact rewrites an error result the tool returned",
			cfg:  mcptools.GuardConfig{Redact: func(s string) string { return strings.ReplaceAll(s, "sk-live-123456", "[redacted]") }},
			handler: func(context.Context, *agent.State, llm.ToolCall) (agent.Result, error) {
				return agent.Result{Content: "upstream said: bad key sk-live-123456", IsError: true}, nil
			},
			want: "upstream said: bad key [redacted]", isError: true,
		},
		{
			name: "redact leaves a successful result alone",
			cfg:  mcptools.GuardConfig{Redact: func(string) string { return "[redacted]" }},
			handler: func(context.Context, *agent.State, llm.ToolCall) (agent.Result, error) {
				return agent.Result{Content: "token = abc123 in the file being edited"}, nil
			},
			want: "token = abc123 in the file being edited",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := mcptools.NewGuard(tt.cfg).WrapTool(tt.handler)
			res, err := h(t.Context(), &agent.State{}, call)
			if err != nil {
				t.Fatalf("Guard returned a Go error: %v", err)
			}
			if !strings.Contains(res.Content, tt.want) || res.IsError != tt.isError {
				t.Fatalf("result = %q (error %v), want %q (error %v)", clipStr(res.Content, 300), res.IsError, tt.want, tt.isError)
			}
			if tt.maxRunes > 0 && len([]rune(res.Content)) > tt.maxRunes {
				t.Fatalf("result has %d characters, want at most %d", len([]rune(res.Content)), tt.maxRunes)
			}
		})
	}
}

func TestGuardPassesRunCancellationUp(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	h := mcptools.NewGuard(mcptools.GuardConfig{}).WrapTool(func(ctx context.Context, _ *agent.State, _ llm.ToolCall) (agent.Result, error) {
		cancel()
		<-ctx.Done()
		return agent.Result{}, ctx.Err()
	})
	if _, err := h(ctx, &agent.State{}, llm.ToolCall{Name: "probe"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelling the run must stop it, got %v", err)
	}
}

func TestTruncateDefault(t *testing.T) {
	s := strings.Repeat("a", mcptools.DefaultMaxResultChars+1)
	out, n, cut := mcptools.Truncate(s, mcptools.DefaultMaxResultChars)
	if !cut || n != mcptools.DefaultMaxResultChars+1 || !strings.HasPrefix(out, strings.Repeat("a", mcptools.DefaultMaxResultChars)+"\n\n...(result truncated") {
		t.Fatalf("Truncate: cut=%v n=%d tail=%q", cut, n, out[len(out)-120:])
	}
	if out, _, cut := mcptools.Truncate("short", 10); cut || out != "short" {
		t.Fatal("short text must pass unchanged")
	}
}

// In an agent, a panicking tool and a failing tool do not end the run: the model reads the errors and answers.
func TestGuardInAgentLoop(t *testing.T) {
	boom := agent.NewTool("boom", "panics", func(context.Context, struct{}) (string, error) { panic("kaboom") })
	fatal := agent.NewTool("fatal", "fails hard", func(context.Context, struct{}) (string, error) {
		return "", &agent.FatalError{Err: errors.New("database is gone")}
	})
	huge := agent.NewTool("huge", "returns a lot", func(context.Context, struct{}) (string, error) { return strings.Repeat("z", 3000), nil })
	model := scripted.New(llm.Info{}, scripted.Sequence(
		scripted.Reply("", llm.ToolCall{Name: "boom", Arguments: "{}"}, llm.ToolCall{Name: "fatal", Arguments: "{}"}, llm.ToolCall{Name: "huge", Arguments: "{}"}),
		scripted.Reply("carried on"),
	))
	ag, err := agent.New(agent.Config{Model: model, Tools: []agent.Tool{boom, fatal, huge}, Middleware: []agent.Middleware{mcptools.NewGuard(mcptools.GuardConfig{MaxResultChars: 1000})}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := ag.Run(t.Context(), "go")
	if err != nil || out != "carried on" {
		t.Fatalf("Run = %q, %v", out, err)
	}
	msgs := ag.State().Messages
	var tools []llm.Message
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			tools = append(tools, m)
		}
	}
	if len(tools) != 3 || !strings.Contains(tools[0].Content, "kaboom") || !tools[0].IsError ||
		!strings.Contains(tools[1].Content, "tool fatal failed") || !strings.Contains(tools[1].Content, "database is gone") ||
		!strings.Contains(tools[2].Content, "returned 3000 characters") || tools[2].Meta["truncated_from_chars"] != "3000" {
		t.Fatalf("tool messages = %+v", tools)
	}
}

func clipStr(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
