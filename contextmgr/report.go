package contextmgr

import (
	"fmt"
	"strings"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

// Report categories, in display order.
const (
	CatSystem      = "system"
	CatMemory      = "memory"
	CatToolSchemas = "tool schemas"
	CatMessages    = "messages"
	CatToolResults = "tool results"
)

// Category is one slice of the context.
type Category struct {
	Name   string  `json:"name"`
	Tokens int     `json:"tokens"`
	Share  float64 `json:"share"` // of the window
}

// Report is what the context holds now (the /context command).
type Report struct {
	Preset     string     `json:"preset"`
	Window     int        `json:"window"`
	Trigger    int        `json:"trigger_tokens"` // compaction runs above this
	Reserve    int        `json:"output_reserve"` // kept free for the answer
	Total      int        `json:"total"`
	Share      float64    `json:"share"`
	Messages   int        `json:"messages"`
	Categories []Category `json:"categories"`
	Stats      Stats      `json:"stats"`
	// DeferredSchemas counts the schema tokens of tools hidden behind tool search: the saving of lazy schemas.
	DeferredSchemas int `json:"deferred_schema_tokens"`
}

// deferredTools are the tools the agent has but the request does not carry (lazy schemas). tool_search hidden
// because nothing is deferred is unused, not deferred.
func deferredTools(st *agent.State) []llm.ToolSpec {
	if st.RequestTools == nil {
		return nil
	}
	sent := make(map[string]bool, len(st.RequestTools))
	for _, t := range st.RequestTools {
		sent[t.Name] = true
	}
	var out []llm.ToolSpec
	for _, t := range st.Tools {
		if !sent[t.Name] && t.Name != agent.ToolSearchName {
			out = append(out, t)
		}
	}
	return out
}

// Report measures the state's context by category: the Account of the next request, against the window.
func (m *Manager) Report(st *agent.State) Report {
	b := m.budgetFor(st.Model)
	a := m.Account(st)
	by := map[string]int{CatSystem: a.System, CatMemory: a.Memory, CatToolSchemas: a.ToolSchemas, CatMessages: a.Messages, CatToolResults: a.ToolResults}
	r := Report{Preset: m.cfg.Preset, Window: b.window, Trigger: b.limit, Reserve: b.reserve, Messages: len(st.Messages), Stats: m.Stats(),
		DeferredSchemas: tokens.CountTools(m.counter(st.Model), deferredTools(st))}
	for _, name := range []string{CatSystem, CatMemory, CatToolSchemas, CatMessages, CatToolResults} {
		r.Categories = append(r.Categories, Category{Name: name, Tokens: by[name], Share: float64(by[name]) / float64(b.window)})
	}
	r.Total = a.Total()
	r.Share = float64(r.Total) / float64(r.Window)
	return r
}

// String renders the report for /context.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Context: %s of %s tokens (%.1f%%), %s; compaction above %s tokens (%.0f%% of the window, %s preset), %s reserved for the answer\n",
		lexical.Thousands(r.Total), lexical.Thousands(r.Window), 100*r.Share, plural(r.Messages, "message", "messages"), lexical.Thousands(r.Trigger),
		100*float64(r.Trigger)/float64(max(r.Window, 1)), r.Preset, lexical.Thousands(r.Reserve))
	for _, c := range r.Categories {
		fmt.Fprintf(&b, "  %-13s %9s  %5.1f%%\n", c.Name, lexical.Thousands(c.Tokens), 100*c.Share)
	}
	fmt.Fprintf(&b, "  %-13s %9s  %5.1f%%\n", "free", lexical.Thousands(max(0, r.Window-r.Total)), 100*max(0, 1-r.Share))
	if r.DeferredSchemas > 0 {
		fmt.Fprintf(&b, "Deferred tool schemas (behind tool_search): %s tokens not sent.\n", lexical.Thousands(r.DeferredSchemas))
	}
	s := r.Stats
	fmt.Fprintf(&b, "So far: %s, %s, %s gated, %s evicted, %s cleared, %s dropped.\n",
		plural(s.Compactions, "compaction", "compactions"), plural(s.SummaryCalls, "summary call", "summary calls"),
		lexical.Thousands(s.Gated), lexical.Thousands(s.Evicted), lexical.Thousands(s.Cleared), lexical.Thousands(s.Dropped))
	return b.String()
}
