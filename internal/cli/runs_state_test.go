package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// Two deployments on one PostgreSQL database, each under its own ?namespace=: runs --state lists only the
// deployment's own runs, and --status keeps the runs with that status. runs cancel without a reachable Temporal
// says so and changes nothing.
func TestRunsOfOneDeploymentByStatus(t *testing.T) {
	pg := pgtest.New(t)
	a, b := pg.URL+"&namespace=team_a", pg.URL+"&namespace=team_b"
	put := func(url, id, status string) {
		db, err := state.OpenRun(t.Context(), url, id)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for k, v := range map[string]string{"run_id": id, "question": "What is " + id + "?", "status": status,
			"created": time.Now().UTC().Format(time.RFC3339Nano)} {
			if err := db.SetMeta(t.Context(), k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(a, "a-running", research.RunRunning)
	put(a, "a-done", research.RunDone)
	put(b, "b-running", research.RunRunning)
	list := func(url string, extra ...string) []string {
		code, stdout, stderr := runCLI(t, nil, append([]string{"--config", emptyConfig(t), "runs", "--dir", t.TempDir(), "--state", url, "--json"}, extra...)...)
		if code != 0 {
			t.Fatalf("runs: exit %d: %s", code, stderr)
		}
		var rs []research.RunSummary
		if err := json.Unmarshal([]byte(stdout), &rs); err != nil {
			t.Fatalf("runs --json: %v: %s", err, stdout)
		}
		var ids []string
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	if got := strings.Join(list(a), ","); got != "a-done,a-running" && got != "a-running,a-done" {
		t.Errorf("team a lists %s", got)
	}
	if got := strings.Join(list(b), ","); got != "b-running" {
		t.Errorf("team b lists %s", got)
	}
	if got := strings.Join(list(a, "--status", "running"), ","); got != "a-running" {
		t.Errorf("team a's running runs: %s", got)
	}
	if got := list(pg.URL); len(got) != 0 {
		t.Errorf("the default deployment lists the teams' runs: %v", got)
	}
	code, _, stderr := runCLI(t, nil, "--config", emptyConfig(t), "runs", "cancel", "a-running", "--temporal", closedPort(t), "--state", a)
	if code == 0 || !strings.Contains(stderr, "connect to Temporal") {
		t.Errorf("cancel without Temporal: exit %d, %s", code, stderr)
	}
	if got := strings.Join(list(a, "--status", "running"), ","); got != "a-running" {
		t.Errorf("a failed cancel changed the run: %s", got)
	}
}
