package cli

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/deepresearch/deepresearch/base/redact"
	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/internal/durable"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

// temporalFlags name a Temporal cluster.
type temporalFlags struct {
	hostPort  string
	namespace string
	taskQueue string
	// From the configuration only: how the cluster is reached (TLS, API key) and the steps' policy.
	conn  config.Temporal
	steps durable.StepPolicy
	// roles maps each role to its model tier (the configuration's roles:), which picks the queue of its steps.
	roles map[string]string
	// limits are the configuration's research limits: a submitter fills the limits a request leaves unset from
	// them (the request carries the run's limits), a worker bounds every run it serves by them.
	limits research.Budget
}

func addTemporalFlags(cmd *cobra.Command, fl *temporalFlags) {
	f := cmd.Flags()
	f.StringVar(&fl.hostPort, "temporal", "", "Temporal frontend HOST:PORT: run on Temporal workers instead of in this process (default temporal.host_port, $DEEPRESEARCH_TEMPORAL)")
	f.StringVar(&fl.namespace, "namespace", "", `Temporal namespace (default temporal.namespace, else "default")`)
	f.StringVar(&fl.taskQueue, "task-queue", "", "base task queue; tiers poll BASE-strong, BASE-mid, BASE-fast (default temporal.task_queue, else "+durable.DefaultTaskQueue+")")
}

// temporal fills what the flags leave empty from the configuration (its temporal section, DEEPRESEARCH_TEMPORAL),
// then from the defaults.
func (a *App) temporal(fl temporalFlags) temporalFlags {
	if a.Config != nil {
		c := a.Config.Temporal
		fl.hostPort = cmp.Or(fl.hostPort, c.HostPort)
		fl.namespace = cmp.Or(fl.namespace, c.Namespace)
		fl.taskQueue = cmp.Or(fl.taskQueue, c.TaskQueue)
		fl.conn = c
		fl.roles = a.Config.Roles
		rc := a.Config.Research
		fl.limits = research.Budget{MaxCostUSD: rc.MaxCostUSD, MaxTokens: rc.MaxTokens, MaxTime: rc.MaxTime,
			MaxCalls: rc.MaxCalls, Concurrency: rc.Concurrency}
		st := c.Steps
		fl.steps = durable.StepPolicy{HeartbeatTimeout: st.HeartbeatTimeout, StartToClose: st.StartToClose,
			MaxAttempts: st.MaxAttempts, InitialInterval: st.InitialInterval, MaxInterval: st.MaxInterval}
	}
	fl.hostPort = cmp.Or(fl.hostPort, a.getenv("DEEPRESEARCH_TEMPORAL"))
	fl.namespace = cmp.Or(fl.namespace, "default")
	fl.taskQueue = cmp.Or(fl.taskQueue, durable.DefaultTaskQueue)
	return fl
}

func (a *App) temporalClient(fl temporalFlags) (client.Client, error) {
	return a.dialTemporal(fl, nil)
}

// dialTemporal connects to the cluster; metrics, when set, receives the SDK's own metrics (a worker's /metrics).
// Every client encrypts its payloads with the keys of $DEEPRESEARCH_PAYLOAD_KEY (payloadCodec).
func (a *App) dialTemporal(fl temporalFlags, metrics client.MetricsHandler) (client.Client, error) {
	if fl.hostPort == "" {
		return nil, errors.New("--temporal HOST:PORT is required")
	}
	// The SDK's own logging goes to our logger at warning level and above: its info lines are noise on a terminal.
	quiet := a.Log
	if quiet == nil {
		quiet = slog.New(slog.NewTextHandler(a.Stderr, nil))
	}
	quiet = slog.New(levelFilter{quiet.Handler(), slog.LevelWarn})
	opts := client.Options{HostPort: fl.hostPort, Namespace: fl.namespace, Logger: tlog.NewStructuredLogger(quiet)}
	if err := a.temporalSecurity(fl, &opts); err != nil {
		return nil, err
	}
	codec, err := a.payloadCodec()
	if err != nil {
		return nil, err
	}
	opts.DataConverter, opts.MetricsHandler = codec.DataConverter(), metrics
	c, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", fl.hostPort, err)
	}
	return c, nil
}

