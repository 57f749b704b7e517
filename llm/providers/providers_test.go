package providers

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/llmtest"
)

func TestNewOpenAICompatibleWithRetryAndCatalogue(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Reply{Status: 503, Body: "busy"}, llmtest.OpenAIText("ok"))
	var mu sync.Mutex
	var waits []time.Duration
	m, err := New(Spec{Provider: "openai", Model: "gpt-4o", BaseURL: srv.URL + "/v1", APIKey: "k",
		Retry: llm.RetryConfig{Sleep: func(_ context.Context, d time.Duration) error {
			mu.Lock()
			waits = append(waits, d)
			mu.Unlock()
			return nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil || resp.Message.Content != "ok" {
		t.Fatalf("resp %v err %v", resp, err)
	}
	if len(waits) != 1 || srv.Calls() != 2 {
		t.Errorf("waits %v, calls %d: New did not wrap with retries", waits, srv.Calls())
	}
	info := m.Info()
	if info.Provider != "openai" || info.Name != "gpt-4o" || info.ContextWindow != 128_000 {
		t.Errorf("info %+v", info)
	}
	// The server is on loopback but the model has a hosted name the catalogue prices: a local proxy to a paid
	// API bills it, and the cost fuse must see it.
	if info.Price.Input <= 0 || info.Price.Output <= 0 {
		t.Errorf("a catalogued model behind a local proxy is not priced: %+v", info.Price)
	}
	// A local model's tag, or a name no catalogue knows, costs nothing on a local server.
	for _, name := range []string{"gpt-4o:latest", "my-finetune-7b"} {
		if e := Describe(Spec{Provider: "openai", Model: name, BaseURL: srv.URL}); e.Price != (llm.Price{}) {
			t.Errorf("local model %s priced: %+v", name, e.Price)
		}
	}
}

func TestNewAnthropic(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.AnthropicText("hello"))
	m, err := New(Spec{Provider: "Anthropic", Model: "claude-haiku-4-5", BaseURL: srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil || resp.Message.Content != "hello" {
		t.Fatalf("resp %v err %v", resp, err)
	}
	if srv.Requests()[0].Path != "/v1/messages" {
		t.Errorf("path %s", srv.Requests()[0].Path)
	}
	if m.Info().ContextWindow != 200_000 || m.Info().Provider != "anthropic" {
		t.Errorf("info %+v", m.Info())
	}
}

func TestDescribeRemoteAndOverride(t *testing.T) {
	e := Describe(Spec{Provider: "anthropic", Model: "claude-sonnet-4-5-20250929"})
	if !e.Known || e.Price.Input != 3 || e.Price.Output != 15 {
		t.Errorf("remote model: %+v", e)
	}
	// "openai" pointed at DeepSeek is priced from DeepSeek's own price sheet.
	e = Describe(Spec{Provider: "openai", Model: "deepseek-v4-flash", BaseURL: "https://api.deepseek.com/v1"})
	if e.Source != "deepseek" || e.Price.Input != 0.2817 || e.Reference == "" {
		t.Errorf("deepseek via openai: %+v", e)
	}
	e = Describe(Spec{Provider: "ollama", Model: "qwen3:8b", Override: &llm.Info{ContextWindow: 40_960}})
	if e.ContextWindow != 40_960 || !e.Known || e.Price != (llm.Price{}) {
		t.Errorf("ollama with override: %+v", e)
	}
	// A price configured for a local model is kept: the user said so.
	e = Describe(Spec{Provider: "openai", Model: "m", BaseURL: "http://127.0.0.1:8000/v1", Override: &llm.Info{Price: llm.Price{Input: 1}}})
	if e.Price.Input != 1 {
		t.Errorf("configured local price dropped: %+v", e)
	}
}

func TestPresetsSupplyBaseURL(t *testing.T) {
	p, ok := Builtin().Lookup("DeepSeek")
	if !ok || !strings.HasPrefix(p.BaseURL, "https://api.deepseek.com") {
		t.Errorf("deepseek preset %+v %v", p, ok)
	}
	if _, err := New(Spec{Provider: "ollama", Model: "llama3.2"}); err != nil {
		t.Errorf("ollama preset: %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(Spec{Provider: "bogus", Model: "m"}); err == nil || !strings.Contains(err.Error(), "unknown provider") {
		t.Errorf("unknown provider: %v", err)
	}
	if _, err := New(Spec{Provider: "openai"}); err == nil {
		t.Error("missing model accepted")
	}
	if _, err := New(Spec{Provider: "openai", Model: "m", BaseURL: "::not a url"}); err == nil {
		t.Error("bad base URL accepted")
	}
}

func TestContextLengthSurfaces(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.OpenAIContextLength())
	m, err := New(Spec{Provider: "openai", Model: "m", BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	var cl *llm.ContextLengthError
	if !errors.As(err, &cl) || srv.Calls() != 1 {
		t.Errorf("err %v after %d calls", err, srv.Calls())
	}
}

func TestIsLocal(t *testing.T) {
	for u, want := range map[string]bool{
		"http://localhost:11434/v1": true, "http://127.0.0.1:8000/v1": true, "http://192.168.1.5:8080/v1": true,
		"http://[::1]:8000": true, "https://api.openai.com/v1": false, "": false, "https://8.8.8.8/v1": false,
	} {
		if got := isLocal(u); got != want {
			t.Errorf("isLocal(%q) = %v", u, got)
		}
	}
}
