package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/internal/cli"
	"github.com/deepresearch/deepresearch/llm/llmtest"
)

const notes = "The meeting moved to Thursday at 10:00."

// askEnv prepares a workspace with notes.txt and a config file that prices the model "m", so that the cost line
// shows a figure that can be checked: $2 per million input tokens, $8 per million output tokens.
func askEnv(t *testing.T) (workspace, configFile string) {
	t.Helper()
	workspace = t.TempDir()
	if err := os.WriteFile(filepath.Join(workspace, "notes.txt"), []byte(notes+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	configFile = filepath.Join(t.TempDir(), "deepresearch.yaml")
	cfg := "models:\n  m:\n    context_window: 32768\n    input_price: 2\n    output_price: 8\n"
	if err := os.WriteFile(configFile, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return workspace, configFile
}

func fakeEnv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// checkAskOutput checks the answer on stdout and, on stderr, the tool call and the usage line: two calls of
// 100 input and 20 output tokens each → 200 × $2/M + 40 × $8/M = $0.00072.
func checkAskOutput(t *testing.T, code int, stdout, stderr string) {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if want := "The notes say: " + notes; strings.TrimSpace(stdout) != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	if !strings.Contains(stderr, "→ read_file") {
		t.Errorf("stderr does not show the tool call:\n%s", stderr)
	}
	for _, want := range []string{"usage: 2 calls", "200 input tokens", "40 output tokens", "$0.0007"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stdout, "usage:") {
		t.Error("usage line on stdout")
	}
}

func TestAskOpenAICompatible(t *testing.T) {
	workspace, configFile := askEnv(t)
	srv := llmtest.NewFuncServer(t, func(_ int, req llmtest.Request) llmtest.Reply {
		// Answer once the file's content has come back as a tool result; until then ask for it.
		msgs := llmtest.Messages(t, req)
		if last := msgs[len(msgs)-1]; last["role"] == "tool" && strings.Contains(last["content"].(string), notes) {
			return llmtest.OpenAIText("The notes say: " + notes)
		}
		return llmtest.OpenAICalls(llmtest.ToolCall{ID: "call_1", Name: "read_file", Arguments: `{"path":"notes.txt"}`})
	})
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), []string{"ask", "--config", configFile, "--provider", "openai", "--base-url", srv.URL + "/v1",
		"--model", "m", "--workspace", workspace, "What does notes.txt say?"},
		strings.NewReader(""), &stdout, &stderr, fakeEnv(map[string]string{"OPENAI_API_KEY": "sk-fake-openai"}))
	checkAskOutput(t, code, stdout.String(), stderr.String())
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-fake-openai" {
		t.Errorf("key from the environment not sent: %q", got)
	}
	first := reqs[0].JSON(t)
	if first["model"] != "m" {
		t.Errorf("model %v", first["model"])
	}
	if !reqs[0].Contains(`"read_file"`) || !reqs[0].Contains("What does notes.txt say?") {
		t.Errorf("first request lacks the tools or the prompt: %s", reqs[0].Body)
	}
}

