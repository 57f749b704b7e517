package cli

import (
	"io"
	"testing"

	"github.com/deepresearch/deepresearch/internal/config"
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

func TestRuntimeAttachesContext(t *testing.T) {
	ws, err := workspace.New(t.TempDir(), workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.Context.MemoryDir = t.TempDir()
	app := &App{Config: cfg, Stderr: io.Discard}
	rt, err := app.newRuntime(t.Context(), runtimeOptions{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	m := rt.ContextManager()
	if m == nil || m.MemoryDir() != cfg.Context.MemoryDir {
		t.Fatal("manager not attached or memory store not the configured one")
	}
	names := map[string]bool{}
	for _, tl := range rt.Tools {
		names[tl.Spec().Name] = true
	}
	if !names["memory_read"] || !names["memory_write"] || !names["read_file"] || !names["tool_search"] {
		t.Errorf("tools = %v", names)
	}
}
