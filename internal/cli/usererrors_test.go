package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/internal/cli"
	"github.com/deepresearch/deepresearch/llm/llmtest"
)

// emptyConfig is a configuration file with nothing in it, so that a developer's own ./deepresearch.yaml or
// user config cannot leak into a test.
func emptyConfig(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "deepresearch.yaml")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Main(t.Context(), args, strings.NewReader(""), &out, &errb, fakeEnv(env))
	return code, out.String(), errb.String()
}

// Half a model configuration used to be ignored: "run --model gpt-4.1" quietly ran the extractive engine and
// "ask --model gpt-4.1" said no model was configured. It must be refused, naming what is missing, while
// "config show" still works so the user can look.
func TestHalfConfiguredModelIsRefused(t *testing.T) {
	cfg := emptyConfig(t)
	corpus := t.TempDir()
	if err := os.WriteFile(filepath.Join(corpus, "a.md"), []byte("# A\nBees dance.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string // in stderr; "" means success
	}{
		{"model without provider", nil, []string{"models", "--model", "gpt-4.1"}, `model "gpt-4.1" has no provider: add --provider`},
		{"model from the environment", map[string]string{"DEEPRESEARCH_MODEL": "gpt-4.1"}, []string{"ask", "hi"}, `model "gpt-4.1" has no provider`},
		{"run does not fall back silently", nil, []string{"run", "--model", "gpt-4.1", "--corpus", corpus, "--out", out, "what do bees do"}, "has no provider"},
		{"provider without model", nil, []string{"models", "--provider", "anthropic"}, `provider "anthropic" has no model: add --model`},
		{"unknown provider", nil, []string{"models", "--provider", "bogus", "--model", "x"}, `unknown provider "bogus"`},
		{"config show still works", nil, []string{"config", "show", "--model", "gpt-4.1"}, ""},
		{"version still works", map[string]string{"DEEPRESEARCH_PROVIDER": "openai"}, []string{"version"}, ""},
		{"a full model is fine", nil, []string{"models", "--provider", "openai", "--model", "gpt-4.1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.env, append(tc.args, "--config", cfg)...)
			if tc.want == "" {
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				return
			}
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want an error containing %q", code, stderr, tc.want)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused run left %s behind (%v)", out, err)
	}
}

// A hosted endpoint without its key fails before any call, naming the variable; a named service never gets
// another company's key.
func TestAPIKeyChecks(t *testing.T) {
	cfg := emptyConfig(t)
	ws := t.TempDir()
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"openai without key", nil, []string{"ask", "--provider", "openai", "--model", "gpt-4.1", "hi"}, "no API key: set OPENAI_API_KEY"},
		{"anthropic without key", nil, []string{"ask", "--provider", "anthropic", "--model", "claude-sonnet-4-5", "hi"}, "no API key: set ANTHROPIC_API_KEY"},
		{"deepseek ignores OPENAI_API_KEY", map[string]string{"OPENAI_API_KEY": "sk-openai"}, []string{"ask", "--provider", "deepseek", "--model", "deepseek-chat", "hi"}, "no API key: set DEEPSEEK_API_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.env, append(tc.args, "--config", cfg, "--workspace", ws)...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %q", code, stderr, tc.want)
			}
		})
	}

	// With its own key set, the deepseek preset sends that key, not the OpenAI one.
	srv := llmtest.NewServer(t, llmtest.OpenAIText("ok"))
	code, stdout, stderr := runCLI(t, map[string]string{"OPENAI_API_KEY": "sk-openai", "DEEPSEEK_API_KEY": "sk-deepseek"},
		"ask", "--config", cfg, "--workspace", ws, "--provider", "deepseek", "--model", "deepseek-chat", "--base-url", srv.URL+"/v1", "hi")
	if code != 0 || strings.TrimSpace(stdout) != "ok" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-deepseek" {
		t.Errorf("deepseek got Authorization %q, want its own key", got)
	}
}

// ask takes the prompt as one argument or as several words, and says what it needs when there is none.
func TestAskPromptArguments(t *testing.T) {
	cfg := emptyConfig(t)
	ws := t.TempDir()
	code, _, stderr := runCLI(t, nil, "ask", "--config", cfg, "--workspace", ws)
	if code == 0 || !strings.Contains(stderr, "ask needs a prompt") {
		t.Errorf("no prompt: exit %d, %q", code, stderr)
	}
	srv := llmtest.NewServer(t, llmtest.OpenAIText("done"))
	code, _, stderr = runCLI(t, nil, "ask", "--config", cfg, "--workspace", ws, "--provider", "openai", "--base-url", srv.URL+"/v1",
		"--model", "m", "what", "is", "here")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	msgs := llmtest.Messages(t, srv.Requests()[0])
	if last := msgs[len(msgs)-1]; last["content"] != "what is here" {
		t.Errorf("the prompt sent was %v, want the words joined", last["content"])
	}
}

// A mistyped path must be refused without leaving anything behind: index used to create an empty index for it,
// and --workspace used to create the folder.
func TestMissingPathsAreRefusedAndNotCreated(t *testing.T) {
	cfg := emptyConfig(t)
	base := t.TempDir()
	missing := filepath.Join(base, "no-such-folder")
	idx := filepath.Join(base, "idx")
	for _, tc := range []struct {
		name    string
		args    []string
		want    string
		created string
	}{
		{"index", []string{"index", "--index", idx, missing}, "index " + missing + ": no such file or directory", idx},
		{"index without paths", []string{"index"}, "index needs at least one PATH", ""},
		{"tools --workspace", []string{"tools", "--workspace", missing}, "--workspace " + missing + ": no such file or directory", missing},
		{"ask --workspace", []string{"ask", "--provider", "openai", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--workspace", missing, "hi"},
			"--workspace " + missing, missing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, nil, append(tc.args, "--config", cfg)...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %q", code, stderr, tc.want)
			}
			if tc.created != "" {
				if _, err := os.Stat(tc.created); !os.IsNotExist(err) {
					t.Errorf("%s was created (%v)", tc.created, err)
				}
			}
		})
	}
}

// The tools listing sizes its columns to the names it shows, and failed MCP servers appear once, in the
// listing, not also as stderr noise.
func TestToolsListingLayout(t *testing.T) {
	dir := t.TempDir()
	mcp := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(mcp, []byte(`{"mcpServers":{"broken":{"command":"`+filepath.Join(dir, "no-such-server")+`"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, nil, "tools", "--config", emptyConfig(t), "--workspace", dir, "--mcp", mcp)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "broken") {
		t.Errorf("the failed server is reported on stderr too:\n%s", stderr)
	}
	if !strings.Contains(stdout, "failed MCP servers\n  broken: ") {
		t.Errorf("the listing does not show the failed server:\n%s", stdout)
	}
	// The longest built-in name is memory_write/memory_grep (12 characters): ls is padded to that, not to 48.
	if !regexp.MustCompile(`(?m)^  ls {11} +\d+ tokens`).MatchString(stdout) || regexp.MustCompile(`(?m)^  ls {20}`).MatchString(stdout) {
		t.Errorf("ls row is not padded to the longest name:\n%s", stdout)
	}
}
