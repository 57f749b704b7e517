package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run written with --out under a name of the user's choosing is found by that name (runs, show), and a
// corrupt folder is listed as unreadable with the reason, not as a failed run from year 1.
func TestRunFolderNamesAndCorruptFolders(t *testing.T) {
	runs := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "deepresearch.yaml")
	if err := os.WriteFile(cfg, []byte("research:\n  out_dir: "+runs+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	corpus := t.TempDir()
	if err := os.WriteFile(filepath.Join(corpus, "bees.md"), []byte("# Bees\n\nHoney bees dance to tell the hive where flowers are.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, nil, "run", "--config", cfg, "--corpus", corpus, "--out", filepath.Join(runs, "my bee study"), "--plain",
		"How do bees tell the hive where flowers are?"); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	bad := filepath.Join(runs, "broken")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "state.db"), []byte("this is not a database at all, just text"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, nil, "runs", "--config", cfg)
	if code != 0 {
		t.Fatalf("runs: %s", stderr)
	}
	lines := strings.Split(stdout, "\n")
	var mine, broken string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "my bee study"):
			mine = l
		case strings.HasPrefix(l, "broken"):
			broken = l
		}
	}
	if !strings.Contains(mine, "done") {
		t.Errorf("the --out run is not listed by its folder name:\n%s", stdout)
	}
	if !strings.Contains(broken, "unreadable") || !strings.Contains(broken, "cannot be read") || strings.Contains(stdout, "0001-01-01") {
		t.Errorf("the corrupt folder is not listed clearly:\n%s", stdout)
	}
	if code, stdout, stderr := runCLI(t, nil, "show", "--config", cfg, "my bee study"); code != 0 || !strings.Contains(stdout, "[1]") {
		t.Errorf("show by folder name: exit %d, %s %s", code, stdout, stderr)
	}
}
