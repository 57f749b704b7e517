package cli_test

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
)

// SIGINT ends the real process with a search that never answers in flight, within a bound far below the
// provider's own timeouts, and the run stays resumable.
func TestSIGINTEndsARunWithAHangingSearch(t *testing.T) {
	bin := researchtest.BuildBinary(t)
	env, config := procEnv(t)
	stop := make(chan struct{})
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	defer searx.Close()
	defer close(stop)
	docs := t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "bees.md"), []byte("# Bees\n\nHoney bees dance to tell the hive where flowers are.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "run", "--config", config, "--web", "searxng", "--corpus", docs, "--out", out, "How do honey bees find flowers?")
	cmd.Env = append(env, "SEARXNG_URL="+searx.URL)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var all bytes.Buffer
	var sent time.Time
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(60 * time.Second)
	for open := true; open; {
		select {
		case line, ok := <-lines:
			if !ok {
				open = false
				break
			}
			all.WriteString(line + "\n")
			if sent.IsZero() && strings.Contains(line, "scope  started") {
				time.Sleep(500 * time.Millisecond) // the planner is probing the hanging provider
				if err := cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
				sent = time.Now()
			}
		case <-timeout:
			t.Fatalf("the process did not end (SIGINT sent: %v):\n%s", !sent.IsZero(), all.String())
		}
	}
	err = cmd.Wait()
	if sent.IsZero() {
		t.Fatalf("the run never started its scope stage:\n%s", all.String())
	}
	t.Logf("exited %s after SIGINT", time.Since(sent).Round(time.Millisecond))
	if took := time.Since(sent); took > 20*time.Second {
		t.Errorf("SIGINT took %s to end the run", took)
	}
	if err == nil {
		t.Errorf("an interrupted run exited 0:\n%s", all.String())
	}
}
