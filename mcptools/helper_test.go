package mcptools_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/mcptools"
)

// The test binary doubles as a stdio MCP server (the usual re-exec pattern), so stdio behaviour — crashes,
// stderr, process groups, hung handshakes — is tested against a real process we control.
const helperEnv = "MCPTOOLS_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

type textIn struct {
	Text string `json:"text"`
}
type sizeIn struct {
	N int `json:"n"`
}
type emptyIn struct{}

func runHelper(mode string) int {
	switch mode {
	case "crash-on-start":
		fmt.Fprintln(os.Stderr, "helper: bad config: missing API token")
		return 2
	case "mute":
		time.Sleep(time.Hour) // never answers initialize
		return 0
	}
	fmt.Fprintln(os.Stderr, "helper: started")
	s := mcp.NewServer(&mcp.Implementation{Name: "helper", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back."}, func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Return n characters."}, func(_ context.Context, _ *mcp.CallToolRequest, in sizeIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.N)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Return the server's environment."}, func(context.Context, *mcp.CallToolRequest, emptyIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(os.Environ(), "\n")}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "die", Description: "Crash the server."}, func(context.Context, *mcp.CallToolRequest, emptyIn) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "helper: fatal: disk on fire")
		os.Exit(3)
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "Start a long-lived child process and return its pid."}, func(context.Context, *mcp.CallToolRequest, emptyIn) (*mcp.CallToolResult, any, error) {
		c := exec.Command("sleep", "300")
		if err := c.Start(); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(c.Process.Pid)}}}, nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}

// helperServer returns a stdio entry that runs this test binary as an MCP server in the given mode.
func helperServer(t *testing.T, mode string) mcptools.ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcptools.ServerConfig{Command: exe, Args: []string{"-test.run=^$"}, Env: map[string]string{helperEnv: mode}}
}
