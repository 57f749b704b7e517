// Package config loads deepresearch's configuration: defaults, then one YAML file, then the environment, then
// flags — each later source overriding the earlier. API keys come only from the environment and are never
// printed unmasked.
package config

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/deepresearch/deepresearch/base/redact"
	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/catalog"
	"github.com/deepresearch/deepresearch/llm/providers"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources/websearch"
	"github.com/deepresearch/deepresearch/subagent"
)

// ModelSpec says which model serves a tier.
type ModelSpec struct {
	Provider string `yaml:"provider,omitempty" json:"provider,omitempty"` // a name of the provider table (llm/providers); any OpenAI-compatible server is openai
	Model    string `yaml:"model,omitempty" json:"model,omitempty"`
	BaseURL  string `yaml:"base_url,omitempty" json:"base_url,omitempty"`
	// APIKeyEnv names the environment variable holding the key; default by provider.
	APIKeyEnv string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
}

// ModelOverride supplies catalogue facts for models the catalogue does not know (local models).
type ModelOverride struct {
	ContextWindow int     `yaml:"context_window,omitempty" json:"context_window,omitempty"`
	MaxOutput     int     `yaml:"max_output,omitempty" json:"max_output,omitempty"`
	InputPrice    float64 `yaml:"input_price,omitempty" json:"input_price,omitempty"` // USD per million tokens
	OutputPrice   float64 `yaml:"output_price,omitempty" json:"output_price,omitempty"`
}

// Retry bounds model-call retries.
type Retry struct {
	MaxAttempts int           `yaml:"max_attempts,omitempty" json:"max_attempts,omitempty"`
	CallTimeout time.Duration `yaml:"call_timeout,omitempty" json:"call_timeout,omitempty"`
}

