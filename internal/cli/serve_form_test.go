package cli_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// indexPage serves the viewer with cfg and env and returns its start page.
func indexPage(t *testing.T, cfg string, env map[string]string) string {
	t.Helper()
	base, _ := startServe(t, servingRE, env, "--addr", "127.0.0.1:0", "--runs", t.TempDir(), "--config", cfg, "--root", t.TempDir())
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// The viewer's form says which engine and model a run will use, and offers only the web providers that can run:
// the keyless ones, and a keyed one once its key is set.
func TestServeFormShowsEngineAndUsableProviders(t *testing.T) {
	page := indexPage(t, emptyConfig(t), nil)
	if !strings.Contains(page, `id="engine"`) || !strings.Contains(page, "extractive engine") {
		t.Errorf("no engine line on the form:\n%s", page)
	}
	if !strings.Contains(page, `<option value="arxiv"`) || strings.Contains(page, `<option value="tavily"`) || strings.Contains(page, `<option value="searxng"`) {
		t.Errorf("the form offers providers that cannot run (or lacks keyless ones):\n%s", page)
	}
	cfg := filepath.Join(t.TempDir(), "deepresearch.yaml")
	if err := os.WriteFile(cfg, []byte("model: {provider: openai, model: gpt-4.1}\ntiers:\n  fast: {model: gpt-4.1-mini}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	page = indexPage(t, cfg, map[string]string{"OPENAI_API_KEY": "sk-test", "TAVILY_API_KEY": "tvly-test"})
	if !strings.Contains(page, "strong: openai gpt-4.1") || !strings.Contains(page, "fast: openai gpt-4.1-mini") {
		t.Errorf("the engine line does not name the models:\n%s", page)
	}
	if !strings.Contains(page, `<option value="tavily"`) {
		t.Errorf("a provider with its key set is not offered:\n%s", page)
	}
	if strings.Contains(page, "sk-test") || strings.Contains(page, "tvly-test") {
		t.Error("the page shows a key")
	}
}

// The form's clarifying-questions box is ticked when the configuration sets research.clarify, and not otherwise.
func TestServeFormClarifyDefault(t *testing.T) {
	const ticked = `name="clarify" type="checkbox" value="1" checked`
	if page := indexPage(t, emptyConfig(t), nil); !strings.Contains(page, `name="clarify"`) || strings.Contains(page, ticked) {
		t.Errorf("without research.clarify:\n%s", page)
	}
	cfg := filepath.Join(t.TempDir(), "deepresearch.yaml")
	if err := os.WriteFile(cfg, []byte("research: {clarify: true, clarify_timeout: 3m}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if page := indexPage(t, cfg, nil); !strings.Contains(page, ticked) || !strings.Contains(page, "waits up to 3 min") {
		t.Errorf("with research.clarify:\n%s", page)
	}
}
