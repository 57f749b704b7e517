package scaletest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/research"
)

// BenchmarkScale measures durable runs on Temporal: runs completed per minute with 1, 2 and 4 workers (each
// worker runs at most 2 steps at once), the scale-out efficiency against one worker, and the latency a role call
// gains on Temporal against the same run in one process. It prints a Markdown table; run it with
//
//	cd internal/scaletest && go test -run '^$' -bench Scale -benchtime 1x .
func BenchmarkScale(b *testing.B) {
	d := setup(b, 200*time.Millisecond)
	const runs = 8
	ctx := b.Context()

	// In one process: the same question, the same fake model.
	local := func() (time.Duration, int) {
		out := filepath.Join(b.TempDir(), "local")
		start := time.Now()
		p := d.command(ctx, "run", "--corpus", d.docs, "--out", out, question)
		if err := p.cmd.Run(); err != nil {
			b.Fatalf("local run: %v\n%s", err, p.stderr.String())
		}
		rep, err := research.LoadReport(out)
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start), rep.Stats.Calls
	}
	local() // warm: the corpus index is built once and cached, as on a worker
	localWall, calls := local()

	type row struct {
		workers   int
		wall      time.Duration
		perMinute float64
		single    time.Duration
	}
	var rows []row
	for _, n := range []int{1, 2, 4} {
		wctx, stop := context.WithCancel(ctx)
		var ws []*proc
		for i := range n {
			w, _ := d.startWorkerB(b, wctx, fmt.Sprintf("w%d-%d", n, i), 2)
			ws = append(ws, w)
		}
		// A run alone (the better of two, the first warming the workers): its latency against the local run.
		single := time.Duration(1 << 62)
		for range 2 {
			t0 := time.Now()
			p := d.command(ctx, "run", "--temporal", d.temporal, "--namespace", d.namespace, "--corpus", d.docs,
				"--out", filepath.Join(b.TempDir(), "single"), question)
			if err := p.cmd.Run(); err != nil {
				b.Fatalf("durable run: %v\n%s", err, p.stderr.String())
			}
			single = min(single, time.Since(t0))
		}
		start := time.Now()
		var wg sync.WaitGroup
		for i := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := d.command(ctx, "run", "--temporal", d.temporal, "--namespace", d.namespace, "--corpus", d.docs,
					"--out", filepath.Join(b.TempDir(), fmt.Sprintf("r%d", i)), question)
				if err := p.cmd.Run(); err != nil {
					b.Errorf("run %d: %v\n%s", i, err, p.stderr.String())
				}
			}()
		}
		wg.Wait()
		wall := time.Since(start)
		rows = append(rows, row{n, wall, float64(runs) / wall.Minutes(), single})
		stop()
		for _, w := range ws {
			_ = w.cmd.Wait()
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%d runs per configuration; a local run: %.2fs, %d role calls\n\n", runs, localWall.Seconds(), calls)
	fmt.Fprintln(&sb, "| workers | wall | runs/minute | scale-out efficiency | one run alone | added per role call |")
	fmt.Fprintln(&sb, "|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		eff := r.perMinute / (rows[0].perMinute * float64(r.workers))
		added := (r.single - localWall) / time.Duration(max(calls, 1))
		fmt.Fprintf(&sb, "| %d | %.1fs | %.1f | %.0f%% | %.2fs | %d ms |\n", r.workers, r.wall.Seconds(), r.perMinute, 100*eff,
			r.single.Seconds(), added.Milliseconds())
	}
	fmt.Fprint(os.Stdout, sb.String())
}

func (d *deployment) startWorkerB(b *testing.B, ctx context.Context, name string, concurrency int) (*proc, string) {
	dir := filepath.Join(b.TempDir(), name)
	w := d.command(ctx, "worker", "--temporal", d.temporal, "--namespace", d.namespace, "--state", d.state,
		"--dir", dir, "--concurrency", fmt.Sprint(concurrency))
	if err := w.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return w, dir
}
