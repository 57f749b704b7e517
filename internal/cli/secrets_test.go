package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/llm/llmtest"
)

// A provider error that echoes the API key must not carry it into the run folder (state.db, events.jsonl) nor
// onto the terminal.
func TestEchoedKeyIsScrubbed(t *testing.T) {
	const key = "sk-echoed-secret-key-0123456789"
	srv := llmtest.NewFuncServer(t, func(int, llmtest.Request) llmtest.Reply {
		return llmtest.OpenAIError(400, "invalid_request_error", "Bad request from key "+key+" (Authorization: Bearer "+key+")")
	})
	corpus := t.TempDir()
	if err := os.WriteFile(filepath.Join(corpus, "a.md"), []byte("# Bees\n\nHoney bees dance to show where flowers are.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, map[string]string{"OPENAI_API_KEY": key},
		"run", "--config", emptyConfig(t), "--provider", "openai", "--model", "gpt-4.1", "--base-url", srv.URL+"/v1",
		"--corpus", corpus, "--out", out, "--plain", "how do bees communicate")
	if len(srv.Requests()) == 0 {
		t.Fatalf("no model call was made (exit %d): %s", code, stderr)
	}
	if strings.Contains(stdout+stderr, key) {
		t.Errorf("the key was printed:\n%s\n%s", stdout, stderr)
	}
	found := 0
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		found++
		if strings.Contains(string(b), key) {
			t.Errorf("%s holds the key", filepath.Base(p))
		}
		return nil
	})
	if err != nil || found == 0 {
		t.Fatalf("walk run folder: %v (%d files)", err, found)
	}
	if ev, _ := os.ReadFile(filepath.Join(out, "events.jsonl")); !strings.Contains(string(ev), "[redacted]") {
		t.Errorf("events.jsonl does not show the scrubbed error:\n%s", ev)
	}
}
