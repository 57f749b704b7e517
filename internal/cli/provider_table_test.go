package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/llm/llmtest"
	"github.com/deepresearch/deepresearch/llm/providers"
)

// A model provider is one row of the provider table. A fake row — nothing else — is seen by the configuration
// (its key variable), the redaction of printed errors, config show's masking, the help text, `models` and the
// commands that build a model, which talk to it over its wire protocol with its own key.
func TestFakeProviderRowIsSeenEverywhere(t *testing.T) {
	const key = "fk-live-0123456789abcdef"
	srv := llmtest.NewFuncServer(t, func(_ int, req llmtest.Request) llmtest.Reply {
		if req.Header.Get("Authorization") != "Bearer "+key {
			return llmtest.OpenAIError(401, "invalid_api_key", "wrong key")
		}
		if req.Contains("echo the key") {
			// A provider that echoes the request's key in its error.
			return llmtest.OpenAIError(400, "invalid_request_error", "refused for key "+key)
		}
		return llmtest.OpenAIText("hello from fakeco")
	})
	fake := providers.Provider{Name: "fakeco", Title: "Fake Co", Protocol: providers.OpenAICompatible,
		BaseURL: srv.URL + "/v1", KeyEnv: []string{"FAKECO_API_KEY"},
		Models: map[string]string{providers.TierStrong: "fake-large", providers.TierFast: "fake-small"}}
	table := providers.Builtin().With(fake)
	cfg := filepath.Join(t.TempDir(), "deepresearch.yaml")
	if err := os.WriteFile(cfg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	run := func(env map[string]string, args ...string) (int, string, string) {
		t.Helper()
		var out, errw bytes.Buffer
		app := &App{Getenv: func(k string) string { return env[k] }, Providers: table}
		code := mainWith(t.Context(), app, append(args, "--config", cfg), strings.NewReader(""), &out, &errw)
		return code, out.String(), errw.String()
	}
	withKey := map[string]string{"FAKECO_API_KEY": key}

	// Help: the --provider flag lists the row.
	if code, out, _ := run(nil, "ask", "--help"); code != 0 || !strings.Contains(out, "openai, anthropic, dashscope, deepseek, llamacpp, ollama, openrouter, qwen, vllm, fakeco") {
		t.Errorf("help (exit %d) does not list the row:\n%s", code, out)
	}
	// The CLI accepts the name and builds the model over the row's protocol, at its endpoint, with its key.
	code, out, stderr := run(withKey, "ask", "--workspace", ws, "--provider", "fakeco", "--model", "fake-large", "say hello")
	if code != 0 || !strings.Contains(out, "hello from fakeco") {
		t.Fatalf("ask: exit %d\n%s\n%s", code, out, stderr)
	}
	// Configuration: the key is read only from the row's variable.
	code, _, stderr = run(map[string]string{"OPENAI_API_KEY": key}, "ask", "--workspace", ws, "--provider", "fakeco", "--model", "fake-large", "hi")
	if code == 0 || !strings.Contains(stderr, "no API key: set FAKECO_API_KEY") {
		t.Errorf("another provider's key was used, or the missing key not named: exit %d\n%s", code, stderr)
	}
	// Redaction: an error echoing the row's key is printed without it.
	code, _, stderr = run(withKey, "ask", "--workspace", ws, "--provider", "fakeco", "--model", "fake-large", "echo the key")
	if code == 0 || strings.Contains(stderr, key) || !strings.Contains(stderr, "[redacted]") {
		t.Errorf("echoed key: exit %d\n%s", code, stderr)
	}
	// config show masks the row's key.
	code, out, _ = run(withKey, "config", "show")
	if code != 0 || !strings.Contains(out, "FAKECO_API_KEY=****cdef") || strings.Contains(out, key) {
		t.Errorf("config show:\n%s", out)
	}
	// models lists the row, and resolves and probes a tier on it.
	code, out, _ = run(nil, "models", "--providers")
	if code != 0 || !strings.Contains(out, "fakeco") || !strings.Contains(out, "FAKECO_API_KEY") || !strings.Contains(out, "fake-large (strong), fake-small (fast)") {
		t.Errorf("models --providers:\n%s", out)
	}
	code, out, stderr = run(withKey, "models", "--provider", "fakeco", "--model", "fake-large", "--probe")
	if code != 0 || !strings.Contains(out, "fakeco") || !strings.Contains(out, "the server reports usage") {
		t.Errorf("models --probe: exit %d\n%s\n%s", code, out, stderr)
	}
	// A half configuration names the row's suggestions.
	if code, _, stderr = run(nil, "models", "--provider", "fakeco"); code == 0 || !strings.Contains(stderr, "suggested: fake-large (strong)") {
		t.Errorf("provider without a model: exit %d\n%s", code, stderr)
	}
	// Without the row, the same name is refused.
	var out2, errw2 bytes.Buffer
	if code := Main(t.Context(), []string{"models", "--provider", "fakeco", "--model", "x", "--config", cfg}, strings.NewReader(""), &out2, &errw2,
		func(string) string { return "" }); code == 0 || !strings.Contains(errw2.String(), `unknown provider "fakeco"`) {
		t.Errorf("the built-in table accepted fakeco: exit %d\n%s", code, errw2.String())
	}
}
