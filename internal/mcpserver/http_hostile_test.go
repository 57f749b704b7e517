package mcpserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
)

// Malformed frames over Streamable HTTP get a 4xx answer each (a batch may be answered), never a crash or a 5xx, and the server goes on
// serving: a proper initialize afterwards succeeds.
func TestHTTPSurvivesMalformedFrames(t *testing.T) {
	s, err := New(Config{RunsDir: t.TempDir(), Start: func(context.Context, RunRequest) (*research.Report, error) {
		return nil, errors.New("not used")
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.HTTPHandler(HTTPConfig{}))
	defer ts.Close()
	post := func(body string) (int, string) {
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("the server is gone: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, string(b)
	}
	for _, frame := range []string{
		"not json", "{}", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"1.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}`, `{"jsonrpc":"2.0","id":1,"method":5}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`,
		`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"pad":"` + strings.Repeat("x", 20<<20) + `"}}`,
	} {
		code, body := post(frame)
		batch := strings.HasPrefix(frame, "[") // answered as a batch by protocol versions that have them
		if code >= 500 || !batch && code < 400 {
			t.Errorf("frame %.40q: %d %.200s, want a 4xx refusal", frame, code, body)
		}
	}
	code, body := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if code != http.StatusOK || !strings.Contains(body, "deepresearch") {
		t.Fatalf("initialize after the bad frames: %d %s", code, body)
	}
}
