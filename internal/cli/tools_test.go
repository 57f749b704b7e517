package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/internal/cli"
	"github.com/deepresearch/deepresearch/llm/llmtest"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/mcptools/mcptest"
)

// mcpEnv writes a .mcp.json naming the real reference servers: everything for the main agent, filesystem (over
// dir) for subagents only, and a server that cannot start.
func mcpEnv(t *testing.T, dir string) string {
	t.Helper()
	fs := mcptest.Filesystem(t, dir)
	fs.SubagentOnly = true
	servers := map[string]mcptools.ServerConfig{
		"everything": mcptest.Everything(t),
		"fs":         fs,
		"broken":     {Command: filepath.Join(dir, "no-such-server")},
	}
	file := filepath.Join(t.TempDir(), ".mcp.json")
	if err := os.WriteFile(file, []byte(mcptest.JSON(servers)), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestToolsListsBuiltinAndMCPTools(t *testing.T) {
	dir := t.TempDir()
	file := mcpEnv(t, dir)
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), []string{"tools", "--mcp", file, "--workspace", dir}, strings.NewReader(""), &stdout, &stderr, fakeEnv(nil))
	out := stdout.String()
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, stderr.String())
	}
	for _, want := range []string{
		"built-in (", "read_file", "task", "tool_search",
		"mcp server everything (", "mcp__everything__echo", "mcp__everything__get-sum",
		"mcp server fs (", "subagents only", "mcp__fs__read_text_file",
		"failed MCP servers", "broken: ", "no-such-server",
		"MCP servers from " + file,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tools output lacks %q:\n%s", want, out)
		}
	}
	// The listing shows the failure; stderr does not repeat it (TestToolsListingLayout), except with --json.
	stdout.Reset()
	stderr.Reset()
	if code := cli.Main(t.Context(), []string{"tools", "--json", "--mcp", file, "--workspace", dir}, strings.NewReader(""), &stdout, &stderr, fakeEnv(nil)); code != 0 {
		t.Fatalf("--json: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "mcp: server broken not started") {
		t.Errorf("with --json the failed server is not reported on stderr:\n%s", stderr.String())
	}
}

