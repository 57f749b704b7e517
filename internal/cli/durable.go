package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/deepresearch/deepresearch/internal/durable"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// temporalFlags name a Temporal cluster.
type temporalFlags struct {
	hostPort  string
	namespace string
	taskQueue string
}

func addTemporalFlags(cmd *cobra.Command, fl *temporalFlags) {
	f := cmd.Flags()
	f.StringVar(&fl.hostPort, "temporal", "", "Temporal frontend HOST:PORT: run on Temporal workers instead of in this process")
	f.StringVar(&fl.namespace, "namespace", "default", "Temporal namespace")
	f.StringVar(&fl.taskQueue, "task-queue", durable.DefaultTaskQueue, "base task queue (tiers poll BASE-strong, BASE-mid, BASE-fast)")
}

func (a *App) temporalClient(fl temporalFlags) (client.Client, error) {
	if fl.hostPort == "" {
		return nil, errors.New("--temporal HOST:PORT is required")
	}
	// The SDK's own logging goes to our logger at warning level and above: its info lines are noise on a terminal.
	quiet := a.Log
	if quiet == nil {
		quiet = slog.New(slog.NewTextHandler(a.Stderr, nil))
	}
	quiet = slog.New(levelFilter{quiet.Handler(), slog.LevelWarn})
	c, err := client.Dial(client.Options{HostPort: fl.hostPort, Namespace: fl.namespace, Logger: tlog.NewStructuredLogger(quiet)})
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", fl.hostPort, err)
	}
	return c, nil
}

type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (l levelFilter) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= l.min && l.Handler.Enabled(ctx, lv)
}

// stateURL is the shared state: --state, else DEEPRESEARCH_STATE.
func (a *App) stateURL(flag string) string {
	if flag != "" {
		return flag
	}
	return a.getenv("DEEPRESEARCH_STATE")
}

