package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"
)

// RetryConfig bounds retries of failed model calls. The zero value means the defaults.
type RetryConfig struct {
	MaxAttempts int           // total attempts including the first; default 4
	BaseDelay   time.Duration // first backoff; default 500ms
	MaxDelay    time.Duration // backoff ceiling, also the cap on Retry-After; default 30s
	CallTimeout time.Duration // per-attempt timeout; default 5m
	// Sleep waits between attempts; tests replace it. Nil means a context-aware timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (c RetryConfig) withDefaults() RetryConfig {
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 4
	}
	if c.BaseDelay <= 0 {
		c.BaseDelay = 500 * time.Millisecond
	}
	if c.MaxDelay <= 0 {
		c.MaxDelay = 30 * time.Second
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = 5 * time.Minute
	}
	if c.Sleep == nil {
		c.Sleep = sleepCtx
	}
	return c
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ErrCallTimeout marks an attempt that ran past RetryConfig.CallTimeout.
var ErrCallTimeout = errors.New("model call timed out")

// WithRetry wraps a model so that rate limits (429), server errors (5xx), per-call timeouts, network errors and
// answers that arrived incomplete (a body cut off mid-way, a dropped stream) are retried with exponential backoff
// and full jitter, honouring Retry-After. Context-length errors and other client errors are
// returned at once.
func WithRetry(m Model, cfg RetryConfig) Model {
	return &retrying{Model: m, cfg: cfg.withDefaults()}
}

type retrying struct {
	Model
	cfg RetryConfig
}

func (r *retrying) Generate(ctx context.Context, req *Request) (*Response, error) {
	var lastErr error
	for attempt := 1; attempt <= r.cfg.MaxAttempts; attempt++ {
		resp, err := r.attempt(ctx, req)
		if err == nil {
			return resp, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		wait, ok := r.retryDelay(err, attempt)
		if !ok || attempt == r.cfg.MaxAttempts {
			break
		}
		if err := r.cfg.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
	return nil, lastErr
}

func (r *retrying) attempt(ctx context.Context, req *Request) (*Response, error) {
	actx, cancel := context.WithTimeoutCause(ctx, r.cfg.CallTimeout, ErrCallTimeout)
	defer cancel()
	resp, err := r.Model.Generate(actx, req)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), ErrCallTimeout) {
		return nil, fmt.Errorf("%w after %s: %w", ErrCallTimeout, r.cfg.CallTimeout, err)
	}
	return resp, err
}

// retryDelay decides whether err is worth another attempt and how long to wait first.
func (r *retrying) retryDelay(err error, attempt int) (time.Duration, bool) {
	if IsContextLength(err) {
		return 0, false
	}
	backoff := r.cfg.BaseDelay << (attempt - 1)
	if backoff > r.cfg.MaxDelay || backoff <= 0 {
		backoff = r.cfg.MaxDelay
	}
	jittered := time.Duration(rand.Int64N(int64(backoff)) + 1)
	var api *APIError
	if errors.As(err, &api) {
		if !api.Retryable() {
			return 0, false
		}
		if api.RetryAfter > 0 {
			return min(api.RetryAfter, r.cfg.MaxDelay), true
		}
		return jittered, true
	}
	if errors.Is(err, ErrCallTimeout) {
		return jittered, true
	}
	var ne net.Error
	if errors.As(err, &ne) || incomplete(err) {
		return jittered, true
	}
	return 0, false
}

// incomplete reports whether err says the answer was cut off in transit: the connection closed mid-body
// (io.ErrUnexpectedEOF, io.EOF, a reset), the body's JSON ended early, or the stream stopped unfinished.
func incomplete(err error) bool {
	if errors.Is(err, ErrIncompleteAnswer) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return true
	}
	return strings.Contains(err.Error(), "unexpected end of JSON input")
}
