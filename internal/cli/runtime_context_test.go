package cli

import (
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/workspace"
)

func TestContextConfigOverridesPreset(t *testing.T) {
	f, zero, two, off := 0.7, 0, 2_000, false
	cfg, err := contextConfig(config.Context{Preset: "deepagents", Trigger: &f, GateTokens: &two, EvictTokens: &zero,
		Summary: &off, OffloadQuotaMiB: &zero, DropReasoning: &off, Clearing: "recoverable"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Preset != "deepagents" || cfg.Trigger != 0.7 || cfg.GateTokens != 2_000 || cfg.EvictTokens != -1 ||
		!cfg.NoSummary || cfg.OffloadQuota != -1 || !cfg.KeepReasoning || cfg.Clearing != "recoverable" || cfg.KeepShare != 0.10 {
		t.Errorf("cfg = %+v", cfg)
	}
	if _, err := contextConfig(config.Context{Preset: "nope"}); err == nil {
		t.Error("unknown preset accepted")
	}
	def, err := contextConfig(config.Defaults().Context)
	if err != nil || def.Preset != "hybrid" {
		t.Errorf("default = %+v, %v", def, err)
	}
}

func TestAttachContext(t *testing.T) {
	ws, err := workspace.New(t.TempDir(), workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.Context.MemoryDir = t.TempDir()
	app := &App{Config: cfg}
	rt := &runtime{Tools: ws.Tools()}
	if err := app.attachContext(t.Context(), rt, runtimeOptions{Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	m := contextManagerOf(rt)
	if m == nil || m.MemoryDir() == "" {
		t.Fatal("manager not attached or memory store off")
	}
	names := map[string]bool{}
	for _, tl := range rt.Tools {
		names[tl.Spec().Name] = true
	}
	if !names["memory_read"] || !names["memory_write"] || !names["read_file"] {
		t.Errorf("tools = %v", names)
	}
	model := scripted.New(llm.Info{Name: "scripted"}, scripted.Sequence(scripted.Reply("hi")))
	ag, err := agent.New(agent.Config{Model: model, System: "sys", Tools: rt.Tools, Middleware: rt.Middleware})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Run(t.Context(), "hello"); err != nil {
		t.Fatal(err)
	}
	if got := contextCommand(rt, ag.State()); !strings.Contains(got, "Context: ") || !strings.Contains(got, "tool schemas") {
		t.Errorf("/context = %q", got)
	}
	if got, err := compactCommand(t.Context(), rt, ag.State(), ""); err != nil || got != "nothing to compact yet" {
		t.Errorf("/compact = %q, %v", got, err)
	}
	if contextManagerOf(&runtime{}) != nil {
		t.Error("manager found in an empty runtime")
	}
}
