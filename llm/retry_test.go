package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// flaky fails with the given errors in order, then answers.
type flaky struct {
	mu    sync.Mutex
	errs  []error
	calls int
	block bool // wait for the context instead of answering
}

func (f *flaky) Generate(ctx context.Context, _ *Request) (*Response, error) {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.mu.Unlock()
	if f.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if n <= len(f.errs) {
		return nil, f.errs[n-1]
	}
	return &Response{Message: Message{Role: RoleAssistant, Content: "ok"}}, nil
}

func (f *flaky) Info() Info { return Info{Provider: "test", Name: "flaky"} }

type recorder struct {
	mu sync.Mutex
	d  []time.Duration
}

func (r *recorder) sleep(_ context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.d = append(r.d, d)
	return nil
}

func TestJitterBounds(t *testing.T) {
	r := &retrying{cfg: RetryConfig{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}.withDefaults()}
	err := &APIError{StatusCode: 503}
	for attempt := 1; attempt <= 6; attempt++ {
		ceiling := min(100*time.Millisecond<<(attempt-1), time.Second)
		var lo, hi time.Duration = ceiling, 0
		for range 2000 {
			d, ok := r.retryDelay(err, attempt)
			if !ok {
				t.Fatalf("attempt %d: 503 not retryable", attempt)
			}
			if d <= 0 || d > ceiling {
				t.Fatalf("attempt %d: delay %v outside (0, %v]", attempt, d, ceiling)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		// Full jitter spreads over the whole range, not a fixed delay.
		if lo > ceiling/4 || hi < ceiling*3/4 {
			t.Errorf("attempt %d: delays span [%v, %v] of (0, %v]; not jittered", attempt, lo, hi, ceiling)
		}
	}
}

func TestRetryAfterHonouredAndCapped(t *testing.T) {
	r := &retrying{cfg: RetryConfig{MaxDelay: 10 * time.Second}.withDefaults()}
	if d, ok := r.retryDelay(&APIError{StatusCode: 429, RetryAfter: 3 * time.Second}, 1); !ok || d != 3*time.Second {
		t.Errorf("Retry-After 3s: got %v %v", d, ok)
	}
	if d, ok := r.retryDelay(&APIError{StatusCode: 429, RetryAfter: time.Hour}, 1); !ok || d != 10*time.Second {
		t.Errorf("Retry-After 1h: got %v %v, want capped at 10s", d, ok)
	}
}

func TestRetryClassification(t *testing.T) {
	r := &retrying{cfg: RetryConfig{}.withDefaults()}
	for _, tc := range []struct {
		err   error
		retry bool
	}{
		{&APIError{StatusCode: 429}, true},
		{&APIError{StatusCode: 500}, true},
		{&APIError{StatusCode: 529}, true},
		{&APIError{StatusCode: 408}, true},
		{&APIError{StatusCode: 400}, false},
		{&APIError{StatusCode: 401}, false},
		{&ContextLengthError{Message: "too long"}, false},
		{fmt.Errorf("wrapped: %w", &APIError{StatusCode: 502}), true},
		{fmt.Errorf("%w after 1s: %w", ErrCallTimeout, context.DeadlineExceeded), true},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{errors.New("bad request body"), false},
	} {
		if _, ok := r.retryDelay(tc.err, 1); ok != tc.retry {
			t.Errorf("%v: retry=%v, want %v", tc.err, ok, tc.retry)
		}
	}
}

func TestWithRetryStopsAtMaxAttempts(t *testing.T) {
	f := &flaky{errs: []error{&APIError{StatusCode: 500}, &APIError{StatusCode: 500}, &APIError{StatusCode: 500}, &APIError{StatusCode: 500}}}
	var rec recorder
	m := WithRetry(f, RetryConfig{MaxAttempts: 3, Sleep: rec.sleep})
	_, err := m.Generate(t.Context(), &Request{})
	var api *APIError
	if !errors.As(err, &api) || f.calls != 3 || len(rec.d) != 2 {
		t.Errorf("err %v after %d calls and %d sleeps", err, f.calls, len(rec.d))
	}
}

func TestWithRetrySucceedsAfterTransientErrors(t *testing.T) {
	f := &flaky{errs: []error{&APIError{StatusCode: 429, RetryAfter: 2 * time.Second}, &APIError{StatusCode: 503}}}
	var rec recorder
	m := WithRetry(f, RetryConfig{Sleep: rec.sleep})
	resp, err := m.Generate(t.Context(), &Request{})
	if err != nil || resp.Message.Content != "ok" || f.calls != 3 {
		t.Fatalf("resp %v err %v calls %d", resp, err, f.calls)
	}
	if rec.d[0] != 2*time.Second {
		t.Errorf("first wait %v, want the Retry-After 2s", rec.d[0])
	}
}

func TestWithRetryNoRetryOnContextLength(t *testing.T) {
	f := &flaky{errs: []error{&ContextLengthError{Provider: "p", Message: "too long"}}}
	m := WithRetry(f, RetryConfig{Sleep: (&recorder{}).sleep})
	_, err := m.Generate(t.Context(), &Request{})
	if !IsContextLength(err) || f.calls != 1 {
		t.Errorf("err %v after %d calls", err, f.calls)
	}
}

func TestWithRetryCallTimeout(t *testing.T) {
	f := &flaky{block: true}
	var rec recorder
	m := WithRetry(f, RetryConfig{MaxAttempts: 2, CallTimeout: 20 * time.Millisecond, Sleep: rec.sleep})
	_, err := m.Generate(t.Context(), &Request{})
	if !errors.Is(err, ErrCallTimeout) || f.calls != 2 || len(rec.d) != 1 {
		t.Errorf("err %v after %d calls, %d sleeps", err, f.calls, len(rec.d))
	}
}

func TestWithRetryParentCancelled(t *testing.T) {
	f := &flaky{block: true}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	m := WithRetry(f, RetryConfig{CallTimeout: time.Minute, Sleep: (&recorder{}).sleep})
	_, err := m.Generate(ctx, &Request{})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrCallTimeout) || f.calls != 1 {
		t.Errorf("err %v after %d calls; the caller's deadline must not be retried", err, f.calls)
	}
}

func TestDefaultSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := sleepCtx(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("sleepCtx on a cancelled context: %v", err)
	}
}