func TestAskAnthropic(t *testing.T) {
	workspace, configFile := askEnv(t)
	srv := llmtest.NewFuncServer(t, func(_ int, req llmtest.Request) llmtest.Reply {
		msgs := llmtest.Messages(t, req)
		blocks, _ := msgs[len(msgs)-1]["content"].([]any)
		for _, b := range blocks {
			if bm, ok := b.(map[string]any); ok && bm["type"] == "tool_result" && strings.Contains(toolResultText(bm["content"]), notes) {
				return llmtest.AnthropicText("The notes say: " + notes)
			}
		}
		return llmtest.AnthropicCalls(llmtest.ToolCall{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"notes.txt"}`})
	})
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), []string{"ask", "--config", configFile, "--provider", "anthropic", "--base-url", srv.URL,
		"--model", "m", "--workspace", workspace, "What does notes.txt say?"},
		strings.NewReader(""), &stdout, &stderr, fakeEnv(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-fake"}))
	checkAskOutput(t, code, stdout.String(), stderr.String())
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	if reqs[0].Path != "/v1/messages" || reqs[0].Header.Get("X-Api-Key") != "sk-ant-fake" {
		t.Errorf("path %s, x-api-key %q", reqs[0].Path, reqs[0].Header.Get("X-Api-Key"))
	}
	if !reqs[0].Contains(`"cache_control"`) {
		t.Error("no prompt-caching breakpoint in the request")
	}
}

func TestAskWithoutModelFailsClearly(t *testing.T) {
	workspace, configFile := askEnv(t)
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), []string{"ask", "--config", configFile, "--workspace", workspace, "hi"},
		strings.NewReader(""), &stdout, &stderr, fakeEnv(nil))
	if code == 0 || !strings.Contains(stderr.String(), "no model configured") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestAskReportsProviderError(t *testing.T) {
	workspace, configFile := askEnv(t)
	srv := llmtest.NewServer(t, llmtest.OpenAIError(401, "invalid_api_key", "Incorrect API key provided"))
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), []string{"ask", "--config", configFile, "--provider", "openai", "--base-url", srv.URL + "/v1",
		"--model", "m", "--workspace", workspace, "hi"}, strings.NewReader(""), &stdout, &stderr, fakeEnv(nil))
	if code == 0 || !strings.Contains(stderr.String(), "Incorrect API key") || srv.Calls() != 1 {
		t.Errorf("exit %d after %d calls, stderr %q", code, srv.Calls(), stderr.String())
	}
}

func TestModelsCommand(t *testing.T) {
	_, configFile := askEnv(t)
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), []string{"models", "--config", configFile, "--provider", "anthropic", "--model", "claude-sonnet-4-5-20250929"},
		strings.NewReader(""), &stdout, &stderr, fakeEnv(nil))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"TIER", "strong", "claude-sonnet-4-5-20250929", "200000", "planner", "searcher"} {
		if !strings.Contains(out, want) {
			t.Errorf("models output lacks %q:\n%s", want, out)
		}
	}
	// A local model with a configured window shows it; the configured price is kept.
	stdout.Reset()
	code = cli.Main(t.Context(), []string{"models", "--json", "--config", configFile, "--provider", "openai", "--base-url", "http://127.0.0.1:1/v1", "--model", "m"},
		strings.NewReader(""), &stdout, &stderr, fakeEnv(nil))
	if code != 0 || !strings.Contains(stdout.String(), `"context_window": 32768`) || !strings.Contains(stdout.String(), `"input": 2`) {
		t.Errorf("exit %d, json:\n%s", code, stdout.String())
	}
}

// toolResultText reads a tool_result block's content, a string or a list of text blocks.
func toolResultText(v any) string {
	var b strings.Builder
	switch x := v.(type) {
	case string:
		return x
	case []any:
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
	}
	return b.String()
}

// A failing tool call whose message echoes a key (here the model asks for a file named after it) reaches the
// model and the terminal with the key replaced.
func TestAskScrubsKeysFromToolErrors(t *testing.T) {
	const key = "sk-fake-openai-0123456789"
	workspace, configFile := askEnv(t)
	var toolText string
	srv := llmtest.NewFuncServer(t, func(_ int, req llmtest.Request) llmtest.Reply {
		msgs := llmtest.Messages(t, req)
		if last := msgs[len(msgs)-1]; last["role"] == "tool" {
			toolText, _ = last["content"].(string)
			return llmtest.OpenAIText("That file does not exist.")
		}
		return llmtest.OpenAICalls(llmtest.ToolCall{ID: "call_1", Name: "read_file", Arguments: `{"path":"` + key + `.txt"}`})
	})
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), []string{"ask", "--config", configFile, "--provider", "openai", "--base-url", srv.URL + "/v1",
		"--model", "m", "--workspace", workspace, "Read the file."},
		strings.NewReader(""), &stdout, &stderr, fakeEnv(map[string]string{"OPENAI_API_KEY": key}))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if toolText == "" {
		t.Fatal("the model never received the tool result")
	}
	if strings.Contains(toolText, key) || !strings.Contains(toolText, "[redacted]") {
		t.Errorf("tool error sent to the model is not scrubbed: %q", toolText)
	}
}
