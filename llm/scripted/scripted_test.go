package scripted

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/llm"
)

func TestSequenceAndDefaults(t *testing.T) {
	m := New(llm.Info{}, Sequence(
		Reply("", llm.ToolCall{ID: "1", Name: "ls", Arguments: "{}"}),
		Reply("done"),
	), WithRecording())
	ctx := t.Context()
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "list the files please"}}}
	r1, err := m.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r1.StopReason != llm.StopToolUse || r1.Message.Role != llm.RoleAssistant || r1.Model != "scripted" {
		t.Errorf("first reply %+v", r1)
	}
	if r1.Usage.InputTokens == 0 || r1.Usage.OutputTokens == 0 {
		t.Errorf("usage not counted: %+v", r1.Usage)
	}
	var streamed strings.Builder
	req.OnText = func(d string) { streamed.WriteString(d) }
	r2, err := m.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r2.StopReason != llm.StopEnd || streamed.String() != "done" {
		t.Errorf("second reply %+v, streamed %q", r2, streamed.String())
	}
	if _, err := m.Generate(ctx, req); err == nil || !strings.Contains(err.Error(), "no reply left") {
		t.Errorf("exhausted script: %v", err)
	}
	if m.Calls() != 3 || len(m.Requests()) != 3 || m.Requests()[0].OnText != nil {
		t.Errorf("calls %d, recorded %d", m.Calls(), len(m.Requests()))
	}
	// The recorded request is a copy: changing the caller's does not change it.
	req.Messages[0].Content = "changed"
	if m.Requests()[0].Messages[0].Content != "list the files please" {
		t.Error("recording shares memory with the caller's request")
	}
}

func TestSequenceRepliesAreCopies(t *testing.T) {
	shared := Reply("x", llm.ToolCall{ID: "1", Name: "ls"})
	m := New(llm.Info{}, Sequence(shared))
	r, err := m.Generate(t.Context(), &llm.Request{})
	if err != nil {
		t.Fatal(err)
	}
	r.Message.ToolCalls[0].ID = "mutated"
	if shared.Message.ToolCalls[0].ID != "1" {
		t.Error("caller mutation reached the script")
	}
}

func TestContextWindowEnforced(t *testing.T) {
	m := New(llm.Info{ContextWindow: 50}, Sequence(Reply("unreachable")))
	_, err := m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("word ", 100)}}})
	var cl *llm.ContextLengthError
	if !errors.As(err, &cl) {
		t.Fatalf("got %v, want ContextLengthError", err)
	}
}

func TestLatencyHonoursCancellation(t *testing.T) {
	m := New(llm.Info{}, Sequence(Reply("late")), WithLatency(time.Hour))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, err := m.Generate(ctx, &llm.Request{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v", err)
	}
}

func TestPeakConcurrency(t *testing.T) {
	m := New(llm.Info{}, func(context.Context, *llm.Request) (*llm.Response, error) { return Reply("ok"), nil },
		WithLatency(30*time.Millisecond))
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			if _, err := m.Generate(t.Context(), &llm.Request{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if p := m.PeakConcurrency(); p < 2 || p > 5 {
		t.Errorf("peak concurrency %d", p)
	}
}
