package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"deepresearch/agent"
	"deepresearch/llm"
	"deepresearch/mcptools"
	"deepresearch/subagent"
)

// subagentDirs are where subagent types are read from, in increasing precedence: the user's, then the project's.
func subagentDirs() []string {
	var dirs []string
	if dir, err := os.UserConfigDir(); err == nil {
		dirs = append(dirs, filepath.Join(dir, "deepresearch", "agents"))
	}
	return append(dirs, filepath.Join(".deepresearch", "agents"))
}

func loadSubagentTypes() ([]subagent.Type, error) {
	var types []subagent.Type
	for _, dir := range subagentDirs() {
		ts, err := subagent.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		types = append(types, ts...)
	}
	return types, nil
}

// subagentMiddleware is what hooks a subagent runs with. The runtime's middleware (guard, lazy schemas, context
// management) keeps its per-conversation state keyed by session, so the same instances serve subagents; one that
// wants per-type settings (compaction thresholds from the type's context block) implements ForSubagent and hands
// out a dedicated instance instead.
func subagentMiddleware(rt *runtime, session string, typ subagent.Type) []agent.Middleware {
	type forSubagent interface {
		ForSubagent(sessionID string, settings map[string]any) agent.Middleware
	}
	var out []agent.Middleware
	for _, m := range rt.Middleware {
		switch m := m.(type) {
		case forSubagent:
			if sm := m.ForSubagent(session, typ.Context); sm != nil {
				out = append(out, sm)
			}
		default:
			out = append(out, m)
		}
	}
	return out
}

// attachSubagents adds the task tool. Subagents get the runtime's tools as they stand when they start (so tools
// added by later steps, such as memory tools, are included) plus the tools of subagent-only MCP servers.
func (a *App) attachSubagents(_ context.Context, rt *runtime, o runtimeOptions) error {
	if o.Model == nil {
		return nil
	}
	types, err := loadSubagentTypes()
	if err != nil {
		return err
	}
	att := mcpAttachmentOf(rt)
	source := func() (parent, only []agent.Tool) {
		if att == nil || att.mgr == nil {
			return rt.Tools, nil
		}
		// The servers' current tools, not those listed at start-up: lists may have changed since.
		for _, t := range rt.Tools {
			if _, isMCP := t.(*mcptools.Tool); !isMCP {
				parent = append(parent, t)
			}
		}
		return append(parent, att.mgr.Tools()...), att.mgr.SubagentTools()
	}
	preamble := ""
	if o.Workspace != nil {
		preamble = "Your file tools work in the workspace rooted at " + o.Workspace.Root() + ", shared with the agent that delegated to you; paths are relative to it."
	}
	fleet, err := subagent.New(subagent.Config{
		Model:      o.Model,
		Models:     func(tier string) (llm.Model, error) { return a.tierModel(tier, o.Ledger) },
		ToolSource: source,
		Types:      types,
		Middleware: func(session string, typ subagent.Type) []agent.Middleware {
			return subagentMiddleware(rt, session, typ)
		},
		Preamble: preamble,
		Observer: subagentObserver(a),
		Logger:   a.Log,
	})
	if err != nil {
		return err
	}
	rt.Tools = append(rt.Tools, fleet.Tool())
	return nil
}

// tierModel builds the model for a subagent type's tier, or returns nil (the parent's model) when the
// configuration names no model of its own for that tier.
func (a *App) tierModel(tier string, ledger *llm.Ledger) (llm.Model, error) {
	if a.Config.Tiers[tier].Model == "" {
		return nil, nil
	}
	m, err := a.modelFromSpec(a.Config.ModelForTier(tier), ledger, "subagent-"+tier)
	if err != nil {
		return nil, fmt.Errorf("model for tier %s: %w", tier, err)
	}
	return m, nil
}

// subagentObserver prints subagents' tool calls and failures to stderr, indented under the parent's task call.
func subagentObserver(a *App) agent.Observer {
	var mu sync.Mutex
	return func(e agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case agent.EventToolCall:
			args := e.Call.Arguments
			if !a.verbose && len(args) > 100 {
				args = args[:100] + "…"
			}
			fmt.Fprintf(a.Stderr, "    ↳ [%s] %s %s\n", e.Session, e.Call.Name, args)
		case agent.EventToolResult:
			if e.Result.IsError {
				fmt.Fprintf(a.Stderr, "    ↳ [%s] ✗ %s: %s\n", e.Session, e.Call.Name, firstLine(e.Result.Content))
			}
		}
	}
}
