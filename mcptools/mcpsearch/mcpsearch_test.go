package mcpsearch_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/mcptools/mcpsearch"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantURLs  []string
		wantTitle string
	}{
		{"json array", `[{"title":"Go","url":"https://go.dev","description":"The Go language"},{"name":"no url"}]`, []string{"https://go.dev"}, "Go"},
		{"brave shape", `{"web":{"results":[{"title":"A","url":"https://a.example","description":"x"},{"title":"B","url":"https://b.example"}]}}`, []string{"https://a.example", "https://b.example"}, "A"},
		{"results key", `{"results":[{"title":"Exa","link":"https://exa.example","snippet":"s","publishedDate":"2025-03-01"}]}`, []string{"https://exa.example"}, "Exa"},
		{"markdown links", "1. [Rust book](https://doc.rust-lang.org/book/) – the official guide\n2. [Go tour](https://go.dev/tour)", []string{"https://doc.rust-lang.org/book/", "https://go.dev/tour"}, "Rust book"},
		{"title then url lines", "Title: Example Domain\nURL: https://example.com/page.\nDescription: For examples.\n", []string{"https://example.com/page"}, "Example Domain"},
		{"no results", "Nothing found.", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mcpsearch.Parse(tt.in)
			if len(got) != len(tt.wantURLs) {
				t.Fatalf("got %d results %+v, want %v", len(got), got, tt.wantURLs)
			}
			for i, u := range tt.wantURLs {
				if got[i].URL != u {
					t.Errorf("result %d URL = %q, want %q", i, got[i].URL, u)
				}
			}
			if len(got) > 0 && got[0].Title != tt.wantTitle {
				t.Errorf("title = %q, want %q", got[0].Title, tt.wantTitle)
			}
		})
	}
}

type searchIn struct {
	Query string `json:"query"`
	Count int    `json:"count,omitempty"`
}

// An MCP search tool, reached over the SDK's in-memory transport, serves as a sources.Searcher.
func TestSearcherOverMCP(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "search", Version: "1"}, nil)
	var gotCount int
	mcp.AddTool(srv, &mcp.Tool{Name: "web_search", Description: "Search the web."}, func(_ context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
		gotCount = in.Count
		if in.Query == "fail" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "quota exceeded"}}}, nil, nil
		}
		if in.Query == "prose" {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "I could not find anything."}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"results":[` +
			`{"title":"One","url":"https://one.example","snippet":"about ` + in.Query + `"},` +
			`{"title":"Two","url":"https://two.example"},{"title":"Three","url":"https://three.example"}]}`}}}, nil, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	m := mcptools.Start(t.Context(), &mcptools.File{Servers: map[string]mcptools.ServerConfig{"web": {Transport: ct}}}, mcptools.Options{})
	defer m.Close()
	tools := m.Tools()
	if len(tools) != 1 {
		t.Fatalf("tools = %v, failures %v", tools, m.Failures())
	}
	s := mcpsearch.New(tools[0], mcpsearch.Config{Name: "mcp:web", LimitArg: "count"})
	res, err := s.Search(t.Context(), "bm25", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].URL != "https://one.example" || res[0].Snippet != "about bm25" || res[0].Provider != "mcp:web" || gotCount != 2 {
		t.Fatalf("results = %+v (count sent %d)", res, gotCount)
	}
	if res[0].Score <= res[1].Score {
		t.Errorf("rank order must show in scores: %v, %v", res[0].Score, res[1].Score)
	}
	if _, err := s.Search(t.Context(), "fail", 2); err == nil || !strings.Contains(err.Error(), "quota exceeded") {
		t.Fatalf("tool error = %v", err)
	}
	if _, err := s.Search(t.Context(), "prose", 2); !errors.Is(err, mcpsearch.ErrNoResults) {
		t.Fatalf("unrecognised answer = %v", err)
	}
}
