// Package harness assembles the runtime an interactive agent runs with — the workspace's file tools, the tools of
// MCP servers behind a guard and lazy schemas, subagents through the task tool, and context management wrapping
// everything — the way deepresearch's `ask` and `chat` do, so that a library user gets the same agent with one
// call:
//
//	rt, err := harness.New(ctx, harness.Config{Model: model, Workspace: ws, Context: contextmgr.Config{}})
//	defer rt.Close()
//	ag, err := agent.New(agent.Config{Model: model, Tools: rt.Tools, Middleware: rt.Middleware})
//	rt.Bind(ag)
//
// The order of assembly matters and is fixed here: MCP tools join the file tools, subagents get that tool set, and
// the context manager comes last among the tools (its memory tools) and innermost among the wrappers, so that it
// sees every tool's full output while the guard's ceiling still bounds what reaches the model.
package harness

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/subagent"
	"github.com/deepresearch/deepresearch/workspace"
)

// Config is what an agent surface brings to the runtime. Zero fields leave the mechanism out or take defaults as
// documented.
type Config struct {
	// Model is the agent's model. It sizes the lazy tool schemas' token counts and is the subagents' default
	// model; nil leaves subagents out.
	Model llm.Model
	// Workspace holds the file tools. Required.
	Workspace *workspace.Workspace
	// Context configures context management (see contextmgr.Preset); nil leaves it out.
	Context *contextmgr.Config
	// MCP are the MCP servers to start (a loaded .mcp.json); nil starts none. The guard and lazy schemas are in
	// place either way, so tools added later are covered.
	MCP *mcptools.File
	// MCPOptions configures the MCP client (logger, client version, timeouts).
	MCPOptions mcptools.Options
	// Subagents are the subagent types the task tool offers, besides the built-in general-purpose one.
	Subagents []subagent.Type
	// TierModel returns the model of a subagent type's tier; nil, or a nil model, means the parent's.
	TierModel func(tier string) (llm.Model, error)
	// SubagentContext, when set, builds a context manager of its own for a subagent type whose context block
	// tunes compaction (typ.Context is not empty); nil, or an error, keeps the shared manager.
	SubagentContext func(typ subagent.Type, tools []agent.Tool) (*contextmgr.Manager, error)
	// SubagentObserver receives the subagents' events.
	SubagentObserver agent.Observer
	// Warn receives notes for the user (MCP servers that did not start); nil discards them.
	Warn io.Writer
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Redact rewrites the text of every failed tool call before the model or the stored history sees it (keys
	// echoed in an error message); nil keeps error texts as they are.
	Redact func(string) string
}

// Runtime is the assembled tool set and middleware. Pass Tools and Middleware to agent.Config.
type Runtime struct {
	Tools      []agent.Tool
	Middleware []agent.Middleware

	cfg     Config
	guard   *mcptools.Guard
	lazy    *mcptools.Lazy
	mcp     *mcptools.Manager
	context *contextmgr.Manager
	closers []func() error
}

// New assembles the runtime. Close it to stop the MCP servers it started.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	if cfg.Workspace == nil {
		return nil, fmt.Errorf("harness: no workspace")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	rt := &Runtime{Tools: cfg.Workspace.Tools(), cfg: cfg}
	steps := []func(context.Context, *Runtime, Config) error{attachMCP, attachSubagents, attachContext}
	for _, step := range steps {
		if err := step(ctx, rt, cfg); err != nil {
			rt.Close()
			return nil, err
		}
	}
	return rt, nil
}

// Close releases what the runtime started (MCP server processes).
func (r *Runtime) Close() error {
	var first error
	for _, c := range r.closers {
		if err := c(); err != nil && first == nil {
			first = err
		}
	}
	r.closers = nil
	return first
}

// MCP returns the MCP servers' manager; nil when none were started.
func (r *Runtime) MCP() *mcptools.Manager { return r.mcp }

// ContextManager returns the context manager; nil when context management is left out.
func (r *Runtime) ContextManager() *contextmgr.Manager { return r.context }

