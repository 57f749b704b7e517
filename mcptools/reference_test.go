package mcptools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/mcptools/mcptest"
)

// These tests run the official reference servers from npm (pinned in testdata/install.sh) over stdio.

func TestReferenceEverythingServer(t *testing.T) {
	m := start(t, map[string]mcptools.ServerConfig{"everything": mcptest.Everything(t)}, mcptools.Options{InitTimeout: 60 * time.Second})
	if f := m.Failures(); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Spec().Name)
	}
	for _, want := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__trigger-long-running-operation"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools %v lack %s", names, want)
		}
	}
	res, err := toolByName(t, m.Tools(), "mcp__everything__get-sum").Run(t.Context(), json.RawMessage(`{"a": 19, "b": 23}`))
	if err != nil || res.IsError || !strings.Contains(res.Content, "42") {
		t.Fatalf("get-sum = %+v, %v", res, err)
	}
	res, _ = toolByName(t, m.Tools(), "mcp__everything__get-sum").Run(t.Context(), json.RawMessage(`{"a": "x"}`))
	if !res.IsError {
		t.Fatalf("invalid arguments must come back as an error result, got %q", res.Content)
	}
}

// A file read through server-filesystem that is larger than the ceiling reaches the history truncated, with a note
// of its original length.
func TestReferenceFilesystemLargeResultIsCapped(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("0123456789abcdefghij\n", 30_000) // 630,000 characters
	path := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	m := start(t, map[string]mcptools.ServerConfig{"fs": mcptest.Filesystem(t, real)}, mcptools.Options{InitTimeout: 60 * time.Second})
	if f := m.Failures(); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	args, _ := json.Marshal(map[string]string{"path": filepath.Join(real, "big.txt")})
	model := scripted.New(llm.Info{ContextWindow: 1_000_000}, scripted.Sequence(
		scripted.Reply("", llm.ToolCall{Name: "mcp__fs__read_text_file", Arguments: string(args)}),
		scripted.Reply("read it"),
	))
	ag, err := agent.New(agent.Config{Model: model, Tools: m.Tools(), Middleware: []agent.Middleware{mcptools.NewGuard(mcptools.GuardConfig{})}})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := ag.Run(t.Context(), "read big.txt"); err != nil || out != "read it" {
		t.Fatalf("Run = %q, %v", out, err)
	}
	var res llm.Message
	for _, msg := range ag.State().Messages {
		if msg.Role == llm.RoleTool {
			res = msg
		}
	}
	if res.IsError {
		t.Fatalf("read failed: %s", clipStr(res.Content, 500))
	}
	n := len([]rune(res.Content))
	if n > mcptools.DefaultMaxResultChars+300 || !strings.Contains(res.Content, "the tool returned 630000 characters; only the first 400000 are shown") {
		t.Fatalf("result has %d characters; tail %q", n, res.Content[len(res.Content)-200:])
	}
	if !strings.HasPrefix(res.Content, "0123456789abcdefghij\n0123456789") {
		t.Fatalf("result should start with the file: %q", res.Content[:60])
	}
}

// The server is killed while a call is in flight: the call comes back as an error result that says so, and the
// agent carries on to its answer.
func TestReferenceServerDiesMidCall(t *testing.T) {
	m := start(t, map[string]mcptools.ServerConfig{"everything": mcptest.Everything(t)}, mcptools.Options{InitTimeout: 60 * time.Second})
	s, ok := m.Server("everything")
	if !ok {
		t.Fatalf("failures: %v", m.Failures())
	}
	model := scripted.New(llm.Info{}, scripted.Sequence(
		scripted.Reply("", llm.ToolCall{Name: "mcp__everything__trigger-long-running-operation", Arguments: `{"duration": 60, "steps": 60}`}),
		scripted.Reply("the server crashed; answering without it"),
	))
	var once sync.Once
	observer := func(e agent.Event) {
		if e.Kind == agent.EventToolCall {
			once.Do(func() {
				go func() {
					time.Sleep(300 * time.Millisecond) // let the request reach the server
					_ = syscall.Kill(-s.Pid(), syscall.SIGKILL)
				}()
			})
		}
	}
	ag, err := agent.New(agent.Config{Model: model, Tools: m.Tools(), Observer: observer, Middleware: []agent.Middleware{mcptools.NewGuard(mcptools.GuardConfig{})}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second)
	defer cancel()
	out, err := ag.Run(ctx, "run the long operation")
	if err != nil || out != "the server crashed; answering without it" {
		t.Fatalf("Run = %q, %v", out, err)
	}
	var res llm.Message
	for _, msg := range ag.State().Messages {
		if msg.Role == llm.RoleTool {
			res = msg
		}
	}
	if !res.IsError || !strings.Contains(res.Content, "mcp server everything exited (signal: killed)") {
		t.Fatalf("tool result = %q", res.Content)
	}
}
