package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hanging is a server that accepts every request and never answers until the test ends: a search provider or a
// model endpoint that hangs.
func hanging(t *testing.T) *httptest.Server {
	t.Helper()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	return srv
}

// runBounded runs the command line with ctx and fails the test unless it returns within bound — a correctness
// bound, generous for a loaded machine, far below what a hanging call costs without the fix (3 attempts of 30 s).
func runBounded(t *testing.T, ctx context.Context, bound time.Duration, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	type result struct {
		out, err string
		code     int
	}
	done := make(chan result, 1)
	go func() {
		var out, errw bytes.Buffer
		code := Main(ctx, args, strings.NewReader(""), &out, &errw, func(k string) string { return env[k] })
		done <- result{out.String(), errw.String(), code}
	}()
	select {
	case r := <-done:
		return r.out, r.err, r.code
	case <-time.After(bound):
		t.Fatalf("%q still running after %s", args, bound)
		return "", "", 0
	}
}

// --max-time ends a run whatever is in flight: a web search that never answers (the extractive planner probes
// the sources while it plans, the searchers search), a model that never answers.
func TestMaxTimeEndsHangingCalls(t *testing.T) {
	isolateHome(t)
	searx := hanging(t)
	model := hanging(t)
	docs := t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "bees.md"), []byte("# Bees\n\nHoney bees dance to tell the hive where flowers are.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"hanging search provider", map[string]string{"SEARXNG_URL": searx.URL},
			[]string{"run", "--web", "searxng", "--corpus", docs, "--max-time", "2s"}},
		{"hanging model", map[string]string{"OPENAI_API_KEY": "k"},
			[]string{"--config", writeConfig(t, ""), "run", "--provider", "openai", "--base-url", model.URL + "/v1", "--model", "fake-research", "--corpus", docs, "--max-time", "2s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			start := time.Now()
			_, stderr, _ := runBounded(t, t.Context(), 25*time.Second, tc.env, append(tc.args, "--out", out, "How do honey bees find flowers?")...)
			t.Logf("returned after %s", time.Since(start).Round(time.Millisecond))
			if !strings.Contains(stderr, "time limit of 2s") {
				t.Errorf("the run does not say the time limit ended it:\n%s", stderr)
			}
		})
	}
}

// Ctrl-C (the command's context cancelled) ends a run with a hanging search in flight, leaving it resumable.
func TestInterruptEndsHangingCalls(t *testing.T) {
	isolateHome(t)
	searx := hanging(t)
	docs := t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "bees.md"), []byte("# Bees\n\nHoney bees dance to tell the hive where flowers are.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(2*time.Second, cancel)
	out := filepath.Join(t.TempDir(), "run")
	_, stderr, code := runBounded(t, ctx, 25*time.Second, map[string]string{"SEARXNG_URL": searx.URL},
		"run", "--web", "searxng", "--corpus", docs, "--out", out, "How do honey bees find flowers?")
	if code == 0 {
		t.Fatalf("an interrupted run exited 0:\n%s", stderr)
	}
	if !strings.Contains(stderr, "resume") {
		t.Errorf("the interrupted run does not say how to continue:\n%s", stderr)
	}
}
