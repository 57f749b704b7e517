package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/base/syncio"
	"github.com/deepresearch/deepresearch/internal/cli"
	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/internal/temporaltest"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// Durable runs on a real Temporal server and worker, as the operator runs them. A run naming a corpus folder its
// worker cannot read fails at once, not retried and never left running: the submitter, `runs --state` and the
// shared state the viewer lists say "worker cannot read corpus DIR: …". A run's request carries its limits: those
// its flags leave unset are the submitter's configured ones.
func TestDurableRunWhoseWorkerLacksItsCorpusFails(t *testing.T) {
	pg := pgtest.New(t)
	hostPort, namespace := temporaltest.New(t)
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"), "XDG_CACHE_HOME": filepath.Join(home, "cache")}
	cfg := emptyConfig(t)
	temporal := []string{"--config", cfg, "--temporal", hostPort, "--namespace", namespace, "--state", pg.URL, "--task-queue", "unmet"}

	wctx, stopWorker := context.WithCancel(t.Context())
	var wout, werr syncio.Buffer
	workerDone := make(chan int, 1)
	go func() {
		workerDone <- cli.Main(wctx, append([]string{"worker", "--dir", filepath.Join(t.TempDir(), "worker")}, temporal...),
			strings.NewReader(""), &wout, &werr, fakeEnv(env))
	}()
	defer func() {
		stopWorker()
		<-workerDone
	}()

	// The submitter's folder exists; the worker is told to read one that does not exist on its machine.
	missing := filepath.Join(t.TempDir(), "only-on-the-submitter")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	start := time.Now()
	code := cli.Main(ctx, append([]string{"run", "--engine", "extractive", "--corpus", missing, "--out", filepath.Join(t.TempDir(), "out"),
		"How does a worker resume a durable run?"}, temporal...), strings.NewReader(""), &out, &errb, fakeEnv(env))
	want := "worker cannot read corpus " + missing + ": "
	if code == 0 || !strings.Contains(errb.String(), want) {
		t.Fatalf("run: exit %d, stderr:\n%s\nwant an error with %q\nworker:\n%s", code, errb.String(), want, werr.String())
	}
	if strings.Contains(errb.String(), "retryable") || strings.Contains(errb.String(), "workflowID") {
		t.Errorf("the submitter's error carries the engine's wrapping:\n%s", errb.String())
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("the run took %s to fail: the step was retried", took)
	}
	if n := strings.Count(werr.String(), "worker cannot read corpus"); n != 1 {
		t.Errorf("the worker logged the failure %d times, want once (not retried):\n%s", n, werr.String())
	}

	runs, err := research.ListSharedRuns(t.Context(), pg.URL)
	if err != nil || len(runs) != 1 {
		t.Fatalf("shared runs: %+v %v", runs, err)
	}
	if r := runs[0]; r.Status != research.RunFailed || !strings.Contains(r.Error, want) || r.Question == "" {
		t.Errorf("the shared state lists %+v; want it failed with %q and its question", r, want)
	}
	var lout, lerr bytes.Buffer
	if code := cli.Main(t.Context(), []string{"runs", "--config", cfg, "--state", pg.URL}, strings.NewReader(""), &lout, &lerr, fakeEnv(env)); code != 0 ||
		!strings.Contains(lout.String(), runs[0].ID+" failed: "+want) {
		t.Errorf("runs --state: exit %d\n%s%s", code, lout.String(), lerr.String())
	}

	// A run the worker can serve, submitted under a configuration with research limits and --max-time given.
	docs := t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "resume.md"), []byte("# Resuming\n\nA worker resumes a durable run from the step keys the last attempt left in the shared state.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	limited := filepath.Join(t.TempDir(), "deepresearch.yaml")
	if err := os.WriteFile(limited, []byte("research:\n  max_cost_usd: 0.75\n  max_calls: 77\n  max_time: 1h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", "--engine", "extractive", "--corpus", docs, "--max-time", "30m", "--out", filepath.Join(t.TempDir(), "out2"),
		"How does a worker resume a durable run?", "--config", limited}, temporal[2:]...) // temporal[:2] is the empty --config
	out.Reset()
	errb.Reset()
	if code := cli.Main(ctx, args, strings.NewReader(""), &out, &errb, fakeEnv(env)); code != 0 {
		t.Fatalf("run: exit %d\n%s\nworker:\n%s", code, errb.String(), werr.String())
	}
	runs, err = research.ListSharedRuns(t.Context(), pg.URL)
	if err != nil || len(runs) != 2 || runs[1].Status != research.RunDone {
		t.Fatalf("shared runs: %+v %v", runs, err)
	}
	ro, err := state.OpenRunReadOnly(t.Context(), pg.URL, runs[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	v, _, _ := ro.Meta(t.Context(), "given")
	var given struct {
		Budget research.Budget `json:"budget"`
	}
	if err := json.Unmarshal([]byte(v), &given); err != nil {
		t.Fatal(err)
	}
	if b := given.Budget; b.MaxCostUSD != 0.75 || b.MaxCalls != 77 || b.MaxTime != 30*time.Minute {
		t.Errorf("the run's stored limits %+v; want the submitter's cost and call limits, and --max-time over its configured one", b)
	}
}
