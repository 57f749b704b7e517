package durable

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

// Metrics counts what a worker's runs do, each fact where it is decided: a run's start and end where the workflow
// starts and returns (a workflow interceptor, silent while the workflow is replayed, so a run moved to another
// worker is not counted twice), a step where its activity returns, a model call where the spend ledger records it,
// a fetch failure where the fetcher returns it, a state-store error where a step's failure is classified. It
// writes to the meter it was made with; nil Metrics count nothing.
type Metrics struct {
	runsStarted, runsFinished, runsFailed metric.Int64Counter
	steps, calls, tokens                  metric.Int64Counter
	cost                                  metric.Float64Counter
	fetchFailures, stateErrors            metric.Int64Counter
}

// Metric names, as Prometheus shows them with the _total suffix of a counter.
const (
	MetricRunsStarted   = "deepresearch_runs_started"
	MetricRunsFinished  = "deepresearch_runs_finished"
	MetricRunsFailed    = "deepresearch_runs_failed"
	MetricSteps         = "deepresearch_steps"
	MetricModelCalls    = "deepresearch_model_calls"
	MetricModelTokens   = "deepresearch_model_tokens"
	MetricModelCost     = "deepresearch_model_cost_usd"
	MetricFetchFailures = "deepresearch_fetch_failures"
	MetricStateErrors   = "deepresearch_state_store_errors"
)

// NewMetrics makes the research counters on mp's meter.
func NewMetrics(mp metric.MeterProvider) (*Metrics, error) {
	m := mp.Meter("github.com/deepresearch/deepresearch/internal/durable")
	var errs []error
	i64 := func(name, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	out := &Metrics{
		runsStarted:   i64(MetricRunsStarted, "Research runs whose workflow started on this worker."),
		runsFinished:  i64(MetricRunsFinished, "Research runs whose workflow returned a report on this worker."),
		runsFailed:    i64(MetricRunsFailed, "Research runs whose workflow ended in an error on this worker (reason: error, cancelled)."),
		steps:         i64(MetricSteps, "Steps (activities) this worker ran, by stage, model tier, step and outcome."),
		calls:         i64(MetricModelCalls, "Model calls recorded in the spend ledger, by tier, role and model."),
		tokens:        i64(MetricModelTokens, "Model tokens recorded in the spend ledger, by tier, role, model and direction (input, output, cache_read, cache_write)."),
		fetchFailures: i64(MetricFetchFailures, "Fetches of a source that failed, by model tier."),
		stateErrors:   i64(MetricStateErrors, "Steps that failed on the shared state (PostgreSQL), by step."),
	}
	var err error
	out.cost, err = m.Float64Counter(MetricModelCost, metric.WithDescription("Model cost in USD recorded in the spend ledger, by tier, role and model."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("durable: metrics: %w", err)
	}
	return out, nil
}

// stageOf is the research stage of the activity named name, from the step table ("" for none of its steps).
func stageOf(name string) string {
	for _, st := range research.Graph() {
		if ActivityName(st) == name {
			return st.Stage
		}
	}
	return ""
}

// queueTier is the model tier whose queue an activity came from; "local" for the bookkeeping a workflow's worker
// runs itself.
func queueTier(info activity.Info) string {
	if info.IsLocalActivity {
		return "local"
	}
	q := info.TaskQueue
	for _, t := range Tiers {
		if strings.HasSuffix(q, "-"+t) {
			return t
		}
	}
	return "none"
}

func stepName(activityType string) string { return strings.TrimPrefix(activityType, "deepresearch.") }

// step counts one finished attempt of an activity; err is what Temporal is given (failure's result).
func (m *Metrics) step(ctx context.Context, info activity.Info, err error) {
	if m == nil {
		return
	}
	outcome := "ok"
	var ae *temporal.ApplicationError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		outcome = "cancelled"
	case errors.As(err, &ae):
		outcome = ae.Type()
	default:
		outcome = "error"
	}
	name := info.ActivityType.Name
	m.steps.Add(ctx, 1, metric.WithAttributes(attribute.String("stage", stageOf(name)),
		attribute.String("tier", queueTier(info)), attribute.String("step", stepName(name)),
		attribute.String("outcome", outcome)))
	if ae != nil && ae.Type() == ErrStateStore {
		m.stateErrors.Add(ctx, 1, metric.WithAttributes(attribute.String("step", stepName(name))))
	}
}

// ledger counts every call the step's spend ledger records, as it records it.
func (m *Metrics) ledger(l *llm.Ledger, tier string) {
	if m == nil || l == nil {
		return
	}
	prev := l.OnEntry
	l.OnEntry = func(e llm.Entry) {
		if prev != nil {
			prev(e)
		}
		ctx := context.Background()
		base := []attribute.KeyValue{attribute.String("tier", tier), attribute.String("role", e.Label), attribute.String("model", e.Model)}
		m.calls.Add(ctx, 1, metric.WithAttributes(base...))
		m.cost.Add(ctx, e.CostUSD, metric.WithAttributes(base...))
		for _, d := range []struct {
			dir string
			n   int
		}{{"input", e.Usage.InputTokens}, {"output", e.Usage.OutputTokens}, {"cache_read", e.Usage.CacheReadTokens}, {"cache_write", e.Usage.CacheWriteTokens}} {
			if d.n > 0 {
				m.tokens.Add(ctx, int64(d.n), metric.WithAttributes(append(base, attribute.String("direction", d.dir))...))
			}
		}
	}
}

// fetcher counts the failures of f's fetches (not those of a step being cancelled).
func (m *Metrics) fetcher(f sources.Fetcher, tier string) sources.Fetcher {
	if m == nil || f == nil {
		return f
	}
	return countingFetcher{Fetcher: f, m: m, tier: tier}
}

type countingFetcher struct {
	sources.Fetcher
	m    *Metrics
	tier string
}

func (f countingFetcher) Fetch(ctx context.Context, url string) (*sources.Document, error) {
	doc, err := f.Fetcher.Fetch(ctx, url)
	if err != nil && ctx.Err() == nil {
		f.m.fetchFailures.Add(ctx, 1, metric.WithAttributes(attribute.String("tier", f.tier)))
	}
	return doc, err
}

// interceptor counts runs as their workflows start and end on this worker.
func (m *Metrics) interceptor() interceptor.WorkerInterceptor {
	return &runCounter{m: m}
}

type runCounter struct {
	interceptor.WorkerInterceptorBase
	m *Metrics
}

func (r *runCounter) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	i := &runInbound{m: r.m}
	i.Next = next
	return i
}

type runInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	m *Metrics
}

func (r *runInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	bg := context.Background()
	if !workflow.IsReplaying(ctx) {
		r.m.runsStarted.Add(bg, 1)
	}
	out, err := r.Next.ExecuteWorkflow(ctx, in)
	if !workflow.IsReplaying(ctx) {
		switch {
		case err == nil:
			r.m.runsFinished.Add(bg, 1)
		case temporal.IsCanceledError(err):
			r.m.runsFailed.Add(bg, 1, metric.WithAttributes(attribute.String("reason", "cancelled")))
		default:
			r.m.runsFailed.Add(bg, 1, metric.WithAttributes(attribute.String("reason", "error")))
		}
	}
	return out, err
}
