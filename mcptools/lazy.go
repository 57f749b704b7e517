package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

// SearchToolName is the tool the model uses to find deferred tools.
const SearchToolName = agent.ToolSearchName

// loadedMetaKey is the tool-message metadata that records which tools a tool_search call made visible, so that
// the set survives a resume from disk.
const loadedMetaKey = "tool_search_loaded"

// LazyConfig tunes Lazy. The zero value means the defaults.
type LazyConfig struct {
	// Window is the model's context window in tokens; 0 means the agent's model's ContextWindow.
	Window int
	// Fraction of the window the tool schemas may take before deferrable tools are deferred; default 0.10.
	// Negative never defers.
	Fraction float64
	// Counter counts schema tokens; default tokens.Approx.
	Counter tokens.Counter
	// Deferrable says which tools may be deferred; default the MCP tools (IsMCPName).
	Deferrable func(name string) bool
	// MaxResults is how many tools one search returns at most; default 5.
	MaxResults int
	// MaxListed bounds how many deferred tool names the tool_search description lists; default 200.
	MaxListed int
}

// The hooks Lazy implements.
var (
	_ agent.ToolsHook   = (*Lazy)(nil)
	_ agent.ToolWrapper = (*Lazy)(nil)
)

// Lazy defers tool schemas when they crowd the window, as Claude Code's tool search does. It is a ToolsHook that
// hides the deferred tools' schemas from each model call and a ToolWrapper that answers tool_search calls; add it
// to the middleware and Tool() to the tool set. A tool becomes visible from the call after a search returned it
// (or after the model called it by name). State is kept per session, so one Lazy serves a parent agent and its
// subagents. It is safe for concurrent use.
type Lazy struct {
	cfg LazyConfig

	mu       sync.Mutex
	sessions map[string]*lazySession
}

type lazySession struct {
	loaded map[string]bool
	plan   Plan
}

// Plan is the deferral decision for one tool set.
type Plan struct {
	// Tools and TotalTokens count every schema (tool_search excluded).
	Tools       int `json:"tools"`
	TotalTokens int `json:"total_tokens"`
	// Threshold is Fraction × Window.
	Threshold int `json:"threshold"`
	Window    int `json:"window"`
	// Defer is true when TotalTokens exceeds Threshold and some tools are deferrable.
	Defer bool `json:"defer"`
	// Deferred lists the tools whose schemas are withheld, and DeferredTokens what they would cost: the saving.
	// Loaded deferred tools (found by a search) are counted out of both.
	Deferred       []string `json:"deferred,omitempty"`
	DeferredTokens int      `json:"deferred_tokens"`
	// SearchTokens is the cost of the tool_search schema that replaces them.
	SearchTokens int `json:"search_tokens"`
}

// Saving is the number of schema tokens the deferral saves per model call (net of tool_search itself).
func (p Plan) Saving() int {
	if !p.Defer {
		return 0
	}
	return p.DeferredTokens - p.SearchTokens
}

// NewLazy returns a Lazy.
func NewLazy(cfg LazyConfig) *Lazy {
	if cfg.Fraction == 0 {
		cfg.Fraction = 0.10
	}
	if cfg.Counter == nil {
		cfg.Counter = tokens.Approx{}
	}
	if cfg.Deferrable == nil {
		cfg.Deferrable = IsMCPName
	}
	if cfg.MaxResults <= 0 {
		cfg.MaxResults = 5
	}
	if cfg.MaxListed <= 0 {
		cfg.MaxListed = 200
	}
	return &Lazy{cfg: cfg, sessions: map[string]*lazySession{}}
}

// SearchInput is the input of tool_search.
type SearchInput struct {
	Query string `json:"query" jsonschema:"keywords describing the capability you need, e.g. 'github issues' or 'read pdf'; or select:NAME1,NAME2 to load tools by exact name"`
	Limit int    `json:"limit,omitempty" jsonschema:"maximum number of tools to return (default 5)"`
}

const searchDescription = "Find tools that are available but not yet loaded. Returns matching tools with one-line descriptions; " +
	"their full definitions are then available from your next step, and you can call them directly."

