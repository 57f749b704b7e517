package cli

import (
	"io"
	"testing"

	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/workspace"
)

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
