package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/internal/durable"
	"github.com/deepresearch/deepresearch/research/state"
)

// metricsFlags are a worker's operations endpoint.
type metricsFlags struct {
	addr   string
	public bool
}

func addMetricsFlags(cmd *cobra.Command, mf *metricsFlags) {
	cmd.Flags().StringVar(&mf.addr, "metrics", "", "serve /metrics (Prometheus), /healthz and /readyz on this address, e.g. 127.0.0.1:9090 (default temporal.metrics; none)")
	cmd.Flags().BoolVar(&mf.public, "metrics-public", false, "allow --metrics on a non-loopback address (they carry no secret but tell run counts and spend; default temporal.metrics_public)")
}

// payloadCodec is the codec of every Temporal client this process makes, from $DEEPRESEARCH_PAYLOAD_KEY: a
// malformed key is an error at start.
func (a *App) payloadCodec() (*durable.PayloadCodec, error) {
	return durable.ParsePayloadKeys(a.getenv(config.PayloadKeyEnv))
}

// workerOps is a worker's metrics and health endpoint; nil when none is asked for.
type workerOps struct {
	addr string
	tel  *durable.Telemetry
	app  *App
}

// workerOps checks the flags (and the configuration's temporal.metrics, temporal.metrics_public) and prepares
// the metrics; the listener opens in start.
func (a *App) workerOps(tf temporalFlags, mf metricsFlags) (*workerOps, error) {
	addr := mf.addr
	if addr == "" {
		addr = tf.conn.Metrics
	}
	if addr == "" {
		return nil, nil
	}
	if err := checkMetricsBind(addr, mf.public || tf.conn.MetricsPublic); err != nil {
		return nil, err
	}
	tel, err := durable.NewTelemetry()
	if err != nil {
		return nil, err
	}
	return &workerOps{addr: addr, tel: tel, app: a}, nil
}

// checkMetricsBind refuses a metrics address that is not loopback unless public allows it.
func checkMetricsBind(addr string, public bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--metrics %q: %w", addr, err)
	}
	if public {
		return nil
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--metrics %s: not a loopback address; add --metrics-public (or temporal.metrics_public: true) to serve metrics and health to the network", addr)
	}
	return nil
}

func (o *workerOps) sdkMetrics() client.MetricsHandler {
	if o == nil {
		return nil
	}
	return o.tel.SDKHandler
}

func (o *workerOps) metrics() *durable.Metrics {
	if o == nil {
		return nil
	}
	return o.tel.Metrics
}

// start opens the listener and serves /metrics, /healthz and /readyz until stop; health is what Serve reports
// the pollers' state to.
func (o *workerOps) start(ctx context.Context, c client.Client, stateURL string) (health *durable.Health, stop func(), err error) {
	if o == nil {
		return nil, func() {}, nil
	}
	pinger, err := state.NewPinger(stateURL)
	if err != nil {
		return nil, nil, err
	}
	health = &durable.Health{Temporal: c, PingState: pinger.Ping}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		pinger.Close()
		return nil, nil, fmt.Errorf("--metrics: %w", err)
	}
	srv := &http.Server{Handler: durable.OpsHandler(o.tel.Registry, health), ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, MaxHeaderBytes: 16 << 10}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(o.app.Stderr, "worker: metrics: %v\n", err)
		}
	}()
	fmt.Fprintf(o.app.Stderr, "worker: metrics and health on http://%s (/metrics, /healthz, /readyz)\n", ln.Addr())
	return health, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
		_ = o.tel.Close(sctx)
		pinger.Close()
	}, nil
}
