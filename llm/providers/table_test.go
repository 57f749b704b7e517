package providers

import (
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/llmtest"
)

// Every row is complete enough to build a model from, and the table's lists are read from the rows.
func TestTableRowsAreComplete(t *testing.T) {
	rows := Builtin().Rows()
	if len(rows) < 9 || rows[0].Name != "openai" || rows[1].Name != "anthropic" {
		t.Fatalf("table order: %v", Names())
	}
	if !slices.IsSorted(Names()[2:]) {
		t.Errorf("the OpenAI-compatible services are not in alphabetical order: %v", Names())
	}
	for _, p := range rows {
		if p.Name == "" || p.Name != strings.ToLower(p.Name) || p.Title == "" {
			t.Errorf("row %+v: a lower-case name and a title are required", p)
		}
		if p.Protocol != OpenAICompatible && p.Protocol != Anthropic {
			t.Errorf("%s: protocol %q", p.Name, p.Protocol)
		}
		if p.BaseURL == "" && p.BaseURLEnv == "" {
			t.Errorf("%s: neither a default endpoint nor a variable naming one", p.Name)
		}
		for _, k := range p.KeyEnv {
			if !slices.Contains(Builtin().KeyEnvs(), k) || !strings.Contains(Builtin().Help(), k) {
				t.Errorf("%s: key variable %s missing from KeyEnvs or Help", p.Name, k)
			}
		}
		if !strings.Contains(Builtin().Help(), p.Name+" (") {
			t.Errorf("Help lacks %s: %s", p.Name, Builtin().Help())
		}
		// A hosted service's suggested models are ones the catalogue prices, so that the cost fuse sees them.
		for tier, m := range p.Models {
			if !slices.Contains(Tiers(), tier) {
				t.Errorf("%s: suggestion for unknown tier %q", p.Name, tier)
			}
			if e := Describe(Spec{Provider: p.Name, Model: m}); len(p.KeyEnv) > 0 && (!e.Known || e.Price.Input <= 0) {
				t.Errorf("%s suggests %s for %s, which the catalogue does not price: %+v", p.Name, m, tier, e)
			}
		}
	}
}

// A provider's catalogue aliases decide where its models are priced, and "openai" pointed at a known service's
// host is priced from that service's catalogue.
func TestCatalogueAliasesAndHosts(t *testing.T) {
	for _, tc := range []struct {
		provider, baseURL, model, source string
	}{
		{"qwen", "", "qwen-max", "alibaba-singapore"},
		{"dashscope", "", "qwen-turbo", "alibaba-singapore"},
		{"deepseek", "", "deepseek-flash", "deepseek"},
		{"openai", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "qwen-plus", "alibaba-singapore"},
		{"openai", "https://api.deepseek.com/v1", "deepseek-v4-flash", "deepseek"},
		{"", "https://api.deepseek.com/v1", "deepseek-v4-flash", "deepseek"},
		{"openai", "", "gpt-4o", "openai"},
		{"anthropic", "", "claude-sonnet-4-5", "anthropic"},
	} {
		e := Describe(Spec{Provider: tc.provider, BaseURL: tc.baseURL, Model: tc.model})
		if !e.Known || e.Source != tc.source {
			t.Errorf("%s at %q, %s: source %q (known %v), want %s", tc.provider, tc.baseURL, tc.model, e.Source, e.Known, tc.source)
		}
	}
	p, _ := Builtin().Lookup("openai")
	if got := Builtin().catalogue(p, "https://api.groq.com/openai/v1"); !slices.Equal(got, []string{"groq"}) {
		t.Errorf("groq's host: %v", got)
	}
	if got := Builtin().catalogue(p, "https://llm.example.org/v1"); got != nil {
		t.Errorf("an unknown server searches every catalogue, got %v", got)
	}
}

// With adds a row every list sees, and replaces a row of the same name; the built-in table is left alone.
func TestWithAddsAndReplacesRows(t *testing.T) {
	fake := Provider{Name: "FakeCo", Title: "Fake Co", Protocol: OpenAICompatible, BaseURL: "http://127.0.0.1:1/v1",
		KeyEnv: []string{"FAKECO_API_KEY"}}
	tab := Builtin().With(fake)
	if _, ok := Builtin().Lookup("fakeco"); ok {
		t.Fatal("With changed the built-in table")
	}
	if p, ok := tab.Lookup(" fakeco "); !ok || p.Title != "Fake Co" {
		t.Fatalf("lookup: %+v %v", p, ok)
	}
	if !slices.Contains(tab.Names(), "fakeco") || !slices.Contains(tab.KeyEnvs(), "FAKECO_API_KEY") || !strings.Contains(tab.Help(), "fakeco (FAKECO_API_KEY)") {
		t.Errorf("names %v, keys %v, help %s", tab.Names(), tab.KeyEnvs(), tab.Help())
	}
	moved := tab.With(Provider{Name: "ollama", Title: "elsewhere", Protocol: OpenAICompatible, BaseURL: "http://10.0.0.2:11434/v1"})
	if p, _ := moved.Lookup("ollama"); p.BaseURL != "http://10.0.0.2:11434/v1" || len(moved.Names()) != len(tab.Names()) {
		t.Errorf("replacing a row: %+v, %v", p, moved.Names())
	}
	var none *Table
	if !slices.Equal(none.Names(), Names()) {
		t.Error("the nil table is not the built-in one")
	}
}

// A row's protocol picks the adapter: a fake provider speaking the Anthropic wire protocol is served by the
// Anthropic adapter at its own default endpoint, with no code besides its row.
func TestRowProtocolPicksTheAdapter(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.AnthropicText("hello from the row"))
	tab := Builtin().With(Provider{Name: "fakeant", Title: "Fake", Protocol: Anthropic, BaseURL: srv.URL, KeyEnv: []string{"FAKEANT_KEY"}})
	m, err := tab.New(Spec{Provider: "fakeant", Model: "claude-haiku-4-5", APIKey: "k-123456789"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil || resp.Message.Content != "hello from the row" {
		t.Fatalf("resp %v err %v", resp, err)
	}
	if r := srv.Requests()[0]; r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "k-123456789" {
		t.Errorf("path %s, key header %q", r.Path, r.Header.Get("X-Api-Key"))
	}
	if _, err := tab.New(Spec{Provider: "nosuch", Model: "m"}); err == nil || !strings.Contains(err.Error(), "fakeant") {
		t.Errorf("unknown provider error does not list the table: %v", err)
	}
	if _, err := Builtin().With(Provider{Name: "odd", Protocol: "grpc"}).New(Spec{Provider: "odd", Model: "m"}); err == nil {
		t.Error("a row of an unknown protocol built a model")
	}
}

func TestKeyReadsOnlyTheRowsVariables(t *testing.T) {
	p := Provider{KeyEnv: []string{"A_KEY", "B_KEY"}}
	env := map[string]string{"B_KEY": "bee", "OPENAI_API_KEY": "never"}
	if k, v := p.Key(func(s string) string { return env[s] }); k != "bee" || v != "B_KEY" {
		t.Errorf("key %q from %q", k, v)
	}
	if k, v := p.Key(func(string) string { return "" }); k != "" || v != "A_KEY" {
		t.Errorf("no key set: %q from %q", k, v)
	}
	if k, v := (Provider{}).Key(func(string) string { return "x" }); k != "" || v != "" {
		t.Errorf("a keyless provider read %q from %q", k, v)
	}
}
