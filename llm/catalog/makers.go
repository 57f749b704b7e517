package catalog

import (
	"math"
	"slices"

	"github.com/deepresearch/deepresearch/llm"
)

// A maker's price sheet is read before the embedded catalogue: the catalogue is compiled in from a dependency and
// lags behind price and name changes, and for some makers it carries a reseller's price. Each sheet says where its
// figures were read and when, and `deepresearch models` shows both. Configuration still overrides every figure.

// sheet is one maker's published figures for a set of models.
type sheet struct {
	provider  string // the catalogue provider id the entries are reported under
	reference string // the page the figures were read from
	asOf      string // when they were read
	note      string // how the figures were derived, when not copied as they stand
	models    []makerModel
}

// makerModel is one model on a sheet. Prices are USD per million tokens.
type makerModel struct {
	ids       []string // the current id first, then aliases the service still answers to
	window    int
	maxOutput int
	price     llm.Price
}

// cnyPerUSD converts prices published in yuan; the rate is the one on the sheet's asOf date.
const cnyPerUSD = 7.1

func cny(yuan float64) float64 { return math.Round(yuan/cnyPerUSD*10000) / 10000 }

var sheets = []sheet{
	{
		provider:  "deepseek",
		reference: "https://api-docs.deepseek.com/zh-cn/quick_start/pricing",
		asOf:      "2026-11",
		note:      "peak-hour prices (off-peak is half), converted from CNY at 7.1 per USD",
		models: []makerModel{
			{ids: []string{"deepseek-flash", "deepseek-v4-flash", "deepseek-v4.1-flash", "deepseek-chat", "deepseek-reasoner"},
				window: 1_000_000, maxOutput: 384_000,
				price: llm.Price{Input: cny(2), Output: cny(8), CacheRead: cny(0.04), CacheWrite: cny(2)}},
			{ids: []string{"deepseek-v4-pro", "deepseek-pro"},
				window: 1_000_000, maxOutput: 384_000,
				price: llm.Price{Input: cny(9), Output: cny(27), CacheRead: cny(0.30), CacheWrite: cny(9)}},
		},
	},
	{
		provider:  "alibaba-singapore",
		reference: "https://www.alibabacloud.com/help/en/model-studio/models",
		asOf:      "2026-11",
		note:      "international (Singapore) prices of the first input tier; longer prompts cost more on tiered models",
		models: []makerModel{
			{ids: []string{"qwen3-max"}, window: 262_144, maxOutput: 65_536,
				price: llm.Price{Input: 1.2, Output: 6, CacheRead: 1.2, CacheWrite: 1.2}},
			{ids: []string{"qwen-max", "qwen-max-latest"}, window: 32_768, maxOutput: 8_192,
				price: llm.Price{Input: 1.6, Output: 6.4, CacheRead: 1.6, CacheWrite: 1.6}},
			{ids: []string{"qwen-plus", "qwen-plus-latest"}, window: 1_000_000, maxOutput: 32_768,
				price: llm.Price{Input: 0.4, Output: 1.2, CacheRead: 0.4, CacheWrite: 0.4}},
			{ids: []string{"qwen-flash"}, window: 1_000_000, maxOutput: 32_768,
				price: llm.Price{Input: 0.05, Output: 0.4, CacheRead: 0.05, CacheWrite: 0.05}},
			{ids: []string{"qwen-turbo", "qwen-turbo-latest"}, window: 131_072, maxOutput: 16_384,
				price: llm.Price{Input: 0.05, Output: 0.2, CacheRead: 0.05, CacheWrite: 0.05}},
		},
	},
}

// fromSheets finds a model on the makers' sheets of the named providers (own true) or of the other makers (own
// false: a bare id served through a generic OpenAI-compatible endpoint is priced at its maker). A vendor prefix
// ("deepseek/deepseek-v4-pro") is ignored.
func fromSheets(named []string, want string, own bool) (Entry, bool) {
	for _, s := range sheets {
		if slices.Contains(named, s.provider) != own {
			continue
		}
		for _, cand := range candidates(want) {
			for _, m := range s.models {
				if slices.Contains(m.ids, cand) {
					return Entry{
						Info:      llm.Info{ContextWindow: m.window, MaxOutput: m.maxOutput, Price: m.price},
						Known:     true,
						Source:    s.provider,
						Reference: s.reference,
						AsOf:      s.asOf,
						Note:      s.note,
					}, true
				}
			}
		}
	}
	return Entry{}, false
}
