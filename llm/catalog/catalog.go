// Package catalog answers what a model's context window and per-token prices are, from charm.land/catwalk's
// embedded catalogue (maintained upstream, compiled in, no network). Models it does not know — typically local
// ones served by Ollama, vLLM or llama.cpp — get a conservative default window and a price of zero, marked
// unknown, and configuration can override every fact.
package catalog

import (
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"charm.land/catwalk/pkg/catwalk"
	"charm.land/catwalk/pkg/embedded"

	"github.com/deepresearch/deepresearch/llm"
)

// Defaults for models the catalogue does not know.
const (
	DefaultContextWindow = 32_768
	DefaultMaxOutput     = 4_096
)

// Entry is what the catalogue says about a model.
type Entry struct {
	llm.Info
	// Known is false when no catalogue entry matched and the defaults were used.
	Known bool `json:"known"`
	// Source names the catalogue provider whose entry matched ("openai", "openrouter", …), or "default".
	Source string `json:"source"`
	// CanReason says the model produces reasoning (thinking) output.
	CanReason bool `json:"can_reason,omitempty"`
	// Reference is where the figures come from: a maker's price page, the embedded catalogue and its version, or
	// "config".
	Reference string `json:"reference,omitempty"`
	// AsOf dates the figures (a month for a maker's page; the catalogue's module version stands for its date).
	AsOf string `json:"as_of,omitempty"`
	// Note says how figures were derived when they are not copied as published (a currency conversion, a tier).
	Note string `json:"note,omitempty"`
}

// catalogueVersion is the version of the embedded catalogue module, read from the binary's build information.
var catalogueVersion = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "charm.land/catwalk" {
				return d.Version
			}
		}
	}
	return "embedded"
})

// load parses the embedded catalogue once; it is immutable afterwards.
var load = sync.OnceValue(func() []catwalk.Provider { return embedded.GetAll() })

// firstParty are searched before aggregators when a model id is looked up across providers, so that a bare id
// gets its maker's price rather than a reseller's.
var firstParty = []string{"openai", "anthropic", "deepseek", "gemini", "xai", "moonshot", "zhipu", "zai", "alibaba-singapore", "minimax"}

// Lookup finds a model, searching the catalogue provider whose id is provider first. The makers' own price sheets (makers.go) are read first; then the named provider's list is searched first, then first-party makers, then everyone
// else (aggregators), so that a bare id gets its maker's price rather than a reseller's. In each group an exact id
// wins (also with a vendor prefix removed: "openai/gpt-4o"), then a dated variant in either direction
// ("claude-sonnet-4-5" ↔ "claude-sonnet-4-5-20250929"). Without a match it returns the defaults with Known false.
func Lookup(provider, model string) Entry {
	var named []string
	if provider != "" {
		named = []string{strings.ToLower(provider)}
	}
	return LookupIn(named, provider, model)
}

// LookupIn is Lookup searching the catalogue providers named (the ids of catalogue providers and makers' sheets,
// as a model provider's table row lists them) first; provider is what the entry reports.
func LookupIn(named []string, provider, model string) Entry {
	provs := load()
	want := strings.ToLower(strings.TrimSpace(model))
	sheet := func(own bool) (Entry, bool) {
		e, ok := fromSheets(named, want, own)
		if ok {
			e.Provider, e.Name = provider, model
			if provider == "" {
				e.Provider = e.Source
			}
		}
		return e, ok
	}
	var first, rest []catwalk.Provider
	for _, p := range ordered(provs, named) {
		if slices.Contains(named, string(p.ID)) {
			first = append(first, p)
		} else {
			rest = append(rest, p)
		}
	}
	for i, group := range [][]catwalk.Provider{first, rest} {
		// A maker's own sheet comes before the catalogue: the named provider's sheet before its catalogue list,
		// the other makers' sheets before the aggregators.
		if e, ok := sheet(i == 0); ok {
			return e
		}
		if p, m, ok := exact(group, want); ok {
			return entry(provider, model, p, m)
		}
		if p, m, ok := variant(group, want); ok {
			return entry(provider, model, p, m)
		}
	}
	return Entry{
		Info:   llm.Info{Provider: provider, Name: model, ContextWindow: DefaultContextWindow, MaxOutput: DefaultMaxOutput},
		Source: "default",
	}
}

func exact(group []catwalk.Provider, want string) (string, catwalk.Model, bool) {
	for _, cand := range candidates(want) {
		for _, p := range group {
			for _, m := range p.Models {
				if strings.ToLower(m.ID) == cand {
					return string(p.ID), m, true
				}
			}
		}
	}
	return "", catwalk.Model{}, false
}

