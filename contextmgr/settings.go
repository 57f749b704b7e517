package contextmgr

import "errors"

// Settings are the context-engineering settings as users write them (the configuration file's context section, a
// subagent type's context block): a preset and single knobs laid over it. Every knob keeps one convention: unset
// (nil) keeps the preset's value, and 0 or false switches the mechanism off.
type Settings struct {
	// Preset is hybrid (default), deepagents or claude-code.
	Preset string `yaml:"preset,omitempty" json:"preset,omitempty"`
	// Trigger is the share of the window above which compaction runs (hybrid 0.80).
	Trigger *float64 `yaml:"trigger,omitempty" json:"trigger,omitempty"`
	// ClearBelow: compaction stops after clearing old tool results under this share (0.60).
	ClearBelow *float64 `yaml:"clear_below,omitempty" json:"clear_below,omitempty"`
	// KeepShare is the share of the newest messages a summary keeps (0.10).
	KeepShare *float64 `yaml:"keep_share,omitempty" json:"keep_share,omitempty"`
	// KeepToolCalls is how many recent tool calls keep their results when old ones are cleared (3).
	KeepToolCalls *int `yaml:"keep_tool_calls,omitempty" json:"keep_tool_calls,omitempty"`
	// Clearing is recoverable, unrecoverable or off.
	Clearing string `yaml:"clearing,omitempty" json:"clearing,omitempty"`
	// Summary switches the summary tier.
	Summary *bool `yaml:"summary,omitempty" json:"summary,omitempty"`
	// History appends compacted messages to conversation_history/<session>.md.
	History *bool `yaml:"history,omitempty" json:"history,omitempty"`
	// EvictTokens: tool results above this go to large_tool_results/ with a preview (5000; 0 off).
	EvictTokens *int `yaml:"evict_tokens,omitempty" json:"evict_tokens,omitempty"`
	// GateTokens: tool results above this pass the relevance gate (2000; 0 off).
	GateTokens *int `yaml:"gate_tokens,omitempty" json:"gate_tokens,omitempty"`
	// GateBudget is how many tokens of relevant chunks the gate keeps inline (1500).
	GateBudget *int `yaml:"gate_budget,omitempty" json:"gate_budget,omitempty"`
	// OutputCapTokens cuts tool output above this, unrecoverably (0 off).
	OutputCapTokens *int `yaml:"output_cap_tokens,omitempty" json:"output_cap_tokens,omitempty"`
	// ArgTruncateChars: old write_file/edit_file string arguments above this are truncated (2000; 0 off).
	ArgTruncateChars *int `yaml:"arg_truncate_chars,omitempty" json:"arg_truncate_chars,omitempty"`
	// DropReasoning drops reasoning blocks of all but the latest assistant turn.
	DropReasoning *bool `yaml:"drop_reasoning,omitempty" json:"drop_reasoning,omitempty"`
	// OffloadQuotaMiB bounds large_tool_results/ (256; 0 unlimited).
	OffloadQuotaMiB *int `yaml:"offload_quota_mib,omitempty" json:"offload_quota_mib,omitempty"`
	// ProjectMemory pins AGENTS.md into the context.
	ProjectMemory *bool `yaml:"project_memory,omitempty" json:"project_memory,omitempty"`
	// Memory switches the persistent memories/ store and its memory_* tools.
	Memory *bool `yaml:"memory,omitempty" json:"memory,omitempty"`
	// MemoryDir is the persistent store; default <user config dir>/deepresearch/memories.
	MemoryDir string `yaml:"memory_dir,omitempty" json:"memory_dir,omitempty"`
	// Window overrides the model's context window in tokens.
	Window int `yaml:"window,omitempty" json:"window,omitempty"`
}

// Config is the manager configuration these settings describe: the preset with the overrides laid over it. It is
// the one place where the user-facing convention (unset keeps, 0 or false is off) meets Config's own (zero means
// default, negative or No* means off).
func (c Settings) Config() (Config, error) {
	cfg, err := Preset(c.Preset)
	if err != nil {
		return cfg, err
	}
	setF := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	// For thresholds the settings say 0 for off; Config says negative (its 0 means default).
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
