package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/base/redact"
	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/harness"
	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/subagent"
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

// defaultMCPFile is looked for in the working directory when no file is configured.
const defaultMCPFile = config.LocalMCPFile

// mcpFlagHelp documents --mcp on the agent commands (ask, chat).
const mcpFlagHelp = "a .mcp.json file of MCP servers (default: mcp_file from the configuration, else ./.mcp.json in a trusted folder)"

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

// newRuntime assembles the agent runtime (harness.New) from the configuration: context settings, the .mcp.json
// file, subagent types and tier models.
func (a *App) newRuntime(ctx context.Context, o runtimeOptions) (*harness.Runtime, error) {
	cc, err := a.contextManagerConfig(a.Config.Context)
	if err != nil {
		return nil, err
	}
	hc := harness.Config{
		Model: o.Model, Workspace: o.Workspace, Context: &cc, Logger: a.Log,
		MCPOptions: mcptools.Options{Logger: a.Log, ClientVersion: Version},
		SubagentContext: func(typ subagent.Type, tools []agent.Tool) (*contextmgr.Manager, error) {
			return a.subagentContext(o.Workspace, typ.Context, tools)
		},
		SubagentObserver: subagentObserver(a),
		Redact:           redact.New(a.secrets()...).Scrub,
	}
	if !o.ListsFailures {
		hc.Warn = a.Stderr
	}
	if hc.MCP, err = a.loadMCPFile(); err != nil {
		return nil, err
	}
	if o.Model != nil {
		types, err := loadSubagentTypes()
		if err != nil {
			return nil, err
		}
		hc.Subagents = append(types, a.Config.Subagents...)
		hc.TierModel = func(tier string) (llm.Model, error) { return a.tierModel(tier, o.Ledger) }
	}
	return harness.New(ctx, hc)
}

// mcpFile returns the .mcp.json to use: the configured one (--mcp, mcp_file), else ./.mcp.json when present
// and the working folder is trusted. explicit reports whether the user named it.
func (a *App) mcpFile() (path string, explicit bool) {
	if a.Config != nil && a.Config.MCPFile != "" {
		return a.Config.MCPFile, true
	}
	if !a.localTrusted {
		return "", false
	}
	if _, err := os.Stat(defaultMCPFile); err == nil {
		return defaultMCPFile, false
	}
	return "", false
}

// loadMCPFile reads the .mcp.json to use, nil when there is none. A file the user named that cannot be read is
// an error; a ./.mcp.json found by default that cannot be read is a warning.
func (a *App) loadMCPFile() (*mcptools.File, error) {
	path, explicit := a.mcpFile()
	if path == "" {
		return nil, nil
	}
	f, err := mcptools.Load(path, a.getenv)
	if err != nil {
		if !explicit {
			fmt.Fprintf(a.Stderr, "warning: %v; continuing without MCP servers\n", err)
			return nil, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--mcp %s: no such file", path)
		}
		return nil, err
	}
	return f, nil
}

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

// tierModel builds the model for a subagent type's tier, or returns nil (the parent's model) when the
// configuration names no model of its own for that tier.
func (a *App) tierModel(tier string, ledger *llm.Ledger) (llm.Model, error) {
	return a.models().ForTier(tier, ledger, "subagent-"+tier)
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
			if !a.verbose {
				args = lexical.Clip(args, 100)
			}
			fmt.Fprintf(a.Stderr, "    ↳ [%s] %s %s\n", e.Session, e.Call.Name, args)
		case agent.EventToolResult:
			if e.Result.IsError {
				fmt.Fprintf(a.Stderr, "    ↳ [%s] ✗ %s: %s\n", e.Session, e.Call.Name, harness.FirstLine(e.Result.Content))
			}
		}
	}
}