// variant matches ids that differ by a "-suffix" (a date or version tag): the closest such id, first found.
func variant(group []catwalk.Provider, want string) (string, catwalk.Model, bool) {
	bestLen := -1
	var bestProv string
	var best catwalk.Model
	for _, cand := range candidates(want) {
		for _, p := range group {
			for _, m := range p.Models {
				id := strings.ToLower(m.ID)
				var shared int
				// The differing tail is a tag only when it holds no "/": "x" is not a variant of "x-ai/grok-4".
				switch {
				case strings.HasPrefix(cand, id+"-") && !strings.Contains(cand[len(id):], "/"):
					shared = len(id)
				case strings.HasPrefix(id, cand+"-") && !strings.Contains(id[len(cand):], "/"):
					shared = len(cand)
				default:
					continue
				}
				// Prefer the longest common id, then the smallest difference.
				if shared > bestLen || (shared == bestLen && abs(len(id)-len(cand)) < abs(len(best.ID)-len(cand))) {
					bestLen, bestProv, best = shared, string(p.ID), m
				}
			}
		}
		if bestLen >= 0 {
			return bestProv, best, true
		}
	}
	return "", catwalk.Model{}, false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Resolve looks a model up and lays an override over it: every non-zero field of override replaces the
// catalogue's. An override that gives a context window makes an unknown model known.
func Resolve(provider, model string, override *llm.Info) Entry {
	var named []string
	if provider != "" {
		named = []string{strings.ToLower(provider)}
	}
	return ResolveIn(named, provider, model, override)
}

// ResolveIn is Resolve searching the catalogue providers named first (see LookupIn).
func ResolveIn(named []string, provider, model string, override *llm.Info) Entry {
	e := LookupIn(named, provider, model)
	if override == nil {
		return e
	}
	if override.ContextWindow > 0 {
		e.ContextWindow = override.ContextWindow
		if !e.Known {
			e.Known, e.Source = true, "config"
		}
	}
	if override.ContextWindow > 0 || override.MaxOutput > 0 || override.Price != (llm.Price{}) {
		e.Reference, e.AsOf, e.Note = "config", "", joinNote(e.Note, "figures from the configuration file override "+e.Source)
	}
	if override.MaxOutput > 0 {
		e.MaxOutput = override.MaxOutput
	}
	o := override.Price
	if o.Input > 0 {
		e.Price.Input = o.Input
	}
	if o.Output > 0 {
		e.Price.Output = o.Output
	}
	if o.CacheRead > 0 {
		e.Price.CacheRead = o.CacheRead
	}
	if o.CacheWrite > 0 {
		e.Price.CacheWrite = o.CacheWrite
	}
	// A configured input price without cache prices: bill cache tokens like input rather than for free.
	if o.Input > 0 && o.CacheRead == 0 && e.Price.CacheRead == 0 {
		e.Price.CacheRead = o.Input
	}
	if o.Input > 0 && o.CacheWrite == 0 && e.Price.CacheWrite == 0 {
		e.Price.CacheWrite = o.Input
	}
	return e
}

// Providers lists the catalogue's provider ids.
func Providers() []string {
	var out []string
	for _, p := range load() {
		out = append(out, string(p.ID))
	}
	return out
}

// ordered lists the named providers first, then first-party makers, then everyone else.
func ordered(provs []catwalk.Provider, named []string) []catwalk.Provider {
	rank := func(p catwalk.Provider) int {
		if i := slices.Index(named, string(p.ID)); i >= 0 {
			return i
		}
		if i := slices.Index(firstParty, string(p.ID)); i >= 0 {
			return 100 + i
		}
		return 1000
	}
	out := slices.Clone(provs)
	slices.SortStableFunc(out, func(a, b catwalk.Provider) int { return rank(a) - rank(b) })
	return out
}

// candidates are the ids to try for a model name, most specific first.
func candidates(model string) []string {
	out := []string{model}
	if _, rest, ok := strings.Cut(model, "/"); ok && rest != "" {
		out = append(out, rest)
	}
	return out
}

// entry converts a catwalk model. catwalk's two cached prices are "cost_per_1m_in_cached" (a cache write, 1.25×
// input for Anthropic) and "cost_per_1m_out_cached" (a cache read); some providers' files put a read discount in
// the first with the second zero, which is recognised by its being cheaper than fresh input. A missing cache
// price is billed as fresh input, so that costs are never understated.
func entry(provider, model, source string, m catwalk.Model) Entry {
	p := llm.Price{Input: m.CostPer1MIn, Output: m.CostPer1MOut, CacheWrite: m.CostPer1MInCached, CacheRead: m.CostPer1MOutCached}
	if p.CacheRead == 0 && p.CacheWrite > 0 && p.CacheWrite < p.Input {
		p.CacheRead, p.CacheWrite = p.CacheWrite, 0
	}
	if p.CacheRead == 0 {
		p.CacheRead = p.Input
	}
	if p.CacheWrite == 0 {
		p.CacheWrite = p.Input
	}
	if provider == "" {
		provider = source
	}
	window := int(m.ContextWindow)
	if window <= 0 {
		window = DefaultContextWindow
	}
	return Entry{
		Info: llm.Info{Provider: provider, Name: model, ContextWindow: window,
			MaxOutput: int(m.DefaultMaxTokens), Price: p},
		Known:     true,
		Source:    source,
		CanReason: m.CanReason,
		Reference: "charm.land/catwalk",
		AsOf:      catalogueVersion(),
	}
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
