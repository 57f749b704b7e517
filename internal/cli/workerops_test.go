package cli_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/cli"
)

// A worker's metrics address must be loopback unless allowed, and a malformed payload key is refused by every
// command that talks to Temporal — before it connects to anything, and without printing the key.
func TestWorkerOpsFlagsAndPayloadKeyRefused(t *testing.T) {
	dead := closedPort(t)
	state := "postgres://research@" + closedPort(t) + "/research?sslmode=disable"
	shortKey := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef-short-key"))
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"metrics on all interfaces", nil, []string{"worker", "--temporal", dead, "--state", state, "--metrics", ":9090"}, "not a loopback address; add --metrics-public"},
		{"metrics on a LAN address", nil, []string{"worker", "--temporal", dead, "--state", state, "--metrics", "192.168.1.10:9090"}, "--metrics-public"},
		{"metrics address malformed", nil, []string{"worker", "--temporal", dead, "--state", state, "--metrics", "9090"}, "--metrics \"9090\""},
		{"worker, short key", map[string]string{"DEEPRESEARCH_PAYLOAD_KEY": shortKey}, []string{"worker", "--temporal", dead, "--state", state}, "key 1 is 26 bytes; want 32"},
		{"run, malformed key", map[string]string{"DEEPRESEARCH_PAYLOAD_KEY": "@@not-base64@@"}, []string{"run", "--temporal", dead, "--state", state, "--corpus", t.TempDir(), "a question about kilns"}, "key 1 is not base64"},
		{"runs cancel, short key", map[string]string{"DEEPRESEARCH_PAYLOAD_KEY": shortKey}, []string{"runs", "cancel", "r1", "--temporal", dead}, "want 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			var out, errb bytes.Buffer
			code := cli.Main(ctx, append([]string{"--config", emptyConfig(t)}, tc.args...), strings.NewReader(""), &out, &errb, fakeEnv(tc.env))
			if code == 0 || !strings.Contains(errb.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want it to say %q", code, errb.String(), tc.want)
			}
			for _, v := range tc.env {
				if strings.Contains(errb.String()+out.String(), v) {
					t.Errorf("the key was printed: %s", errb.String())
				}
			}
			if strings.Contains(errb.String(), "connect to Temporal") || strings.Contains(errb.String(), "cannot be read") {
				t.Errorf("it connected before refusing: %s", errb.String())
			}
		})
	}
}
