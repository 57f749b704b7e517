package durable

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/deepresearch/deepresearch/base/redact"
	"github.com/deepresearch/deepresearch/base/syncio"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/llm/llmtest"
	"github.com/deepresearch/deepresearch/llm/openai"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/llmroles"
)

// A provider that refuses the key and echoes it in its error body (as some do): the step fails at once — an
// authentication error is not retried — and the key reaches neither the engine (the failure the workflow and a
// pending activity's last failure carry) nor the worker's log, the SDK's own lines included.
func TestRefusedKeyFailsOnceAndIsNeverShown(t *testing.T) {
	// Not shaped like a key (no sk- prefix, no key= pair): only the worker's own list of secrets can find it.
	const key = "echoedsecret0123456789abcdef"
	srv := llmtest.NewFuncServer(t, func(int, llmtest.Request) llmtest.Reply {
		return llmtest.OpenAIError(401, "invalid_api_key", "Incorrect API key provided: "+key+". You can find your API key at the dashboard.")
	})
	m, err := openai.New(openai.Config{Model: "gpt-4.1", BaseURL: srv.URL + "/v1", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	var logs syncio.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	acts := &Activities{Dir: t.TempDir(), Log: logger, Secrets: []string{key},
		Build: func(context.Context, Input) (research.Config, func(), error) {
			c := f.config()
			c.Roles = llmroles.New(llmroles.Config{Planner: m, Searcher: m, Analyst: m, Verifier: m, Synthesizer: m, Logger: logger})
			return c, func() {}, nil
		}}
	var s testsuite.WorkflowTestSuite
	s.SetLogger(tlog.NewStructuredLogger(logger))
	env := s.NewTestWorkflowEnvironment()
	register(env, acts, nil)
	attempts := 0
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == act("Scope") {
			attempts++
		}
	})
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "auth", Question: question}})
	werr := env.GetWorkflowError()
	if !env.IsWorkflowCompleted() || werr == nil {
		t.Fatalf("workflow: completed %v, error %v; want a failed run", env.IsWorkflowCompleted(), werr)
	}
	if len(srv.Requests()) == 0 {
		t.Fatal("the provider was never called")
	}
	if attempts != 1 {
		t.Errorf("scope ran %d times, want once: a refused key is not retried", attempts)
	}
	var ae *temporal.ApplicationError
	if !errors.As(werr, &ae) || ae.Type() != errAuth || !ae.NonRetryable() {
		t.Errorf("the failure is %T %v, want a non-retryable %s", werr, werr, errAuth)
	}
	if !strings.Contains(werr.Error(), "401") || !strings.Contains(werr.Error(), redact.Mark) {
		t.Errorf("the failure does not say what happened: %v", werr)
	}
	if strings.Contains(werr.Error(), key) {
		t.Errorf("the failure the engine holds carries the key: %v", werr)
	}
	if strings.Contains(logs.String(), key) {
		t.Errorf("the worker's log carries the key:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "401") {
		t.Errorf("the worker's log does not show the failure at all:\n%s", logs.String())
	}
}

// The run's step policy is the engine's: a step that keeps failing is tried max_attempts times, and a policy
// that cannot work is refused at submission.
func TestStepPolicyBoundsAttempts(t *testing.T) {
	f := newFixture(t)
	acts := f.activities(t)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	attempts := 0
	register(env, acts, map[string]any{
		act("Scope"): func(ctx context.Context, in Input) (*research.Plan, error) {
			attempts++
			return nil, temporal.NewApplicationError("the planner is down", errStep)
		},
	})
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "policy", Question: question},
		Steps: StepPolicy{MaxAttempts: 3, InitialInterval: time.Second, MaxInterval: 2 * time.Second, HeartbeatTimeout: 5 * time.Second}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() == nil {
		t.Fatalf("workflow: completed %v, error %v; want a failed run", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	if attempts != 3 {
		t.Errorf("scope tried %d times, want the policy's 3", attempts)
	}
	for _, bad := range []StepPolicy{{HeartbeatTimeout: time.Second}, {MaxAttempts: -1},
		{InitialInterval: time.Minute, MaxInterval: time.Second}} {
		if _, err := Submit(t.Context(), nil, Input{Request: request.Research{RunID: "x", Question: question}, Steps: bad}); err == nil || !strings.Contains(err.Error(), "step policy") {
			t.Errorf("policy %+v: %v", bad, err)
		}
	}
}
