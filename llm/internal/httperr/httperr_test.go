package httperr

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/llm"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "12"}, 12 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"ms wins", map[string]string{"Retry-After-Ms": "250", "Retry-After": "12"}, 250 * time.Millisecond},
		{"http date", map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"negative", map[string]string{"Retry-After": "-3"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			if got := RetryAfter(h, now); got != tc.want {
				t.Errorf("RetryAfter = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name          string
		status        int
		body          string
		contextLength bool
		msgHas        string
	}{
		{"openai overflow", 400, `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`, true, "maximum context length"},
		{"anthropic overflow", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`, true, "prompt is too long"},
		{"llama.cpp overflow", 400, `{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}`, true, "available context size"},
		{"anthropic overloaded", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, false, "overloaded_error: Overloaded"},
		{"plain text", 502, `Bad Gateway`, false, "Bad Gateway"},
		{"detail", 422, `{"detail":"model not found"}`, false, "model not found"},
		{"string error", 404, `{"error":"model 'x' not found"}`, false, "model 'x' not found"},
		{"rate limit mentioning tokens", 429, `{"error":{"message":"Rate limit reached on tokens per min. Please reduce the length of the messages.","code":"rate_limit_exceeded"}}`, false, "Rate limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Classify("p", tc.status, http.Header{}, []byte(tc.body), now)
			var cl *llm.ContextLengthError
			var api *llm.APIError
			switch {
			case tc.contextLength:
				if !errors.As(err, &cl) {
					t.Fatalf("got %T %v, want ContextLengthError", err, err)
				}
			case !errors.As(err, &api) || api.StatusCode != tc.status:
				t.Fatalf("got %T %v, want APIError %d", err, err, tc.status)
			}
			if !strings.Contains(err.Error(), tc.msgHas) {
				t.Errorf("message %q lacks %q", err.Error(), tc.msgHas)
			}
		})
	}
}

func TestClassifyStreamError(t *testing.T) {
	for _, tc := range []struct {
		body      string
		status    int
		retryable bool
	}{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, 529, true},
		{`{"error":{"message":"boom","code":"503"}}`, 503, true},
		{`{"error":{"message":"bad","type":"invalid_request_error"}}`, 400, false},
		{`not json`, 500, true},
	} {
		err := ClassifyStreamError("p", []byte(tc.body))
		var api *llm.APIError
		if !errors.As(err, &api) || api.StatusCode != tc.status || api.Retryable() != tc.retryable {
			t.Errorf("%s: got %v", tc.body, err)
		}
	}
	if !llm.IsContextLength(ClassifyStreamError("p", []byte(`{"error":{"message":"x","code":"context_length_exceeded"}}`))) {
		t.Error("context overflow inside a stream not recognised")
	}
}

func TestMessageClipped(t *testing.T) {
	err := Classify("p", 500, http.Header{}, []byte(strings.Repeat("x", 5000)), time.Now())
	if len(err.Error()) > 1100 {
		t.Errorf("error message not clipped: %d bytes", len(err.Error()))
	}
}