// temporalSecurity sets how the cluster is reached from the configuration's temporal section: TLS (the system's
// roots, or tls_ca), a client certificate for mTLS (tls_cert, tls_key), the server name to check, and an API key
// from the variable api_key_env (Temporal Cloud), which implies TLS.
func (a *App) temporalSecurity(fl temporalFlags, opts *client.Options) error {
	c := fl.conn
	if c.APIKeyEnv != "" {
		key := a.getenv(c.APIKeyEnv)
		if key == "" {
			return fmt.Errorf("temporal.api_key_env: $%s is not set", c.APIKeyEnv)
		}
		opts.Credentials = client.NewAPIKeyStaticCredentials(key)
	}
	if !c.TLS && c.TLSCA == "" && c.TLSCert == "" && c.TLSKey == "" && c.APIKeyEnv == "" {
		return nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.TLSServerName}
	if c.TLSCA != "" {
		pem, err := os.ReadFile(c.TLSCA)
		if err != nil {
			return fmt.Errorf("temporal.tls_ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("temporal.tls_ca %s: no PEM certificate in it", c.TLSCA)
		}
		cfg.RootCAs = pool
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("temporal: tls_cert and tls_key go together (a client certificate and its key)")
	}
	if c.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return fmt.Errorf("temporal.tls_cert/tls_key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	opts.ConnectionOptions.TLS = cfg
	return nil
}

type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (l levelFilter) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= l.min && l.Handler.Enabled(ctx, lv)
}

// stateURL is the shared state: --state, else DEEPRESEARCH_STATE, else the configuration's state.
func (a *App) stateURL(flag string) string {
	if flag != "" {
		return flag
	}
	if v := a.getenv("DEEPRESEARCH_STATE"); v != "" {
		return v
	}
	if a.Config != nil {
		return a.Config.State
	}
	return ""
}

// sharedState is the shared state a surface reads runs from (and, with Temporal, the one its workers write):
// empty when none is configured. A configured one must be a postgres:// URL and reachable now, so that a wrong
// URL or a database that is down is an error at start, not an empty run list later.
func (a *App) sharedState(ctx context.Context, flag string) (string, error) {
	url := a.stateURL(flag)
	if url == "" {
		return "", nil
	}
	if !state.IsPostgresURL(url) {
		return "", fmt.Errorf("shared state %q: not a postgres:// URL (SQLite is per run, in its folder)", redact.URL(url))
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := state.ListRuns(cctx, url); err != nil {
		return "", fmt.Errorf("shared state %s cannot be read: %w", research.SharedLabel(url), err)
	}
	return url, nil
}

func newWorkerCmd(app *App) *cobra.Command {
	var (
		tf          temporalFlags
		stateFlag   string
		tiers       []string
		concurrency int
		dir         string
		mf          metricsFlags
	)
	cmd := &cobra.Command{
		Use:   "worker --temporal HOST:PORT --state postgres://…",
		Short: "Serve research runs on Temporal: the workflow and the steps of the model tiers given",
		Long: `worker polls a Temporal cluster for research runs. It serves the research workflow on the base task queue
and the steps of each model tier on BASE-strong (planner, verifier, synthesizer), BASE-mid (reading) and BASE-fast
(searching) — --tiers limits it to the tiers whose keys or rate limits this machine holds. Models, keys and sources
are this worker's own configuration. Every worker of a deployment shares one PostgreSQL state (--state or
DEEPRESEARCH_STATE): a step that a dead worker left is retried on another one from where it stopped.

--metrics ADDR serves /metrics (Prometheus text: the research counters and the Temporal SDK's), /healthz and
/readyz (200 when this worker polls Temporal and the state answers, 503 with the reason otherwise); a non-loopback
address needs --metrics-public. With $DEEPRESEARCH_PAYLOAD_KEY set (base64 32-byte keys, newest first), every
payload this worker sends Temporal is encrypted; every process of the deployment needs the same key.`,
		Example: `  deepresearch worker --temporal localhost:7233 --state postgres://research@db/research
  deepresearch worker --temporal temporal:7233 --tiers mid,fast --concurrency 16 --state "$DEEPRESEARCH_STATE"
  deepresearch worker --temporal temporal:7233 --state "$DEEPRESEARCH_STATE" --metrics 127.0.0.1:9090`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tf = app.temporal(tf)
			url := app.stateURL(stateFlag)
			if !state.IsPostgresURL(url) {
				return errors.New("worker needs a shared state: --state postgres://… (or DEEPRESEARCH_STATE)")
			}
			// Flags and keys first: nothing is connected to for a worker that would refuse them.
			ops, err := app.workerOps(tf, mf)
			if err != nil {
				return err
			}
			if _, err := app.payloadCodec(); err != nil {
				return err
			}
			// A database that is down is an error now, not a retry storm of every step this worker takes.
			if _, err := app.sharedState(cmd.Context(), url); err != nil {
				return err
			}
			if dir == "" {
				dir = filepath.Join(app.runsDir(), "worker")
			}
			c, err := app.dialTemporal(tf, ops.sdkMetrics())
			if err != nil {
				return err
			}
			defer c.Close()
			acts := &durable.Activities{State: url, Dir: dir, Log: app.Log, Build: app.durableBuild, Secrets: app.secrets(),
				Metrics: ops.metrics(), Ceiling: tf.limits, KeepBuilds: true}
			health, stop, err := ops.start(cmd.Context(), c, url)
			if err != nil {
				return err
			}
			defer stop()
			fmt.Fprintf(app.Stderr, "worker: serving %s on %s (namespace %s)\n", tf.taskQueue, tf.hostPort, tf.namespace)
			return durable.Serve(cmd.Context(), c, durable.WorkerOptions{TaskQueue: tf.taskQueue, Tiers: tiers,
				Concurrency: concurrency, Health: health}, acts)
		},
	}
	addTemporalFlags(cmd, &tf)
	cmd.Flags().StringVar(&stateFlag, "state", "", "shared state: postgres://… (default $DEEPRESEARCH_STATE)")
	cmd.Flags().StringSliceVar(&tiers, "tiers", nil, "model tiers to serve: strong, mid, fast (default all)")
	cmd.Flags().IntVar(&concurrency, "concurrency", 8, "steps this worker runs at once, per tier")
	cmd.Flags().StringVar(&dir, "dir", "", "folder for the runs' local files (default <runs>/worker)")
	addMetricsFlags(cmd, &mf)
	return cmd
}

// durableBuild builds a run's roles, searchers and fetcher on a worker from the request the submitter sent.
// Its errors say what this worker cannot give the run ("worker cannot read corpus DIR: …").
func (a *App) durableBuild(ctx context.Context, in durable.Input) (research.Config, func(), error) {
	req := in.Request
	// Folders named in the request are the submitter's: the engine resumes the run, and the activity sets this
	// worker's own folder for it.
	req.ResumeDir, req.OutDir = "", ""
	b := a.builder("")
	var unreadable error
	open := b.OpenCorpus
	b.OpenCorpus = func(ctx context.Context, path string, onProgress func(corpus.Progress), followLinks bool) (*corpus.Index, error) {
		if _, err := os.Stat(path); err != nil {
			unreadable = fmt.Errorf("worker cannot read corpus %s: %w", path, err)
			return nil, unreadable
		}
		ix, err := open(ctx, path, onProgress, followLinks)
		if err != nil {
			unreadable = fmt.Errorf("worker cannot read corpus %s: %w", path, err)
			return nil, unreadable
		}
		return ix, nil
	}
	cfg, cleanup, err := b.Build(ctx, req)
	if err != nil && (unreadable == nil || !errors.Is(err, unreadable)) {
		err = fmt.Errorf("worker cannot build the run: %w", err)
	}
	return cfg, cleanup, err
}

// researchDurable submits a run to Temporal, follows it and writes its report locally.
func (a *App) researchDurable(cmd *cobra.Command, fl researchFlags, tf temporalFlags, detach bool, shared, question string) error {
	ctx := cmd.Context()
	req := fl.request(question, "")
	if err := a.durableSteer(cmd, fl.steer, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err // before dialling the cluster
	}
	c, err := a.temporalClient(tf)
	if err != nil {
		return err
	}
	defer c.Close()
	d, err := submitDurable(ctx, c, tf, a.stateURL(shared), req)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stderr, "run %s submitted to Temporal (workflow %s)\n", d.id, d.run.GetID())
	if detach {
		fmt.Fprintln(a.Stdout, d.id)
		return nil
	}
	out := fl.out
	if out == "" {
		out = filepath.Join(a.runsDir(), d.id)
	}
	var onEvent func(research.Event)
	if d.feed != "" {
		// The workers write the run's events to the shared state: show them as a local run shows its own.
		disp := newProgressDisplay(a.Stderr, "", fl.noColour)
		defer disp.Finish()
		onEvent = disp.Event
	} else {
		onEvent = func(e research.Event) {
			if e.Kind == research.EventStageStart {
				fmt.Fprintf(a.Stderr, "%s: %s\n", e.RunID, e.Message)
			}
		}
	}
	rep, err := d.follow(ctx, out, true, onEvent)
	if err != nil {
		return err
	}
	if rep.CutShort != "" {
		fmt.Fprintf(a.Stderr, "note: the run was cut short: %s\n", rep.CutShort)
	}
	fmt.Fprintf(a.Stderr, "%d citations from %d sources · %d evidence items · %s\n", len(rep.Citations), len(rep.Sources),
		rep.Stats.EvidenceAccepted, spendLine(rep.Engine, rep.Stats.Calls, rep.Stats.Tokens, rep.Stats.CostUSD))
	return a.finished(fl, rep, out)
}

