package runtimebench

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkLoop reports the cost per step of the agent loop at N = 10, 100 and 1000 steps, without middleware and
// with the hybrid context manager.
func BenchmarkLoop(b *testing.B) {
	for _, hybrid := range []bool{false, true} {
		for _, n := range Steps {
			name := fmt.Sprintf("plain/N=%d", n)
			if hybrid {
				name = fmt.Sprintf("hybrid/N=%d", n)
			}
			b.Run(name, func(b *testing.B) {
				l, err := NewLoop(n, hybrid, b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := l.Run(b.Context()); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
			})
		}
	}
}

// Every loop runs its N steps and answers, with and without the context manager.
func TestLoopRuns(t *testing.T) {
	for _, hybrid := range []bool{false, true} {
		l, err := NewLoop(25, hybrid, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if l.model.calls != 26 {
			t.Errorf("hybrid %v: %d model calls, want 26", hybrid, l.model.calls)
		}
	}
}

// The table has every N, both configurations, with figures measured (not left at zero).
func TestRunReportsEveryN(t *testing.T) {
	rows, err := Run(t.Context(), t.TempDir(), 1, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(Steps) {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		for _, f := range []Figures{r.Plain, r.Hybrid} {
			if r.Steps != Steps[i] || f.Steps != Steps[i] || f.Runs < 3 || f.NsPerStep <= 0 || f.AllocsPerStep <= 0 {
				t.Errorf("row %d: %+v", i, r)
			}
		}
	}
}
