package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/subagent"
	"github.com/deepresearch/deepresearch/workspace"
)

type noInput struct{}

func constTool(text string) func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
	return func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	}
}

func newWorkspace(t *testing.T) *workspace.Workspace {
	t.Helper()
	ws, err := workspace.New(t.TempDir(), workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// The runtime holds the file tools, tool_search, the task tool and the memory tools; the guard wraps outermost
// and the context manager innermost; /context and /compact work on an agent's state.
func TestNewAssemblesTheRuntime(t *testing.T) {
	model := scripted.New(llm.Info{Name: "scripted", ContextWindow: 32_000}, scripted.Sequence(scripted.Reply("hi")))
	rt, err := New(t.Context(), Config{Model: model, Workspace: newWorkspace(t),
		Context: &contextmgr.Config{MemoryDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	names := map[string]bool{}
	for _, tl := range rt.Tools {
		names[tl.Spec().Name] = true
	}
	for _, want := range []string{workspace.ToolReadFile, agent.ToolSearchName, subagent.ToolName, contextmgr.ToolMemoryRead} {
		if !names[want] {
			t.Errorf("no %s among %v", want, names)
		}
	}
	if len(rt.Middleware) != 3 {
		t.Fatalf("%d middleware, want guard, lazy schemas, context manager", len(rt.Middleware))
	}
	if _, ok := rt.Middleware[0].(*mcptools.Guard); !ok {
		t.Errorf("the guard is not outermost: %T", rt.Middleware[0])
	}
	if rt.Middleware[2] != rt.ContextManager() || rt.ContextManager() == nil {
		t.Errorf("the context manager is not innermost")
	}
	ag, err := agent.New(agent.Config{Model: model, System: "sys", Tools: rt.Tools, Middleware: rt.Middleware})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Run(t.Context(), "hello"); err != nil {
		t.Fatal(err)
	}
	if got := rt.ContextReport(ag.State()); !strings.Contains(got, "Context: ") || !strings.Contains(got, "tool schemas") {
		t.Errorf("/context = %q", got)
	}
	if got, err := rt.Compact(t.Context(), ag.State(), ""); err != nil || got != "nothing to compact yet" {
		t.Errorf("/compact = %q, %v", got, err)
	}
}

// Without a model there are no subagents; without context settings no manager, and /context says so.
func TestNewLeavesOutWhatIsNotConfigured(t *testing.T) {
	rt, err := New(t.Context(), Config{Workspace: newWorkspace(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	for _, tl := range rt.Tools {
		if n := tl.Spec().Name; n == subagent.ToolName || strings.HasPrefix(n, "memory_") {
			t.Errorf("unexpected tool %s", n)
		}
	}
	if rt.ContextManager() != nil || rt.ContextReport(&agent.State{}) != "context management is not enabled" {
		t.Error("a context manager without context settings")
	}
	if _, err := New(t.Context(), Config{}); err == nil {
		t.Error("no workspace accepted")
	}
}

// A server that adds a tool mid-session: the bound agent can call it without being rebuilt, and keeps its other
// tools.
func TestBindFollowsToolListChanges(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "first", Description: "first tool"}, constTool("one"))
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	rt, err := New(t.Context(), Config{Workspace: newWorkspace(t),
		MCP: &mcptools.File{Servers: map[string]mcptools.ServerConfig{"mem": {Transport: ct}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ag, err := agent.New(agent.Config{Model: scripted.New(llm.Info{}, scripted.Sequence()), Tools: rt.Tools})
	if err != nil {
		t.Fatal(err)
	}
	rt.Bind(ag)
	mcp.AddTool(srv, &mcp.Tool{Name: "second", Description: "added later"}, constTool("two"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if tl, ok := ag.Tool("mcp__mem__second"); ok {
			res, err := tl.Run(t.Context(), nil)
			if err != nil || res.Content != "two" {
				t.Fatalf("new tool = %+v, %v", res, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent never got the server's new tool")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, name := range []string{workspace.ToolLs, "mcp__mem__first"} {
		if _, ok := ag.Tool(name); !ok {
			t.Errorf("the agent lost %s", name)
		}
	}
}

// A subagent type with context settings gets a manager of its own; the others share the runtime's; settings that
// fail keep the shared one.
func TestSubagentMiddleware(t *testing.T) {
	ws := newWorkspace(t)
	own := 0
	cfg := Config{Workspace: ws, Context: &contextmgr.Config{NoMemory: true},
		SubagentContext: func(typ subagent.Type, _ []agent.Tool) (*contextmgr.Manager, error) {
			c, err := contextmgr.Preset(typ.Context["preset"].(string))
			if err != nil {
				return nil, err
			}
			own++
			c.NoMemory = true
			return contextmgr.New(ws, c)
		}}
	rt, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	shared := rt.ContextManager()
	last := func(mw []agent.Middleware) agent.Middleware { return mw[len(mw)-1] }
	if m := last(rt.subagentMiddleware(subagent.Type{Name: "general-purpose"})); m != shared {
		t.Fatalf("a type without context settings should share the runtime's manager: %T", m)
	}
	tuned, ok := last(rt.subagentMiddleware(subagent.Type{Name: "scout", Context: map[string]any{"preset": "deepagents"}})).(*contextmgr.Manager)
	if !ok || tuned == shared || tuned.Config().Preset != "deepagents" || own != 1 {
		t.Fatalf("a type with context settings needs its own manager")
	}
	if m := last(rt.subagentMiddleware(subagent.Type{Name: "bad", Context: map[string]any{"preset": "nope"}})); m != shared {
		t.Errorf("bad settings must fall back to the shared manager")
	}
}