// durableRun is one run submitted to Temporal. submitDurable and follow are the one way every surface — run,
// batch, the web viewer, the MCP server — submits a durable run, follows it and gets its report.
type durableRun struct {
	c   client.Client
	run client.WorkflowRun
	id  string
	// feed is the shared state the workers write the run's events to; empty: progress comes from the
	// workflow's progress query.
	feed string
}

// errFromDurable refuses a follow-up on Temporal: it reads the earlier run's folder, which a worker on another
// machine does not have.
var errFromDurable = fmt.Errorf("%w: --from does not work with --temporal yet: a follow-up reads the earlier run's folder on this machine; run it without --temporal", research.ErrBadInput)

// submitDurable starts req on Temporal (durable.Submit validates it) under req.RunID (a new id when empty). Submitting an id
// the engine already runs attaches to that run. The workers build the run from req with their own keys; its
// OutDir stays here (follow writes the report there). sharedState, when a postgres:// URL, is where follow reads
// the run's events.
func submitDurable(ctx context.Context, c client.Client, tf temporalFlags, sharedState string, req request.Research) (*durableRun, error) {
	if req.From != "" {
		return nil, errFromDurable
	}
	// The request's folders are this machine's; the workers have their own. Without them, the run needs an id.
	req.OutDir, req.ResumeDir = "", ""
	req = req.Named()
	// The request carries the run's limits: those it leaves unset are the submitter's configured ones, as a local
	// run's are (the workers' configured limits are a ceiling over them).
	b, l := &req.Budget, tf.limits
	b.MaxCostUSD, b.MaxTokens, b.MaxTime = cmp.Or(b.MaxCostUSD, l.MaxCostUSD), cmp.Or(b.MaxTokens, l.MaxTokens), cmp.Or(b.MaxTime, l.MaxTime)
	b.MaxCalls, b.Concurrency = cmp.Or(b.MaxCalls, l.MaxCalls), cmp.Or(b.Concurrency, l.Concurrency)
	run, err := durable.Submit(ctx, c, durable.Input{Request: req, Roles: tf.roles, TaskQueue: tf.taskQueue, Steps: tf.steps})
	if err != nil {
		return nil, err
	}
	d := &durableRun{c: c, run: run, id: req.RunID}
	if state.IsPostgresURL(sharedState) {
		d.feed = sharedState
	}
	return d, nil
}