// With a small window the schemas cross 10% of it, and the MCP tools are listed as deferred with the saving.
func TestToolsShowsDeferral(t *testing.T) {
	dir := t.TempDir()
	file := mcpEnv(t, dir)
	configFile := filepath.Join(t.TempDir(), "deepresearch.yaml")
	if err := os.WriteFile(configFile, []byte("models:\n  small:\n    context_window: 20000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), []string{"tools", "--json", "--config", configFile, "--provider", "openai", "--model", "small",
		"--base-url", "http://127.0.0.1:9/v1", "--mcp", file, "--workspace", dir},
		strings.NewReader(""), &stdout, &stderr, fakeEnv(map[string]string{"OPENAI_API_KEY": "sk-test"}))
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr.String())
	}
	var l struct {
		Window       int `json:"window"`
		SchemaTokens int `json:"schema_tokens"`
		Deferred     int `json:"deferred"`
		SavedTokens  int `json:"saved_tokens"`
		Tools        []struct {
			Name         string `json:"name"`
			Group        string `json:"group"`
			Tokens       int    `json:"tokens"`
			Deferred     bool   `json:"deferred"`
			SubagentOnly bool   `json:"subagent_only"`
		} `json:"tools"`
		Failed []struct{ Server, Error string } `json:"failed_servers"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &l); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if l.Window != 20000 || l.SchemaTokens <= 2000 || l.Deferred == 0 || l.SavedTokens <= 0 {
		t.Fatalf("listing = %+v", l)
	}
	everything := 0
	for _, r := range l.Tools {
		switch {
		case r.Group == "everything":
			everything++
			if !r.Deferred {
				t.Errorf("%s should be deferred", r.Name)
			}
		case r.Group == "built-in" && r.Deferred:
			t.Errorf("built-in %s must never be deferred", r.Name)
		case r.Group == "fs" && !r.SubagentOnly:
			t.Errorf("%s should be subagent-only", r.Name)
		}
		if r.Tokens <= 0 {
			t.Errorf("%s costs %d tokens", r.Name, r.Tokens)
		}
	}
	if everything != l.Deferred || len(l.Failed) != 1 || l.Failed[0].Server != "broken" {
		t.Fatalf("deferred %d of %d everything tools; failed %+v", l.Deferred, everything, l.Failed)
	}
}

// ask with a .mcp.json whose filesystem server is subagent-only: the model delegates, the subagent reads the file
// through the real server, and the main agent's requests carry only the subagent's answer.
func TestAskDelegatesMCPWorkToSubagent(t *testing.T) {
	dir := t.TempDir()
	realDir, _ := filepath.EvalSymlinks(dir)
	var b strings.Builder
	for i := range 3000 {
		b.WriteString("inventory line with padding padding padding\n")
		if i == 1234 {
			b.WriteString("SERIAL=QX-7\n")
		}
	}
	if err := os.WriteFile(filepath.Join(realDir, "inventory.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	file := mcpEnv(t, realDir)
	configFile := filepath.Join(t.TempDir(), "deepresearch.yaml")
	if err := os.WriteFile(configFile, []byte("mcp_file: "+file+"\nmodels:\n  m:\n    context_window: 200000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const answer = "The serial in inventory.txt is QX-7."
	readArgs, _ := json.Marshal(map[string]string{"path": filepath.Join(realDir, "inventory.txt")})
	// The server reports a prompt size of the order it was sent (about 3,000 tokens here): one that reports far
	// fewer has truncated the prompt, and the adapter refuses its answer.
	usage := llmtest.Usage{Input: 8000, Output: 20}
	text := func(s string) llmtest.Reply { return llmtest.Reply{Body: llmtest.OpenAIAnswer(s, "", nil, usage)} }
	calls := func(c llmtest.ToolCall) llmtest.Reply {
		return llmtest.Reply{Body: llmtest.OpenAIAnswer("", "", []llmtest.ToolCall{c}, usage)}
	}
	srv := llmtest.NewFuncServer(t, func(_ int, req llmtest.Request) llmtest.Reply {
		msgs := llmtest.Messages(t, req)
		system, _ := msgs[0]["content"].(string)
		last := msgs[len(msgs)-1]
		lastContent, _ := last["content"].(string)
		if strings.Contains(system, "You are a subagent") {
			if last["role"] == "tool" && strings.Contains(lastContent, "SERIAL=QX-7") {
				return text(answer)
			}
			return calls(llmtest.ToolCall{ID: "s1", Name: "mcp__fs__read_text_file", Arguments: string(readArgs)})
		}
		if last["role"] == "tool" {
			return text("Final: " + lastContent)
		}
		args, _ := json.Marshal(map[string]string{"description": "Find the serial number in " + realDir + "/inventory.txt", "subagent_type": "general-purpose"})
		return calls(llmtest.ToolCall{ID: "p1", Name: "task", Arguments: string(args)})
	})
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), []string{"ask", "--config", configFile, "--provider", "openai", "--base-url", srv.URL + "/v1",
		"--model", "m", "--workspace", realDir, "What is the serial number?"},
		strings.NewReader(""), &stdout, &stderr, fakeEnv(map[string]string{"OPENAI_API_KEY": "sk-fake"}))
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	if got := strings.TrimSpace(stdout.String()); got != "Final: "+answer {
		t.Fatalf("stdout = %q", got)
	}
	parentCalls := 0
	for _, r := range srv.Requests() {
		msgs := llmtest.Messages(t, r)
		if system, _ := msgs[0]["content"].(string); strings.Contains(system, "You are a subagent") {
			continue
		}
		parentCalls++
		if r.Contains("inventory line") {
			t.Error("raw MCP output reached the main agent's context")
		}
		if r.Contains("mcp__fs__read_text_file\",\"description") || r.Contains(`"name":"mcp__fs__`) {
			t.Error("the main agent was offered the subagent-only server's tools")
		}
	}
	if parentCalls != 2 {
		t.Fatalf("main agent made %d calls, want 2", parentCalls)
	}
	if !strings.Contains(stderr.String(), "mcp__fs__read_text_file") {
		t.Errorf("stderr does not show the subagent's MCP call:\n%s", stderr.String())
	}
}
