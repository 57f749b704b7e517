// Package providers is the model provider table (table.go: name, wire protocol, base URL, key variables,
// catalogue, suggested models per tier) and builds an llm.Model from a provider name, model, base URL and key:
// the OpenAI adapter serves every OpenAI-compatible endpoint, the Anthropic adapter the Messages API. Catalogue
// facts (context window, prices) are attached, and retries wrap the result.
package providers

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/anthropic"
	"github.com/deepresearch/deepresearch/llm/catalog"
	"github.com/deepresearch/deepresearch/llm/openai"
)

// Spec says which model to build.
type Spec struct {
	// Provider is a name of the table (Table.Lookup): "openai" (any OpenAI-compatible server), "anthropic", or one
	// of the OpenAI-compatible services, which supply a default base URL and the catalogue to price from.
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

// Describe returns the catalogue facts New would attach to spec's model, without building it, from the built-in
// table.
func Describe(spec Spec) catalog.Entry { return builtin.Describe(spec) }

// New builds the model from the built-in table: the adapter, catalogue facts, and retries per spec.Retry.
func New(spec Spec) (llm.Model, error) { return builtin.New(spec) }

// Describe returns the catalogue facts New would attach to spec's model, without building it. A provider the
// table does not have is described as an OpenAI-compatible server.
func (t *Table) Describe(spec Spec) catalog.Entry {
	provider := strings.ToLower(strings.TrimSpace(spec.Provider))
	p, ok := t.Lookup(provider)
	if !ok {
		p = Provider{Name: provider, Catalogue: []string{provider}}
	}
	baseURL := spec.BaseURL
	if baseURL == "" {
		baseURL = p.BaseURL
	}
	e := catalog.ResolveIn(t.catalogue(p, baseURL), provider, spec.Model, spec.Override)
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

// New builds the model: the adapter of the provider's protocol, catalogue facts, and retries per spec.Retry.
func (t *Table) New(spec Spec) (llm.Model, error) {
	provider := strings.ToLower(strings.TrimSpace(spec.Provider))
	if spec.Model == "" {
		return nil, fmt.Errorf("providers: no model name for provider %q", spec.Provider)
	}
	p, ok := t.Lookup(provider)
	if !ok {
		return nil, t.unknown(spec.Provider)
	}
	info := t.Describe(spec).Info
	if provider == "" {
		info.Provider = p.Name
	}
	baseURL := spec.BaseURL
	if baseURL == "" {
		baseURL = p.BaseURL
	}
	var m llm.Model
	var err error
	switch p.Protocol {
	case Anthropic:
		m, err = anthropic.New(anthropic.Config{Model: spec.Model, BaseURL: baseURL, APIKey: spec.APIKey, Info: info,
			HTTPClient: spec.HTTPClient, Headers: spec.Headers})
	case OpenAICompatible:
		m, err = openai.New(openai.Config{Model: spec.Model, BaseURL: baseURL, APIKey: spec.APIKey, Info: info,
			HTTPClient: spec.HTTPClient, Headers: spec.Headers})
	default:
		return nil, fmt.Errorf("providers: provider %q speaks no protocol deepresearch has (%q)", p.Name, p.Protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("providers: %w", err)
	}
	return llm.WithRetry(m, spec.Retry), nil
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
