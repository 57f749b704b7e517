package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/internal/cli"
)

// show --format prints a run's sources as a bibliography; a format it does not know is bad usage (exit 2).
func TestShowFormats(t *testing.T) {
	cfg, _, ids := runsFixture(t)
	code, out, stderr := runCLI(t, nil, "show", "--config", cfg, "--format", "bibtex", ids[1])
	if code != 0 || !strings.Contains(out, "@misc{source1,") || !strings.Contains(out, "bees.md}") {
		t.Fatalf("bibtex: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr = runCLI(t, nil, "show", "--config", cfg, "--format", "csljson")
	var items []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &items) != nil || len(items) == 0 || items[0]["type"] != "document" {
		t.Fatalf("csljson: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, _ = runCLI(t, nil, "show", "--config", cfg, "--format", "ris")
	if code != 0 || !strings.HasPrefix(out, "TY  - ELEC\r\n") {
		t.Fatalf("ris: exit %d\n%q", code, out)
	}
	code, _, stderr = runCLI(t, nil, "show", "--config", cfg, "--format", "endnote")
	if code != cli.ExitUsage || !strings.Contains(stderr, "bibtex") {
		t.Fatalf("unknown format: exit %d\n%s", code, stderr)
	}
}

// Scripts read the exit code: bad usage is 2, a failure 1, an interrupted command 130.
func TestExitCodes(t *testing.T) {
	cfg := emptyConfig(t)
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"nosuchcommand"}, cli.ExitUsage},
		{[]string{"run", "--xyzzy", "q"}, cli.ExitUsage},
		{[]string{"show", "a", "b"}, cli.ExitUsage},
		{[]string{"show", "no-such-run"}, cli.ExitFailure},
	} {
		if code, _, stderr := runCLI(t, nil, append(tc.args, "--config", cfg)...); code != tc.want {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, code, tc.want, stderr)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, errb strings.Builder
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bees.md"), []byte("# Bees\n\nHoneybees dance.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code := cli.Main(ctx, []string{"run", "--config", cfg, "--corpus", dir, "--out", dir + "/run", "what is this?"},
		strings.NewReader(""), &out, &errb, func(string) string { return "" })
	if code != cli.ExitInterrupted {
		t.Fatalf("interrupted run: exit %d\n%s", code, errb.String())
	}
}
