// Package providers builds a configured llm.Model from a provider name, model, base URL and key: the OpenAI
// adapter serves every OpenAI-compatible endpoint, the Anthropic adapter the Messages API. Catalogue facts
// (context window, prices) are attached, and retries wrap the result.
package providers

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/anthropic"
	"github.com/deepresearch/deepresearch/llm/catalog"
	"github.com/deepresearch/deepresearch/llm/openai"
)

// Spec says which model to build.
type Spec struct {
	// Provider is "openai" (any OpenAI-compatible server), "anthropic", or one of the OpenAI-compatible presets
	// (see LookupPreset), which only supply a default base URL and the catalogue to price from.
	Provider string
	Model    string
	BaseURL  string
	APIKey   string
	Retry    llm.RetryConfig
	// Override fills in or corrects catalogue facts (local models the catalogue does not know).
	Override *llm.Info
	// HTTPClient replaces the default HTTP client (tests, proxies).
	HTTPClient *http.Client
	// Headers are sent with every request.
	Headers map[string]string
}

// Preset is an OpenAI-compatible service known by name.
type Preset struct {
	BaseURL string
	// KeyEnv is the environment variable its key conventionally lives in.
	KeyEnv string
}

// presets are the OpenAI-compatible services that can be named as a provider instead of "openai" + base URL.
var presets = map[string]Preset{
	"deepseek":   {BaseURL: "https://api.deepseek.com/v1", KeyEnv: "DEEPSEEK_API_KEY"},
	"openrouter": {BaseURL: "https://openrouter.ai/api/v1", KeyEnv: "OPENROUTER_API_KEY"},
	"qwen":       {BaseURL: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", KeyEnv: "DASHSCOPE_API_KEY"},
	"dashscope":  {BaseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1", KeyEnv: "DASHSCOPE_API_KEY"},
	"ollama":     {BaseURL: "http://localhost:11434/v1"},
	"vllm":       {BaseURL: "http://localhost:8000/v1"},
	"llamacpp":   {BaseURL: "http://localhost:8080/v1"},
}

// LookupPreset returns the preset of an OpenAI-compatible service name.
func LookupPreset(name string) (Preset, bool) {
	p, ok := presets[strings.ToLower(name)]
	return p, ok
}

// Names lists every accepted provider name.
func Names() []string {
	names := []string{"openai", "anthropic"}
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names[2:])
	return names
}

// Describe returns the catalogue facts New would attach to spec's model, without building it.
func Describe(spec Spec) catalog.Entry {
	provider := strings.ToLower(strings.TrimSpace(spec.Provider))
	baseURL := spec.BaseURL
	if p, ok := presets[provider]; ok && baseURL == "" {
		baseURL = p.BaseURL
	}
	e := catalog.Resolve(catalogProvider(provider, baseURL), spec.Model, spec.Override)
	e.Provider = provider
	e.Name = spec.Model
	// A server on this machine or the local network is either a local model, which bills nothing per token, or a
	// local proxy (LiteLLM and the like) in front of a paid API, which bills what that API bills. The model's
	// name decides: one the catalogue knows by a hosted name keeps the catalogue's price, so that --max-cost still
	// works through a proxy; a local model's tag (qwen3:8b) or a name the catalogue does not know costs nothing.
	if isLocal(baseURL) && (spec.Override == nil || spec.Override.Price == (llm.Price{})) && !(e.Known && !strings.Contains(spec.Model, ":")) {
		e.Price = llm.Price{}
	}
	return e
}

// New builds the model: the adapter, catalogue facts, and retries per spec.Retry.
func New(spec Spec) (llm.Model, error) {
	provider := strings.ToLower(strings.TrimSpace(spec.Provider))
	if spec.Model == "" {
		return nil, fmt.Errorf("providers: no model name for provider %q", spec.Provider)
	}
	info := Describe(spec).Info
	baseURL := spec.BaseURL
	var m llm.Model
	var err error
	switch provider {
	case "anthropic":
		m, err = anthropic.New(anthropic.Config{Model: spec.Model, BaseURL: baseURL, APIKey: spec.APIKey, Info: info,
			HTTPClient: spec.HTTPClient, Headers: spec.Headers})
	case "openai", "":
		if provider == "" {
			info.Provider = "openai"
		}
		m, err = openai.New(openai.Config{Model: spec.Model, BaseURL: baseURL, APIKey: spec.APIKey, Info: info,
			HTTPClient: spec.HTTPClient, Headers: spec.Headers})
	default:
		p, ok := presets[provider]
		if !ok {
			return nil, fmt.Errorf("providers: unknown provider %q (known: %s)", spec.Provider, strings.Join(Names(), ", "))
		}
		if baseURL == "" {
			baseURL = p.BaseURL
		}
		m, err = openai.New(openai.Config{Model: spec.Model, BaseURL: baseURL, APIKey: spec.APIKey, Info: info,
			HTTPClient: spec.HTTPClient, Headers: spec.Headers})
	}
	if err != nil {
		return nil, fmt.Errorf("providers: %w", err)
	}
	return llm.WithRetry(m, spec.Retry), nil
}

// catalogProvider picks the catalogue to price from: the named preset, or for "openai" with a base URL the
// service that URL belongs to.
func catalogProvider(provider, baseURL string) string {
	if provider != "openai" && provider != "" {
		return provider
	}
	u, err := url.Parse(baseURL)
	if err != nil || baseURL == "" {
		return "openai"
	}
	host := strings.ToLower(u.Hostname())
	for _, h := range []struct{ suffix, provider string }{
		{"deepseek.com", "deepseek"},
		{"openrouter.ai", "openrouter"},
		{"aliyuncs.com", "qwen"},
		{"groq.com", "groq"},
		{"x.ai", "xai"},
		{"moonshot.cn", "moonshot"},
		{"moonshot.ai", "moonshot"},
	} {
		if host == h.suffix || strings.HasSuffix(host, "."+h.suffix) {
			return h.provider
		}
	}
	if host == "api.openai.com" {
		return "openai"
	}
	// An unknown server: search every catalogue by model id.
	return "openai-compatible"
}

// isLocal reports whether a base URL points at this machine or a private network.
func isLocal(baseURL string) bool {
	if baseURL == "" {
		return false
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified())
}
