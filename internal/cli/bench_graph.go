package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/bench/graphbench"
	"github.com/deepresearch/deepresearch/research"
)

func newBenchGraphCmd(app *App) *cobra.Command {
	var (
		latency time.Duration
		format  string
		noSeq   bool
	)
	cmd := &cobra.Command{
		Use:   "graph [--latency 200ms] [--format text|json]",
		Short: "Research-graph parallelism: wall time vs the critical-path bound vs sequential",
		Long: `Runs the full research graph — plan, parallel search, read, verify with one directed re-search round,
synthesize — with a scripted model at a fixed latency per call driving all five roles (every role call goes
through a real agent and JSON decoding) and a local HTTP site as the web. For each configuration it prints the
wall time, the critical-path bound (the longest chain of model calls at the configured fan-outs and bounds, times
the latency), the same calls done sequentially, and the peak number of model calls in flight, which must never
exceed the fleet bound.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format must be text or json, got %q", format)
			}
			configs := []graphbench.Config{
				{Latency: latency, Concurrency: 16, BatchSize: 8},
				{Latency: latency, Concurrency: 4, BatchSize: 8},
				// Wide fan-out: 8 sub-questions × 30 pages, every page read — the state writes must keep up.
				{Latency: latency, Concurrency: 64, BatchSize: 64, SubQuestions: 8, PagesPerSQ: 30, MaxCandidates: 240},
			}
			if !noSeq {
				configs = append(configs, graphbench.Config{Latency: latency, Concurrency: 1, BatchSize: 1})
			}
			var results []*graphbench.Result
			for _, c := range configs {
				r, err := graphbench.Run(cmd.Context(), c)
				if err != nil {
					return err
				}
				if r.Peak > r.Config.Concurrency {
					return fmt.Errorf("bench graph: peak concurrency %d above the bound %d", r.Peak, r.Config.Concurrency)
				}
				results = append(results, r)
			}
			if format == "json" {
				type stage struct {
					Round  int    `json:"round"`
					Stage  string `json:"stage"`
					WallMS int64  `json:"wall_ms"`
					Chain  int    `json:"critical_path_calls"`
					OverMS int64  `json:"over_ms"`
				}
				type row struct {
					Concurrency  int     `json:"concurrency"`
					BatchSize    int     `json:"batch_size"`
					LatencyMS    int64   `json:"latency_ms"`
					Calls        int     `json:"calls"`
					Chain        int     `json:"critical_path_calls"`
					WallMS       int64   `json:"wall_ms"`
					BoundMS      int64   `json:"bound_ms"`
					SequentialMS int64   `json:"sequential_ms"`
					Ratio        float64 `json:"wall_over_bound"`
					Peak         int     `json:"peak_concurrency"`
					Searches     []int   `json:"searches_per_round"`
					Reads        []int   `json:"reads_per_round"`
					CPUMS        int64   `json:"cpu_ms"`
					Stages       []stage `json:"stages"`
				}
				var rows []row
				for _, r := range results {
					rw := row{r.Config.Concurrency, r.Config.BatchSize, r.Config.Latency.Milliseconds(), r.Calls,
						r.Chain, r.Wall.Milliseconds(), r.Bound.Milliseconds(), r.Sequential.Milliseconds(), r.Ratio(), r.Peak,
						r.Searches, r.Reads, r.CPU.Milliseconds(), []stage{}}
					for _, st := range r.Stages {
						rw.Stages = append(rw.Stages, stage{st.Round, st.Stage, st.Wall.Milliseconds(), st.Chain, st.Over.Milliseconds()})
					}
					rows = append(rows, rw)
				}
				return writeJSON(app.Stdout, rows)
			}
			fmt.Fprintf(app.Stdout, "| fleet bound | batch | calls | searches/round | reads/round | critical path | wall | bound | wall/bound | sequential | speed-up | peak in flight |\n")
			fmt.Fprintf(app.Stdout, "|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
			for _, r := range results {
				fmt.Fprintf(app.Stdout, "| %d | %d | %d | %v | %v | %d calls | %.2fs | %.2fs | %.3f× | %.2fs | %.1f× | %d |\n",
					r.Config.Concurrency, r.Config.BatchSize, r.Calls, r.Searches, r.Reads, r.Chain, r.Wall.Seconds(),
					r.Bound.Seconds(), r.Ratio(), r.Sequential.Seconds(), float64(r.Sequential)/float64(r.Wall), r.Peak)
			}
			// Where the time over the bound went: each stage's wall time beyond its model calls on the critical
			// path (summed over the rounds), the rest between stages, and the process's CPU time for the run.
			fmt.Fprintf(app.Stdout, "\n| fleet bound | batch | over the bound | scope | search | read | verify | synth | between stages | CPU |\n")
			fmt.Fprintf(app.Stdout, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
			for _, r := range results {
				over := map[string]time.Duration{}
				for _, st := range r.Stages {
					over[st.Stage] += st.Over
				}
				ms := func(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
				fmt.Fprintf(app.Stdout, "| %d | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Config.Concurrency, r.Config.BatchSize,
					ms(r.Wall-r.Bound), ms(over[research.StageScope]), ms(over[research.StageSearch]), ms(over[research.StageRead]),
					ms(over[research.StageVerify]), ms(over[research.StageSynth]),
					ms(r.Wall-r.Bound-r.Overhead()), ms(r.CPU))
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&latency, "latency", 200*time.Millisecond, "simulated latency of every model call")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().BoolVar(&noSeq, "no-sequential", false, "skip the sequential (bound 1) run")
	return cmd
}
