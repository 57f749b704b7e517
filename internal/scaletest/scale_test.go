package scaletest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/deepresearch/deepresearch/base/syncio"
	"github.com/deepresearch/deepresearch/internal/durable"
	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/internal/temporaltest"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources"
)

// repoRoot is the main module's folder (this module lives in internal/scaletest).
func repoRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// build compiles a main package with its own module's dependencies.
func build(t testing.TB, moduleDir, pkg, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, pkg)
	cmd.Dir = moduleDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// temporalServer starts the in-process Temporal server (cmd/temporal-dev) as a separate process and returns its
// frontend address and namespace.
func temporalServer(t testing.TB) (hostPort, namespace string) {
	t.Helper()
	return temporaltest.New(t)
}

const question = openaifake.KilnQuestion

var docs = openaifake.KilnDocs

func fakeModel(t testing.TB, latency time.Duration) *openaifake.Server {
	cfg := openaifake.Kiln()
	cfg.Latency = latency
	return openaifake.New(t, cfg)
}

// proc is one deepresearch process.
type proc struct {
	cmd    *exec.Cmd
	stderr syncio.Buffer
	stdout syncio.Buffer
}

type deployment struct {
	bin, home, docs, config string
	temporal, namespace     string
	state                   string
	pg                      *pgtest.Server
	model                   *openaifake.Server
}

func (d *deployment) command(ctx context.Context, args ...string) *proc {
	p := &proc{}
	full := append([]string{"--config", d.config, "--provider", "openai", "--base-url", d.model.BaseURL(), "--model", "fake-research"}, args...)
	p.cmd = exec.CommandContext(ctx, d.bin, full...)
	p.cmd.Env = append(os.Environ(), "HOME="+d.home, "XDG_CACHE_HOME="+filepath.Join(d.home, "cache"),
		"XDG_CONFIG_HOME="+filepath.Join(d.home, "config"), "OPENAI_API_KEY=fake-key")
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	return p
}

