package graphbench_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/bench/graphbench"
)

// TestBenchGraphShape checks what the benchmark measures, without asserting timings: the fleet bound holds at
// the model, the directed re-search touches only the gapped sub-questions, and the critical path is counted
// from the fan-outs.
func TestBenchGraphShape(t *testing.T) {
	for _, conc := range []int{16, 3} {
		r, err := graphbench.Run(t.Context(), graphbench.Config{Latency: 5 * time.Millisecond,
			Concurrency: conc, BatchSize: 8, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if r.Peak > conc || r.Peak < 2 {
			t.Fatalf("bound %d: peak %d", conc, r.Peak)
		}
		if r.Rounds != 2 || r.Searches[0] != 5 || r.Searches[1] != 2 || r.Reads[0] != 30 || r.Reads[1] != 2 {
			t.Fatalf("bound %d: rounds %d searches %v reads %v", conc, r.Rounds, r.Searches, r.Reads)
		}
		// plan + searches + reads + verify, twice, + synthesis.
		width := min(8, conc)
		want := 1 + (5+conc-1)/conc + (30+width-1)/width + 1 + (2+conc-1)/conc + (2+width-1)/width + 1 + 1
		if r.Chain != want || r.Calls != 1+5+30+1+2+2+1+1 {
			t.Fatalf("bound %d: chain %d (want %d), calls %d", conc, r.Chain, want, r.Calls)
		}
		if r.Citations == 0 {
			t.Fatal("no citations")
		}
		// Every stage of both rounds is timed, and their shares of the critical path add up to it.
		var names []string
		chain := 0
		for _, st := range r.Stages {
			names = append(names, fmt.Sprintf("%s%d", st.Stage, st.Round))
			chain += st.Chain
			if st.Over != st.Wall-time.Duration(st.Chain)*5*time.Millisecond {
				t.Fatalf("bound %d: stage %+v", conc, st)
			}
		}
		if got := strings.Join(names, " "); got != "scope0 search1 read1 verify1 search2 read2 verify2 synth2" || chain != r.Chain {
			t.Fatalf("bound %d: stages %s, chain %d of %d", conc, got, chain, r.Chain)
		}
		if runtime.GOOS == "linux" && r.CPU <= 0 {
			t.Fatalf("bound %d: CPU time %v", conc, r.CPU)
		}
	}
}

// BenchmarkGraph reports wall time over the critical-path bound at a 50 ms model latency.
func BenchmarkGraph(b *testing.B) {
	for b.Loop() {
		r, err := graphbench.Run(b.Context(), graphbench.Config{Latency: 50 * time.Millisecond, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.Ratio(), "wall/bound")
		b.ReportMetric(float64(r.Peak), "peak")
	}
}
