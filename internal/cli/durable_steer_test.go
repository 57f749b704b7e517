package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run --temporal takes a plan file (it travels to the workers) and refuses what would ask the person — --review,
// --clarify — before it connects to anything, saying why and what to do instead; research.clarify in the
// configuration is noted, not a refusal. A plan file that is not a plan is refused the same way before anything
// is submitted.
func TestDurableRunSteering(t *testing.T) {
	dead := closedPort(t) // nothing listens: reaching "connect to Temporal" means nothing was refused
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(plan, []byte("- What does a Kestrel kiln cost?\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("sub_questions:\n  - querys: [typo]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clarifying := filepath.Join(t.TempDir(), "deepresearch.yaml")
	if err := os.WriteFile(clarifying, []byte("research: {clarify: true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"run", "--temporal", dead, "--corpus", t.TempDir()}
	for _, c := range []struct {
		name   string
		config string
		args   []string
		code   int
		says   []string
		notSay string
	}{
		{"review", emptyConfig(t), []string{"--review"}, 2, []string{"--review with --temporal", "no one can be asked", "--plan FILE"}, "connect to Temporal"},
		{"clarify", emptyConfig(t), []string{"--clarify"}, 2, []string{"--clarify with --temporal", "no one can be asked"}, "connect to Temporal"},
		{"a plan that is not one", emptyConfig(t), []string{"--plan", bad}, 2, []string{"--plan", "querys"}, "connect to Temporal"},
		{"a plan file", emptyConfig(t), []string{"--plan", plan}, 1, []string{"connect to Temporal at " + dead}, "no one can be asked"},
		{"clarify from the configuration", clarifying, nil, 1, []string{"a durable run asks no clarifying questions", "connect to Temporal at " + dead}, "--clarify with"},
		{"clarify off over the configuration", clarifying, []string{"--clarify=false"}, 1, []string{"connect to Temporal at " + dead}, "clarifying"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{"--config", c.config}, base...), c.args...)
			code, _, stderr := runCLI(t, nil, append(args, "What does a Kestrel kiln cost?")...)
			if code != c.code {
				t.Errorf("exit %d, want %d: %s", code, c.code, stderr)
			}
			for _, s := range c.says {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, stderr)
				}
			}
			if strings.Contains(stderr, c.notSay) {
				t.Errorf("stderr says %q:\n%s", c.notSay, stderr)
			}
		})
	}
}
