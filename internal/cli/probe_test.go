package cli_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// probe is the container image's health check: 2xx passes, anything else (an error status, a redirect, a server
// that does not answer in time, nothing listening) fails with exit 1 and says why; the viewer's token is sent as
// a bearer token; URLs off this host are refused before anything is sent.
func TestProbe(t *testing.T) {
	var hits atomic.Int32
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/readyz":
			w.Write([]byte("ok\n"))
		case "/starting":
			http.Error(w, "not ready: Temporal unreachable", http.StatusServiceUnavailable)
		case "/moved":
			http.Redirect(w, r, "/readyz", http.StatusFound)
		case "/token":
			if r.Header.Get("Authorization") != "Bearer s3cret-token" {
				http.Error(w, "access token required", http.StatusUnauthorized)
				return
			}
			w.Write([]byte("body"))
		case "/hang":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := closed.Addr().String()
	closed.Close()

	cfg := emptyConfig(t)
	cases := []struct {
		name      string
		env       map[string]string
		args      []string
		code      int
		want      string // in stdout (exit 0) or stderr
		noTraffic bool
	}{
		{"ready", nil, []string{srv.URL + "/readyz"}, 0, "200 OK", false},
		{"not ready", nil, []string{srv.URL + "/starting"}, 1, "503 Service Unavailable: not ready: Temporal unreachable", false},
		{"redirect is not health", nil, []string{srv.URL + "/moved"}, 1, "302 Found", false},
		{"token sent", map[string]string{"DEEPRESEARCH_TOKEN": "s3cret-token"}, []string{srv.URL + "/token"}, 0, "200 OK", false},
		{"token missing", nil, []string{srv.URL + "/token"}, 1, "401 Unauthorized", false},
		{"slow server", nil, []string{"--timeout", "300ms", srv.URL + "/hang"}, 1, "Timeout", false},
		{"nothing listening", nil, []string{"http://" + deadAddr + "/readyz"}, 1, "connection refused", true},
		{"another host", nil, []string{"http://10.1.2.3:9090/readyz"}, 2, "only loopback addresses", true},
		{"a name", nil, []string{"http://worker:9090/readyz"}, 2, "only loopback addresses", true},
		{"https", nil, []string{"https://127.0.0.1:9090/readyz"}, 2, "want an http:// URL", true},
		{"credentials", nil, []string{"http://u:p@127.0.0.1:9090/readyz"}, 2, "credentials in the URL", true},
		{"bad timeout", nil, []string{"--timeout", "0s", srv.URL + "/readyz"}, 2, "must be positive", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := hits.Load()
			start := time.Now()
			code, stdout, stderr := runCLI(t, c.env, append([]string{"--config", cfg, "probe"}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, stdout, stderr)
			}
			out := stderr
			if c.code == 0 {
				out = stdout
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("output %q does not say %q", out, c.want)
			}
			if strings.Contains(stdout+stderr, "s3cret-token") {
				t.Errorf("the token was printed: %s%s", stdout, stderr)
			}
			if c.noTraffic && hits.Load() != before {
				t.Errorf("a refused probe reached the server")
			}
			if time.Since(start) > 30*time.Second {
				t.Errorf("probe took %s", time.Since(start))
			}
		})
	}
}
