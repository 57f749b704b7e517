// Command runtime runs the agent-loop benchmark side by side: deepresearch's agent (without middleware and with
// the hybrid context manager) and cloudwego/eino's ReAct agent, each driven by an instant fake model that asks
// for one trivial tool call per step for N steps and then answers. It lives in its own module so that the main
// module never depends on eino.
//
//	cd bench && go run ./runtime            # Markdown table
//	cd bench && go run ./runtime -count 5   # best of 5 runs per cell
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/deepresearch/deepresearch/internal/bench/runtimebench"
)

func main() {
	count := flag.Int("count", 3, "runs per cell; the fastest is reported")
	flag.Parse()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "runtimebench-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)

	type cell struct{ ns, allocs, bytes float64 }
	measure := func(n int, run func() error) cell {
		best := cell{ns: -1}
		for range *count {
			var failed error
			r := testing.Benchmark(func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := run(); err != nil {
						failed = err
						b.FailNow()
					}
				}
			})
			if failed != nil {
				fail(failed)
			}
			c := cell{float64(r.NsPerOp()) / float64(n), float64(r.AllocsPerOp()) / float64(n), float64(r.AllocedBytesPerOp()) / float64(n)}
			if best.ns < 0 || c.ns < best.ns {
				best = c
			}
		}
		return best
	}

	fmt.Printf("Agent loop, instant fake model, one trivial tool call per step (%s, %d CPUs, best of %d)\n\n", runtime.Version(), runtime.NumCPU(), *count)
	fmt.Println("| steps N | deepresearch agent | + contextmgr hybrid | eino ReAct |")
	fmt.Println("|---:|---|---|---|")
	for _, n := range runtimebench.Steps {
		plain, err := runtimebench.NewLoop(n, false, dir)
		if err != nil {
			fail(err)
		}
		hybrid, err := runtimebench.NewLoop(n, true, dir)
		if err != nil {
			fail(err)
		}
		eino, err := newEinoLoop(ctx, n)
		if err != nil {
			fail(err)
		}
		p := measure(n, func() error { return plain.Run(ctx) })
		h := measure(n, func() error { return hybrid.Run(ctx) })
		e := measure(n, func() error { return eino.Run(ctx) })
		f := func(c cell) string {
			return fmt.Sprintf("%.1f µs/step, %.0f allocs, %.1f KB", c.ns/1000, c.allocs, c.bytes/1024)
		}
		fmt.Printf("| %d | %s | %s | %s |\n", n, f(p), f(h), f(e))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "runtime bench:", err)
	os.Exit(1)
}
