package cli

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/mcptools"
)

type noInput struct{}

func constTool(text string) func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
	return func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	}
}

// A server that adds a tool mid-session: the bound agent can call it without being rebuilt, and keeps its other
// tools.
func TestBindAgentFollowsToolListChanges(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "first", Description: "first tool"}, constTool("one"))
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	att := &mcpAttachment{mgr: mcptools.Start(t.Context(), &mcptools.File{Servers: map[string]mcptools.ServerConfig{"mem": {Transport: ct}}}, mcptools.Options{})}
	defer att.mgr.Close()
	builtin := agent.NewTool("ls", "list", func(context.Context, struct{}) (string, error) { return "", nil })
	rt := &runtime{Tools: append([]agent.Tool{builtin}, att.mgr.Tools()...), mcp: att}
	ag, err := agent.New(agent.Config{Model: scripted.New(llm.Info{}, scripted.Sequence()), Tools: rt.Tools})
	if err != nil {
		t.Fatal(err)
	}
	rt.bindAgent(ag)
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
	for _, name := range []string{"ls", "mcp__mem__first"} {
		if _, ok := ag.Tool(name); !ok {
			t.Errorf("the agent lost %s", name)
		}
	}
}
