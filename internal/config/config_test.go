package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/llm/providers"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestPrecedenceFlagsOverEnvOverFileOverDefaults(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(file, []byte("model:\n  provider: anthropic\n  model: from-file\n  base_url: http://file\ntiers:\n  fast:\n    model: small\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		env       map[string]string
		flags     config.Overrides
		wantModel string
		wantURL   string
	}{
		{"file only", nil, config.Overrides{}, "from-file", "http://file"},
		{"env over file", map[string]string{"DEEPRESEARCH_MODEL": "from-env"}, config.Overrides{}, "from-env", "http://file"},
		{"flags over env", map[string]string{"DEEPRESEARCH_MODEL": "from-env"}, config.Overrides{Model: "from-flag", BaseURL: "http://flag"}, "from-flag", "http://flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(file, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			c.Apply(tt.flags)
			got := c.ModelFor("planner")
			if got.Model != tt.wantModel || got.BaseURL != tt.wantURL || got.Provider != "anthropic" {
				t.Errorf("planner model = %+v", got)
			}
			if fast := c.ModelFor("searcher"); fast.Model != "small" || fast.Provider != "anthropic" {
				t.Errorf("searcher should use the fast tier's model with inherited provider: %+v", fast)
			}
		})
	}
}

func TestDefaultsAndNoModel(t *testing.T) {
	c, err := config.Load("", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.HasModel() {
		t.Error("no model is configured by default")
	}
	for role, tier := range map[string]string{"planner": "strong", "verifier": "strong", "synthesizer": "strong", "analyst": "mid", "searcher": "fast"} {
		if c.Roles[role] != tier {
			t.Errorf("role %s → %s, want %s", role, c.Roles[role], tier)
		}
	}
}

func TestUnknownFieldsAreRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(file, []byte("modle: typo\n"), 0o644)
	if _, err := config.Load(file, env(nil)); err == nil || !strings.Contains(err.Error(), "modle") {
		t.Fatalf("err = %v, want a parse error naming the field", err)
	}
}

func TestShowMasksSecrets(t *testing.T) {
	c, _ := config.Load("", env(map[string]string{"OPENAI_API_KEY": "sk-supersecretvalue1234"}))
	out, err := c.Show()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "supersecret") || !strings.Contains(out, "OPENAI_API_KEY=****1234") {
		t.Errorf("Show leaked or lost the key:\n%s", out)
	}
	if c.APIKey(c.ModelFor("agent")) != "sk-supersecretvalue1234" {
		t.Error("APIKey must read the environment")
	}
}

// A base_url with user:key@ (and a state URL with ?password= or ?sslpassword=) is printed with the key masked, for the default model and every tier, and the
// configuration itself keeps the real address.
func TestShowMasksBaseURLUserinfo(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(file, []byte("model:\n  provider: openai\n  model: m\n  base_url: https://me:sk-inurl-secret99@gw.example/v1\n"+
		"tiers:\n  fast:\n    base_url: http://u:tierpass123@10.0.0.1:8000/v1\n"+
		"state: postgres://research@db/research?sslmode=verify-full&password=pgquerypass1&sslpassword=pgkeypass22\n"), 0o644)
	c, err := config.Load(file, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Show()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "sk-inurl-secret99") || strings.Contains(out, "tierpass123") ||
		strings.Contains(out, "pgquerypass1") || strings.Contains(out, "pgkeypass22") ||
		!strings.Contains(out, "password=[redacted]&sslpassword=[redacted]") ||
		!strings.Contains(out, "https://me:[redacted]@gw.example/v1") || !strings.Contains(out, "http://u:[redacted]@10.0.0.1:8000/v1") {
		t.Errorf("Show:\n%s", out)
	}
	if c.Default.BaseURL != "https://me:sk-inurl-secret99@gw.example/v1" {
		t.Errorf("Show changed the configuration: %s", c.Default.BaseURL)
	}
}