// Tool returns the tool_search tool to add to the agent's tools. Its calls are answered by the Lazy middleware,
// which knows the calling agent's tool set; run without it, the tool says so.
func (l *Lazy) Tool() agent.Tool {
	return agent.NewTool(SearchToolName, searchDescription, func(context.Context, SearchInput) (string, error) {
		return "", fmt.Errorf("tool_search needs the mcptools.Lazy middleware in the agent's middleware")
	})
}

// Plan computes the deferral decision for a tool set and window (loaded names are kept visible).
func (l *Lazy) Plan(specs []llm.ToolSpec, window int, loaded map[string]bool) Plan {
	p := Plan{Window: window}
	for _, s := range specs {
		if s.Name == SearchToolName {
			p.SearchTokens = tokens.CountTools(l.cfg.Counter, []llm.ToolSpec{s})
			continue
		}
		p.Tools++
		p.TotalTokens += tokens.CountTools(l.cfg.Counter, []llm.ToolSpec{s})
	}
	if l.cfg.Fraction < 0 || window <= 0 {
		return p
	}
	p.Threshold = int(l.cfg.Fraction * float64(window))
	if p.TotalTokens <= p.Threshold {
		return p
	}
	for _, s := range specs {
		if s.Name == SearchToolName || !l.cfg.Deferrable(s.Name) || loaded[s.Name] {
			continue
		}
		p.Deferred = append(p.Deferred, s.Name)
		p.DeferredTokens += tokens.CountTools(l.cfg.Counter, []llm.ToolSpec{s})
	}
	p.Defer = len(p.Deferred) > 0
	return p
}

// Stats returns the latest plan of a session (the context report shows its saving).
func (l *Lazy) Stats(sessionID string) (Plan, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.sessions[sessionID]
	if !ok {
		return Plan{}, false
	}
	return s.plan, true
}

// Forget drops a finished session's state.
func (l *Lazy) Forget(sessionID string) {
	l.mu.Lock()
	delete(l.sessions, sessionID)
	l.mu.Unlock()
}

// session returns a session's state and whether it was just created.
func (l *Lazy) session(id string) (*lazySession, bool) {
	s, ok := l.sessions[id]
	if !ok {
		s = &lazySession{loaded: map[string]bool{}}
		l.sessions[id] = s
	}
	return s, !ok
}

func (l *Lazy) window(st *agent.State) int {
	if l.cfg.Window > 0 {
		return l.cfg.Window
	}
	if st.Model != nil {
		return st.Model.Info().ContextWindow
	}
	return 0
}

// ShowTools implements agent.ToolsHook: it withholds the deferred schemas from the request, and tool_search when
// nothing is deferred. It runs before the history hooks, so context management measures exactly this list.
func (l *Lazy) ShowTools(st *agent.State, tools []llm.ToolSpec) []llm.ToolSpec {
	l.mu.Lock()
	sess, fresh := l.session(st.SessionID)
	if fresh {
		// A resumed history: tools found by earlier searches, or called by name, are loaded again. From here on
		// WrapTool records every call, so the history is scanned once per session, not once per step.
		for _, m := range st.Messages {
			if m.Role == llm.RoleTool && m.ToolName == SearchToolName && m.Meta[loadedMetaKey] != "" {
				for _, n := range strings.Split(m.Meta[loadedMetaKey], ",") {
					sess.loaded[n] = true
				}
			}
			for _, c := range m.ToolCalls {
				sess.loaded[c.Name] = true
			}
		}
	}
	plan := l.Plan(tools, l.window(st), sess.loaded)
	sess.plan = plan
	l.mu.Unlock()

	if !plan.Defer {
		if !slices.ContainsFunc(tools, func(s llm.ToolSpec) bool { return s.Name == SearchToolName }) {
			return tools
		}
		return slices.DeleteFunc(slices.Clone(tools), func(s llm.ToolSpec) bool { return s.Name == SearchToolName })
	}
	deferred := make(map[string]bool, len(plan.Deferred))
	for _, n := range plan.Deferred {
		deferred[n] = true
	}
	kept := make([]llm.ToolSpec, 0, len(tools)-len(plan.Deferred))
	for _, s := range tools {
		switch {
		case deferred[s.Name]:
			continue
		case s.Name == SearchToolName:
			s.Description = l.searchDescription(plan.Deferred)
		}
		kept = append(kept, s)
	}
	return kept
}

