package durable

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
)

// Telemetry is one worker process's metrics: one OpenTelemetry meter provider exported to one Prometheus
// registry of its own (no global state), written by the Temporal SDK (SDKHandler, for client.Options) and by the
// research counters (Metrics).
type Telemetry struct {
	Registry   *prometheus.Registry
	Provider   *sdkmetric.MeterProvider
	SDKHandler client.MetricsHandler
	Metrics    *Metrics
}

// NewTelemetry makes a worker's metrics, with the Go runtime's and the process's collectors beside them.
func NewTelemetry() (*Telemetry, error) {
	reg := prometheus.NewRegistry()
	if err := errors.Join(reg.Register(collectors.NewGoCollector()),
		reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))); err != nil {
		return nil, fmt.Errorf("durable: metrics: %w", err)
	}
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, fmt.Errorf("durable: metrics: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	m, err := NewMetrics(mp)
	if err != nil {
		return nil, err
	}
	return &Telemetry{Registry: reg, Provider: mp, Metrics: m,
		SDKHandler: temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{Meter: mp.Meter("go.temporal.io/sdk")})}, nil
}

// Close flushes and stops the meter provider.
func (t *Telemetry) Close(ctx context.Context) error { return t.Provider.Shutdown(ctx) }

// Health says whether a worker can take work: its pollers started (and not stopped by a fatal error), the
// Temporal frontend answering, the shared state answering a ping.
type Health struct {
	// Temporal is the worker's client; its health check is the frontend's.
	Temporal client.Client
	// PingState pings the shared state.
	PingState func(context.Context) error
	// Timeout bounds each check [2s].
	Timeout time.Duration

	mu      sync.Mutex
	polling bool
	fatal   string
}

// polling records that the worker's pollers run (Serve), or stopped.
func (h *Health) setPolling(on bool) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.polling = on
}

// setFatal records the error a worker stopped on.
func (h *Health) setFatal(err error) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.polling, h.fatal = false, err.Error()
}

// Ready returns nil when the worker can take work, else a short reason.
func (h *Health) Ready(ctx context.Context) error {
	h.mu.Lock()
	polling, fatal := h.polling, h.fatal
	h.mu.Unlock()
	switch {
	case fatal != "":
		return fmt.Errorf("worker stopped: %s", fatal)
	case !polling:
		return errors.New("worker not polling Temporal yet")
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	check := func(what string, fn func(context.Context) error) {
		defer wg.Done()
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := fn(cctx); err != nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("%s unreachable", what))
			mu.Unlock()
		}
	}
	wg.Add(2)
	go check("Temporal", func(ctx context.Context) error {
		if h.Temporal == nil {
			return errors.New("no client")
		}
		_, err := h.Temporal.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err
	})
	go check("state store", func(ctx context.Context) error {
		if h.PingState == nil {
			return errors.New("no ping")
		}
		return h.PingState(ctx)
	})
	wg.Wait()
	if len(errs) > 0 {
		if len(errs) == 2 && errs[0].Error() > errs[1].Error() {
			errs[0], errs[1] = errs[1], errs[0]
		}
		return errors.Join(errs...)
	}
	return nil
}

// OpsHandler serves a worker's operations endpoints: /metrics (Prometheus text format, from gather), /healthz
// (200 while the process serves) and /readyz (200 when h is ready, 503 with the reason otherwise). Only GET and
// HEAD are answered.
func OpsHandler(gather prometheus.Gatherer, h *Health) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(gather, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := h.Ready(r.Context()); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, oneLine(err.Error()))
			return
		}
		fmt.Fprintln(w, "ready")
	})
	return mux
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "; ") }
