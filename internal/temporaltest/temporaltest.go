// Package temporaltest starts a real Temporal server for tests: go.temporal.io/server's in-process test server,
// built from internal/scaletest/cmd/temporal-dev (its own module, so the product does not take the server's
// dependencies) and run as a separate process on loopback ports it picks itself.
package temporaltest

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/base/syncio"
)

// New builds and starts the server and returns its frontend address and namespace; the test's cleanup stops it.
// The server picks its own free ports; one taken by another process between its choice and its bind makes it
// exit, and it is started again (three tries). It also exits when the test process dies (its standard input
// closes), so no server outlives its test.
func New(t testing.TB) (hostPort, namespace string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(t.TempDir(), "temporal-dev")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/temporal-dev")
	build.Dir = filepath.Join(filepath.Dir(file), "..", "scaletest")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build temporal-dev: %v\n%s", err, out)
	}
	var failures []string
	for range 3 {
		hp, ns, err := start(t, bin)
		if err == nil {
			return hp, ns
		}
		failures = append(failures, err.Error())
	}
	t.Fatalf("temporal-dev did not start:\n%s", strings.Join(failures, "\n---\n"))
	return "", ""
}

func start(t testing.TB, bin string) (hostPort, namespace string, _ error) {
	cmd := exec.Command(bin, "-stdin")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", "", err
	}
	var stderr syncio.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", "", err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = stdin.Close()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l, ok := <-lines:
		f := strings.Fields(l)
		if !ok || len(f) != 2 {
			stop()
			return "", "", fmt.Errorf("temporal-dev said %q\n%s", l, stderr.String())
		}
		t.Cleanup(stop)
		return f[0], f[1], nil
	case <-time.After(3 * time.Minute):
		stop()
		return "", "", fmt.Errorf("temporal-dev did not answer in 3 minutes\n%s", stderr.String())
	}
}