// followInterval is how often follow asks the engine for the run's progress; feedInterval how often it reads
// new events from the shared state.
const (
	followInterval = time.Second
	feedInterval   = 500 * time.Millisecond
)

// follow waits for the run's report and writes report.md and report.json into out (when set). Progress reaches
// onEvent (when set) as research events: with a shared state, the very events the workers store there (as a
// local run's OnEvent receives them); without one, run_start, a stage_start for every change of stage or round
// the workflow's progress query reports, and run_done. If ctx ends first, the workflow is cancelled when cancel
// is set (Ctrl-C, the viewer's Stop, an MCP client's cancellation) and left running otherwise (a batch that will
// attach again).
func (d *durableRun) follow(ctx context.Context, out string, cancel bool, onEvent func(research.Event)) (*research.Report, error) {
	var rep *research.Report
	var err error
	switch {
	case onEvent != nil && d.feed != "":
		rep, err = d.followFeed(ctx, onEvent)
	case onEvent != nil:
		rep, err = d.followQuery(ctx, onEvent)
	default:
		rep, err = durable.Follow(ctx, d.c, d.run, followInterval, nil)
	}
	if err != nil {
		if ctx.Err() == nil {
			return nil, fmt.Errorf("run %s: %w", d.id, err)
		}
		if !cancel {
			return nil, fmt.Errorf("run %s: stopped following: %w", d.id, ctx.Err())
		}
		cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer stop()
		if cerr := durable.Cancel(cctx, d.c, d.id); cerr != nil {
			return nil, fmt.Errorf("interrupted, and cancelling run %s failed: %w", d.id, cerr)
		}
		if d.feed != "" {
			if merr := research.MarkSharedStopped(cctx, d.feed, d.id); merr != nil {
				return nil, fmt.Errorf("interrupted: run %s cancelled; marking it stopped in the shared state failed: %w", d.id, merr)
			}
		}
		return nil, fmt.Errorf("interrupted: run %s cancelled", d.id)
	}
	if out != "" {
		if err := research.WriteReport(out, rep); err != nil {
			return nil, err
		}
		rep.Dir = out
	}
	return rep, nil
}

