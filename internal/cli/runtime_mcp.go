package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/subagent"
)

// defaultMCPFile is looked for in the working directory when no file is configured.
const defaultMCPFile = config.LocalMCPFile

// mcpFlagHelp documents --mcp on the agent commands (ask, chat).
const mcpFlagHelp = "a .mcp.json file of MCP servers (default: mcp_file from the configuration, else ./.mcp.json in a trusted folder)"

// mcpAttachment is what attachMCP leaves for the later steps (subagents, the tools listing, agent binding).
type mcpAttachment struct {
	guard *mcptools.Guard
	lazy  *mcptools.Lazy
	mgr   *mcptools.Manager // nil when no .mcp.json is in use
	file  string
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

// attachMCP puts the tool guard (outermost wrapper: timeouts, the result ceiling, errors → results) and lazy
// tool schemas in place, then starts the MCP servers of the .mcp.json file and adds their tools. Servers that
// fail are printed to stderr and skipped. A file the user named that cannot be read is an error; a ./.mcp.json
// found by default that cannot be read is a warning.
func (a *App) attachMCP(ctx context.Context, rt *runtime, o runtimeOptions) error {
	counter := tokens.Counter(tokens.Approx{})
	if o.Model != nil {
		counter = tokens.ForModel(o.Model.Info().Name)
	}
	att := &mcpAttachment{
		// The task tool bounds its own run time (subagent.Config.Timeout); a 5-minute tool timeout would cut it.
		guard: mcptools.NewGuard(mcptools.GuardConfig{Timeouts: map[string]time.Duration{subagent.ToolName: mcptools.NoTimeout}}),
		lazy:  mcptools.NewLazy(mcptools.LazyConfig{Counter: counter}),
	}
	rt.Middleware = append([]agent.Middleware{att.guard, att.lazy}, rt.Middleware...)
	rt.mcp = att
	rt.Tools = append(rt.Tools, att.lazy.Tool())

	path, explicit := a.mcpFile()
	if path == "" {
		return nil
	}
	f, err := mcptools.Load(path, a.getenv)
	if err != nil {
		if !explicit {
			fmt.Fprintf(a.Stderr, "warning: %v; continuing without MCP servers\n", err)
			return nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--mcp %s: no such file", path)
		}
		return err
	}
	att.file = path
	att.mgr = mcptools.Start(ctx, f, mcptools.Options{Logger: a.Log, ClientVersion: Version})
	rt.closers = append(rt.closers, att.mgr.Close)
	for _, fl := range att.mgr.Failures() {
		if o.ListsFailures {
			break
		}
		fmt.Fprintf(a.Stderr, "mcp: server %s not started: %s\n", fl.Server, firstLine(strings.TrimPrefix(fl.Err.Error(), "mcp server "+fl.Server+": ")))
	}
	rt.Tools = append(rt.Tools, att.mgr.Tools()...)
	return nil
}

// bindAgent keeps an agent's tools in step with its MCP servers: when a server announces a changed tool list,
// the agent's MCP tools are replaced by the servers' current ones. Call it after agent.New on surfaces that run
// long enough for lists to change (chat, serve).
func (r *runtime) bindAgent(ag *agent.Agent) {
	att := r.mcp
	if att == nil || att.mgr == nil {
		return
	}
	var base []agent.Tool
	for _, t := range r.Tools {
		if _, isMCP := t.(*mcptools.Tool); !isMCP {
			base = append(base, t)
		}
	}
	att.mgr.OnToolsChanged(func() {
		tools := append(append([]agent.Tool(nil), base...), att.mgr.Tools()...)
		_ = ag.SetTools(tools) // names are unique per server and prefixed, so this cannot collide
	})
}
