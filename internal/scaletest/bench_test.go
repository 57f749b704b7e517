package scaletest

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/bench/scalebench"
	"github.com/deepresearch/deepresearch/research/state"
)

// BenchmarkScale measures durable runs on Temporal with the code of `deepresearch bench scale`
// (internal/bench/scalebench), here against the in-process Temporal server: runs completed per minute with 1, 2
// and 4 workers (each worker runs at most 2 steps at once), the scale-out efficiency against one worker, and the
// latency a role call gains on Temporal against the same run in one process. It prints a Markdown table; run it
// with
//
//	cd internal/scaletest && go test -run '^$' -bench Scale -benchtime 1x .
func BenchmarkScale(b *testing.B) {
	d := setup(b, 200*time.Millisecond)
	res, err := scalebench.Run(b.Context(), scalebench.Config{Binary: d.bin, Temporal: d.temporal, Namespace: d.namespace,
		State: d.state, Dir: b.TempDir(), Log: os.Stderr})
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprint(os.Stdout, "\n"+res.Markdown())
}

// `deepresearch bench scale` against a real cluster: its workers are processes of the binary, its runs go through
// the engine to the shared state (two configurations × (two runs alone + two at once) = eight runs there), and it
// reports a row per worker count.
func TestBenchScaleCommand(t *testing.T) {
	d := setup(t, 0)
	p := d.command(t.Context(), "bench", "scale", "--temporal", d.temporal, "--namespace", d.namespace, "--state", d.state,
		"--workers", "1,2", "--runs", "2", "--latency", "20ms", "--format", "json")
	if err := p.cmd.Run(); err != nil {
		t.Fatalf("bench scale: %v\n%s", err, p.stderr.String())
	}
	var res scalebench.Result
	if err := json.Unmarshal([]byte(p.stdout.String()), &res); err != nil {
		t.Fatalf("bench scale printed %q: %v", p.stdout.String(), err)
	}
	if len(res.Rows) != 2 || res.Rows[0].Workers != 1 || res.Rows[1].Workers != 2 || res.Calls == 0 || res.LocalWall <= 0 || res.LocalPerMinute <= 0 {
		t.Fatalf("result %+v", res)
	}
	for _, r := range res.Rows {
		if r.PerMinute <= 0 || r.Wall <= 0 || r.Single <= 0 || r.Efficiency <= 0 || r.VsLocal <= 0 {
			t.Errorf("row %+v", r)
		}
	}
	ids, err := state.ListRuns(t.Context(), d.state)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 8 {
		t.Errorf("%d runs in the shared state, want 8: %v", len(ids), ids)
	}
}
