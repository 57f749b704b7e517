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
	Total      int        `json:"total"`
	Share      float64    `json:"share"`
	Messages   int        `json:"messages"`
	Categories []Category `json:"categories"`
	Stats      Stats      `json:"stats"`
	// DeferredSchemas counts the schema tokens of tools hidden behind tool search: the saving of lazy schemas.
	DeferredSchemas int `json:"deferred_schema_tokens"`
}

// splitTools separates the tools the session's latest request showed the model from those deferred.
func (m *Manager) splitTools(st *agent.State) (shown, deferred []llm.ToolSpec) {
	v, ok := m.visible.Load(st.SessionID)
	if !ok {
		return st.Tools, nil
	}
	visible := v.(map[string]bool)
	for _, t := range st.Tools {
		if t.Name == agent.ToolSearchName && !visible[t.Name] {
			// Lazy schemas hide tool_search itself when nothing is deferred; it is then unused, not deferred.
			continue
		}
		if visible[t.Name] {
			shown = append(shown, t)
		} else {
			deferred = append(deferred, t)
		}
	}
	return shown, deferred
}

// Report measures the state's context by category.
func (m *Manager) Report(st *agent.State) Report {
	c := m.counter(st.Model)
	b := m.budgetFor(st.Model)
	shown, deferred := m.splitTools(st)
	by := map[string]int{CatToolSchemas: tokens.CountTools(c, shown)}
	for _, msg := range st.Messages {
		n := tokens.CountMessage(c, msg)
		switch {
		case kindOf(msg) == kindMemory:
			by[CatMemory] += n
		case msg.Role == llm.RoleSystem:
			by[CatSystem] += n
		case msg.Role == llm.RoleTool:
			by[CatToolResults] += n
		default:
			by[CatMessages] += n
		}
	}
	r := Report{Preset: m.cfg.Preset, Window: b.window, Trigger: b.limit, Messages: len(st.Messages), Stats: m.Stats(),
		DeferredSchemas: tokens.CountTools(c, deferred)}
	for _, name := range []string{CatSystem, CatMemory, CatToolSchemas, CatMessages, CatToolResults} {
		r.Total += by[name]
		r.Categories = append(r.Categories, Category{Name: name, Tokens: by[name], Share: float64(by[name]) / float64(b.window)})
	}
	r.Share = float64(r.Total) / float64(r.Window)
	return r
}

// String renders the report for /context.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Context: %s of %s tokens (%.1f%%), %s; compaction above %s tokens (%s preset)\n",
		lexical.Thousands(r.Total), lexical.Thousands(r.Window), 100*r.Share, plural(r.Messages, "message", "messages"), lexical.Thousands(r.Trigger), r.Preset)
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
