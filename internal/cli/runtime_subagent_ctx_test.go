package cli

import (
	"testing"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/subagent"
	"github.com/deepresearch/deepresearch/workspace"
)

func TestSubagentTypesWithContextSettingsGetTheirOwnManager(t *testing.T) {
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
	shared, err := app.newContextManager(ws, cfg.Context, nil)
	if err != nil {
		t.Fatal(err)
	}
	rt := &runtime{Middleware: []agent.Middleware{shared}}

	plain := app.subagentMiddleware(rt, ws, subagent.Type{Name: "general-purpose"})
	if len(plain) != 1 || plain[0] != shared {
		t.Fatalf("a type without context settings should share the runtime's manager: %v", plain)
	}
	tuned := app.subagentMiddleware(rt, ws, subagent.Type{Name: "scout", Context: map[string]any{"preset": "deepagents"}})
	own, ok := tuned[0].(*contextmgr.Manager)
	if !ok || own == shared {
		t.Fatalf("a type with context settings needs its own manager, got %T", tuned[0])
	}
	if got := own.Config().Preset; got != "deepagents" {
		t.Errorf("subagent manager preset = %q, want deepagents", got)
	}
	bad := app.subagentMiddleware(rt, ws, subagent.Type{Name: "bad", Context: map[string]any{"preset": "no-such-preset"}})
	if bad[0] != shared {
		t.Errorf("bad settings must fall back to the shared manager")
	}
}
