package cli

import (
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
	cfg, err := a.contextManagerConfig(cc)
	if err != nil {
		return nil, err
	}
	cfg.ExemptTools = append(cfg.ExemptTools, contextmgr.BoundedNames(tools)...)
	m, err := contextmgr.New(ws, cfg)
	if err != nil {
		return nil, fmt.Errorf("context management: %w", err)
	}
	return m, nil
}

// contextManagerConfig is the context manager's configuration from context settings: the preset with the
// overrides laid over it, the working folder's AGENTS.md, and the persistent memory store in the user config
// directory unless configured elsewhere.
func (a *App) contextManagerConfig(cc config.Context) (contextmgr.Config, error) {
	cfg, err := contextConfig(cc)
	if err != nil {
		return cfg, err
	}
	if wd, err := os.Getwd(); err == nil {
		cfg.ProjectDirs = append(cfg.ProjectDirs, wd)
	}
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
	return cfg, nil
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
