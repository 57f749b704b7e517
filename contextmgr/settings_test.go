package contextmgr

import "testing"

func TestSettingsOverridePreset(t *testing.T) {
	f, zero, two, off, on := 0.7, 0, 2_000, false, true
	for _, tc := range []struct {
		name  string
		in    Settings
		check func(Config) bool
	}{
		{"knobs over a preset", Settings{Preset: "deepagents", Trigger: &f, GateTokens: &two, Clearing: "recoverable"},
			func(c Config) bool {
				return c.Preset == "deepagents" && c.Trigger == 0.7 && c.GateTokens == 2_000 && c.Clearing == "recoverable" && c.KeepShare == 0.10
			}},
		// 0 and false switch a mechanism off, whatever Config's own spelling of off is.
		{"zero is off", Settings{EvictTokens: &zero, OffloadQuotaMiB: &zero, ArgTruncateChars: &zero, KeepToolCalls: &zero},
			func(c Config) bool {
				return c.EvictTokens < 0 && c.OffloadQuota < 0 && c.ArgTruncateChars < 0 && c.KeepToolCalls < 0
			}},
		{"false is off", Settings{Summary: &off, History: &off, Memory: &off, ProjectMemory: &off},
			func(c Config) bool { return c.NoSummary && c.NoHistory && c.NoMemory && c.NoProjectMemory }},
		{"true is on", Settings{Summary: &on, DropReasoning: &on}, func(c Config) bool { return !c.NoSummary && !c.KeepReasoning }},
		{"false drop_reasoning keeps reasoning", Settings{DropReasoning: &off}, func(c Config) bool { return c.KeepReasoning }},
		// Unset keeps the preset's value.
		{"unset keeps the preset", Settings{}, func(c Config) bool {
			p, _ := Preset("hybrid")
			return c.Trigger == p.Trigger && c.EvictTokens == p.EvictTokens && c.NoSummary == p.NoSummary
		}},
	} {
		cfg, err := tc.in.Config()
		if err != nil || !tc.check(cfg) {
			t.Errorf("%s: %+v, %v", tc.name, cfg, err)
		}
	}
	if _, err := (Settings{Preset: "nope"}).Config(); err == nil {
		t.Error("unknown preset accepted")
	}
	bad := 0
	if _, err := (Settings{GateBudget: &bad}).Config(); err == nil {
		t.Error("gate_budget 0 accepted")
	}
}
