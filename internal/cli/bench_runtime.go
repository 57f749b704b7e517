package cli

import (
	"fmt"
	"os"
	goruntime "runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/bench/runtimebench"
)

func newBenchRuntimeCmd(app *App) *cobra.Command {
	var format string
	var count int
	var minTime time.Duration
	cmd := &cobra.Command{
		Use:   "runtime [--format text|json] [--count N]",
		Short: "Cost per step of the agent loop at N = 10, 100 and 1000 steps, with and without the hybrid context manager",
		Long: `Drives the agent loop with an instant fake model that asks for one trivial tool call per step for N steps
and then answers, and reports the time, allocations and bytes per step, without middleware and with the hybrid
context manager. The same run beside cloudwego/eino's ReAct agent lives in its own module: cd bench && go run ./runtime.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format must be text or json, got %q", format)
			}
			dir, err := os.MkdirTemp("", "runtimebench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			rows, err := runtimebench.Run(cmd.Context(), dir, count, minTime)
			if err != nil {
				return err
			}
			if format == "json" {
				return writeJSON(app.Stdout, rows)
			}
			fmt.Fprintf(app.Stdout, "Agent loop, instant fake model (%s, %d CPUs, best of %d)\n\n", goruntime.Version(), goruntime.NumCPU(), count)
			fmt.Fprintln(app.Stdout, "| steps N | agent | + contextmgr hybrid |")
			fmt.Fprintln(app.Stdout, "|---:|---|---|")
			for _, r := range rows {
				fmt.Fprintf(app.Stdout, "| %d | %s | %s |\n", r.Steps, r.Plain.Cell(), r.Hybrid.Cell())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().IntVar(&count, "count", 3, "measurements per cell; the fastest is reported")
	cmd.Flags().DurationVar(&minTime, "time", time.Second, "minimum time of one measurement")
	return cmd
}