func setup(t testing.TB, latency time.Duration) *deployment {
	t.Helper()
	d := &deployment{home: t.TempDir()}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.bin, _ = dockerBuild(t) // the binary the container image ships, built once for the package
	}()
	pg := pgtest.New(t)
	d.state, d.pg = pg.URL, pg
	d.temporal, d.namespace = temporalServer(t)
	wg.Wait()
	if d.bin == "" {
		t.FailNow()
	}
	d.model = fakeModel(t, latency)
	d.docs = filepath.Join(t.TempDir(), "docs")
	if err := os.MkdirAll(d.docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range docs {
		if err := os.WriteFile(filepath.Join(d.docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d.config = filepath.Join(t.TempDir(), "deepresearch.yaml")
	if err := os.WriteFile(d.config, []byte("models:\n  fake-research:\n    context_window: 32000\n    input_price: 2.5\n    output_price: 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *deployment) startWorker(t *testing.T, ctx context.Context, i int, concurrency int) (*proc, string) {
	t.Helper()
	return d.startWorkerAt(t, ctx, fmt.Sprintf("worker%d", i), d.state, []string{"--concurrency", fmt.Sprint(concurrency)}, nil)
}

// startWorkerAt starts a worker on the shared state at stateURL, with extra arguments and environment.
func (d *deployment) startWorkerAt(t *testing.T, ctx context.Context, name, stateURL string, args, env []string) (*proc, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	w := d.command(ctx, append([]string{"worker", "--temporal", d.temporal, "--namespace", d.namespace, "--state", stateURL,
		"--dir", dir}, args...)...)
	w.cmd.Env = append(w.cmd.Env, env...)
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
		_ = w.cmd.Wait()
	})
	return w, dir
}

// Three workers, ten concurrent runs, one worker killed with SIGKILL while it holds steps: every run completes,
// every report passes the integrity check against the texts in the shared state, no evidence is duplicated and
// no step is lost.
func TestTenRunsSurviveAWorkerKilled(t *testing.T) {
	d := setup(t, 200*time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	var workers []*proc
	for i := range 3 {
		w, _ := d.startWorker(t, ctx, i, 4)
		workers = append(workers, w)
	}
	c, err := client.Dial(client.Options{HostPort: d.temporal, Namespace: d.namespace,
		Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const runs = 10
	outs := make([]string, runs)
	subs := make([]*proc, runs)
	for i := range runs {
		outs[i] = filepath.Join(t.TempDir(), fmt.Sprintf("run%d", i))
		// Following with --state: the progress the workers store in the shared state.
		subs[i] = d.command(ctx, "run", "--temporal", d.temporal, "--namespace", d.namespace, "--state", d.state,
			"--corpus", d.docs, "--out", outs[i], question)
		if err := subs[i].cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	// Kill worker 0 once the engine sees it holding reads (model calls) in flight.
	var held []heldStep
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline) && len(held) == 0; time.Sleep(100 * time.Millisecond) {
		if held, err = stepsHeldBy(ctx, c, subs, workers[0].cmd.Process.Pid, "deepresearch.Read"); err != nil {
			t.Fatal(err)
		}
		if len(held) > 0 {
			if err := syscall.Kill(-workers[0].cmd.Process.Pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(held) == 0 {
		t.Fatalf("worker 0 never held a read\n%s", workers[0].stderr.String())
	}
	for i, p := range subs {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("run %d: %v\nstderr:\n%s\nworker 1:\n%s", i, err, p.stderr.String(), workers[1].stderr.String())
		}
		// The submitter showed the steps' events as they happened, whichever worker ran them.
		if out := p.stderr.String(); !strings.Contains(out, " search ") || !strings.Contains(out, " read ") {
			t.Errorf("run %d: no search or read events followed:\n%s", i, out)
		}
	}
	runIDs, err := state.ListRuns(ctx, d.state)
	if err != nil {
		t.Fatal(err)
	}
	if len(runIDs) != runs {
		t.Fatalf("%d runs in the shared state, want %d", len(runIDs), runs)
	}
	retried := 0
	for i, out := range outs {
		rep, err := research.LoadReport(out)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if len(rep.Citations) == 0 || len(rep.Evidence) == 0 {
			t.Errorf("run %d: %d citations, %d evidence", i, len(rep.Citations), len(rep.Evidence))
		}
		db, err := state.OpenRunReadOnly(ctx, d.state, rep.RunID)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		checkRun(t, ctx, db, rep)
		if n, err := attempts(ctx, db); err != nil {
			t.Fatal(err)
		} else if n > 1 {
			retried++
		}
		db.Close()
	}
	if retried == 0 {
		t.Errorf("no step was retried after the kill: the test did not exercise recovery")
	}
	// A step the killed worker held was executed again by another worker: the workflow history records the
	// attempt that finished each activity and the worker that ran it. (The run's spend ledger cannot show it: a
	// later attempt whose read the killed worker had already saved makes no model call and spends nothing.)
	recovered, before := 0, 0
	killed := fmt.Sprintf("%d@", workers[0].cmd.Process.Pid)
	for _, h := range held {
		attempt, identity, err := finishedAttempt(ctx, c, durable.WorkflowID(h.runID), h.activityID)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case attempt > h.attempt && !strings.HasPrefix(identity, killed):
			recovered++
		case attempt == h.attempt && strings.HasPrefix(identity, killed):
			// Its result reached the engine between the poll that saw it held and the kill.
			before++
		default:
			t.Errorf("read %s/%s held at attempt %d finished at attempt %d by %q", h.runID, h.activityID, h.attempt, attempt, identity)
		}
	}
	// Every model call went to its tier's queue: each run's history shows searches scheduled on the fast queue,
	// reads on mid, scope, verification and synthesis on strong.
	total := map[string]int{}
	for _, id := range runIDs {
		perQueue, err := scheduledPerQueue(ctx, c, durable.WorkflowID(id))
		if err != nil {
			t.Fatal(err)
		}
		for _, tier := range durable.Tiers {
			if perQueue[durable.TierQueue(durable.DefaultTaskQueue, tier)] == 0 {
				t.Errorf("%s: no step on the %s queue: %v", id, tier, perQueue)
			}
		}
		for q, n := range perQueue {
			total[q] += n
		}
	}
	t.Logf("activities scheduled per task queue: %v", total)
	t.Logf("%d runs completed with one of three workers killed holding %d reads (%d run again, %d finished just before the kill); %d runs had a step retried",
		runs, len(held), recovered, before, retried)
}

// heldStep is an activity a worker held when it was killed.
type heldStep struct {
	runID, activityID string
	attempt           int
}

var submittedRe = regexp.MustCompile(`run (\S+) submitted to Temporal`)

// stepsHeldBy lists the activities of type activityType that the worker process pid holds (started, not
// finished) in the runs the submitters have announced, as the engine sees them.
func stepsHeldBy(ctx context.Context, c client.Client, subs []*proc, pid int, activityType string) ([]heldStep, error) {
	var out []heldStep
	identity := fmt.Sprintf("%d@", pid)
	for _, p := range subs {
		m := submittedRe.FindStringSubmatch(p.stderr.String())
		if m == nil {
			continue
		}
		d, err := c.DescribeWorkflowExecution(ctx, durable.WorkflowID(m[1]), "")
		if err != nil {
			return nil, err
		}
		for _, a := range d.GetPendingActivities() {
			if a.GetState() == enums.PENDING_ACTIVITY_STATE_STARTED && a.GetActivityType().GetName() == activityType &&
				strings.HasPrefix(a.GetLastWorkerIdentity(), identity) {
				out = append(out, heldStep{runID: m[1], activityID: a.GetActivityId(), attempt: int(a.GetAttempt())})
			}
		}
	}
	return out, nil
}

// finishedAttempt reports the attempt that started an activity's last run and the identity of the worker that
// ran it, from the workflow's history.
func finishedAttempt(ctx context.Context, c client.Client, workflowID, activityID string) (int, string, error) {
	scheduled := int64(-1)
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return 0, "", fmt.Errorf("history of %s: %w", workflowID, err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityId() == activityID {
			scheduled = ev.GetEventId()
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && a.GetScheduledEventId() == scheduled {
			return int(a.GetAttempt()), a.GetIdentity(), nil
		}
	}
	return 0, "", fmt.Errorf("history of %s: activity %s never started", workflowID, activityID)
}

// scheduledPerQueue counts the activities a workflow scheduled, by task queue, from its history.
func scheduledPerQueue(ctx context.Context, c client.Client, workflowID string) (map[string]int, error) {
	out := map[string]int{}
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", workflowID, err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			out[a.GetTaskQueue().GetName()]++
		}
	}
	return out, nil
}

// checkRun verifies one finished run against the shared state.
func checkRun(t *testing.T, ctx context.Context, db *state.DB, rep *research.Report) {
	t.Helper()
	pool, err := db.Evidence(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	// No duplicate evidence: one row per (source, quote), ids dense.
	seen := map[string]bool{}
	byID := map[string]state.Evidence{}
	for i, e := range pool {
		k := state.EvidenceKey(e.Source, e.Quote)
		if seen[k] {
			t.Errorf("%s: evidence %s duplicates another row", rep.RunID, e.ID)
		}
		seen[k] = true
		if e.ID != fmt.Sprintf("e%d", i+1) {
			t.Errorf("%s: row %d has id %s", rep.RunID, i, e.ID)
		}
		byID[e.ID] = e
	}
	// Integrity: every [n] of the published report → its evidence in the shared pool, accepted → a quote found
	// verbatim in the text the run read (from the shared state, not the submitter's disk).
	used := 0
	for _, c := range researchtest.BodyCitations(rep) {
		if !c.Found {
			t.Errorf("%s: [%d] resolves to no citation", rep.RunID, c.N)
		}
		for _, id := range c.EvidenceIDs {
			if err := grounded(ctx, db, byID, id); err != nil {
				t.Errorf("%s: [%d] → %s: %v", rep.RunID, c.N, id, err)
			}
			used++
		}
	}
	if used == 0 {
		t.Errorf("%s: the report cites nothing:\n%s", rep.RunID, rep.Markdown)
	}
	// No step lost: scope, every round's searches and pick, every picked read (done or logged as not read),
	// every verification, the synthesis.
	for _, s := range []string{"scope", "pick:r1", "verify:r1", "synth"} {
		if ok, err := db.Step(ctx, s, nil); err != nil || !ok {
			t.Errorf("%s: step %s missing (%v)", rep.RunID, s, err)
		}
	}
	var plan research.Plan
	if ok, err := db.Step(ctx, "scope", &plan); err != nil || !ok || len(plan.SubQuestions) == 0 {
		t.Errorf("%s: no plan stored (%v)", rep.RunID, err)
	}
	for _, sq := range plan.SubQuestions {
		if ok, err := db.Step(ctx, "search:r1:"+sq.ID, nil); err != nil || !ok {
			t.Errorf("%s: the first round's search for %s was lost (%v)", rep.RunID, sq.ID, err)
		}
	}
	for round := 1; round <= rep.Stats.Rounds; round++ {
		var picked []research.Candidate
		if ok, _ := db.Step(ctx, fmt.Sprintf("pick:r%d", round), &picked); !ok {
			continue
		}
		for _, c := range picked {
			if ok, _ := db.Step(ctx, "read:"+c.SubQuestion+":"+sources.NormalizeURL(c.URL), nil); !ok {
				t.Errorf("%s: round %d: the read of %s for %s was lost", rep.RunID, round, c.URL, c.SubQuestion)
			}
		}
	}
	if status, _, _ := db.Meta(ctx, "status"); status != research.RunDone {
		t.Errorf("%s: status %q", rep.RunID, status)
	}
}

func grounded(ctx context.Context, db *state.DB, byID map[string]state.Evidence, id string) error {
	e, ok := byID[id]
	if !ok {
		return fmt.Errorf("no evidence %s in the shared pool", id)
	}
	if e.Status != state.Accepted {
		return fmt.Errorf("evidence %s is %s", id, e.Status)
	}
	docs, err := db.Documents(ctx)
	if err != nil {
		return err
	}
	// The document read under this source's URL (a corpus file may have been read under another line anchor).
	for _, d := range docs {
		if stripFragment(d.URL) != stripFragment(e.Source) {
			continue
		}
		text, err := db.Text(ctx, d.Hash)
		if err != nil {
			return err
		}
		if publish.Grounded(text, e.Quote) {
			return nil
		}
	}
	return fmt.Errorf("quote %q not in any stored text of %s", e.Quote, e.Source)
}

func stripFragment(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		return u[:i]
	}
	return u
}

// attempts is the largest attempt number any step of the run was executed with (from the spend ledger's keys).
func attempts(ctx context.Context, db *state.DB) (int, error) {
	var n int
	keys, err := db.SpendKeys(ctx)
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		var a int
		if i := strings.LastIndexByte(k, '#'); i >= 0 {
			_, _ = fmt.Sscan(k[i+1:], &a)
		}
		n = max(n, a)
	}
	return n, nil
}
