package openai_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/llmtest"
)

// cutServer answers the first cuts requests with half of a good body (the connection closes before the declared
// length, or the body's JSON ends early), then with the whole body.
func cutServer(t *testing.T, cuts int, declareFull bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	body := llmtest.OpenAIAnswer("whole answer", "", nil, llmtest.Usage{Input: 3, Output: 2})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if int(n.Add(1)) > cuts {
			_, _ = io.WriteString(w, body)
			return
		}
		half := body[:len(body)/2]
		if declareFull {
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		} else {
			w.Header().Set("Content-Length", fmt.Sprint(len(half)))
		}
		_, _ = io.WriteString(w, half)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestCutOffBodyIsRetried(t *testing.T) {
	for _, tc := range []struct {
		name        string
		declareFull bool
	}{
		{"connection closed before the declared length", true},
		{"body ends inside the JSON", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, calls := cutServer(t, 2, tc.declareFull)
			var s llmtest.Sleeps
			m := llm.WithRetry(newModel(t, &llmtest.Server{Server: srv}, llm.Info{}), llm.RetryConfig{Sleep: s.Sleep})
			resp, err := m.Generate(t.Context(), userReq())
			if err != nil {
				t.Fatalf("cut-off body not retried: %v", err)
			}
			if resp.Message.Content != "whole answer" || calls.Load() != 3 || len(s.Waits()) != 2 {
				t.Errorf("content %q after %d calls and waits %v", resp.Message.Content, calls.Load(), s.Waits())
			}
		})
	}
}

func TestCutOffBodyForeverIsBounded(t *testing.T) {
	srv, calls := cutServer(t, 100, true)
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, &llmtest.Server{Server: srv}, llm.Info{}), llm.RetryConfig{MaxAttempts: 3, Sleep: s.Sleep})
	if _, err := m.Generate(t.Context(), userReq()); err == nil {
		t.Fatal("a body cut off every time was accepted")
	}
	if calls.Load() != 3 {
		t.Errorf("%d calls, want 3", calls.Load())
	}
}

func TestDroppedStreamIsRetried(t *testing.T) {
	// The first stream sends two deltas and stops: no finish reason, no [DONE].
	dropped := llmtest.Reply{Events: []llmtest.Event{
		{Data: `{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"The first half"},"finish_reason":null}]}`},
		{Data: `{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" of an answ"},"finish_reason":null}]}`},
	}}
	srv := llmtest.NewServer(t, dropped, llmtest.OpenAIStream(nil, []string{"whole ", "answer"}, nil, 0, llmtest.Usage{Input: 1, Output: 2}))
	var s llmtest.Sleeps
	m := llm.WithRetry(newModel(t, srv, llm.Info{}), llm.RetryConfig{Sleep: s.Sleep})
	req := userReq()
	req.OnText = func(string) {}
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "whole answer" || srv.Calls() != 2 {
		t.Errorf("content %q after %d calls", resp.Message.Content, srv.Calls())
	}
	// Without the retry layer the adapter says what happened.
	srv2 := llmtest.NewServer(t, dropped)
	_, err = newModel(t, srv2, llm.Info{}).Generate(t.Context(), req)
	if !errors.Is(err, llm.ErrIncompleteAnswer) || !strings.Contains(err.Error(), "without a finish reason") {
		t.Errorf("dropped stream error %v", err)
	}
}
