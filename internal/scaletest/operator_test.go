package scaletest

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/deepresearch/deepresearch/internal/durable"
	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/llm/llmtest"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/research/state"
)

// What an operator meets, on a real Temporal server, PostgreSQL and worker processes:
//
//   - a durable run's footer (calls, tokens, cost, fuses) and evidence equal the same question run locally: every
//     step attempt has its own spend row, the bookkeeping steps' included;
//   - PostgreSQL cut off in the middle of the reads: the submitter says "state store unreachable, retrying", and
//     the run finishes with exactly the evidence of the undisturbed runs;
//   - a provider that fails echoing the worker's key: the key is in neither the worker's log nor the pending
//     activity's last failure that anyone with access to the namespace can read.
func TestOperatorFailures(t *testing.T) {
	d := setup(t, 50*time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	// Every verdict passes: the fake model's first verdict would otherwise send the first run alone back to
	// search, and the runs compared here would differ by the order they ran in.
	cfg := openaifake.Kiln()
	cfg.Latency, cfg.GapSubQuestion = 50*time.Millisecond, -1
	d.model = openaifake.New(t, cfg)
	proxy := pgtest.NewProxy(t, d.pg)
	w, _ := d.startWorkerAt(t, ctx, "w0", proxy.URL, nil, nil)

	// The question locally, then on Temporal, undisturbed.
	localOut := filepath.Join(t.TempDir(), "local")
	if p := d.command(ctx, "run", "--plain", "--corpus", d.docs, "--out", localOut, question); p.cmd.Run() != nil {
		t.Fatalf("local run: %s", p.stderr.String())
	}
	local, err := research.LoadReport(localOut)
	if err != nil {
		t.Fatal(err)
	}
	localCalls := len(d.model.Calls())
	durOut := filepath.Join(t.TempDir(), "durable")
	if p := d.command(ctx, "run", "--plain", "--temporal", d.temporal, "--namespace", d.namespace, "--state", proxy.URL,
		"--corpus", d.docs, "--out", durOut, question); p.cmd.Run() != nil {
		t.Fatalf("durable run: %s\nworker:\n%s", p.stderr.String(), w.stderr.String())
	}
	dur, err := research.LoadReport(durOut)
	if err != nil {
		t.Fatal(err)
	}
	ls, ds := local.Stats, dur.Stats
	if ds.Calls != ls.Calls || ds.Tokens != ls.Tokens || fmt.Sprintf("%.6f", ds.CostUSD) != fmt.Sprintf("%.6f", ls.CostUSD) ||
		ds.FusesTripped != ls.FusesTripped || ds.EvidenceAccepted != ls.EvidenceAccepted || ls.Tokens == 0 {
		t.Errorf("durable footer: %d calls, %d tokens, $%.6f, %d fuses, %d evidence; local: %d, %d, $%.6f, %d, %d",
			ds.Calls, ds.Tokens, ds.CostUSD, ds.FusesTripped, ds.EvidenceAccepted,
			ls.Calls, ls.Tokens, ls.CostUSD, ls.FusesTripped, ls.EvidenceAccepted)
		for name, rep := range map[string]*research.Report{"local": local, "durable": dur} {
			for _, e := range rep.Evidence {
				t.Logf("%s: %s %s %q", name, e.SubQuestion, e.Source, e.Quote)
			}
			t.Logf("%s stats: %+v", name, rep.Stats)
		}
		for i, c := range d.model.Calls() {
			t.Logf("call %d (local %v): %s %s prompt %d completion %d digest %s", i, i < localCalls, c.Role, c.SubQuestion, c.PromptTokens, c.CompletionTokens, c.Digest)
		}
	}

	// PostgreSQL cut off while the reads run, for a few seconds.
	c, err := client.Dial(client.Options{HostPort: d.temporal, Namespace: d.namespace,
		Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	outageOut := filepath.Join(t.TempDir(), "outage")
	sub := d.command(ctx, "run", "--plain", "--temporal", d.temporal, "--namespace", d.namespace, "--state", proxy.URL,
		"--corpus", d.docs, "--out", outageOut, question)
	if err := sub.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cut := false
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && !cut; time.Sleep(50 * time.Millisecond) {
		m := submittedRe.FindStringSubmatch(sub.stderr.String())
		if m == nil {
			continue
		}
		desc, err := c.DescribeWorkflowExecution(ctx, durable.WorkflowID(m[1]), "")
		if err != nil {
			continue
		}
		for _, a := range desc.GetPendingActivities() {
			if a.GetActivityType().GetName() == "deepresearch.Read" && a.GetState() == enums.PENDING_ACTIVITY_STATE_STARTED {
				proxy.Cut()
				cut = true
				break
			}
		}
	}
	if !cut {
		t.Fatalf("no read ever ran:\n%s", sub.stderr.String())
	}
	time.Sleep(6 * time.Second)
	proxy.Mend()
	if err := sub.cmd.Wait(); err != nil {
		t.Fatalf("the run did not survive the outage: %v\n%s\nworker:\n%s", err, sub.stderr.String(), w.stderr.String())
	}
	if out := sub.stderr.String(); !strings.Contains(out, research.StateStoreRetrying) || !strings.Contains(out, "state store reachable again") {
		t.Errorf("the submitter did not say the state store was down and back:\n%s", out)
	}
	after, err := research.LoadReport(outageOut)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, e := range local.Evidence {
		want[state.EvidenceKey(stripFragment(e.Source), e.Quote)] = true
	}
	got := map[string]bool{}
	for _, e := range after.Evidence {
		got[state.EvidenceKey(stripFragment(e.Source), e.Quote)] = true
	}
	missing := 0
	for k := range want {
		if !got[k] {
			missing++
		}
	}
	if missing > 0 || len(got) != len(want) || after.Stats.SourcesUnreadable != ls.SourcesUnreadable || after.Stats.SourcesRead != ls.SourcesRead {
		t.Errorf("after the outage: %d evidence (%d of the undisturbed run's missing), %d read, %d unreadable; undisturbed: %d, %d, %d",
			len(got), missing, after.Stats.SourcesRead, after.Stats.SourcesUnreadable, len(want), ls.SourcesRead, ls.SourcesUnreadable)
	}

	// A provider that fails echoing the key, on a worker of its own task queue.
	const key = "sk-operator-echoed-0123456789abcdef"
	echo := llmtest.NewFuncServer(t, func(int, llmtest.Request) llmtest.Reply {
		return llmtest.OpenAIError(500, "server_error", "upstream rejected request signed with "+key+" (Authorization: Bearer "+key+")")
	})
	ew, _ := d.startWorkerAt(t, ctx, "echo", proxy.URL, []string{"--base-url", echo.URL + "/v1", "--task-queue", "echoq"},
		[]string{"OPENAI_API_KEY=" + key})
	det := d.command(ctx, "run", "--plain", "--detach", "--temporal", d.temporal, "--namespace", d.namespace, "--state", proxy.URL,
		"--task-queue", "echoq", "--corpus", d.docs, question)
	if err := det.cmd.Run(); err != nil {
		t.Fatalf("detached run: %v\n%s", err, det.stderr.String())
	}
	runID := strings.TrimSpace(det.stdout.String())
	var lastFailure string
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && lastFailure == ""; time.Sleep(200 * time.Millisecond) {
		desc, err := c.DescribeWorkflowExecution(ctx, durable.WorkflowID(runID), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range desc.GetPendingActivities() {
			if a.GetAttempt() >= 2 && a.GetLastFailure() != nil {
				lastFailure = a.GetLastFailure().String()
			}
		}
	}
	if err := c.CancelWorkflow(ctx, durable.WorkflowID(runID), ""); err != nil {
		t.Fatal(err)
	}
	if lastFailure == "" {
		t.Fatalf("no step was retried after the provider's failure\nworker:\n%s", ew.stderr.String())
	}
	if strings.Contains(lastFailure, key) || !strings.Contains(lastFailure, "[redacted]") {
		t.Errorf("the pending activity's last failure: %s", lastFailure)
	}
	if len(echo.Requests()) == 0 || strings.Contains(ew.stderr.String(), key) {
		t.Errorf("%d provider calls; worker log holds the key: %v", len(echo.Requests()), strings.Contains(ew.stderr.String(), key))
	}
}
