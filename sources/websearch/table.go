package websearch

import (
	"fmt"
	"slices"
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
	// KeyOptional says the service works without a key and a key only raises its rate limit.
	KeyOptional bool
	// Scholarly marks an index of papers and reference works: its results carry bibliographic records.
	Scholarly bool
	// URLEnv is the environment variable naming the instance to use, for self-hosted services.
	URLEnv string
	// BaseURL is the public endpoint root; empty when the user must name an instance (URLEnv).
	BaseURL string
	// build returns the client over base (the endpoint or instance root, no trailing slash) with key.
	build func(cfg Config, key, base string) sources.Searcher
}

// providers is the table every list of providers is read from, in alphabetical order.
var providers = []Provider{
	{Name: "arxiv", Title: "arXiv", BaseURL: "https://export.arxiv.org", Scholarly: true,
		build: func(cfg Config, _, base string) sources.Searcher {
			c := scholarlyClient("arxiv", cfg, arxivPace)
			c.accept = "application/atom+xml, application/xml;q=0.9"
			c.decode = decodeXML
			return &ArXiv{c: c, base: base}
		}},
	{Name: "brave", Title: "Brave Search", KeyEnv: []string{"BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY"},
		BaseURL: "https://api.search.brave.com",
		build: func(cfg Config, key, base string) sources.Searcher {
			c := newClient("brave", cfg)
			c.refuse = braveRefusal
			return &Brave{c: c, key: key, base: base}
		}},
	{Name: "crossref", Title: "Crossref", BaseURL: "https://api.crossref.org", Scholarly: true,
		build: func(cfg Config, _, base string) sources.Searcher {
			return &Crossref{c: scholarlyClient("crossref", cfg, crossrefPace), base: base, mail: contact(cfg)}
		}},
	{Name: "europepmc", Title: "Europe PMC (PubMed, PubMed Central)", BaseURL: "https://www.ebi.ac.uk/europepmc/webservices/rest",
		Scholarly: true,
		build: func(cfg Config, _, base string) sources.Searcher {
			return &EuropePMC{c: scholarlyClient("europepmc", cfg, europePMCPace), base: base}
		}},
	{Name: "exa", Title: "Exa", KeyEnv: []string{"EXA_API_KEY"}, BaseURL: "https://api.exa.ai",
		build: func(cfg Config, key, base string) sources.Searcher {
			return &Exa{c: newClient("exa", cfg), key: key, base: base}
		}},
	{Name: "openalex", Title: "OpenAlex", BaseURL: "https://api.openalex.org", Scholarly: true,
		build: func(cfg Config, _, base string) sources.Searcher {
			return &OpenAlex{c: scholarlyClient("openalex", cfg, openAlexPace), base: base, mail: contact(cfg)}
		}},
	{Name: "searxng", Title: "SearXNG", URLEnv: "SEARXNG_URL",
		build: func(cfg Config, _, base string) sources.Searcher {
			c := newClient("searxng", cfg)
			c.accept = "application/json, text/html;q=0.9, */*;q=0.5"
			c.refuse = searxngRefusal
			return &SearXNG{c: c, base: base}
		}},
	{Name: "semanticscholar", Title: "Semantic Scholar", KeyEnv: []string{"SEMANTIC_SCHOLAR_API_KEY", "S2_API_KEY"},
		KeyOptional: true, BaseURL: "https://api.semanticscholar.org", Scholarly: true,
		build: func(cfg Config, key, base string) sources.Searcher {
			return &SemanticScholar{c: scholarlyClient("semanticscholar", cfg, s2Pace), key: key, base: base}
		}},
	{Name: "tavily", Title: "Tavily", KeyEnv: []string{"TAVILY_API_KEY"}, BaseURL: "https://api.tavily.com",
		build: func(cfg Config, key, base string) sources.Searcher {
			return &Tavily{c: newClient("tavily", cfg), key: key, base: base, now: cfg.Now}
		}},
	{Name: "wikipedia", Title: "Wikipedia", BaseURL: "https://{lang}.wikipedia.org",
		build: func(cfg Config, _, base string) sources.Searcher {
			return &Wikipedia{c: scholarlyClient("wikipedia", cfg, wikiPace), base: base}
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
// BRAVE_SEARCH_API_KEY", "SEARXNG_URL", "no key", "key optional: SEMANTIC_SCHOLAR_API_KEY or S2_API_KEY".
func (p Provider) Needs() string {
	switch {
	case p.URLEnv != "":
		return p.URLEnv
	case len(p.KeyEnv) == 0:
		return "no key"
	case p.KeyOptional:
		return "key optional: " + strings.Join(p.KeyEnv, " or ")
	}
	return strings.Join(p.KeyEnv, " or ")
}

// NeedsNothing reports whether the provider can be built from nothing the user must set.
func (p Provider) NeedsNothing() bool { return p.URLEnv == "" && (len(p.KeyEnv) == 0 || p.KeyOptional) }

// ParseList reads a comma-separated list of provider names ("arxiv, openalex"), each checked against the table,
// without repeats, in the order given.
func ParseList(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.ToLower(strings.TrimSpace(part))
		if part == "" {
			continue
		}
		if _, ok := Lookup(part); !ok {
			return nil, fmt.Errorf("websearch: unknown provider %q (known: %s)", part, strings.Join(Names(), ", "))
		}
		if !slices.Contains(out, part) {
			out = append(out, part)
		}
	}
	return out, nil
}

// Help describes the providers in one line for help texts and schemas: "tavily (TAVILY_API_KEY), brave (…), …".
func Help() string {
	parts := make([]string, len(providers))
	for i, p := range providers {
		parts[i] = fmt.Sprintf("%s (%s)", p.Name, p.Needs())
	}
	return strings.Join(parts, ", ")
}
