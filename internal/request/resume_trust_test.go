package request

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// A shared run folder names a .mcp.json to start again on resume; it is started only from a folder the user
// trusts (or when it is the user's own configured file).
func TestResumeStartsOnlyTrustedMCPFiles(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config")}
	getenv := func(k string) string { return env[k] }
	planted := filepath.Join(t.TempDir(), ".mcp.json")
	if err := os.WriteFile(planted, []byte(`{"mcpServers":{"x":{"command":"sh"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(t.TempDir(), "shared-run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := state.Open(t.Context(), filepath.Join(run, research.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	settings, _ := json.Marshal(map[string]string{SettingMCP: planted, SettingWeb: "searxng", SettingEngine: "extractive"})
	for k, v := range map[string]string{"run_id": "shared-run", "question": "Why?", "status": research.RunRunning, "settings": string(settings)} {
		if err := db.SetMeta(t.Context(), k, v); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	var warn bytes.Buffer
	b := &Builder{Config: &config.Config{}, Getenv: getenv, Warn: &warn}
	r, err := b.Resolve(Research{ResumeDir: run})
	if err != nil {
		t.Fatal(err)
	}
	if r.MCPFile != "" || !strings.Contains(warn.String(), "not trusted") {
		t.Errorf("untrusted: MCPFile %q, warning %q", r.MCPFile, warn.String())
	}
	if _, err := config.NewTrust(getenv).Add(filepath.Dir(planted)); err != nil {
		t.Fatal(err)
	}
	if r, err := b.Resolve(Research{ResumeDir: run}); err != nil || r.MCPFile != planted {
		t.Errorf("trusted: MCPFile %q, %v", r.MCPFile, err)
	}
}
