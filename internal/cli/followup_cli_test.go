package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/research"
	folders "github.com/deepresearch/deepresearch/research/researchtest"
)

// treeHashes hashes every file below dir (researchtest.FolderHashes), to show it was not written.
func treeHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	h, err := folders.FolderHashes(dir)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestRunFromInTwoProcesses: run --from names an earlier run by its id; two follow-up processes of the same run at
// once both finish, each linking the earlier report, and the earlier run's files are byte for byte unchanged.
// Refused: --from a run that does not exist (exit 2, nothing created), --from with --temporal, resume --from.
func TestRunFromInTwoProcesses(t *testing.T) {
	bin := researchtest.BuildBinary(t)
	env, cfg := procEnv(t)
	docs := filepath.Join(t.TempDir(), "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"channels.md": "# Channels\n\nA send on a channel is synchronized before the completion of the corresponding receive from that channel.\n",
		"once.md":     "# Once\n\nThe completion of a single call of f() from once.Do(f) is synchronized before the return of any call of once.Do(f).\n",
	} {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	work := t.TempDir()
	runs := filepath.Join(work, "runs")
	first := filepath.Join(runs, "20260101-000000-f1f1f1")
	runProc(t, bin, env, "run", "--config", cfg, "--corpus", docs, "--out", first, "What does a channel send synchronize with?")
	before := treeHashes(t, first)

	var wg sync.WaitGroup
	outs := make([][]byte, 2)
	errs := make([]error, 2)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(t.Context(), bin, "run", "--config", cfg, "--corpus", docs, "--json",
				"--out", filepath.Join(runs, "next"+string(rune('a'+i))), "--from", "20260101-000000-f1", "What does sync.Once synchronize?")
			cmd.Env, cmd.Dir = env, work
			outs[i], errs[i] = cmd.Output()
		}()
	}
	wg.Wait()
	for i := range outs {
		if errs[i] != nil {
			t.Fatalf("follow-up %d: %v\n%s", i, errs[i], outs[i])
		}
		var sum struct{ Report string }
		if err := json.Unmarshal(outs[i], &sum); err != nil {
			t.Fatalf("follow-up %d: %v\n%s", i, err, outs[i])
		}
		md, err := os.ReadFile(sum.Report)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(md), "Follows up on run [20260101-000000-f1f1f1](../20260101-000000-f1f1f1/report.md)") {
			t.Fatalf("follow-up %d does not link the earlier report:\n%s", i, md)
		}
	}
	after := treeHashes(t, first)
	if len(after) != len(before) {
		t.Fatalf("the earlier run had %d files, now %d", len(before), len(after))
	}
	for p, h := range before {
		if after[p] != h {
			t.Fatalf("%s changed", p)
		}
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no such run", []string{"run", "--from", "20991231", "--out", filepath.Join(runs, "x"), "Why?"}, 2, `--from: invalid input: no run "20991231"`},
		{"with temporal", []string{"run", "--from", "20260101-000000-f1", "--temporal", "127.0.0.1:9", "--out", filepath.Join(runs, "y"), "Why?"}, 2, "--from does not work with --temporal"},
		{"on resume", []string{"resume", "--from", "20260101-000000-f1", first}, 2, "unknown flag: --from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), bin, append(append([]string{}, tc.args[0], "--config", cfg, "--corpus", docs), tc.args[1:]...)...)
			if tc.args[0] == "resume" {
				cmd = exec.CommandContext(t.Context(), bin, append([]string{"resume", "--config", cfg}, tc.args[1:]...)...)
			}
			cmd.Env, cmd.Dir = env, work
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != tc.code || !strings.Contains(string(out), tc.want) {
				t.Fatalf("exit %d (want %d), output lacks %q:\n%s", code, tc.code, tc.want, out)
			}
		})
	}
	for _, name := range []string{"x", "y"} {
		if _, err := os.Stat(filepath.Join(runs, name)); err == nil {
			t.Errorf("a refused follow-up left %s", name)
		}
	}
	if _, err := os.Stat(filepath.Join(first, research.ReportMarkdownFile)); err != nil {
		t.Fatal(err)
	}
}
