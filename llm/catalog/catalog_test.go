package catalog

import (
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
)

func TestLookupKnownModels(t *testing.T) {
	for _, tc := range []struct {
		provider, model, source string
		window                  int
		input, output           float64
	}{
		{"openai", "gpt-4o", "openai", 128_000, 2.5, 10},
		{"anthropic", "claude-sonnet-4-5", "anthropic", 200_000, 3, 15},
		// A dated id resolves to its undated catalogue entry.
		{"anthropic", "claude-sonnet-4-5-20250929", "anthropic", 200_000, 3, 15},
		// A bare id served through a generic OpenAI-compatible endpoint is found at its maker — on the maker's
		// own price sheet, which comes before the embedded catalogue.
		{"openai-compatible", "deepseek-v4-flash", "deepseek", 1_000_000, 0.2817, 1.1268},
		{"deepseek", "deepseek-v4-flash", "deepseek", 1_000_000, 0.2817, 1.1268},
	} {
		e := Lookup(tc.provider, tc.model)
		if !e.Known || e.Source != tc.source || e.ContextWindow != tc.window || e.Price.Input != tc.input || e.Price.Output != tc.output {
			t.Errorf("%s/%s: %+v", tc.provider, tc.model, e)
		}
		if e.Name != tc.model || e.Provider != tc.provider {
			t.Errorf("%s/%s: name/provider not kept: %+v", tc.provider, tc.model, e.Info)
		}
	}
}

func TestCachePrices(t *testing.T) {
	// Anthropic: writes cost 1.25× input, reads 0.1×.
	e := Lookup("anthropic", "claude-sonnet-4-5")
	if e.Price.CacheWrite != 3.75 || e.Price.CacheRead != 0.3 {
		t.Errorf("anthropic cache prices %+v", e.Price)
	}
	// OpenAI lists only a read price; writes are billed as input.
	e = Lookup("openai", "gpt-4o")
	if e.Price.CacheRead != 1.25 || e.Price.CacheWrite != 2.5 {
		t.Errorf("openai cache prices %+v", e.Price)
	}
	// DeepSeek's file carries its cache-hit price in the write column; it is recognised as a read discount.
	e = Lookup("deepseek", "deepseek-v4-flash")
	if e.Price.CacheRead >= e.Price.Input || e.Price.CacheRead == 0 {
		t.Errorf("deepseek cache prices %+v", e.Price)
	}
}

func TestUnknownModelGetsDefaults(t *testing.T) {
	e := Lookup("openai", "qwen3:8b-local-finetune")
	if e.Known || e.Source != "default" || e.ContextWindow != DefaultContextWindow || e.Price != (llm.Price{}) {
		t.Errorf("unknown model: %+v", e)
	}
}

func TestResolveOverride(t *testing.T) {
	e := Resolve("openai", "my-local-model", &llm.Info{ContextWindow: 65_536, Price: llm.Price{Input: 0.1, Output: 0.2}})
	if !e.Known || e.Source != "config" || e.ContextWindow != 65_536 || e.Price.Input != 0.1 || e.Price.Output != 0.2 {
		t.Errorf("override on unknown: %+v", e)
	}
	if e.Price.CacheRead != 0.1 {
		t.Errorf("cache reads should default to the input price, got %+v", e.Price)
	}
	e = Resolve("openai", "gpt-4o", &llm.Info{MaxOutput: 1000})
	if e.MaxOutput != 1000 || e.ContextWindow != 128_000 || e.Price.Input != 2.5 {
		t.Errorf("partial override on known: %+v", e)
	}
	if e := Resolve("openai", "gpt-4o", nil); e.Source != "openai" {
		t.Errorf("nil override: %+v", e)
	}
}

func TestProvidersListed(t *testing.T) {
	found := map[string]bool{}
	for _, p := range Providers() {
		found[p] = true
	}
	for _, want := range []string{"openai", "anthropic", "deepseek", "openrouter"} {
		if !found[want] {
			t.Errorf("catalogue lacks %s", want)
		}
	}
}

// A short local model name must not borrow the facts of an aggregator's entry whose vendor prefix merely starts
// with it ("x" is not "x-ai/grok-…"); a dated tag is still a variant.
func TestVariantNeedsATagNotAVendor(t *testing.T) {
	for _, tc := range []struct {
		model string
		known bool
	}{
		{"x", false},
		{"claude-sonnet-4-5-20250929", true},
	} {
		e := Lookup("openai", tc.model)
		if e.Known != tc.known {
			t.Errorf("%s: known %v (source %s, window %d), want known %v", tc.model, e.Known, e.Source, e.ContextWindow, tc.known)
		}
	}
}

func TestMakersSheetsComeFirst(t *testing.T) {
	for _, tc := range []struct {
		provider, model, source, ref string
		window                       int
		input, output                float64
	}{
		// The README's DeepSeek example and the names DeepSeek's API answers to today.
		{"deepseek", "deepseek-flash", "deepseek", "api-docs.deepseek.com", 1_000_000, 0.2817, 1.1268},
		{"deepseek", "deepseek-chat", "deepseek", "api-docs.deepseek.com", 1_000_000, 0.2817, 1.1268},
		{"deepseek", "deepseek-v4-pro", "deepseek", "api-docs.deepseek.com", 1_000_000, 1.2676, 3.8028},
		// Qwen's own names, unknown to the embedded catalogue.
		{"qwen", "qwen-max", "alibaba-singapore", "alibabacloud.com", 32_768, 1.6, 6.4},
		{"qwen", "qwen-plus", "alibaba-singapore", "alibabacloud.com", 1_000_000, 0.4, 1.2},
		{"dashscope", "qwen-turbo", "alibaba-singapore", "alibabacloud.com", 131_072, 0.05, 0.2},
		{"qwen", "qwen-flash", "alibaba-singapore", "alibabacloud.com", 1_000_000, 0.05, 0.4},
		// A bare maker id gets the maker's price, not a reseller's.
		{"openai-compatible", "qwen3-max", "alibaba-singapore", "alibabacloud.com", 262_144, 1.2, 6},
		{"", "deepseek/deepseek-v4-pro", "deepseek", "api-docs.deepseek.com", 1_000_000, 1.2676, 3.8028},
		// The embedded catalogue still answers for the rest, and says so.
		{"openai", "gpt-4o", "openai", "charm.land/catwalk", 128_000, 2.5, 10},
	} {
		e := Lookup(tc.provider, tc.model)
		if !e.Known || e.Source != tc.source || e.ContextWindow != tc.window || e.Price.Input != tc.input || e.Price.Output != tc.output {
			t.Errorf("%s/%s: %+v", tc.provider, tc.model, e)
		}
		if !strings.Contains(e.Reference, tc.ref) || e.AsOf == "" {
			t.Errorf("%s/%s: reference %q as of %q, want %q and a date", tc.provider, tc.model, e.Reference, e.AsOf, tc.ref)
		}
	}
	// Through an aggregator the aggregator's own list comes first: its price is what the user pays.
	if e := Lookup("openrouter", "deepseek/deepseek-v4-pro"); e.Source != "openrouter" {
		t.Errorf("openrouter/deepseek-v4-pro priced from %s", e.Source)
	}
}

func TestConfigOverridesASheet(t *testing.T) {
	e := Resolve("deepseek", "deepseek-flash", &llm.Info{Price: llm.Price{Input: 0.5, Output: 2}})
	if e.Price.Input != 0.5 || e.Price.Output != 2 || e.ContextWindow != 1_000_000 || e.Reference != "config" {
		t.Fatalf("%+v", e)
	}
}
