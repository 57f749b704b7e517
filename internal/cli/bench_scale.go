package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/bench/scalebench"
	"github.com/deepresearch/deepresearch/research/state"
)

func newBenchScaleCmd(app *App) *cobra.Command {
	var (
		tf                temporalFlags
		stateFlag, format string
		workers           []int
		runs, concurrency int
		latency           time.Duration
	)
	cmd := &cobra.Command{
		Use:   "scale --temporal HOST:PORT --state postgres://… [--workers 1,2,4]",
		Short: "Durable runs on your Temporal cluster: runs per minute with 1, 2, 4 workers, scale-out efficiency, added latency per role call",
		Long: `bench scale measures your own Temporal cluster and PostgreSQL: for each worker count it starts that many
"deepresearch worker" processes of this binary on a task queue of its own (no other worker takes its steps), each
running at most --concurrency steps at once, runs one research run alone twice (its latency) and then --runs runs at
once (runs per minute). Every role call goes to a loopback OpenAI-compatible fake model answering after --latency,
so the figures are the engine's and the workers', not a provider's; a local run of the same question gives the
in-process baseline for the latency Temporal adds per role call. The runs stay in the shared state.`,
		Example: `  deepresearch bench scale --temporal localhost:7233 --state postgres://research@db/research
  deepresearch bench scale --temporal temporal:7233 --namespace research --state "$DEEPRESEARCH_STATE" --workers 1,2,4,8 --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format must be text or json, got %q", format)
			}
			explicitQueue := tf.taskQueue
			tf = app.temporal(tf)
			if tf.hostPort == "" {
				return errors.New("bench scale needs a Temporal cluster: --temporal HOST:PORT (the binary carries no Temporal server)")
			}
			url := app.stateURL(stateFlag)
			if !state.IsPostgresURL(url) {
				return errors.New("bench scale needs the shared state its workers use: --state postgres://… (or DEEPRESEARCH_STATE)")
			}
			// Reach both before starting processes: a cluster or database that is down is an error now.
			if _, err := app.sharedState(cmd.Context(), url); err != nil {
				return err
			}
			c, err := app.temporalClient(tf)
			if err != nil {
				return err
			}
			c.Close()
			res, err := scalebench.Run(cmd.Context(), scalebench.Config{Temporal: tf.hostPort, Namespace: tf.namespace,
				TaskQueue: explicitQueue, State: url, Workers: workers, Runs: runs, Concurrency: concurrency,
				Latency: latency, Log: app.Stderr})
			if err != nil {
				return err
			}
			if format == "json" {
				return writeJSON(app.Stdout, res)
			}
			fmt.Fprint(app.Stdout, res.Markdown())
			return nil
		},
	}
	addTemporalFlags(cmd, &tf)
	f := cmd.Flags()
	f.Lookup("task-queue").Usage = "base task queue (default a fresh deepresearch-bench-… queue)"
	f.StringVar(&stateFlag, "state", "", "shared state of the workers: postgres://… (default $DEEPRESEARCH_STATE)")
	f.IntSliceVar(&workers, "workers", []int{1, 2, 4}, "worker counts to measure")
	f.IntVar(&runs, "runs", 8, "runs submitted at once per worker count")
	f.IntVar(&concurrency, "concurrency", 2, "steps each worker runs at once")
	f.DurationVar(&latency, "latency", 200*time.Millisecond, "the fake model's latency per call")
	f.StringVar(&format, "format", "text", "text or json")
	return cmd
}