// attachMCP puts the tool guard (outermost wrapper: timeouts, the result ceiling, errors → results) and lazy tool
// schemas in place, then starts the MCP servers and adds their tools. Servers that fail are reported to Warn and
// skipped.
func attachMCP(ctx context.Context, rt *Runtime, cfg Config) error {
	counter := tokens.Counter(tokens.Approx{})
	if cfg.Model != nil {
		counter = tokens.ForModel(cfg.Model.Info().Name)
	}
	// The task tool bounds its own run time (subagent.Config.Timeout); a 5-minute tool timeout would cut it.
	rt.guard = mcptools.NewGuard(mcptools.GuardConfig{
		Timeouts: map[string]time.Duration{subagent.ToolName: mcptools.NoTimeout},
		Redact:   cfg.Redact,
	})
	rt.lazy = mcptools.NewLazy(mcptools.LazyConfig{Counter: counter})
	rt.Middleware = append([]agent.Middleware{rt.guard, rt.lazy}, rt.Middleware...)
	rt.Tools = append(rt.Tools, rt.lazy.Tool())
	if cfg.MCP == nil {
		return nil
	}
	opts := cfg.MCPOptions
	if opts.Logger == nil {
		opts.Logger = cfg.Logger
	}
	rt.mcp = mcptools.Start(ctx, cfg.MCP, opts)
	rt.closers = append(rt.closers, rt.mcp.Close)
	if cfg.Warn != nil {
		for _, fl := range rt.mcp.Failures() {
			fmt.Fprintf(cfg.Warn, "mcp: server %s not started: %s\n", fl.Server,
				FirstLine(strings.TrimPrefix(fl.Err.Error(), "mcp server "+fl.Server+": ")))
		}
	}
	rt.Tools = append(rt.Tools, rt.mcp.Tools()...)
	return nil
}

// attachSubagents adds the task tool. Subagents get the runtime's tools as they stand when they start (so tools
// added by later steps, such as memory tools, are included) plus the tools of subagent-only MCP servers.
func attachSubagents(_ context.Context, rt *Runtime, cfg Config) error {
	if cfg.Model == nil {
		return nil
	}
	source := func() (parent, only []agent.Tool) {
		if rt.mcp == nil {
			return rt.Tools, nil
		}
		// The servers' current tools, not those listed at start-up: lists may have changed since.
		for _, t := range rt.Tools {
			if _, isMCP := t.(*mcptools.Tool); !isMCP {
				parent = append(parent, t)
			}
		}
		return append(parent, rt.mcp.Tools()...), rt.mcp.SubagentTools()
	}
	models := func(tier string) (llm.Model, error) { return nil, nil }
	if cfg.TierModel != nil {
		models = cfg.TierModel
	}
	fleet, err := subagent.New(subagent.Config{
		Model:      cfg.Model,
		Models:     models,
		ToolSource: source,
		Types:      cfg.Subagents,
		Middleware: func(_ string, typ subagent.Type) []agent.Middleware { return rt.subagentMiddleware(typ) },
		Preamble: "Your file tools work in the workspace rooted at " + cfg.Workspace.Root() +
			", shared with the agent that delegated to you; paths are relative to it.",
		Observer: cfg.SubagentObserver,
		Logger:   cfg.Logger,
	})
	if err != nil {
		return err
	}
	rt.Tools = append(rt.Tools, fleet.Tool())
	return nil
}

// subagentMiddleware is what hooks a subagent runs with. The runtime's middleware (guard, lazy schemas, context
// management) keeps its per-conversation state keyed by session, so the same instances serve subagents; a type
// whose context block tunes compaction gets a context manager of its own instead.
func (r *Runtime) subagentMiddleware(typ subagent.Type) []agent.Middleware {
	cfg := r.cfg
	var out []agent.Middleware
	for _, m := range r.Middleware {
		if _, isContext := m.(*contextmgr.Manager); isContext && len(typ.Context) > 0 && cfg.SubagentContext != nil {
			own, err := cfg.SubagentContext(typ, r.Tools)
			if err == nil && own != nil {
				out = append(out, own)
				continue
			}
			// A bad block must not cost the subagent its context management: keep the shared manager.
			cfg.Logger.Warn("subagent context settings ignored", "type", typ.Name, "err", err)
		}
		out = append(out, m)
	}
	return out
}

