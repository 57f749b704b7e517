package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/mcptools"
)

// manyTools adds n tools with long descriptions, plus a distinctive weather tool, to a server.
func manyTools(n int) func(*mcp.Server) {
	return func(s *mcp.Server) {
		for i := range n {
			mcp.AddTool(s, &mcp.Tool{
				Name:        fmt.Sprintf("db_query_%02d", i),
				Description: fmt.Sprintf("Run query number %d against the inventory database. ", i) + strings.Repeat("It supports filters, sorting and pagination. ", 20),
			}, func(context.Context, *mcp.CallToolRequest, textIn) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "rows"}}}, nil, nil
			})
		}
		addWeather(s)
	}
}

func specNames(specs []llm.ToolSpec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

func TestLazyDefersMCPSchemasAndToolSearchLoadsThem(t *testing.T) {
	_, tr := memServer(t, manyTools(30))
	m := start(t, map[string]mcptools.ServerConfig{"big": {Transport: tr}}, mcptools.Options{})
	lazy := mcptools.NewLazy(mcptools.LazyConfig{})
	builtin := agent.NewTool("read_file", "Read a file.", func(context.Context, struct {
		Path string `json:"path"`
	}) (string, error) {
		return "", nil
	})
	tools := append([]agent.Tool{builtin, lazy.Tool()}, m.Tools()...)
	all := make([]llm.ToolSpec, len(tools))
	for i, tl := range tools {
		all[i] = tl.Spec()
	}
	window := 20_000 // small, so that 32 MCP schemas exceed 10% of it
	if total := tokens.CountTools(tokens.Approx{}, all); total <= window/10 {
		t.Fatalf("test setup: schemas cost %d tokens, need more than %d", total, window/10)
	}

	var mu sync.Mutex
	var seen [][]string
	model := scripted.New(llm.Info{ContextWindow: window}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, specNames(req.Tools))
		switch len(seen) {
		case 1:
			return scripted.Reply("", llm.ToolCall{Name: mcptools.SearchToolName, Arguments: `{"query":"weather forecast city"}`}), nil
		case 2:
			return scripted.Reply("", llm.ToolCall{Name: "mcp__big__forecast", Arguments: `{"city":"Kyoto"}`}), nil
		default:
			return scripted.Reply("done"), nil
		}
	})
	ag, err := agent.New(agent.Config{Model: model, Tools: tools, Middleware: []agent.Middleware{mcptools.NewGuard(mcptools.GuardConfig{}), lazy}})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := ag.Run(t.Context(), "weather in Kyoto?"); err != nil || out != "done" {
		t.Fatalf("Run = %q, %v", out, err)
	}
	// First call: built-ins and tool_search only.
	if !slices.Equal(seen[0], []string{"read_file", mcptools.SearchToolName}) {
		t.Fatalf("first request tools = %v", seen[0])
	}
	// The search found the forecast tool, and from the next call its schema is visible; the others stay hidden.
	var search, forecast llm.Message
	for _, m := range ag.State().Messages {
		switch m.ToolName {
		case mcptools.SearchToolName:
			search = m
		case "mcp__big__forecast":
			forecast = m
		}
	}
	if search.ToolName != mcptools.SearchToolName || !strings.Contains(search.Content, "- mcp__big__forecast: Weather forecast for a city.") {
		t.Fatalf("tool_search result = %+v", search)
	}
	if !slices.Contains(seen[1], "mcp__big__forecast") || slices.Contains(seen[1], "mcp__big__db_query_00") {
		t.Fatalf("second request tools = %v", seen[1])
	}
	if got := forecast.Content; !strings.Contains(got, "Sunny in Kyoto") {
		t.Fatalf("forecast result = %q", got)
	}
	// After the search, the 30 database tools are still deferred; forecast and alerts_list (also about weather)
	// were loaded by it.
	plan, ok := lazy.Stats(ag.State().SessionID)
	if !ok || !plan.Defer || len(plan.Deferred) != 30 || slices.Contains(plan.Deferred, "mcp__big__forecast") || plan.Saving() <= 0 || plan.Saving() >= plan.TotalTokens {
		t.Fatalf("plan = %+v (saving %d)", plan, plan.Saving())
	}
}

func TestLazyKeepsSmallToolSetsAndHidesToolSearch(t *testing.T) {
	_, tr := memServer(t, addWeather)
	m := start(t, map[string]mcptools.ServerConfig{"w": {Transport: tr}}, mcptools.Options{})
	lazy := mcptools.NewLazy(mcptools.LazyConfig{})
	var got []string
	model := scripted.New(llm.Info{}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		got = specNames(req.Tools)
		return scripted.Reply("ok"), nil
	})
	ag, err := agent.New(agent.Config{Model: model, Tools: append([]agent.Tool{lazy.Tool()}, m.Tools()...), Middleware: []agent.Middleware{lazy}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Run(t.Context(), "hi"); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"mcp__w__alerts_list", "mcp__w__forecast"}) {
		t.Fatalf("tools = %v, want both MCP tools and no tool_search", got)
	}
}

func TestLazyPlanAndSelect(t *testing.T) {
	lazy := mcptools.NewLazy(mcptools.LazyConfig{Fraction: 0.5})
	specs := []llm.ToolSpec{
		{Name: "ls", Description: "list", Schema: json.RawMessage(`{}`)},
		{Name: "mcp__a__x", Description: strings.Repeat("word ", 100), Schema: json.RawMessage(`{}`)},
		{Name: "mcp__a__y", Description: strings.Repeat("word ", 100), Schema: json.RawMessage(`{}`)},
	}
	if p := lazy.Plan(specs, 10_000, nil); p.Defer {
		t.Fatalf("under the threshold nothing is deferred: %+v", p)
	}
	p := lazy.Plan(specs, 200, map[string]bool{"mcp__a__y": true})
	if !p.Defer || !slices.Equal(p.Deferred, []string{"mcp__a__x"}) || p.Threshold != 100 {
		t.Fatalf("plan = %+v", p)
	}
	// select: loads by exact name, through the middleware.
	st := &agent.State{SessionID: "s", Tools: specs}
	h := lazy.WrapTool(func(context.Context, *agent.State, llm.ToolCall) (agent.Result, error) {
		t.Fatal("tool_search must be answered by Lazy")
		return agent.Result{}, nil
	})
	res, err := h(t.Context(), st, llm.ToolCall{Name: mcptools.SearchToolName, Arguments: `{"query":"select:mcp__a__x"}`})
	if err != nil || !strings.Contains(res.Content, "mcp__a__x") || res.Meta["tool_search_loaded"] != "mcp__a__x" {
		t.Fatalf("select = %+v, %v", res, err)
	}
	res, _ = h(t.Context(), st, llm.ToolCall{Name: mcptools.SearchToolName, Arguments: `{"query":"zebra"}`})
	if !strings.Contains(res.Content, "No tool matches") {
		t.Fatalf("no match = %q", res.Content)
	}
}
