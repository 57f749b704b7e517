// Command runtime runs the agent-loop benchmark side by side: deepresearch's agent (without middleware and with
// the hybrid context manager) and cloudwego/eino's ReAct agent, each driven by an instant fake model that asks
// for one trivial tool call per step for N steps and then answers, measured by the same function in the same
// process. It lives in its own module so that the main module never depends on eino.
//
//	cd bench && go run ./runtime            # Markdown table
//	cd bench && go run ./runtime -count 5   # best of 5 measurements per cell
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/deepresearch/deepresearch/internal/bench/runtimebench"
)

func main() {
	count := flag.Int("count", 3, "measurements per cell; the fastest is reported")
	minTime := flag.Duration("time", time.Second, "minimum time of one measurement")
	flag.Parse()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "runtimebench-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	rows, err := runtimebench.Run(ctx, dir, *count, *minTime)
	if err != nil {
		fail(err)
	}
	fmt.Printf("Agent loop, instant fake model, one trivial tool call per step (%s, %d CPUs, best of %d)\n\n", runtime.Version(), runtime.NumCPU(), *count)
	fmt.Println("| steps N | deepresearch agent | + contextmgr hybrid | eino ReAct |")
	fmt.Println("|---:|---|---|---|")
	for _, r := range rows {
		eino, err := newEinoLoop(ctx, r.Steps)
		if err != nil {
			fail(err)
		}
		e, err := runtimebench.Best(*count, func() (runtimebench.Figures, error) {
			return runtimebench.Measure(r.Steps, *minTime, func() error { return eino.Run(ctx) })
		})
		if err != nil {
			fail(err)
		}
		fmt.Printf("| %d | %s | %s | %s |\n", r.Steps, r.Plain.Cell(), r.Hybrid.Cell(), e.Cell())
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "runtime bench:", err)
	os.Exit(1)
}
