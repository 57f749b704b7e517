package providers

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// The tiers a model serves in: every role runs on one of them (the configuration's roles: map), and a provider
// suggests a model for each.
const (
	TierStrong = "strong" // planner, verifier, synthesizer, the agent
	TierMid    = "mid"    // analysts (reading)
	TierFast   = "fast"   // searchers, summaries
)

// Tiers lists the tiers from the strongest.
func Tiers() []string { return []string{TierStrong, TierMid, TierFast} }

// Protocol is the wire protocol a provider speaks.
type Protocol string

const (
	// OpenAICompatible is the Chat Completions API, served by OpenAI and by every OpenAI-compatible server.
	OpenAICompatible Protocol = "openai-compatible"
	// Anthropic is the Messages API.
	Anthropic Protocol = "anthropic"
)

// Provider is one row of the model provider table: everything the configuration, the key scrubbing, the help
// texts, `deepresearch models` and model construction know about a provider. Adding a provider is one row.
type Provider struct {
	// Name is what users type: --provider NAME, model.provider: NAME.
	Name string `json:"name"`
	// Title is the service's own name.
	Title string `json:"title"`
	// Protocol is the wire protocol, which picks the adapter.
	Protocol Protocol `json:"protocol"`
	// BaseURL is the default endpoint; empty means the adapter's own default (OpenAI's, Anthropic's).
	BaseURL string `json:"base_url,omitempty"`
	// BaseURLEnv is the environment variable naming the endpoint when the configuration names none.
	BaseURLEnv string `json:"base_url_env,omitempty"`
	// KeyEnv are the environment variables that may hold the API key, the preferred first; empty for a server
	// that needs none (a local one). A key is only ever read from its own provider's variables.
	KeyEnv []string `json:"key_env,omitempty"`
	// Hosts are the host names (with their subdomains) of the service's endpoints: "openai" pointed at one of
	// them is priced from this provider's catalogue.
	Hosts []string `json:"hosts,omitempty"`
	// Catalogue are the catalogue's provider ids to look the provider's models up in first (llm/catalog); empty
	// searches every catalogue by model id.
	Catalogue []string `json:"catalogue,omitempty"`
	// Models suggests a model per tier (TierStrong, TierMid, TierFast), for help texts and `deepresearch models`;
	// nothing is chosen for the user.
	Models map[string]string `json:"models,omitempty"`
}

// Needs says what the provider reads from the environment: "DEEPSEEK_API_KEY", or "no key".
func (p Provider) Needs() string {
	if len(p.KeyEnv) == 0 {
		return "no key"
	}
	return strings.Join(p.KeyEnv, " or ")
}

// Key returns the provider's API key from the first of its variables that is set, and the variable it belongs
// in (the preferred one when none is set; "" when the provider needs no key).
func (p Provider) Key(getenv func(string) string) (key, env string) {
	for _, k := range p.KeyEnv {
		if v := getenv(k); v != "" {
			return v, k
		}
	}
	if len(p.KeyEnv) > 0 {
		return "", p.KeyEnv[0]
	}
	return "", ""
}

// Suggested says the suggested models per tier in one phrase: "deepseek-v4-pro (strong), deepseek-flash (mid,
// fast)"; "" when the provider suggests none.
func (p Provider) Suggested() string {
	var parts []string
	var last string
	for _, tier := range Tiers() {
		m := p.Models[tier]
		if m == "" {
			continue
		}
		if m == last {
			parts[len(parts)-1] = strings.TrimSuffix(parts[len(parts)-1], ")") + ", " + tier + ")"
			continue
		}
		parts = append(parts, m+" ("+tier+")")
		last = m
	}
	return strings.Join(parts, ", ")
}

