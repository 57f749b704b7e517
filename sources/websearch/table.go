package websearch

import (
	"fmt"
	"strings"

	"github.com/deepresearch/deepresearch/sources"
)

// Provider describes one web search provider: what New needs to build it and what the configuration, the key
// masking, the help texts and the MCP tool's schema say about it. Adding a provider is one entry in providers
// plus its client (see providers.go).
type Provider struct {
	// Name is what users type: --web NAME, sources.web: NAME.
	Name string
	// Title is the service's own name.
	Title string
	// KeyEnv are the environment variables that may hold the API key, the preferred first; empty for a
	// provider that needs none.
	KeyEnv []string
	// URLEnv is the environment variable naming the instance to use, for self-hosted services.
	URLEnv string
	// BaseURL is the public endpoint root; empty when the user must name an instance (URLEnv).
	BaseURL string
	// build returns the client over base (the endpoint or instance root, no trailing slash) with key.
	build func(cfg Config, key, base string) sources.Searcher
}

// providers is the table every list of providers is read from, in alphabetical order.
var providers = []Provider{
	{Name: "brave", Title: "Brave Search", KeyEnv: []string{"BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY"},
		BaseURL: "https://api.search.brave.com",
		build: func(cfg Config, key, base string) sources.Searcher {
			c := newClient("brave", cfg)
			c.refuse = braveRefusal
			return &Brave{c: c, key: key, base: base}
		}},
	{Name: "exa", Title: "Exa", KeyEnv: []string{"EXA_API_KEY"}, BaseURL: "https://api.exa.ai",
		build: func(cfg Config, key, base string) sources.Searcher {
			return &Exa{c: newClient("exa", cfg), key: key, base: base}
		}},
	{Name: "searxng", Title: "SearXNG", URLEnv: "SEARXNG_URL",
		build: func(cfg Config, _, base string) sources.Searcher {
			c := newClient("searxng", cfg)
			c.accept = "application/json, text/html;q=0.9, */*;q=0.5"
			c.refuse = searxngRefusal
			return &SearXNG{c: c, base: base}
		}},
	{Name: "tavily", Title: "Tavily", KeyEnv: []string{"TAVILY_API_KEY"}, BaseURL: "https://api.tavily.com",
		build: func(cfg Config, key, base string) sources.Searcher {
			return &Tavily{c: newClient("tavily", cfg), key: key, base: base, now: cfg.Now}
		}},
}

// Providers lists every provider New accepts, in alphabetical order.
func Providers() []Provider { return append([]Provider(nil), providers...) }

// Lookup finds a provider by name, ignoring case and surrounding space.
func Lookup(name string) (Provider, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, p := range providers {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// Names lists the providers New accepts, in alphabetical order.
func Names() []string {
	out := make([]string, len(providers))
	for i, p := range providers {
		out[i] = p.Name
	}
	return out
}

// KeyEnvs lists every environment variable holding a provider's API key (for masking and help texts).
func KeyEnvs() []string {
	var out []string
	for _, p := range providers {
		out = append(out, p.KeyEnv...)
	}
	return out
}

// Needs says what a provider reads from the environment: "TAVILY_API_KEY", "BRAVE_API_KEY or
// BRAVE_SEARCH_API_KEY", "SEARXNG_URL".
func (p Provider) Needs() string {
	if p.URLEnv != "" {
		return p.URLEnv
	}
	return strings.Join(p.KeyEnv, " or ")
}

// Help describes the providers in one line for help texts and schemas: "tavily (TAVILY_API_KEY), brave (…), …".
func Help() string {
	parts := make([]string, len(providers))
	for i, p := range providers {
		parts[i] = fmt.Sprintf("%s (%s)", p.Name, p.Needs())
	}
	return strings.Join(parts, ", ")
}
