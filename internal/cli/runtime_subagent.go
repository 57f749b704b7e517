package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/subagent"
	"github.com/deepresearch/deepresearch/workspace"
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
// management) keeps its per-conversation state keyed by session, so the same instances serve subagents; a type
// whose `context:` block tunes compaction gets a context manager of its own instead.
func (a *App) subagentMiddleware(rt *runtime, ws *workspace.Workspace, typ subagent.Type) []agent.Middleware {
	var out []agent.Middleware
	for _, m := range rt.Middleware {
		if _, isContext := m.(*contextmgr.Manager); isContext && len(typ.Context) > 0 && ws != nil {
			own, err := a.subagentContext(ws, typ.Context, rt.Tools)
			if err == nil {
				out = append(out, own)
				continue
			}
			// A bad block must not cost the subagent its context management: keep the shared manager.
			if a.Log != nil {
				a.Log.Warn("subagent context settings ignored", "type", typ.Name, "err", err)
			}
		}
		out = append(out, m)
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
	types = append(types, a.Config.Subagents...)
	att := rt.mcp
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
		Middleware: func(_ string, typ subagent.Type) []agent.Middleware {
			return a.subagentMiddleware(rt, o.Workspace, typ)
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