func (l *Lazy) searchDescription(deferred []string) string {
	var b strings.Builder
	b.WriteString(searchDescription)
	fmt.Fprintf(&b, " %d tools are deferred", len(deferred))
	if len(deferred) <= l.cfg.MaxListed {
		b.WriteString(": ")
		b.WriteString(strings.Join(deferred, ", "))
	} else {
		servers := map[string]bool{}
		for _, n := range deferred {
			if s := ServerOf(n); s != "" {
				servers[s] = true
			}
		}
		b.WriteString(", from the MCP servers ")
		b.WriteString(strings.Join(sortedKeys(servers), ", "))
	}
	b.WriteString(".")
	return b.String()
}

// WrapTool implements agent.ToolWrapper: it answers tool_search calls from the calling agent's own tool set.
func (l *Lazy) WrapTool(next agent.ToolHandler) agent.ToolHandler {
	return func(ctx context.Context, st *agent.State, call llm.ToolCall) (agent.Result, error) {
		if call.Name != SearchToolName {
			// A tool the model calls by name stays loaded (it knows the tool now).
			l.mu.Lock()
			sess, _ := l.session(st.SessionID)
			sess.loaded[call.Name] = true
			l.mu.Unlock()
			return next(ctx, st, call)
		}
		var in SearchInput
		if err := json.Unmarshal([]byte(orEmptyObject(call.Arguments)), &in); err != nil {
			return agent.ErrorResult("invalid JSON arguments for %s: %v", SearchToolName, err), nil
		}
		if strings.TrimSpace(in.Query) == "" {
			return agent.ErrorResult("%s needs a query", SearchToolName), nil
		}
		limit := in.Limit
		if limit <= 0 || limit > 4*l.cfg.MaxResults {
			limit = l.cfg.MaxResults
		}
		var candidates []llm.ToolSpec
		for _, s := range st.Tools {
			if s.Name != SearchToolName && l.cfg.Deferrable(s.Name) {
				candidates = append(candidates, s)
			}
		}
		found := l.search(candidates, in.Query, limit)
		if len(found) == 0 {
			return agent.Result{Content: fmt.Sprintf("No tool matches %q. Try other keywords; %d deferrable tools exist.", in.Query, len(candidates))}, nil
		}
		names := make([]string, len(found))
		var b strings.Builder
		fmt.Fprintf(&b, "Found %d tools; they can be called from your next step:\n", len(found))
		for i, s := range found {
			names[i] = s.Name
			fmt.Fprintf(&b, "- %s: %s\n", s.Name, OneLine(s.Description, 160))
		}
		l.mu.Lock()
		sess, _ := l.session(st.SessionID)
		for _, n := range names {
			sess.loaded[n] = true
		}
		l.mu.Unlock()
		return agent.Result{Content: strings.TrimRight(b.String(), "\n"), Meta: map[string]string{loadedMetaKey: strings.Join(names, ",")}}, nil
	}
}

// search ranks candidates by BM25 over their names (split at _ and -) and descriptions. "select:a,b" picks tools
// by exact name.
func (l *Lazy) search(candidates []llm.ToolSpec, query string, limit int) []llm.ToolSpec {
	if rest, ok := strings.CutPrefix(strings.TrimSpace(query), "select:"); ok {
		want := map[string]bool{}
		for _, n := range strings.Split(rest, ",") {
			want[strings.TrimSpace(n)] = true
		}
		var out []llm.ToolSpec
		for _, s := range candidates {
			if want[s.Name] {
				out = append(out, s)
			}
		}
		return out
	}
	docs := make([][]string, len(candidates))
	for i, s := range candidates {
		name := strings.NewReplacer("_", " ", "-", " ", ".", " ").Replace(strings.TrimPrefix(s.Name, Prefix))
		// The name counts twice: it is the most specific text a tool has.
		docs[i] = lexical.Tokenize(name + " " + name + " " + s.Description)
	}
	q := lexical.Tokenize(strings.NewReplacer("_", " ", "-", " ").Replace(query))
	ranked := lexical.Top(lexical.NewBM25(docs).Scores(q), limit)
	out := make([]llm.ToolSpec, len(ranked))
	for i, r := range ranked {
		out[i] = candidates[r.Index]
	}
	return out
}

// OneLine returns the first line of s, clipped to max characters.
func OneLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

func orEmptyObject(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}
