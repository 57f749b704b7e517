package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/workspace"
)

// attachContext builds the context manager from the configuration for the runtime's workspace, adds the
// persistent memory tools and appends the manager as middleware (last, so that it sees every tool's output).
func (a *App) attachContext(_ context.Context, rt *runtime, o runtimeOptions) error {
	m, err := a.newContextManager(o.Workspace, a.Config.Context, rt.Tools)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, t := range rt.Tools {
		have[t.Spec().Name] = true
	}
	for _, t := range m.Tools() {
		if name := t.Spec().Name; have[name] {
			if a.Log != nil {
				a.Log.Warn("memory tool shadowed by another tool of the same name; not adding it", "tool", name)
			}
			continue
		}
		rt.Tools = append(rt.Tools, t)
	}
	rt.Middleware = append(rt.Middleware, m)
	return nil
}

// subagentContext builds a dedicated context manager for a subagent type whose `context:` block tunes
// compaction (a research scout may compact earlier than the main agent); the block's keys are those of the
// configuration's context section, laid over it.
func (a *App) subagentContext(ws *workspace.Workspace, settings map[string]any, tools []agent.Tool) (*contextmgr.Manager, error) {
	cc := a.Config.Context
	raw, err := yaml.Marshal(settings)
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(raw, &cc); err != nil {
		return nil, fmt.Errorf("subagent context settings: %w", err)
	}
	return a.newContextManager(ws, cc, tools)
}

// newContextManager builds a context manager over ws from context settings.
func (a *App) newContextManager(ws *workspace.Workspace, cc config.Context, tools []agent.Tool) (*contextmgr.Manager, error) {
	cfg, err := contextConfig(cc)
	if err != nil {
		return nil, err
	}
	if wd, err := os.Getwd(); err == nil {
		cfg.ProjectDirs = append(cfg.ProjectDirs, wd)
	}
	cfg.ExemptTools = append(cfg.ExemptTools, contextmgr.BoundedNames(tools)...)
	cfg.Logger = a.Log
	if !cfg.NoMemory && cfg.MemoryDir == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			// A missing home directory must not stop the agent; it just runs without the persistent store.
			if a.Log != nil {
				a.Log.Warn("persistent memory off: no user config directory", "err", err)
			}
			cfg.NoMemory = true
		} else {
			cfg.MemoryDir = filepath.Join(dir, "deepresearch", "memories")
		}
	}
	m, err := contextmgr.New(ws, cfg)
	if err != nil {
		return nil, fmt.Errorf("context management: %w", err)
	}
	return m, nil
}

// contextConfig lays the configuration's overrides over the chosen preset.
func contextConfig(c config.Context) (contextmgr.Config, error) {
	cfg, err := contextmgr.Preset(c.Preset)
	if err != nil {
		return cfg, err
	}
	setF := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	// For thresholds the configuration says 0 for off; contextmgr says negative (its 0 means default).
	setOff := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
			if *v <= 0 {
				*dst = -1
			}
		}
	}
	setNot := func(dst *bool, v *bool) {
		if v != nil {
			*dst = !*v
		}
	}
	setF(&cfg.Trigger, c.Trigger)
	setF(&cfg.ClearBelow, c.ClearBelow)
	setF(&cfg.KeepShare, c.KeepShare)
	if c.KeepToolCalls != nil {
		cfg.KeepToolCalls = max(*c.KeepToolCalls, 0)
		if cfg.KeepToolCalls == 0 {
			cfg.KeepToolCalls = -1 // keep none: every old result may be cleared
		}
	}
	if c.Clearing != "" {
		cfg.Clearing = c.Clearing
	}
	setNot(&cfg.NoSummary, c.Summary)
	setNot(&cfg.NoHistory, c.History)
	setOff(&cfg.EvictTokens, c.EvictTokens)
	setOff(&cfg.GateTokens, c.GateTokens)
	if c.GateBudget != nil {
		if *c.GateBudget <= 0 {
			return cfg, errors.New("context.gate_budget must be positive")
		}
		cfg.GateBudget = *c.GateBudget
	}
	if c.OutputCapTokens != nil {
		cfg.OutputCapTokens = max(*c.OutputCapTokens, 0)
	}
	setOff(&cfg.ArgTruncateChars, c.ArgTruncateChars)
	setNot(&cfg.KeepReasoning, c.DropReasoning)
	if c.OffloadQuotaMiB != nil {
		cfg.OffloadQuota = int64(*c.OffloadQuotaMiB) << 20
		if *c.OffloadQuotaMiB <= 0 {
			cfg.OffloadQuota = -1
		}
	}
	setNot(&cfg.NoProjectMemory, c.ProjectMemory)
	setNot(&cfg.NoMemory, c.Memory)
	cfg.MemoryDir = c.MemoryDir
	cfg.Window = c.Window
	return cfg, nil
}

// contextManagerOf returns the runtime's context manager, nil when context management is not attached.
// Interactive surfaces use it for /compact and /context.
func contextManagerOf(rt *runtime) *contextmgr.Manager {
	for _, m := range rt.Middleware {
		if cm, ok := m.(*contextmgr.Manager); ok {
			return cm
		}
	}
	return nil
}

// compactCommand runs `/compact [instructions]` on an agent's state between runs and returns the line to show.
func compactCommand(ctx context.Context, rt *runtime, st *agent.State, instructions string) (string, error) {
	m := contextManagerOf(rt)
	if m == nil {
		return "", errors.New("context management is not enabled")
	}
	r, err := m.Compact(ctx, st, instructions)
	if err != nil {
		return "", err
	}
	if !r.Changed() {
		if r.Line != "" {
			return r.Line, nil // there was something, but compacting it would not have made the context smaller
		}
		return "nothing to compact yet", nil
	}
	return r.Line, nil
}

// contextCommand renders `/context` for an agent's state.
func contextCommand(rt *runtime, st *agent.State) string {
	m := contextManagerOf(rt)
	if m == nil {
		return "context management is not enabled"
	}
	return m.Report(st).String()
}
