package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Limits that cannot mean anything used to run with no fuse at all. Every one is refused before anything
// starts, naming the value and what 0 means; nothing is left on disk.
func TestNonsenseLimitsAreRefused(t *testing.T) {
	corpus := t.TempDir()
	if err := os.WriteFile(filepath.Join(corpus, "a.md"), []byte("# A\nBees dance.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := func(body string) string {
		f := filepath.Join(t.TempDir(), "deepresearch.yaml")
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	empty := emptyConfig(t)
	out := filepath.Join(t.TempDir(), "run")
	for _, tc := range []struct {
		name   string
		config string
		args   []string
		want   string
	}{
		{"negative cost", empty, []string{"--max-cost", "-1"}, "--max-cost: invalid input: the cost limit -1"},
		{"NaN cost", empty, []string{"--max-cost", "NaN"}, "cost limit NaN"},
		{"infinite cost", empty, []string{"--max-cost", "Inf"}, "cost limit +Inf"},
		{"negative time", empty, []string{"--max-time", "-5m"}, "--max-time: invalid input: the time limit -5m0s"},
		{"negative cost in the file", yaml("research:\n  max_cost_usd: -5\n"), nil, "cost limit -5"},
		{"NaN cost in the file", yaml("research:\n  max_cost_usd: .nan\n"), nil, "cost limit NaN"},
		{"negative time in the file", yaml("research:\n  max_time: -5m\n"), nil, "time limit -5m0s"},
		{"negative tokens in the file", yaml("research:\n  max_tokens: -1\n"), nil, "token fuse -1"},
		{"unknown unjudged choice", empty, []string{"--unjudged", "sometimes"}, `--unjudged: invalid input: unjudged "sometimes": give remove or keep`},
		{"unknown unjudged choice in the file", yaml("research:\n  unjudged: maybe\n"), nil, `unjudged "maybe"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--corpus", corpus, "--out", out, "--config", tc.config}, tc.args...)
			code, _, stderr := runCLI(t, nil, append(args, "what do bees do")...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want an error containing %q", code, stderr, tc.want)
			}
		})
	}
	t.Run("1 MB question", func(t *testing.T) {
		code, _, stderr := runCLI(t, nil, "run", "--corpus", corpus, "--out", out, "--config", empty, strings.Repeat("why ", 1<<18))
		if code == 0 || !strings.Contains(stderr, "the limit is 4000") {
			t.Errorf("exit %d, stderr %.300q", code, stderr)
		}
	})
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run left %s behind (%v)", out, err)
	}
}
