package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/workspace"
)

// runtimeOptions are what an agent surface brings to the shared runtime assembly.
type runtimeOptions struct {
	Model     llm.Model
	Workspace *workspace.Workspace
	Ledger    *llm.Ledger
	// ListsFailures says the caller shows failed MCP servers itself (the tools listing), so attaching them
	// prints nothing to stderr.
	ListsFailures bool
}

// runtime is the assembled tool set and middleware an interactive agent runs with: file tools, context
// management, MCP tools and subagents. Each mechanism's package plugs in here.
type runtime struct {
	Tools      []agent.Tool
	Middleware []agent.Middleware
	// mcp is what attachMCP leaves for the later steps (subagents, the tools listing, agent binding).
	mcp     *mcpAttachment
	closers []func() error
}

// openWorkspace opens the --workspace folder of an agent command ("" means the current directory). Unlike a
// run's own workspace it must exist already: a mistyped path would otherwise become a new, empty folder that the
// agent then searches in vain.
func openWorkspace(dir string) (*workspace.Workspace, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		dir = wd
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("--workspace %s: %w", dir, errors.Unwrap(err))
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("--workspace %s: not a folder", dir)
	}
	return workspace.New(dir, workspace.Config{})
}

func (a *App) newRuntime(ctx context.Context, o runtimeOptions) (*runtime, error) {
	rt := &runtime{Tools: o.Workspace.Tools()}
	// Order matters: MCP tools join the file tools, subagents get that tool set, and context management wraps
	// everything last so it sees every tool's output.
	steps := []func(context.Context, *runtime, runtimeOptions) error{a.attachMCP, a.attachSubagents, a.attachContext}
	for _, step := range steps {
		if err := step(ctx, rt, o); err != nil {
			rt.Close()
			return nil, err
		}
	}
	return rt, nil
}

// Close releases what the runtime started (MCP server processes).
func (r *runtime) Close() error {
	var first error
	for _, c := range r.closers {
		if err := c(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Observer prints tool activity to w: one line per tool call, with details when verbose.
func (r *runtime) Observer(w io.Writer, verbose bool) agent.Observer {
	var mu sync.Mutex
	return func(e agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case agent.EventToolCall:
			args := e.Call.Arguments
			if !verbose && len(args) > 120 {
				args = args[:120] + "…"
			}
			fmt.Fprintf(w, "→ %s %s\n", e.Call.Name, args)
		case agent.EventToolResult:
			if e.Result.IsError {
				fmt.Fprintf(w, "  ✗ %s: %s\n", e.Call.Name, firstLine(e.Result.Content))
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

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