// Show prints the research and source settings a run will use, defaults included, and no empty keys section.
func TestShowDefaults(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(file, []byte("research:\n  rounds: 1\n  max_cost_usd: 0.5\n"), 0o644)
	c, err := config.Load(file, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Show()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rounds: 1", "max_cost_usd: 0.5", "max_candidates: 30", "concurrency: 16", "max_calls: 1000",
		"out_dir: runs", "engine: auto", "max_tokens, max_time: not set, no limit", "sources.web: not set", "sources.corpus: not set"} {
		if !strings.Contains(out, want) {
			t.Errorf("Show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "API keys") {
		t.Errorf("Show prints an empty keys section:\n%s", out)
	}
	if c.Research.Rounds != 1 || c.Research.MaxCandidates != 0 {
		t.Errorf("Show changed the configuration: %+v", c.Research)
	}
}

func TestSubagentTypesFromTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(file, []byte("subagents:\n  - name: scout\n    description: finds sources\n    tools: grep, read_file\n    model: fast\n"), 0o644)
	c, err := config.Load(file, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Subagents) != 1 || c.Subagents[0].Name != "scout" || len(c.Subagents[0].Tools) != 2 || c.Subagents[0].Model != "fast" {
		t.Fatalf("subagents = %+v", c.Subagents)
	}
}

func TestAPIKeyNeverCrossesProviders(t *testing.T) {
	c, _ := config.Load("", env(map[string]string{"DEEPSEEK_API_KEY": "ds", "ANTHROPIC_API_KEY": "an", "MY_KEY": "mine"}))
	tests := []struct {
		spec config.ModelSpec
		want string
	}{
		{config.ModelSpec{Provider: "openai"}, ""},
		{config.ModelSpec{Provider: "anthropic"}, "an"},
		{config.ModelSpec{Provider: "openai", APIKeyEnv: "MY_KEY"}, "mine"},
		{config.ModelSpec{Provider: "somethingelse"}, ""},
	}
	for _, tt := range tests {
		if got := c.APIKey(tt.spec); got != tt.want {
			t.Errorf("APIKey(%+v) = %q, want %q", tt.spec, got, tt.want)
		}
	}
}

func TestHasModelSeesTierModelsInheritingTheProvider(t *testing.T) {
	c, _ := config.Load("", env(map[string]string{"DEEPRESEARCH_PROVIDER": "openai"}))
	if c.HasModel() {
		t.Fatal("a provider alone is no model")
	}
	c.Tiers["fast"] = config.ModelSpec{Model: "small"}
	if !c.HasModel() {
		t.Error("a tier model with the default provider is a configured model")
	}
}

// The shared state and the Temporal cluster come from the file or the environment; the state's password is a
// secret no printed error may show, and config show masks it.
func TestScaleOutSettings(t *testing.T) {
	f := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(f, []byte("temporal:\n  host_port: t.internal:7233\n  namespace: research\nstate: postgres://u:filepw12345@db/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(f, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Temporal.HostPort != "t.internal:7233" || c.Temporal.Namespace != "research" || c.State != "postgres://u:filepw12345@db/x" {
		t.Errorf("from the file: %+v %q", c.Temporal, c.State)
	}
	if !slices.Contains(c.Secrets(), "filepw12345") {
		t.Errorf("secrets %v lack the state's password", c.Secrets())
	}
	if shown, err := c.Show(); err != nil || strings.Contains(shown, "filepw12345") {
		t.Errorf("config show: %v\n%s", err, shown)
	}
	vars := map[string]string{"DEEPRESEARCH_TEMPORAL": "env:7233", "DEEPRESEARCH_STATE": "postgres://v:envpw67890@db/y"}
	c, err = config.Load(f, env(vars))
	if err != nil {
		t.Fatal(err)
	}
	if c.Temporal.HostPort != "env:7233" || c.State != vars["DEEPRESEARCH_STATE"] || !slices.Contains(c.Secrets(), "envpw67890") {
		t.Errorf("from the environment: %+v %q %v", c.Temporal, c.State, c.Secrets())
	}
}

// Every key variable of the model and web search provider tables is scrubbed: a provider row is all it takes,
// no second list to keep in step.
func TestEveryTableKeyIsASecret(t *testing.T) {
	table := providers.Builtin().With(providers.Provider{Name: "fakeco", Title: "Fake", Protocol: providers.OpenAICompatible,
		BaseURL: "http://127.0.0.1:9/v1", KeyEnv: []string{"FAKECO_API_KEY"}})
	names := append(table.KeyEnvs(), websearch.KeyEnvs()...)
	vars := map[string]string{}
	for i, k := range names {
		vars[k] = fmt.Sprintf("secret-value-%02d-%s", i, k)
	}
	c, err := config.LoadWith("", env(vars), table)
	if err != nil {
		t.Fatal(err)
	}
	secrets := c.Secrets()
	for _, k := range names {
		if !slices.Contains(secrets, vars[k]) {
			t.Errorf("%s is read but not scrubbed", k)
		}
	}
	if !slices.Contains(config.KeyVars(table), "FAKECO_API_KEY") || slices.Contains(config.KeyVars(nil), "FAKECO_API_KEY") {
		t.Errorf("KeyVars does not follow the table: %v", config.KeyVars(table))
	}
	if c.APIKey(config.ModelSpec{Provider: "fakeco"}) != vars["FAKECO_API_KEY"] || c.KeyVar(config.ModelSpec{Provider: "FakeCo"}) != "FAKECO_API_KEY" {
		t.Errorf("the row's key is not the spec's")
	}
	shown, err := c.Show()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range names {
		if strings.Contains(shown, vars[k]) || !strings.Contains(shown, k+"=****") {
			t.Errorf("config show does not mask %s", k)
		}
	}
}

// research.clarify_timeout is read as a duration and bounded: negative or over a day is refused at load.
func TestClarifyTimeout(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want time.Duration
		err  string
	}{
		{"research: {clarify: true, clarify_timeout: 90s}\n", 90 * time.Second, ""},
		{"research: {clarify_timeout: -1m}\n", 0, "clarify_timeout -1m0s"},
		{"research: {clarify_timeout: 48h}\n", 0, "clarify_timeout 48h0m0s"},
	} {
		file := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(file, []byte(c.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(file, env(nil))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: err = %v, want one naming %q", c.yaml, err, c.err)
		case c.err == "" && (err != nil || cfg.Research.ClarifyTimeout != c.want || !cfg.Research.Clarify):
			t.Errorf("%q: %v, %+v", c.yaml, err, cfg.Research)
		}
	}
}
