package durable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

// sample sums the values of a gathered metric family over the series whose labels include want.
func sample(t *testing.T, tel *Telemetry, name string, want map[string]string) float64 {
	t.Helper()
	fams, err := tel.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m, want) {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}

// failingFetcher fails every fetch of a URL ending in suffix, counting them.
type failingFetcher struct {
	sources.Fetcher
	suffix string
	n      *atomic.Int32
}

func (f failingFetcher) Fetch(ctx context.Context, u string) (*sources.Document, error) {
	if strings.HasSuffix(u, f.suffix) {
		f.n.Add(1)
		return nil, errors.New("fetch: 503 from the site")
	}
	return f.Fetcher.Fetch(ctx, u)
}

// A run on a worker with metrics counts, where each is decided: the run started and finished once, every step
// by stage, tier and step as the engine scheduled it, every model call's tokens and cost as the spend ledger
// recorded them (the report's footer is the ledger's sum), and every failed fetch.
func TestMetricsCountWhereDecided(t *testing.T) {
	f := newFixture(t)
	tel, err := NewTelemetry()
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close(context.Background())
	var fetchFailed atomic.Int32
	var ledgers []*llm.Ledger // every step's spend ledger
	var lmu sync.Mutex
	acts := &Activities{Dir: t.TempDir(), Metrics: tel.Metrics, Build: func(context.Context, Input) (research.Config, func(), error) {
		c := f.config()
		c.Fetcher = failingFetcher{Fetcher: c.Fetcher, suffix: "/charlie/1", n: &fetchFailed}
		lmu.Lock()
		ledgers = append(ledgers, c.Ledger)
		lmu.Unlock()
		return c, func() {}, nil
	}}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	register(env, acts, nil)
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute,
		Interceptors: []interceptor.WorkerInterceptor{tel.Metrics.interceptor()}})
	var mu sync.Mutex
	scheduled := map[string]int{} // step/tier → attempts started
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		mu.Lock()
		defer mu.Unlock()
		scheduled[stepName(info.ActivityType.Name)+"/"+queueTier(*info)]++
	})
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		mu.Lock()
		defer mu.Unlock()
		scheduled[stepName(info.ActivityType.Name)+"/local"]++
	})
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "m1", Question: question}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var rep research.Report
	if err := env.GetWorkflowResult(&rep); err != nil {
		t.Fatal(err)
	}
	if got := sample(t, tel, MetricRunsStarted+"_total", nil); got != 1 {
		t.Errorf("runs started = %v, want 1", got)
	}
	if got := sample(t, tel, MetricRunsFinished+"_total", nil); got != 1 {
		t.Errorf("runs finished = %v, want 1", got)
	}
	if got := sample(t, tel, MetricRunsFailed+"_total", nil); got != 0 {
		t.Errorf("runs failed = %v, want 0", got)
	}
	if len(scheduled) < 8 {
		t.Fatalf("only %d kinds of step ran: %v", len(scheduled), scheduled)
	}
	for key, n := range scheduled {
		step, tier, _ := strings.Cut(key, "/")
		stage := stageOf("deepresearch." + step)
		got := sample(t, tel, MetricSteps+"_total", map[string]string{"step": step, "tier": tier, "stage": stage, "outcome": "ok"})
		if got != float64(n) {
			t.Errorf("steps{step=%s,tier=%s,stage=%s} = %v, the engine ran %d", step, tier, stage, got, n)
		}
	}
	if got := sample(t, tel, MetricSteps+"_total", map[string]string{"step": "Search", "tier": TierFast, "stage": research.StageSearch}); got != 4 {
		t.Errorf("searches on the fast tier = %v, want 4", got)
	}
	in := sample(t, tel, MetricModelTokens+"_total", map[string]string{"direction": "input"})
	out := sample(t, tel, MetricModelTokens+"_total", map[string]string{"direction": "output"})
	if in == 0 || out == 0 || int(in+out) != rep.Stats.Tokens {
		t.Errorf("tokens: %v in + %v out; the footer says %d", in, out, rep.Stats.Tokens)
	}
	recorded := 0
	for _, l := range ledgers {
		recorded += len(l.Entries())
	}
	if got := sample(t, tel, MetricModelCalls+"_total", nil); int(got) != recorded || got == 0 {
		t.Errorf("model calls = %v; the spend ledgers recorded %d", got, recorded)
	}
	if got := sample(t, tel, MetricModelCalls+"_total", map[string]string{"tier": TierMid}); got == 0 {
		t.Error("no model call counted on the mid tier (the reads)")
	}
	if got := sample(t, tel, MetricModelCost+"_total", nil); math.Abs(got-rep.Stats.CostUSD) > 1e-9 || got == 0 {
		t.Errorf("cost = %v; the footer says %v", got, rep.Stats.CostUSD)
	}
	if n := fetchFailed.Load(); n == 0 || sample(t, tel, MetricFetchFailures+"_total", map[string]string{"tier": TierMid}) != float64(n) {
		t.Errorf("fetch failures = %v; the fetcher failed %d times", sample(t, tel, MetricFetchFailures+"_total", nil), n)
	}
	if got := sample(t, tel, MetricStateErrors+"_total", nil); got != 0 {
		t.Errorf("state-store errors = %v in a run without an outage", got)
	}

	// The same figures on /metrics, in Prometheus text format.
	srv := httptest.NewServer(OpsHandler(tel.Registry, &Health{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	for _, name := range []string{MetricRunsStarted, MetricSteps, MetricModelTokens, MetricModelCost, MetricFetchFailures} {
		if fam := fams[name+"_total"]; fam == nil || fam.GetType() != dto.MetricType_COUNTER {
			t.Errorf("/metrics: %s_total missing or not a counter", name)
		}
	}
	if fams["go_goroutines"] == nil {
		t.Error("/metrics: no Go runtime metrics")
	}
}

// A run whose workflow fails is counted failed, not finished.
func TestMetricsCountAFailedRun(t *testing.T) {
	f := newFixture(t)
	tel, err := NewTelemetry()
	if err != nil {
		t.Fatal(err)
	}
	acts := f.activities(t)
	acts.Metrics = tel.Metrics
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	register(env, acts, map[string]any{act("Scope"): func(context.Context, Input) (*research.Plan, error) {
		return nil, acts.failure(context.Background(), errors.New("provider refused: 401"), false)
	}})
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute,
		Interceptors: []interceptor.WorkerInterceptor{tel.Metrics.interceptor()}})
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "m2", Question: question}, Steps: StepPolicy{MaxAttempts: 2}})
	if env.GetWorkflowError() == nil {
		t.Fatal("the run did not fail")
	}
	if s, fin, fail := sample(t, tel, MetricRunsStarted+"_total", nil), sample(t, tel, MetricRunsFinished+"_total", nil),
		sample(t, tel, MetricRunsFailed+"_total", map[string]string{"reason": "error"}); s != 1 || fin != 0 || fail != 1 {
		t.Errorf("runs started %v, finished %v, failed %v; want 1, 0, 1", s, fin, fail)
	}
}

