package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunArgumentErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "run needs a question"},
		{[]string{"run", "  "}, "run needs a question"},
		{[]string{"run", "--rounds", "-1", "q"}, "--rounds -1: give 0"},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(t, tt.args...)
		if code == 0 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want an error containing %q", tt.args, code, stderr, tt.want)
		}
	}
}

func TestRoundsZeroMeansNoReSearchAndRunsListsAHeader(t *testing.T) {
	corpus := t.TempDir()
	os.WriteFile(filepath.Join(corpus, "bees.md"), []byte("# Bees\n\nHoneybees communicate the location of food with the waggle dance.\nThe round dance signals food close to the hive.\n"), 0o644)
	runs := t.TempDir()
	out := filepath.Join(runs, "r1")
	_, stderr, code := runCLI(t, "run", "--plain", "--rounds", "0", "--corpus", corpus, "--out", out, "How do honeybees communicate food locations?")
	if code != 0 {
		t.Fatalf("run failed: %s", stderr)
	}
	events, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(events), `"kind":"research"`) {
		t.Error("--rounds 0 must not start a directed re-search")
	}
	stdout, _, code := runCLI(t, "runs", "--dir", runs)
	if code != 0 || !strings.HasPrefix(stdout, "RUN") || !strings.Contains(stdout, "done") || !strings.Contains(stdout, "honeybees") {
		t.Errorf("runs listing:\n%s", stdout)
	}
	empty, _, _ := runCLI(t, "runs", "--dir", t.TempDir())
	if !strings.Contains(empty, "start one") {
		t.Errorf("empty listing should say how to start a run: %q", empty)
	}
}

func TestMaxTokensFlagIsTheTokenFuse(t *testing.T) {
	fl := researchFlags{maxCost: 0.5, maxToks: 40_000}
	if b := fl.request("q", "").Budget; b.MaxTokens != 40_000 || b.MaxCostUSD != 0.5 {
		t.Fatalf("budget %+v", b)
	}
}