// attachContext builds the context manager over the workspace, adds its persistent memory tools and appends it
// as middleware (last, so that it sees every tool's output).
func attachContext(_ context.Context, rt *Runtime, cfg Config) error {
	if cfg.Context == nil {
		return nil
	}
	cc := *cfg.Context
	cc.ExemptTools = append(append([]string(nil), cc.ExemptTools...), contextmgr.BoundedNames(rt.Tools)...)
	if cc.Logger == nil {
		cc.Logger = cfg.Logger
	}
	m, err := contextmgr.New(cfg.Workspace, cc)
	if err != nil {
		return fmt.Errorf("context management: %w", err)
	}
	have := map[string]bool{}
	for _, t := range rt.Tools {
		have[t.Spec().Name] = true
	}
	for _, t := range m.Tools() {
		if name := t.Spec().Name; have[name] {
			cfg.Logger.Warn("memory tool shadowed by another tool of the same name; not adding it", "tool", name)
			continue
		}
		rt.Tools = append(rt.Tools, t)
	}
	rt.Middleware = append(rt.Middleware, m)
	rt.context = m
	return nil
}

// Bind keeps an agent's tools in step with its MCP servers: when a server announces a changed tool list, the
// agent's MCP tools are replaced by the servers' current ones. Call it after agent.New on surfaces that run long
// enough for lists to change.
func (r *Runtime) Bind(ag *agent.Agent) {
	if r.mcp == nil {
		return
	}
	var base []agent.Tool
	for _, t := range r.Tools {
		if _, isMCP := t.(*mcptools.Tool); !isMCP {
			base = append(base, t)
		}
	}
	r.mcp.OnToolsChanged(func() {
		tools := append(append([]agent.Tool(nil), base...), r.mcp.Tools()...)
		_ = ag.SetTools(tools) // names are unique per server and prefixed, so this cannot collide
	})
}

// Compact runs a manual compaction (`/compact [instructions]`) on an agent's state between runs and returns the
// line to show.
func (r *Runtime) Compact(ctx context.Context, st *agent.State, instructions string) (string, error) {
	if r.context == nil {
		return "", fmt.Errorf("context management is not enabled")
	}
	res, err := r.context.Compact(ctx, st, instructions)
	if err != nil {
		return "", err
	}
	if !res.Changed() {
		if res.Line != "" {
			return res.Line, nil // there was something, but compacting it would not have made the context smaller
		}
		return "nothing to compact yet", nil
	}
	return res.Line, nil
}

// ContextReport renders what fills an agent's context window (`/context`).
func (r *Runtime) ContextReport(st *agent.State) string {
	if r.context == nil {
		return "context management is not enabled"
	}
	return r.context.Report(st).String()
}

// Observer prints tool activity to w: one line per tool call (arguments clipped unless verbose), failed tools,
// compactions, and errors when verbose.
func Observer(w io.Writer, verbose bool) agent.Observer {
	var mu sync.Mutex
	return func(e agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case agent.EventToolCall:
			args := e.Call.Arguments
			if !verbose {
				args = lexical.Clip(args, 120)
			}
			fmt.Fprintf(w, "→ %s %s\n", e.Call.Name, args)
		case agent.EventToolResult:
			if e.Result.IsError {
				fmt.Fprintf(w, "  ✗ %s: %s\n", e.Call.Name, FirstLine(e.Result.Content))
			}
		case agent.EventCompaction:
			fmt.Fprintf(w, "  ⟲ %s\n", e.Text)
		case agent.EventError:
			if verbose {
				fmt.Fprintf(w, "  ! %s\n", e.Err)
			}
		}
	}
}

// FirstLine returns the first line of s, at most 200 characters.
func FirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return lexical.Clip(line, 200)
}
