package cli_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// writePEM writes one PEM block to a file of dir and returns its path.
func writePEM(t *testing.T, dir, name, kind string, der []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The temporal section's TLS settings reach the cluster as configured: the server's certificate is checked
// against tls_ca, the client presents tls_cert (mTLS), and the key from api_key_env goes as a bearer token —
// observed by a TLS server that requires a client certificate. A certificate without its key is refused before
// any connection, and so is an API key variable that is not set.
func TestTemporalTLSAndAPIKey(t *testing.T) {
	var mu sync.Mutex
	var peers int
	var auth []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		peers += len(r.TLS.PeerCertificates)
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
	}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	ca := writePEM(t, dir, "ca.pem", "CERTIFICATE", srv.Certificate().Raw)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "worker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := writePEM(t, dir, "client.pem", "CERTIFICATE", der)
	kder, _ := x509.MarshalECPrivateKey(key)
	keyFile := writePEM(t, dir, "client.key", "EC PRIVATE KEY", kder)
	hostPort := strings.TrimPrefix(srv.URL, "https://")
	conf := func(extra string) string {
		p := filepath.Join(t.TempDir(), "deepresearch.yaml")
		body := "temporal:\n  host_port: " + hostPort + "\n  tls_ca: " + ca + "\n" + extra
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const apiKey = "temporal-cloud-key-0123456789"
	code, _, stderr := runCLI(t, map[string]string{"TEMPORAL_KEY": apiKey}, "--config",
		conf("  tls_cert: "+cert+"\n  tls_key: "+keyFile+"\n  api_key_env: TEMPORAL_KEY\n"), "runs", "cancel", "some-run")
	mu.Lock()
	gotPeers, gotAuth := peers, append([]string(nil), auth...)
	mu.Unlock()
	// The server answers no gRPC: the command fails, having reached it.
	if code == 0 || !strings.Contains(stderr, "404") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if len(gotAuth) == 0 || gotPeers == 0 {
		t.Fatalf("the server saw %d requests with %d client certificates: the TLS connection was not made (%s)", len(gotAuth), gotPeers, stderr)
	}
	if gotAuth[0] != "Bearer "+apiKey {
		t.Errorf("authorization sent: %q", gotAuth[0])
	}
	if strings.Contains(stderr, apiKey) {
		t.Errorf("the API key was printed: %s", stderr)
	}
	for _, tc := range []struct{ extra, want string }{
		{"  tls_cert: " + cert + "\n", "tls_cert and tls_key go together"},
		{"  api_key_env: TEMPORAL_UNSET_KEY\n", "$TEMPORAL_UNSET_KEY is not set"},
		{"  tls_ca: " + keyFile + "\n", "no PEM certificate"},
	} {
		cfg := conf("")
		if tc.extra != "" {
			b, _ := os.ReadFile(cfg)
			body := strings.Replace(string(b), "  tls_ca: "+ca+"\n", "", 1)
			if !strings.HasPrefix(tc.extra, "  tls_ca:") {
				body += "  tls_ca: " + ca + "\n"
			}
			_ = os.WriteFile(cfg, []byte(body+tc.extra), 0o644)
		}
		if code, _, stderr := runCLI(t, nil, "--config", cfg, "runs", "cancel", "some-run"); code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, %s; want %q", tc.extra, code, stderr, tc.want)
		}
	}
}
