package scaletest

import (
	"context"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/deepresearch/deepresearch/internal/durable"
	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest"
)

// stepLog records a worker's steps (from its build calls) and counts its "open run" debug lines.
type stepLog struct {
	mu    sync.Mutex
	steps []string
	opens atomic.Int32
}

func (l *stepLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *stepLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *stepLog) WithGroup(string) slog.Handler            { return l }
func (l *stepLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "open run" {
		l.opens.Add(1)
	}
	return nil
}

func (l *stepLog) ran() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.steps)
}

// Two workers on a real Temporal server and PostgreSQL share a run: one serves the strong and fast queues
// (scope, searches, verification, synthesis), the other the mid queue (reads), so the run's steps go back and
// forth between them, each keeping the run open across its steps while the other changes the state. The report
// is a local run's, and each worker opened the run once for all its steps.
func TestTwoWorkersShareARunsSteps(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	pg := pgtest.New(t)
	hostPort, namespace := temporalServer(t)
	w := researchtest.NewWorld()
	t.Cleanup(w.Site.Close)
	local, err := research.Run(ctx, func() research.Config {
		c := w.Config()
		c.RunID, c.Question, c.OutDir = "shared-steps", researchtest.WorldQuestion, filepath.Join(t.TempDir(), "local")
		return c
	}())
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: hostPort, Namespace: namespace,
		Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const queue = "sessions-test"
	tiers := [][]string{{durable.TierStrong, durable.TierFast}, {durable.TierMid}}
	logs := make([]*stepLog, len(tiers))
	wctx, stop := context.WithCancel(ctx)
	var served sync.WaitGroup
	for i, ts := range tiers {
		l := &stepLog{}
		logs[i] = l
		acts := &durable.Activities{Dir: t.TempDir(), State: pg.URL, Log: slog.New(l),
			Build: func(ctx context.Context, _ durable.Input) (research.Config, func(), error) {
				l.mu.Lock()
				l.steps = append(l.steps, activity.GetInfo(ctx).ActivityType.Name)
				l.mu.Unlock()
				return w.Config(), func() {}, nil
			}}
		served.Go(func() {
			if err := durable.Serve(wctx, c, durable.WorkerOptions{TaskQueue: queue, Tiers: ts, Concurrency: 4}, acts); err != nil {
				t.Error(err)
			}
		})
	}
	defer func() { stop(); served.Wait() }()
	run, err := durable.Submit(ctx, c, durable.Input{Request: request.Research{RunID: "shared-steps", Question: researchtest.WorldQuestion}, TaskQueue: queue})
	if err != nil {
		t.Fatal(err)
	}
	var rep research.Report
	if err := run.Get(ctx, &rep); err != nil {
		t.Fatal(err)
	}
	strong, mid := logs[0].ran(), logs[1].ran()
	if !slices.Contains(strong, "deepresearch.Scope") || !slices.Contains(strong, "deepresearch.Verify") ||
		!slices.Contains(strong, "deepresearch.Synthesize") || !slices.Contains(mid, "deepresearch.Read") ||
		slices.Contains(strong, "deepresearch.Read") || slices.Contains(mid, "deepresearch.Verify") {
		t.Errorf("steps per worker:\nstrong, fast: %v\nmid: %v", strong, mid)
	}
	for i, l := range logs {
		if n, steps := l.opens.Load(), len(l.ran()); n < 1 || 3*int(n) > steps {
			t.Errorf("worker %d opened the run %d times for %d steps: it did not keep the run open", i, n, steps)
		}
	}
	t.Logf("steps: %d on the strong and fast worker (run opened %d times), %d on the mid worker (%d times)",
		len(strong), logs[0].opens.Load(), len(mid), logs[1].opens.Load())
	minute := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d UTC`)
	if minute.ReplaceAllString(rep.Markdown, "") != minute.ReplaceAllString(local.Markdown, "") {
		t.Errorf("report of the two workers:\n%s\nlocal run's:\n%s", rep.Markdown, local.Markdown)
	}
	if rep.Stats.Rounds != 2 || rep.Stats.EvidenceAccepted != local.Stats.EvidenceAccepted || rep.Stats.SourcesRead != local.Stats.SourcesRead ||
		rep.Stats.Calls != local.Stats.Calls || rep.Stats.Tokens != local.Stats.Tokens || rep.Stats.Tokens == 0 {
		t.Errorf("two workers: rounds %d, evidence %d, reads %d, calls %d, tokens %d; local: %d, %d, %d, %d, %d",
			rep.Stats.Rounds, rep.Stats.EvidenceAccepted, rep.Stats.SourcesRead, rep.Stats.Calls, rep.Stats.Tokens,
			local.Stats.Rounds, local.Stats.EvidenceAccepted, local.Stats.SourcesRead, local.Stats.Calls, local.Stats.Tokens)
	}
}
