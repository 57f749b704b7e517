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
	run := recordedRun(t, map[string]string{SettingMCP: planted, SettingWeb: "searxng", SettingEngine: "extractive"})

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

// recordedRun is a stopped run's folder whose state records settings, as a run started with them records them.
func recordedRun(t *testing.T, settings map[string]string) string {
	t.Helper()
	run := filepath.Join(t.TempDir(), "shared-run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := state.Open(t.Context(), filepath.Join(run, research.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	js, _ := json.Marshal(settings)
	for k, v := range map[string]string{"run_id": "shared-run", "question": "Why?", "status": research.RunRunning, "settings": string(js)} {
		if err := db.SetMeta(t.Context(), k, v); err != nil {
			t.Fatal(err)
		}
	}
	return run
}

// A resumed run indexes its corpus folders as the run did: following symbolic links out of them when it was
// started with --follow-links, not following them otherwise (and for a run recorded before the setting).
func TestResumeKeepsFollowLinks(t *testing.T) {
	corpus := t.TempDir()
	b := &Builder{Config: &config.Config{}, Getenv: func(string) string { return "" }}
	for _, follow := range []bool{true, false} {
		started := Research{Question: "Why?", Corpora: []string{corpus}, Engine: "extractive", FollowLinks: follow}
		r, err := b.Resolve(Research{ResumeDir: recordedRun(t, Settings(started))})
		if err != nil {
			t.Fatal(err)
		}
		if r.FollowLinks != follow || len(r.Corpora) != 1 || r.Corpora[0] != corpus {
			t.Errorf("started with FollowLinks %v: resumed with %v over %v", follow, r.FollowLinks, r.Corpora)
		}
	}
	old := Settings(Research{Corpora: []string{corpus}, Engine: "extractive"})
	delete(old, SettingFollowLinks)
	if r, err := b.Resolve(Research{ResumeDir: recordedRun(t, old)}); err != nil || r.FollowLinks {
		t.Errorf("a run recorded before the setting resumes with FollowLinks %v (%v)", r.FollowLinks, err)
	}
}
