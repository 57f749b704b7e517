package cli

import (
	"testing"

	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/workspace"
)

func TestSubagentContextSettingsOverTheConfiguration(t *testing.T) {
	ws, err := workspace.New(t.TempDir(), workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load("", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Context.MemoryDir = t.TempDir()
	app := &App{Config: cfg}
	own, err := app.subagentContext(ws, map[string]any{"preset": "deepagents"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := own.Config().Preset; got != "deepagents" {
		t.Errorf("subagent manager preset = %q, want deepagents", got)
	}
	if _, err := app.subagentContext(ws, map[string]any{"preset": "no-such-preset"}, nil); err == nil {
		t.Errorf("bad settings accepted")
	}
}
