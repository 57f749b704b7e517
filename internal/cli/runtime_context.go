package cli

import (
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
	cfg, err := cc.Config()
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
