package cli_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/cli"
	"github.com/deepresearch/deepresearch/internal/pgtest"
)

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// silentServer accepts connections and never answers: a Temporal frontend that hangs.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// The viewer and the MCP server connect to their Temporal cluster and shared state when they start. One that
// cannot be reached is an error at once that names it — never a server that hangs on its first run or lists
// nothing — and a password in the state's URL is never printed.
func TestSurfacesRefuseUnreachableBackends(t *testing.T) {
	pg := pgtest.New(t)
	dead := closedPort(t)
	silent := silentServer(t)
	deadPG := "postgres://research:hunter2secret@" + closedPort(t) + "/research?sslmode=disable&password=hunter2secret&sslpassword=hunter2secret"
	withTemporal := filepath.Join(t.TempDir(), "deepresearch.yaml")
	if err := os.WriteFile(withTemporal, []byte("temporal:\n  host_port: "+dead+"\nstate: "+pg.URL+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := t.TempDir()
	surfaces := map[string][]string{
		"serve":    {"serve", "--addr", "127.0.0.1:0", "--runs", runs},
		"mcp http": {"mcp", "--http", "127.0.0.1:0", "--runs", runs},
		"mcp":      {"mcp", "--runs", runs},
	}
	cases := []struct {
		name   string
		config string
		args   []string
		want   []string
	}{
		{"PostgreSQL down", emptyConfig(t), []string{"--state", deadPG}, []string{"shared state", "cannot be read"}},
		{"not a PostgreSQL URL", emptyConfig(t), []string{"--state", filepath.Join(runs, "state.db")}, []string{"not a postgres:// URL"}},
		{"Temporal refuses connections", emptyConfig(t), []string{"--temporal", dead, "--state", pg.URL}, []string{"connect to Temporal at " + dead}},
		{"Temporal never answers", emptyConfig(t), []string{"--temporal", silent, "--state", pg.URL}, []string{"connect to Temporal at " + silent}},
		{"Temporal from the configuration", withTemporal, nil, []string{"connect to Temporal at " + dead}},
		{"Temporal without a shared state", emptyConfig(t), []string{"--temporal", dead}, []string{"--temporal needs the shared state"}},
	}
	for surface, base := range surfaces {
		for _, tc := range cases {
			t.Run(surface+"/"+tc.name, func(t *testing.T) {
				// A surface that does not refuse serves until the context ends and exits 0: the test fails, it
				// does not hang.
				ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
				defer cancel()
				var out, errb bytes.Buffer
				args := append(append([]string{"--config", tc.config}, base...), tc.args...)
				code := cli.Main(ctx, args, strings.NewReader(""), &out, &errb, fakeEnv(nil))
				if code == 0 {
					t.Fatalf("exit 0; stdout %q stderr %q", out.String(), errb.String())
				}
				for _, w := range tc.want {
					if !strings.Contains(errb.String(), w) {
						t.Errorf("stderr %q does not say %q", errb.String(), w)
					}
				}
				if strings.Contains(errb.String()+out.String(), "hunter2secret") {
					t.Errorf("the state's password was printed: %s", errb.String())
				}
				if strings.Contains(out.String(), "serving on") {
					t.Errorf("the surface started serving: %s", out.String())
				}
			})
		}
	}
}

// A worker refuses to start against a cluster or a database it cannot reach, naming it; and a shared state from
// the environment that is down does not keep runs from listing the local runs.
func TestWorkerAndRunsWithUnreachableBackends(t *testing.T) {
	pg := pgtest.New(t)
	dead := closedPort(t)
	deadPG := "postgres://research:hunter2secret@" + closedPort(t) + "/research?sslmode=disable&password=hunter2secret&sslpassword=hunter2secret"
	run := func(env map[string]string, args ...string) (int, string, string) {
		ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
		defer cancel()
		var out, errb bytes.Buffer
		code := cli.Main(ctx, append([]string{"--config", emptyConfig(t)}, args...), strings.NewReader(""), &out, &errb, fakeEnv(env))
		return code, out.String(), errb.String()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"worker", "--temporal", dead, "--state", deadPG}, "cannot be read"},
		{[]string{"worker", "--temporal", dead, "--state", pg.URL}, "connect to Temporal at " + dead},
		{[]string{"runs", "--state", deadPG}, "cannot"},
	} {
		code, _, stderr := run(nil, tc.args...)
		if code == 0 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "hunter2secret") {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
	runs := t.TempDir()
	code, stdout, stderr := run(map[string]string{"DEEPRESEARCH_STATE": deadPG}, "runs", "--dir", runs)
	if code != 0 || !strings.Contains(stderr, "listing local runs only") || !strings.Contains(stdout, "no runs in") {
		t.Errorf("runs with a dead state from the environment: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

// bench scale measures the user's own cluster: without one, or with one that cannot be reached, it says so before
// starting any process.
func TestBenchScaleRefusesWithoutACluster(t *testing.T) {
	dead := closedPort(t)
	deadPG := "postgres://research@" + closedPort(t) + "/research?sslmode=disable"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--state", deadPG}, "needs a Temporal cluster"},
		{[]string{"--temporal", dead}, "needs the shared state"},
		{[]string{"--temporal", dead, "--state", deadPG}, "cannot be read"},
		{[]string{"--temporal", dead, "--state", deadPG, "--format", "xml"}, "--format must be text or json"},
	}
	for _, tc := range cases {
		ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
		var out, errb bytes.Buffer
		code := cli.Main(ctx, append([]string{"--config", emptyConfig(t), "bench", "scale"}, tc.args...), strings.NewReader(""), &out, &errb, fakeEnv(nil))
		cancel()
		if code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("bench scale %v: exit %d, stderr %q, want %q", tc.args, code, errb.String(), tc.want)
		}
	}
}