// builtin is the table every list of model providers is read from: the two protocols' own services first, then
// the OpenAI-compatible services in alphabetical order.
var builtin = &Table{rows: []Provider{
	{Name: "openai", Title: "OpenAI, or any OpenAI-compatible server with --base-url", Protocol: OpenAICompatible,
		BaseURLEnv: "OPENAI_BASE_URL", KeyEnv: []string{"OPENAI_API_KEY"}, Hosts: []string{"api.openai.com"},
		Catalogue: []string{"openai"},
		Models:    map[string]string{TierStrong: "gpt-4.1", TierMid: "gpt-4.1-mini", TierFast: "gpt-4.1-mini"}},
	{Name: "anthropic", Title: "Anthropic", Protocol: Anthropic,
		BaseURLEnv: "ANTHROPIC_BASE_URL", KeyEnv: []string{"ANTHROPIC_API_KEY"}, Catalogue: []string{"anthropic"},
		Models: map[string]string{TierStrong: "claude-sonnet-4-5", TierMid: "claude-sonnet-4-5", TierFast: "claude-haiku-4-5"}},
	{Name: "dashscope", Title: "Alibaba Cloud Model Studio (China)", Protocol: OpenAICompatible,
		BaseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1", KeyEnv: []string{"DASHSCOPE_API_KEY"},
		Hosts: []string{"aliyuncs.com"}, Catalogue: []string{"alibaba-singapore", "alibaba-us"},
		Models: map[string]string{TierStrong: "qwen3-max", TierMid: "qwen-plus", TierFast: "qwen-flash"}},
	{Name: "deepseek", Title: "DeepSeek", Protocol: OpenAICompatible,
		BaseURL: "https://api.deepseek.com/v1", KeyEnv: []string{"DEEPSEEK_API_KEY"},
		Hosts: []string{"deepseek.com"}, Catalogue: []string{"deepseek"},
		Models: map[string]string{TierStrong: "deepseek-v4-pro", TierMid: "deepseek-flash", TierFast: "deepseek-flash"}},
	{Name: "llamacpp", Title: "llama.cpp's server (local)", Protocol: OpenAICompatible, BaseURL: "http://localhost:8080/v1"},
	{Name: "ollama", Title: "Ollama (local)", Protocol: OpenAICompatible, BaseURL: "http://localhost:11434/v1",
		Models: map[string]string{TierStrong: "qwen3", TierMid: "qwen3", TierFast: "qwen3"}},
	{Name: "openrouter", Title: "OpenRouter", Protocol: OpenAICompatible,
		BaseURL: "https://openrouter.ai/api/v1", KeyEnv: []string{"OPENROUTER_API_KEY"},
		Hosts: []string{"openrouter.ai"}, Catalogue: []string{"openrouter"}},
	{Name: "qwen", Title: "Qwen on Alibaba Cloud Model Studio (international)", Protocol: OpenAICompatible,
		BaseURL: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", KeyEnv: []string{"DASHSCOPE_API_KEY"},
		Hosts: []string{"aliyuncs.com"}, Catalogue: []string{"alibaba-singapore", "alibaba-us"},
		Models: map[string]string{TierStrong: "qwen3-max", TierMid: "qwen-plus", TierFast: "qwen-flash"}},
	{Name: "vllm", Title: "vLLM (local)", Protocol: OpenAICompatible, BaseURL: "http://localhost:8000/v1"},
}}

// recognised are OpenAI-compatible services that are not offered by name but are recognised by their endpoint's
// host under "openai", so that their models are priced from their own catalogue.
var recognised = []Provider{
	{Name: "groq", Hosts: []string{"groq.com"}, Catalogue: []string{"groq"}},
	{Name: "xai", Hosts: []string{"x.ai"}, Catalogue: []string{"xai"}},
	{Name: "moonshot", Hosts: []string{"moonshot.cn", "moonshot.ai"}, Catalogue: []string{"moonshot"}},
}

// Table is a model provider table. The nil *Table is the built-in one.
type Table struct {
	rows []Provider
}

// Builtin returns the built-in provider table.
func Builtin() *Table { return builtin }

// With returns a copy of the table with the given rows added (a row of a name already present replaces it), for
// programs that serve a provider of their own and for tests.
func (t *Table) With(rows ...Provider) *Table {
	out := &Table{rows: t.Rows()}
	for _, r := range rows {
		r.Name = strings.ToLower(strings.TrimSpace(r.Name))
		if i := slices.IndexFunc(out.rows, func(p Provider) bool { return p.Name == r.Name }); i >= 0 {
			out.rows[i] = r
		} else {
			out.rows = append(out.rows, r)
		}
	}
	return out
}

func (t *Table) table() *Table {
	if t == nil {
		return builtin
	}
	return t
}

// Rows lists the providers in table order.
func (t *Table) Rows() []Provider { return slices.Clone(t.table().rows) }

// Lookup finds a provider by name, ignoring case and surrounding space; the empty name is "openai".
func (t *Table) Lookup(name string) (Provider, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		name = "openai"
	}
	for _, p := range t.table().rows {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// Names lists every accepted provider name, in table order.
func (t *Table) Names() []string {
	rows := t.table().rows
	out := make([]string, len(rows))
	for i, p := range rows {
		out[i] = p.Name
	}
	return out
}

// KeyEnvs lists every environment variable holding a provider's API key, each once (for scrubbing, masking and
// help texts).
func (t *Table) KeyEnvs() []string {
	var out []string
	for _, p := range t.table().rows {
		for _, k := range p.KeyEnv {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// Help describes the providers in one line for help texts: "openai (OPENAI_API_KEY), anthropic (…), …".
func (t *Table) Help() string {
	rows := t.table().rows
	parts := make([]string, len(rows))
	for i, p := range rows {
		parts[i] = fmt.Sprintf("%s (%s)", p.Name, p.Needs())
	}
	return strings.Join(parts, ", ")
}

// unknown is the error for a provider name the table does not have.
func (t *Table) unknown(name string) error {
	return fmt.Errorf("providers: unknown provider %q (known: %s)", name, strings.Join(t.Names(), ", "))
}

// catalogue picks the catalogue ids to price p's models from: its own, or for a generic OpenAI-compatible
// provider pointed at a base URL, those of the service the URL's host belongs to (none, to search every
// catalogue, for a server nobody recognises).
func (t *Table) catalogue(p Provider, baseURL string) []string {
	if p.Name != "openai" || baseURL == "" {
		return p.Catalogue
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return p.Catalogue
	}
	host := strings.ToLower(u.Hostname())
	for _, q := range append(t.Rows(), recognised...) {
		for _, h := range q.Hosts {
			if host == h || strings.HasSuffix(host, "."+h) {
				return q.Catalogue
			}
		}
	}
	return nil
}

// Names lists every provider name the built-in table accepts.
func Names() []string { return builtin.Names() }
