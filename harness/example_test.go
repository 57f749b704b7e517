package harness_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/harness"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/subagent"
	"github.com/deepresearch/deepresearch/workspace"
)

type lookupInput struct {
	Topic string `json:"topic"`
}

// An agent wired the way `deepresearch ask` and `chat` wire theirs: workspace file tools, the tools of an MCP
// server (here one in the same process, over the go-sdk's in-memory transport), subagents behind the task tool,
// and context management. A scripted model stands in for a real one: it looks a topic up through the MCP tool,
// delegates a summary to a subagent, and answers.
func Example() {
	ctx := context.Background()

	// An MCP server with one tool, connected in memory.
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup", Description: "Look a topic up in the documentation."},
		func(_ context.Context, _ *mcp.CallToolRequest, in lookupInput) (*mcp.CallToolResult, any, error) {
			text := "Honeybees dance to tell the hive where flowers are."
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	client, server := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, server, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()

	// The model: the parent calls the MCP tool, then the task tool; the subagent (whose prompt is the task's
	// description) answers at once; the parent then writes its answer from the subagent's.
	model := scripted.New(llm.Info{Name: "scripted", ContextWindow: 32_000}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case strings.Contains(req.Messages[1].Content, "Summarise"):
			return scripted.Reply("Bees dance directions to flowers."), nil
		case last.Role == llm.RoleUser:
			return scripted.Reply("", llm.ToolCall{ID: "c1", Name: "mcp__docs__lookup", Arguments: `{"topic":"bees"}`}), nil
		case last.ToolCallID == "c1":
			return scripted.Reply("", llm.ToolCall{ID: "c2", Name: subagent.ToolName,
				Arguments: `{"description":"Summarise in one sentence: ` + last.Content + `","subagent_type":"general-purpose"}`}), nil
		default:
			return scripted.Reply("Answer: " + last.Content), nil
		}
	})

	dir, err := os.MkdirTemp("", "harness-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ws, err := workspace.New(dir, workspace.Config{})
	if err != nil {
		log.Fatal(err)
	}
	cc, err := contextmgr.Preset(contextmgr.PresetHybrid)
	if err != nil {
		log.Fatal(err)
	}
	cc.NoMemory, cc.NoProjectMemory = true, true // no persistent store in the user's config directory

	rt, err := harness.New(ctx, harness.Config{
		Model: model, Workspace: ws, Context: &cc,
		MCP: &mcptools.File{Servers: map[string]mcptools.ServerConfig{"docs": {Transport: client}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	ag, err := agent.New(agent.Config{Model: model, System: "You answer questions.", Tools: rt.Tools, Middleware: rt.Middleware})
	if err != nil {
		log.Fatal(err)
	}
	rt.Bind(ag) // follow the MCP server's tool list while the agent lives

	answer, err := ag.Run(ctx, "How do honeybees find flowers?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer)
	// Output: Answer: Bees dance directions to flowers.
}