// /healthz answers while the process serves; /readyz is 503 with its reason until the pollers run, and only GET
// and HEAD are served.
func TestOpsEndpoints(t *testing.T) {
	tel, err := NewTelemetry()
	if err != nil {
		t.Fatal(err)
	}
	h := &Health{PingState: func(context.Context) error { return nil }}
	srv := httptest.NewServer(OpsHandler(tel.Registry, h))
	defer srv.Close()
	get := func(method, path string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("GET", "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get("GET", "/readyz"); code != 503 || !strings.Contains(body, "not polling") {
		t.Errorf("/readyz before the pollers start: %d %q", code, body)
	}
	h.setPolling(true) // polling, but no Temporal client: not ready
	if code, body := get("GET", "/readyz"); code != 503 || strings.TrimSpace(body) != "Temporal unreachable" {
		t.Errorf("/readyz without Temporal: %d %q", code, body)
	}
	h.PingState = func(context.Context) error { return errors.New("dial tcp: connection refused") }
	if code, body := get("GET", "/readyz"); code != 503 || strings.TrimSpace(body) != "Temporal unreachable; state store unreachable" {
		t.Errorf("/readyz with both down: %d %q", code, body)
	}
	h.setFatal(fmt.Errorf("namespace %q not found", "gone"))
	if code, body := get("GET", "/readyz"); code != 503 || !strings.Contains(body, "worker stopped") || !strings.Contains(body, "not found") {
		t.Errorf("/readyz after a fatal error: %d %q", code, body)
	}
	for _, c := range []struct{ method, path string }{{"POST", "/readyz"}, {"DELETE", "/metrics"}, {"GET", "/"}, {"GET", "/debug/pprof/"}} {
		if code, _ := get(c.method, c.path); code != http.StatusMethodNotAllowed && code != http.StatusNotFound {
			t.Errorf("%s %s: %d, want 404 or 405", c.method, c.path, code)
		}
	}
	if code, _ := get("HEAD", "/healthz"); code != 200 {
		t.Errorf("HEAD /healthz: %d", code)
	}
}