// Research holds the research graph's knobs; zero values mean the graph's defaults.
type Research struct {
	Engine        string        `yaml:"engine,omitempty" json:"engine,omitempty"` // auto | llm | extractive
	Rounds        int           `yaml:"rounds,omitempty" json:"rounds,omitempty"`
	MaxCostUSD    float64       `yaml:"max_cost_usd,omitempty" json:"max_cost_usd,omitempty"`
	MaxTokens     int           `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	MaxTime       time.Duration `yaml:"max_time,omitempty" json:"max_time,omitempty"`
	MaxCandidates int           `yaml:"max_candidates,omitempty" json:"max_candidates,omitempty"`
	Concurrency   int           `yaml:"concurrency,omitempty" json:"concurrency,omitempty"`
	MaxCalls      int           `yaml:"max_calls,omitempty" json:"max_calls,omitempty"`
	// Unjudged is what happens to a sentence the support judge gave no verdict on: remove (default) or keep
	// (published, marked unverified).
	Unjudged string `yaml:"unjudged,omitempty" json:"unjudged,omitempty"`
	OutDir   string `yaml:"out_dir,omitempty" json:"out_dir,omitempty"`
	// Depth is quick, standard, deep or auto (default: auto with a model, standard without); Length is brief,
	// standard, long or a number of words (default: none asked for).
	Depth  string `yaml:"depth,omitempty" json:"depth,omitempty"`
	Length string `yaml:"length,omitempty" json:"length,omitempty"`
	// Clarify lets the planner ask up to three clarifying questions of an ambiguous question before it plans,
	// on a terminal, in the viewer and over MCP (never in batch); default off.
	Clarify bool `yaml:"clarify,omitempty" json:"clarify,omitempty"`
}

// Sources configures search and fetching.
type Sources struct {
	Web        string   `yaml:"web,omitempty" json:"web,omitempty"` // tavily | brave | searxng | exa
	Corpus     []string `yaml:"corpus,omitempty" json:"corpus,omitempty"`
	AllowHosts []string `yaml:"allow_hosts,omitempty" json:"allow_hosts,omitempty"`
	// Roots are the folders the web viewer (serve) and `mcp --http` may read corpora from; a request naming a
	// folder outside them is refused. Empty: the working folder and the folders already indexed.
	Roots    []string `yaml:"roots,omitempty" json:"roots,omitempty"`
	CacheDir string   `yaml:"cache_dir,omitempty" json:"cache_dir,omitempty"`
}

// Config is the effective configuration.
type Config struct {
	// Default is the model used by every tier that names none of its own.
	Default ModelSpec            `yaml:"model,omitempty" json:"model"`
	Tiers   map[string]ModelSpec `yaml:"tiers,omitempty" json:"tiers,omitempty"`
	// Roles maps an agent role to a tier.
	Roles  map[string]string        `yaml:"roles,omitempty" json:"roles,omitempty"`
	Models map[string]ModelOverride `yaml:"models,omitempty" json:"models,omitempty"`
	Retry  Retry                    `yaml:"retry,omitempty" json:"retry"`
	// Context selects the context-engineering preset (hybrid, deepagents, claude-code) and overrides.
	Context  Context  `yaml:"context,omitempty" json:"context"`
	Research Research `yaml:"research,omitempty" json:"research"`
	Sources  Sources  `yaml:"sources,omitempty" json:"sources"`
	// MCPFile is a .mcp.json file; default .mcp.json in the working directory when present.
	MCPFile string `yaml:"mcp_file,omitempty" json:"mcp_file,omitempty"`
	// Subagents adds subagent types for the task tool, besides those in agents/*.md files.
	Subagents []subagent.Type `yaml:"subagents,omitempty" json:"subagents,omitempty"`
	// Temporal is the cluster durable runs go to (run, batch, serve, mcp, worker); empty runs in this process.
	Temporal Temporal `yaml:"temporal,omitempty" json:"temporal"`
	// State is the shared state of durable runs (postgres://…; env DEEPRESEARCH_STATE): runs, show, serve and mcp
	// list and show every run in it.
	State string `yaml:"state,omitempty" json:"state,omitempty"`

	// Providers is the model provider table provider names are looked up in; nil means providers.Builtin().
	Providers *providers.Table `yaml:"-" json:"-"`

	// File is where the configuration was read from, if anywhere.
	File string `yaml:"-" json:"file,omitempty"`
	env  func(string) string
}

// Temporal names a Temporal cluster (env DEEPRESEARCH_TEMPORAL sets HostPort).
type Temporal struct {
	HostPort  string `yaml:"host_port,omitempty" json:"host_port,omitempty"`
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	TaskQueue string `yaml:"task_queue,omitempty" json:"task_queue,omitempty"`
	// TLS connects over TLS with the system's roots (implied by any of the TLS files and by an API key).
	TLS bool `yaml:"tls,omitempty" json:"tls,omitempty"`
	// TLSCA is a PEM file of the roots to trust instead of the system's; TLSCert and TLSKey a client certificate
	// and its key, for mTLS; TLSServerName the name the server's certificate must carry (default the host).
	TLSCA         string `yaml:"tls_ca,omitempty" json:"tls_ca,omitempty"`
	TLSCert       string `yaml:"tls_cert,omitempty" json:"tls_cert,omitempty"`
	TLSKey        string `yaml:"tls_key,omitempty" json:"tls_key,omitempty"`
	TLSServerName string `yaml:"tls_server_name,omitempty" json:"tls_server_name,omitempty"`
	// APIKeyEnv names the environment variable holding an API key (Temporal Cloud), sent as a bearer token.
	APIKeyEnv string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	// Steps are the timeouts and retries of a durable run's steps; zero values keep the defaults.
	Steps StepPolicy `yaml:"steps,omitempty" json:"steps,omitempty"`
}

// StepPolicy is how the engine runs a durable run's steps. Zero values mean the defaults in brackets.
type StepPolicy struct {
	// HeartbeatTimeout is how soon a worker that stopped heartbeating is taken for dead and its step retried
	// elsewhere [15s].
	HeartbeatTimeout time.Duration `yaml:"heartbeat_timeout,omitempty" json:"heartbeat_timeout,omitempty"`
	// StartToClose bounds one attempt of a step [the stage timeout + 1m].
	StartToClose time.Duration `yaml:"start_to_close,omitempty" json:"start_to_close,omitempty"`
	// MaxAttempts bounds a step's attempts [10]; InitialInterval and MaxInterval the wait between them [1s, 30s].
	MaxAttempts     int           `yaml:"max_attempts,omitempty" json:"max_attempts,omitempty"`
	InitialInterval time.Duration `yaml:"initial_interval,omitempty" json:"initial_interval,omitempty"`
	MaxInterval     time.Duration `yaml:"max_interval,omitempty" json:"max_interval,omitempty"`
}

// Context selects the context-engineering preset and overrides single knobs of it: contextmgr.Settings, the one
// user-facing form of those settings (unset keeps the preset's value; 0 or false switches a mechanism off).
type Context = contextmgr.Settings

// Defaults returns the built-in configuration.
func Defaults() *Config {
	return &Config{
		Tiers: map[string]ModelSpec{},
		Roles: map[string]string{
			"planner":     providers.TierStrong,
			"verifier":    providers.TierStrong,
			"synthesizer": providers.TierStrong,
			"analyst":     providers.TierMid,
			"searcher":    providers.TierFast,
			"agent":       providers.TierStrong,
			"summarizer":  providers.TierFast,
		},
		Models:  map[string]ModelOverride{},
		Context: Context{Preset: "hybrid"},
		env:     os.Getenv,
	}
}

// DefaultFile is where the configuration file is looked for when none is named: ./deepresearch.yaml when the
// working folder is trusted (localTrusted), then config.yaml in UserDir.
func DefaultFile(getenv func(string) string, localTrusted bool) string {
	if localTrusted {
		if _, err := os.Stat(LocalFile); err == nil {
			return LocalFile
		}
	}
	if dir := UserDir(getenv); dir != "" {
		p := filepath.Join(dir, "config.yaml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Load reads defaults, the file (if path is non-empty) and the environment. getenv nil means os.Getenv.
func Load(path string, getenv func(string) string) (*Config, error) {
	return LoadWith(path, getenv, nil)
}

// LoadWith is Load with the model provider table names are looked up in; nil means providers.Builtin().
func LoadWith(path string, getenv func(string) string, table *providers.Table) (*Config, error) {
	c := Defaults()
	c.Providers = table
	if getenv != nil {
		c.env = getenv
	}
	if path != "" {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("config: read %s: %w", path, err)
		}
		if !fi.Mode().IsRegular() || fi.Size() > MaxFileBytes {
			return nil, fmt.Errorf("config: %s is not a regular file of at most %d bytes", path, MaxFileBytes)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: read %s: %w", path, err)
		}
		if err := c.parse(data, path); err != nil {
			return nil, err
		}
	}
	c.applyEnv()
	return c, nil
}

// MaxFileBytes bounds a configuration file.
const MaxFileBytes = 1 << 20

// Parse reads configuration file content over the defaults, as Load does for a file named name, without the
// environment.
func Parse(data []byte, name string) (*Config, error) {
	c := Defaults()
	if err := c.parse(data, name); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) parse(data []byte, name string) error {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config: parse %s: %w", name, err)
	}
	c.File = name
	if err := c.Research.Validate(); err != nil {
		return fmt.Errorf("config: %s: %w", name, err)
	}
	return nil
}

// Validate refuses research limits that cannot mean anything (negative, not a number, infinite, too large);
// zero keeps its documented meaning.
func (r Research) Validate() error {
	b := research.Budget{MaxCostUSD: r.MaxCostUSD, MaxTokens: r.MaxTokens, MaxTime: r.MaxTime, Concurrency: r.Concurrency, MaxCalls: r.MaxCalls}
	var errs []error
	if err := b.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("research: %w", err))
	}
	if err := research.CheckUnjudged(r.Unjudged); err != nil {
		errs = append(errs, fmt.Errorf("research: %w", err))
	}
	if err := research.CheckDepth(r.Depth); err != nil {
		errs = append(errs, fmt.Errorf("research: %w", err))
	}
	if err := research.CheckLength(r.Length); err != nil {
		errs = append(errs, fmt.Errorf("research: %w", err))
	}
	if r.Rounds < 0 || r.MaxCandidates < 0 {
		errs = append(errs, fmt.Errorf("research: rounds (%d) and max_candidates (%d) must not be negative (0 means the default)", r.Rounds, r.MaxCandidates))
	}
	return errors.Join(errs...)
}

func (c *Config) applyEnv() {
	if v := c.env("DEEPRESEARCH_PROVIDER"); v != "" {
		c.Default.Provider = v
	}
	if v := c.env("DEEPRESEARCH_MODEL"); v != "" {
		c.Default.Model = v
	}
	if v := c.env("DEEPRESEARCH_BASE_URL"); v != "" {
		c.Default.BaseURL = v
	}
	if c.Default.BaseURL == "" && c.Default.Provider != "" {
		if p, ok := c.Providers.Lookup(c.Default.Provider); ok && p.BaseURLEnv != "" {
			c.Default.BaseURL = c.env(p.BaseURLEnv)
		}
	}
	if v := c.env("DEEPRESEARCH_WEB"); v != "" {
		c.Sources.Web = v
	}
	if v := c.env("DEEPRESEARCH_ENGINE"); v != "" {
		c.Research.Engine = v
	}
	if v := c.env("DEEPRESEARCH_TEMPORAL"); v != "" {
		c.Temporal.HostPort = v
	}
	if v := c.env("DEEPRESEARCH_STATE"); v != "" {
		c.State = v
	}
}

// Overrides are flag values; empty strings leave the configuration alone.
type Overrides struct {
	Provider, Model, BaseURL string
}

// Apply lays flag values over the configuration (flags win over everything).
func (c *Config) Apply(o Overrides) {
	if o.Provider != "" {
		c.Default.Provider = o.Provider
	}
	if o.Model != "" {
		c.Default.Model = o.Model
	}
	if o.BaseURL != "" {
		c.Default.BaseURL = o.BaseURL
	}
}

// ModelFor returns the model spec serving a role: the role's tier's own spec, with empty fields taken from the
// default model.
func (c *Config) ModelFor(role string) ModelSpec {
	tier := c.Roles[role]
	if tier == "" {
		tier = providers.TierStrong
	}
	return c.ModelForTier(tier)
}

// ModelForTier returns the model spec of a tier, with empty fields taken from the default model.
func (c *Config) ModelForTier(tier string) ModelSpec {
	s := c.Tiers[tier]
	if s.Provider == "" {
		s.Provider = c.Default.Provider
	}
	if s.Model == "" {
		s.Model = c.Default.Model
	}
	if s.BaseURL == "" {
		s.BaseURL = c.Default.BaseURL
	}
	if s.APIKeyEnv == "" {
		s.APIKeyEnv = c.Default.APIKeyEnv
	}
	return s
}

// HasModel reports whether any model is configured; without one deepresearch runs its extractive engine.
func (c *Config) HasModel() bool {
	if c.Default.Provider != "" && c.Default.Model != "" {
		return true
	}
	for tier := range c.Tiers {
		if s := c.ModelForTier(tier); s.Provider != "" && s.Model != "" {
			return true
		}
	}
	return false
}

// APIKey returns the key for a spec from the environment: the api_key_env variable when the configuration names
// one, else the provider's own variables (the provider table's), so that a key is never sent to a company it was
// not issued by; "" for a provider that needs none or that the table does not have.
func (c *Config) APIKey(s ModelSpec) string {
	key, _ := c.apiKey(s)
	return key
}

// KeyVar returns the environment variable a spec's key belongs in: api_key_env, else the provider's preferred
// variable; "" when the provider needs no key.
func (c *Config) KeyVar(s ModelSpec) string {
	_, env := c.apiKey(s)
	return env
}

func (c *Config) apiKey(s ModelSpec) (key, env string) {
	if s.APIKeyEnv != "" {
		return c.env(s.APIKeyEnv), s.APIKeyEnv
	}
	p, ok := c.Providers.Lookup(s.Provider)
	if !ok {
		return "", ""
	}
	return p.Key(c.env)
}

// TokenEnv is the environment variable holding the access token of the web viewer and the MCP server over HTTP.
const TokenEnv = "DEEPRESEARCH_TOKEN"

// KeyVars lists every environment variable that holds one of deepresearch's secrets: the model providers' key
// variables of table (nil: the built-in one), the web search providers' and the access token's. What they hold is
// scrubbed from whatever is stored or printed, and masked by config show.
func KeyVars(table *providers.Table) []string {
	out := table.KeyEnvs()
	for _, k := range append(websearch.KeyEnvs(), TokenEnv) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// Secrets returns the API keys set in the environment — the known key variables (KeyVars) and every api_key_env
// the configuration names — for redact to remove from whatever is stored or printed.
func (c *Config) Secrets() []string {
	names := append(KeyVars(c.Providers), c.Default.APIKeyEnv, c.Temporal.APIKeyEnv)
	for _, t := range c.Tiers {
		names = append(names, t.APIKeyEnv)
	}
	out := redact.EnvValues(c.env, names...)
	// The shared state's password, from the file or DEEPRESEARCH_STATE: in its user information or as a query
	// parameter.
	if u, err := url.Parse(c.State); err == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			out = append(out, pw)
		}
		for _, k := range []string{"password", "sslpassword"} {
			if v := u.Query().Get(k); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// Override returns the configuration's corrections of a model's catalogue facts (its models: entry) as an
// override, or nil when it has none.
func (c *Config) Override(model string) *llm.Info {
	o, ok := c.Models[model]
	if !ok {
		return nil
	}
	return &llm.Info{ContextWindow: o.ContextWindow, MaxOutput: o.MaxOutput,
		Price: llm.Price{Input: o.InputPrice, Output: o.OutputPrice}}
}

// Describe returns the catalogue facts of a spec's model with the configuration's corrections, without building
// the model (no key needed).
func (c *Config) Describe(s ModelSpec) catalog.Entry {
	return c.Providers.Describe(providers.Spec{Provider: s.Provider, Model: s.Model, BaseURL: s.BaseURL, Override: c.Override(s.Model)})
}

// Env returns an environment variable through the configuration's environment source.
func (c *Config) Env(key string) string { return c.env(key) }

// Mask hides all but the last four characters of a secret.
func Mask(secret string) string {
	if secret == "" {
		return ""
	}
	if len(secret) <= 8 {
		return "****"
	}
	return "****" + secret[len(secret)-4:]
}

// Show renders the effective configuration as YAML with the keys that are set in the environment masked.
func (c *Config) Show() (string, error) {
	shown := *c // base URLs may carry user:key@
	shown.Default.BaseURL = redact.URL(c.Default.BaseURL)
	shown.State = redact.URL(c.State) // postgres://user:password@…
	shown.Tiers = make(map[string]ModelSpec, len(c.Tiers))
	for k, v := range c.Tiers {
		v.BaseURL = redact.URL(v.BaseURL)
		shown.Tiers[k] = v
	}
	// The research section shows the values a run will use: what the configuration sets, else the graph's defaults.
	d := research.DefaultSettings()
	r := &shown.Research
	if r.Engine == "" {
		r.Engine = "auto"
	}
	if r.Rounds == 0 {
		r.Rounds = d.Rounds
	}
	if r.MaxCandidates == 0 {
		r.MaxCandidates = d.MaxCandidates
	}
	if r.Concurrency == 0 {
		r.Concurrency = d.Concurrency
	}
	if r.MaxCalls == 0 {
		r.MaxCalls = d.MaxCalls
	}
	if r.OutDir == "" {
		r.OutDir = "runs"
	}
	out, err := yaml.Marshal(&shown)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Write(out)
	var limits []string
	if r.MaxCostUSD == 0 {
		limits = append(limits, "max_cost_usd")
	}
	if r.MaxTokens == 0 {
		limits = append(limits, "max_tokens")
	}
	if r.MaxTime == 0 {
		limits = append(limits, "max_time")
	}
	if len(limits) > 0 {
		fmt.Fprintf(&b, "# research.%s: not set, no limit\n", strings.Join(limits, ", "))
	}
	if c.Sources.Web == "" {
		b.WriteString("# sources.web: not set, no web search (set it, or pass --web tavily|brave|searxng|exa)\n")
	}
	if len(c.Sources.Corpus) == 0 {
		b.WriteString("# sources.corpus: not set, no local documents (set it, or pass --corpus DIR)\n")
	}
	var keys []string
	for _, k := range KeyVars(c.Providers) {
		if k == TokenEnv {
			continue
		}
		if v := c.env(k); v != "" {
			keys = append(keys, fmt.Sprintf("#   %s=%s\n", k, Mask(v)))
		}
	}
	if len(keys) > 0 {
		b.WriteString("# API keys (from the environment):\n")
		b.WriteString(strings.Join(keys, ""))
	}
	if c.File != "" {
		fmt.Fprintf(&b, "# read from %s\n", c.File)
	}
	return b.String(), nil
}