func newWorkerCmd(app *App) *cobra.Command {
	var (
		tf          temporalFlags
		stateFlag   string
		tiers       []string
		concurrency int
		dir         string
	)
	cmd := &cobra.Command{
		Use:   "worker --temporal HOST:PORT --state postgres://…",
		Short: "Serve research runs on Temporal: the workflow and the steps of the model tiers given",
		Long: `worker polls a Temporal cluster for research runs. It serves the research workflow on the base task queue
and the steps of each model tier on BASE-strong (planner, verifier, synthesizer), BASE-mid (reading) and BASE-fast
(searching) — --tiers limits it to the tiers whose keys or rate limits this machine holds. Models, keys and sources
are this worker's own configuration. Every worker of a deployment shares one PostgreSQL state (--state or
DEEPRESEARCH_STATE): a step that a dead worker left is retried on another one from where it stopped.`,
		Example: `  deepresearch worker --temporal localhost:7233 --state postgres://research@db/research
  deepresearch worker --temporal temporal:7233 --tiers mid,fast --concurrency 16 --state "$DEEPRESEARCH_STATE"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			url := app.stateURL(stateFlag)
			if !state.IsPostgresURL(url) {
				return errors.New("worker needs a shared state: --state postgres://… (or DEEPRESEARCH_STATE)")
			}
			if dir == "" {
				dir = filepath.Join(app.runsDir(), "worker")
			}
			c, err := app.temporalClient(tf)
			if err != nil {
				return err
			}
			defer c.Close()
			acts := &durable.Activities{State: url, Dir: dir, Log: app.Log, Build: app.durableBuild}
			fmt.Fprintf(app.Stderr, "worker: serving %s on %s (namespace %s)\n", tf.taskQueue, tf.hostPort, tf.namespace)
			return durable.Serve(cmd.Context(), c, durable.WorkerOptions{TaskQueue: tf.taskQueue, Tiers: tiers,
				Concurrency: concurrency}, acts)
		},
	}
	addTemporalFlags(cmd, &tf)
	cmd.Flags().StringVar(&stateFlag, "state", "", "shared state: postgres://… (default $DEEPRESEARCH_STATE)")
	cmd.Flags().StringSliceVar(&tiers, "tiers", nil, "model tiers to serve: strong, mid, fast (default all)")
	cmd.Flags().IntVar(&concurrency, "concurrency", 8, "steps this worker runs at once, per tier")
	cmd.Flags().StringVar(&dir, "dir", "", "folder for the runs' local files (default <runs>/worker)")
	return cmd
}

// durableBuild builds a run's roles, searchers and fetcher on a worker from the request the submitter sent.
func (a *App) durableBuild(ctx context.Context, in durable.Input) (research.Config, func(), error) {
	var req request.Research
	if len(in.Request) > 0 {
		if err := json.Unmarshal(in.Request, &req); err != nil {
			return research.Config{}, nil, fmt.Errorf("run %s: request: %w", in.RunID, err)
		}
	}
	req.Question, req.RunID, req.ResumeDir = in.Question, in.RunID, ""
	req.OutDir = "" // the activity sets the worker's own folder
	return a.builder("").Build(ctx, req)
}

// researchDurable submits a run to Temporal, follows it and writes its report locally.
func (a *App) researchDurable(cmd *cobra.Command, fl researchFlags, tf temporalFlags, detach bool, shared, question string) error {
	ctx := cmd.Context()
	req := fl.request(question, "")
	if err := req.Validate(); err != nil {
		return err
	}
	req.RunID = research.NewRunID()
	out := fl.out
	if out == "" {
		out = filepath.Join(a.runsDir(), req.RunID)
	}
	req.OutDir = ""
	raw, err := json.Marshal(req)
	if err != nil {
		return err
	}
	c, err := a.temporalClient(tf)
	if err != nil {
		return err
	}
	defer c.Close()
	in := durable.Input{RunID: req.RunID, Question: question, Request: raw, Budget: req.Budget, TaskQueue: tf.taskQueue}
	run, err := durable.Submit(ctx, c, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stderr, "run %s submitted to Temporal (workflow %s)\n", req.RunID, run.GetID())
	if detach {
		fmt.Fprintln(a.Stdout, req.RunID)
		return nil
	}
	var rep *research.Report
	if url := a.stateURL(shared); state.IsPostgresURL(url) {
		// The workers write the run's events to the shared state: show them as a local run shows its own.
		rep, err = a.followEvents(ctx, c, run, research.NewEventFeed(url, req.RunID), fl.noColour)
	} else {
		last := ""
		rep, err = durable.Follow(ctx, c, run, time.Second, func(st durable.Status) {
			line := fmt.Sprintf("%s: stage %s, round %d, %d steps done", st.RunID, st.Stage, st.Round, st.Steps)
			if line != last {
				fmt.Fprintln(a.Stderr, line)
				last = line
			}
		})
	}
	if err != nil {
		if ctx.Err() != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if cerr := durable.Cancel(cctx, c, req.RunID); cerr != nil {
				return fmt.Errorf("interrupted, and cancelling the run failed: %w", cerr)
			}
			return fmt.Errorf("interrupted: run %s cancelled", req.RunID)
		}
		return fmt.Errorf("run %s: %w", req.RunID, err)
	}
	if err := research.WriteReport(out, rep); err != nil {
		return err
	}
	if rep.CutShort != "" {
		fmt.Fprintf(a.Stderr, "note: the run was cut short: %s\n", rep.CutShort)
	}
	fmt.Fprintf(a.Stderr, "%d citations from %d sources · %d evidence items · %s\n", len(rep.Citations), len(rep.Sources),
		rep.Stats.EvidenceAccepted, spendLine(rep.Stats.Calls, rep.Stats.Tokens, rep.Stats.CostUSD))
	fmt.Fprintln(a.Stdout, filepath.Join(out, research.ReportMarkdownFile))
	return nil
}

// describeDurable answers resume for a run on Temporal: the engine resumes it, so there is nothing to do.
func (a *App) describeDurable(cmd *cobra.Command, tf temporalFlags, runID string) error {
	c, err := a.temporalClient(tf)
	if err != nil {
		return err
	}
	defer c.Close()
	d, err := c.DescribeWorkflowExecution(cmd.Context(), durable.WorkflowID(runID), "")
	if err != nil {
		return fmt.Errorf("run %s on Temporal: %w", runID, err)
	}
	status := strings.ToLower(strings.TrimPrefix(d.GetWorkflowExecutionInfo().GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_"))
	fmt.Fprintf(a.Stdout, "run %s is on Temporal (%s): the engine resumes it after any failure; nothing to do\n", runID, status)
	return nil
}

// followEvents follows a durable run to its end, showing the events its workers store in the shared state
// with the local run's progress display.
func (a *App) followEvents(ctx context.Context, c client.Client, run client.WorkflowRun, feed *research.EventFeed, plain bool) (*research.Report, error) {
	defer feed.Close()
	disp := newProgressDisplay(a.Stderr, "", plain)
	defer disp.Finish()
	show := func() {
		evs, err := feed.Next(ctx)
		if err != nil {
			if a.Log != nil {
				a.Log.Debug("follow events", "err", err)
			}
			return
		}
		for _, e := range evs {
			disp.Event(e)
		}
	}
	fctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-fctx.Done():
				return
			case <-t.C:
				show()
			}
		}
	}()
	rep, err := durable.Follow(ctx, c, run, time.Second, nil)
	stop()
	<-done
	if err == nil {
		show() // the last events, written before the result
	}
	return rep, err
}