// outages turns what the follower sees go wrong — the shared state unreadable, the engine unreachable, steps
// retried on the state store — into one outage event when it starts and one when it ends, never a line a second.
type outages struct {
	mu    sync.Mutex
	runID string
	emit  func(research.Event)
	now   map[string]string // what is down (state store, Temporal) → its message
}

func newOutages(runID string, emit func(research.Event)) *outages {
	return &outages{runID: runID, emit: emit, now: map[string]string{}}
}

// set reports what is down with its message, or ("" message) that it is back.
func (o *outages) set(what, msg, err string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, was := o.now[what]
	switch {
	case msg != "" && !was:
		o.now[what] = msg
		o.emit(research.Event{Time: time.Now(), RunID: o.runID, Stage: research.StageRun, Kind: research.EventOutage, Message: msg, Err: err})
	case msg == "" && was:
		delete(o.now, what)
		o.emit(research.Event{Time: time.Now(), RunID: o.runID, Stage: research.StageRun, Kind: research.EventOutage, Message: what + " reachable again"})
	}
}

// status reads the engine's view of the run: its steps retried on the state store, the engine unreachable.
func (o *outages) status(st durable.Status) {
	switch {
	case strings.HasPrefix(st.Outage, research.StateStoreRetrying):
		o.set("state store", research.StateStoreRetrying, st.Outage)
		o.set("Temporal", "", "")
	case st.Outage != "":
		o.set("Temporal", "Temporal unreachable, retrying", st.Outage)
	default:
		o.set("Temporal", "", "")
	}
}

