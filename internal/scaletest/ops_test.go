package scaletest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/deepresearch/deepresearch/internal/durable"
	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/research"
)

var metricsRE = regexp.MustCompile(`metrics and health on (http://\S+) `)

func payloadKey(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// waitForHTTP polls u until it answers code with a body containing want, or fails after limit.
func waitForHTTP(t *testing.T, what, u string, code int, want string, limit time.Duration) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		c, body := fetchURL(u)
		if c == code && strings.Contains(body, want) {
			return
		}
		last = http.StatusText(c) + ": " + body
	}
	t.Fatalf("%s: %s never answered %d %q; last: %s", what, u, code, want, last)
}

func fetchURL(u string) (int, string) {
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, string(b)
}

// payloads lists every Payload message inside m, at any depth.
func payloads(m protoreflect.Message) []*commonpb.Payload {
	if p, ok := m.Interface().(*commonpb.Payload); ok {
		return []*commonpb.Payload{p}
	}
	var out []*commonpb.Payload
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				out = append(out, payloads(v.List().Get(i).Message())...)
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				out = append(out, payloads(mv.Message())...)
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			out = append(out, payloads(v.Message())...)
		}
		return true
	})
	return out
}

// A worker as an operator runs it, on a real Temporal server and PostgreSQL, with --metrics and the payload codec:
//
//   - /healthz answers, /readyz turns 200 once the worker polls; PostgreSQL cut off turns it 503 naming the state
//     store and back to 200 when it returns, and so does the Temporal frontend;
//   - a run with the codec completes, and its workflow history, read without the codec, holds the question
//     nowhere: every payload in it is encrypted and says so in its metadata;
//   - /metrics shows the run finished, its steps by tier, the tokens the ledger recorded and the SDK's own metrics;
//   - a worker given the wrong key fails the run's workflow tasks with an error naming the key it lacks, in the
//     history and in its log, instead of running anything.
func TestWorkerOperations(t *testing.T) {
	d := setup(t, 20*time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	pgProxy := pgtest.NewProxy(t, d.pg)
	tProxy := pgtest.NewTCPProxy(t, d.temporal)
	key := payloadKey(t)
	keyEnv := durable.PayloadKeyEnv + "=" + key

	// The worker reaches Temporal and PostgreSQL through proxies that can be cut.
	frontend := d.temporal
	d.temporal = tProxy.Addr
	w, _ := d.startWorkerAt(t, ctx, "ops", pgProxy.URL, []string{"--metrics", "127.0.0.1:0"}, []string{keyEnv})
	d.temporal = frontend
	var base string
	for deadline := time.Now().Add(time.Minute); base == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := metricsRE.FindStringSubmatch(w.stderr.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("the worker did not say where its metrics are:\n%s", w.stderr.String())
	}
	if code, body := fetchURL(base + "/healthz"); code != 200 {
		t.Fatalf("/healthz: %d %s", code, body)
	}
	waitForHTTP(t, "ready", base+"/readyz", 200, "ready", time.Minute)

	plain, err := client.Dial(client.Options{HostPort: d.temporal, Namespace: d.namespace,
		Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()

	// A worker with the wrong key, on a task queue of its own.
	wrong, _ := d.startWorkerAt(t, ctx, "wrong", d.state, []string{"--task-queue", "opswrong"},
		[]string{durable.PayloadKeyEnv + "=" + payloadKey(t)})
	det := d.command(ctx, "run", "--plain", "--temporal", d.temporal, "--namespace", d.namespace, "--state", d.state,
		"--task-queue", "opswrong", "--detach", "--corpus", d.docs, question)
	det.cmd.Env = append(det.cmd.Env, keyEnv)
	if err := det.cmd.Run(); err != nil {
		t.Fatalf("detached run: %v\n%s", err, det.stderr.String())
	}
	id := strings.TrimSpace(det.stdout.String())
	defer func() {
		_ = plain.TerminateWorkflow(context.WithoutCancel(ctx), durable.WorkflowID(id), "", "test over")
	}()
	var failure string
	var kinds []string
	for deadline := time.Now().Add(time.Minute); failure == "" && time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		it := plain.GetWorkflowHistory(ctx, durable.WorkflowID(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		kinds = nil
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				break
			}
			kinds = append(kinds, ev.GetEventType().String())
			if a := ev.GetWorkflowTaskFailedEventAttributes(); a != nil {
				failure = a.GetFailure().GetMessage()
			}
			if ev.GetEventType() == enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
				t.Fatalf("the worker with the wrong key scheduled a step")
			}
		}
	}
	if !strings.Contains(failure, "not among the 1 key(s) of $"+durable.PayloadKeyEnv) {
		desc, _ := plain.DescribeWorkflowExecution(ctx, durable.WorkflowID(id), "")
		t.Fatalf("the wrong key's workflow task failure: %q\nhistory: %v\npending task: %v\nworker:\n%s", failure, kinds,
			desc.GetPendingWorkflowTask(), wrong.stderr.String())
	}
	desc, err := plain.DescribeWorkflowExecution(ctx, durable.WorkflowID(id), "")
	if err != nil || desc.GetWorkflowExecutionInfo().GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Errorf("the run under the wrong key: %v, status %v (want running, waiting for a worker with the key)", err, desc.GetWorkflowExecutionInfo().GetStatus())
	}
	if log := wrong.stderr.String(); !strings.Contains(log, "not among the") || strings.Contains(log, key) {
		t.Errorf("the wrong key's worker log does not say why (or shows the key):\n%s", log)
	}

	// A run with the codec.
	out := filepath.Join(t.TempDir(), "run")
	sub := d.command(ctx, "run", "--plain", "--temporal", d.temporal, "--namespace", d.namespace, "--state", d.state,
		"--corpus", d.docs, "--out", out, question)
	sub.cmd.Env = append(sub.cmd.Env, keyEnv)
	if err := sub.cmd.Run(); err != nil {
		t.Fatalf("run with the codec: %v\n%s\nworker:\n%s", err, sub.stderr.String(), w.stderr.String())
	}
	rep, err := research.LoadReport(out)
	if err != nil || len(rep.Citations) == 0 {
		t.Fatalf("report: %v, %d citations", err, len(rep.Citations))
	}
	m := submittedRe.FindStringSubmatch(sub.stderr.String())
	if m == nil {
		t.Fatalf("no run id in %s", sub.stderr.String())
	}
	iter := plain.GetWorkflowHistory(ctx, durable.WorkflowID(m[1]), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	events, encrypted := 0, 0
	needle := []byte(question[:40])
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		events++
		raw, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), string(needle)) || strings.Contains(string(raw), "Kestrel") {
			t.Errorf("history event %d (%s) holds the question or a document in clear", ev.GetEventId(), ev.GetEventType())
		}
		for _, p := range payloads(ev.ProtoReflect()) {
			if enc := string(p.GetMetadata()[converter.MetadataEncoding]); enc != durable.EncodingEncrypted || len(p.GetMetadata()[durable.MetaKeyID]) == 0 {
				t.Errorf("history event %d (%s): a payload with encoding %q", ev.GetEventId(), ev.GetEventType(), enc)
			}
			encrypted++
		}
	}
	if events < 20 || encrypted < 20 {
		t.Fatalf("history: %d events, %d payloads: the check above saw too little", events, encrypted)
	}

	// The run on /metrics.
	_, metrics := fetchURL(base + "/metrics")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^deepresearch_runs_finished_total(\{[^}]*\})? 1$`),
		regexp.MustCompile(`(?m)^deepresearch_steps_total\{[^}]*step="Read"[^}]*tier="mid"[^}]*\} [1-9]`),
		regexp.MustCompile(`(?m)^deepresearch_model_tokens_total\{[^}]*direction="input"[^}]*\} [1-9]`),
		regexp.MustCompile(`(?m)^deepresearch_model_cost_usd_total\{[^}]*\} 0\.0*[1-9]`),
		regexp.MustCompile(`(?m)^temporal_\w+`),
	} {
		if !want.MatchString(metrics) {
			t.Errorf("/metrics has no line matching %s", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", metrics)
	}

	// Outages turn /readyz 503 with the reason, and back.
	pgProxy.Cut()
	waitForHTTP(t, "state store down", base+"/readyz", 503, "state store unreachable", 30*time.Second)
	pgProxy.Mend()
	waitForHTTP(t, "state store back", base+"/readyz", 200, "ready", 30*time.Second)
	tProxy.Cut()
	waitForHTTP(t, "Temporal down", base+"/readyz", 503, "Temporal unreachable", 30*time.Second)
	tProxy.Mend()
	waitForHTTP(t, "Temporal back", base+"/readyz", 200, "ready", 2*time.Minute)
	if code, _ := fetchURL(base + "/healthz"); code != 200 {
		t.Errorf("/healthz after the outages: %d", code)
	}

}