// followFeed follows the run to its end, passing on the events its workers store in the shared state.
func (d *durableRun) followFeed(ctx context.Context, onEvent func(research.Event)) (*research.Report, error) {
	feed := research.NewEventFeed(d.feed, d.id)
	defer feed.Close()
	var mu sync.Mutex // the poller and the last read after the result deliver in order, never at once
	down := newOutages(d.id, onEvent)
	show := func(ctx context.Context) {
		mu.Lock()
		defer mu.Unlock()
		evs, err := feed.Next(ctx)
		if err != nil {
			if ctx.Err() == nil {
				// The state is read again on the next tick; the run's result does not depend on it.
				down.set("state store", research.StateStoreRetrying, redact.URL(err.Error()))
			}
			return
		}
		down.set("state store", "", "")
		for _, e := range evs {
			onEvent(e)
		}
	}
	fctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(feedInterval)
		defer t.Stop()
		for {
			select {
			case <-fctx.Done():
				return
			case <-t.C:
				show(fctx)
			}
		}
	}()
	rep, err := durable.Follow(ctx, d.c, d.run, followInterval, func(st durable.Status) {
		mu.Lock()
		defer mu.Unlock()
		if strings.HasPrefix(st.Outage, research.StateStoreRetrying) {
			down.set("state store", research.StateStoreRetrying, st.Outage)
			return
		}
		down.status(st)
	})
	stop()
	<-done
	if err == nil {
		show(ctx) // the last events, written before the result
	}
	return rep, err
}

// followQuery follows the run to its end through the workflow's progress query.
func (d *durableRun) followQuery(ctx context.Context, onEvent func(research.Event)) (*research.Report, error) {
	var seq int64
	emit := func(kind, stage string, round int, msg string) {
		seq++
		onEvent(research.Event{Seq: seq, Time: time.Now(), RunID: d.id, Stage: stage, Kind: kind, Round: round,
			Message: msg, Progress: research.Progress{Round: round}})
	}
	emit(research.EventRunStart, research.StageRun, 0, "submitted to Temporal as workflow "+d.run.GetID())
	last := ""
	down := newOutages(d.id, onEvent)
	rep, err := durable.Follow(ctx, d.c, d.run, followInterval, func(st durable.Status) {
		down.status(st)
		key := fmt.Sprintf("%s/%d", st.Stage, st.Round)
		if key == last || st.Stage == "" {
			return
		}
		last = key
		emit(research.EventStageStart, st.Stage, st.Round, fmt.Sprintf("stage %s, round %d, %d steps done", st.Stage, st.Round, st.Steps))
	})
	if err == nil {
		emit(research.EventRunDone, research.StageRun, 0, "report ready")
	}
	return rep, err
}

// durableRunner runs the requests of a long-lived surface (the viewer, the MCP server) on Temporal through the
// one client it dialled at start, following each run's events in the shared state.
func durableRunner(c client.Client, tf temporalFlags, sharedState string) func(ctx context.Context, req request.Research) (*research.Report, error) {
	return func(ctx context.Context, req request.Research) (*research.Report, error) {
		if req.ReviewPlan != nil || req.Clarify != nil {
			return nil, fmt.Errorf("plan review and clarifying questions are not available: %w", errDurableAsks)
		}
		d, err := submitDurable(ctx, c, tf, sharedState, req)
		if err != nil {
			return nil, err
		}
		return d.follow(ctx, req.OutDir, true, req.OnEvent)
	}
}

// newRunsCancelCmd cancels a detached run on Temporal and records it stopped in the shared state.
func newRunsCancelCmd(app *App) *cobra.Command {
	var tf temporalFlags
	var shared string
	cmd := &cobra.Command{
		Use:   "cancel RUN --temporal HOST:PORT --state postgres://…",
		Short: "Cancel a run on Temporal (a detached run, a batch's): its step in flight stops, it is listed stopped",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tf = app.temporal(tf)
			c, err := app.temporalClient(tf)
			if err != nil {
				return err
			}
			defer c.Close()
			id := args[0]
			if err := durable.Cancel(cmd.Context(), c, id); err != nil {
				return err
			}
			if url := app.stateURL(shared); state.IsPostgresURL(url) {
				if err := research.MarkSharedStopped(cmd.Context(), url, id); err != nil && !errors.Is(err, state.ErrNotFound) {
					return fmt.Errorf("run %s cancelled; marking it stopped in the shared state failed: %w", id, err)
				}
			}
			fmt.Fprintf(app.Stdout, "run %s cancelled\n", id)
			return nil
		},
	}
	addTemporalFlags(cmd, &tf)
	cmd.Flags().StringVar(&shared, "state", "", "shared state: postgres://… (default $DEEPRESEARCH_STATE)")
	return cmd
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
