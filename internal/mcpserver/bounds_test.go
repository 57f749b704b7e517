package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/research"
)

const rawInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// rawPost sends one JSON-RPC message, in session sid when set, and returns the status, the session id the server
// named and the body.
func rawPost(t *testing.T, url, sid, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

func idleServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	cfg.RunsDir = t.TempDir()
	if cfg.Start == nil {
		cfg.Start = func(context.Context, RunRequest) (*research.Report, error) { return nil, errors.New("not used") }
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rpcError decodes a JSON-RPC error body.
func rpcError(t *testing.T, body string) (int, string) {
	t.Helper()
	var m struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not a JSON-RPC error: %q (%v)", body, err)
	}
	return m.Error.Code, m.Error.Message
}

// 60,000 initialize requests used to keep 60,000 sessions (0.8 GB) for 30 minutes. With DefaultMaxSessions open
// (and none idle long enough to give way), the next initialize is refused with HTTP 429 and a JSON-RPC -32000
// error saying why; closing a session makes room.
func TestHTTPSessionsAreBounded(t *testing.T) {
	s := idleServer(t, Config{})
	ts := httptest.NewServer(s.HTTPHandler(HTTPConfig{}))
	defer ts.Close()
	var sids []string
	for i := 0; i < DefaultMaxSessions; i++ {
		code, sid, body := rawPost(t, ts.URL, "", rawInitialize)
		if code != http.StatusOK || sid == "" {
			t.Fatalf("session %d: %d %q %s", i+1, code, sid, body)
		}
		sids = append(sids, sid)
	}
	code, sid, body := rawPost(t, ts.URL, "", rawInitialize)
	if code != http.StatusTooManyRequests || sid != "" {
		t.Fatalf("session %d: %d %q, want 429 and no session", DefaultMaxSessions+1, code, sid)
	}
	if c, msg := rpcError(t, body); c != codeServerBusy || !strings.Contains(msg, fmt.Sprintf("at most %d", DefaultMaxSessions)) {
		t.Errorf("refusal: %d %q, want -32000 naming the bound", c, msg)
	}
	// The sessions that exist go on working.
	if code, _, body := rawPost(t, ts.URL, sids[0], `{"jsonrpc":"2.0","id":2,"method":"ping"}`); code != http.StatusOK {
		t.Errorf("ping in an open session: %d %s", code, body)
	}
	req, _ := http.NewRequest("DELETE", ts.URL, nil)
	req.Header.Set("Mcp-Session-Id", sids[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code, sid, body := rawPost(t, ts.URL, "", rawInitialize); code != http.StatusOK || sid == "" {
		t.Errorf("after a session closed: %d %s", code, body)
	}
}

// At the bound, a session that has gone unused for IdleEvict gives way to a new one (the one unused longest); one
// with a request in progress does not, and an evicted session is told so (404, -32001).
func TestIdleSessionGivesWay(t *testing.T) {
	s := idleServer(t, Config{})
	ts := httptest.NewServer(s.HTTPHandler(HTTPConfig{MaxSessions: 2, IdleEvict: 200 * time.Millisecond}))
	defer ts.Close()
	_, old, _ := rawPost(t, ts.URL, "", rawInitialize)
	_, busy, _ := rawPost(t, ts.URL, "", rawInitialize)
	if old == "" || busy == "" {
		t.Fatal("no sessions")
	}
	// The second session holds its standalone stream open: it is in use, however long it has been quiet.
	req, _ := http.NewRequest("GET", ts.URL, nil)
	req.Header.Set("Mcp-Session-Id", busy)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("standalone stream: %d", stream.StatusCode)
	}
	if code, _, _ := rawPost(t, ts.URL, "", rawInitialize); code != http.StatusTooManyRequests {
		t.Fatalf("before any session is idle: %d, want 429", code)
	}
	time.Sleep(400 * time.Millisecond)
	code, fresh, body := rawPost(t, ts.URL, "", rawInitialize)
	if code != http.StatusOK || fresh == "" {
		t.Fatalf("with an idle session to give way: %d %s", code, body)
	}
	if code, _, body := rawPost(t, ts.URL, old, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); code != http.StatusNotFound {
		t.Errorf("the evicted session: %d %s, want 404", code, body)
	} else if c, _ := rpcError(t, body); c != codeSessionNotFound {
		t.Errorf("the evicted session's error code %d", c)
	}
	if code, _, body := rawPost(t, ts.URL, busy, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); code != http.StatusOK {
		t.Errorf("the session in use was evicted: %d %s", code, body)
	}
}

// Every deep_research call is a run with its files, model calls and searches: past MaxRuns at once a call is
// refused with JSON-RPC -32000 saying why, over any transport, and a run that ends makes room.
func TestConcurrentRunsAreBounded(t *testing.T) {
	started, quit := make(chan struct{}, 8), make(chan struct{})
	s := idleServer(t, Config{MaxRuns: 2, Defaults: Sources{Web: "searxng"}, Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
		case <-quit: // the test is over: closing the session waits for its calls
		}
		return nil, errors.New("stopped")
	}})
	ts := httptest.NewServer(s.HTTPHandler(HTTPConfig{}))
	defer ts.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "bounds", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	defer close(quit)
	call := func(ctx context.Context) error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "deep_research", Arguments: map[string]any{"question": "Why?"}})
		return err
	}
	ctx1, stop1 := context.WithCancel(t.Context())
	ctx2, stop2 := context.WithCancel(t.Context())
	defer stop2()
	done1 := make(chan error, 1)
	go func() { done1 <- call(ctx1) }()
	go func() { _ = call(ctx2) }()
	<-started
	<-started
	err = call(t.Context())
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != codeServerBusy || !strings.Contains(we.Message, "at most 2 at once") {
		t.Fatalf("third concurrent call: %v, want -32000 naming the bound", err)
	}
	stop1()
	<-done1
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx3, stop3 := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { errc <- call(ctx3) }()
		select {
		case <-started:
			stop3()
			<-errc
			return
		case err := <-errc:
			stop3()
			if !errors.As(err, &we) || time.Now().After(deadline) {
				t.Fatalf("after a run ended: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// Any local process can call `mcp --http`: with roots set (the command line sets them for HTTP), a corpus
// outside them — /etc, /proc/self, a link out of a root — is refused before a run starts, with a message naming
// the roots; a folder below a root runs with its link-free path.
func TestCorpusOutsideRootsIsRefused(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "notes")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "etc-link")); err != nil {
		t.Fatal(err)
	}
	got := make(chan []string, 4)
	s := idleServer(t, Config{Roots: []string{root}, Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
		got <- req.Sources.Corpus
		return nil, errors.New("done")
	}})
	ts := httptest.NewServer(s.HTTPHandler(HTTPConfig{}))
	defer ts.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "roots", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, bad := range []string{"/etc", "/proc/self", filepath.Join(root, "etc-link")} {
		res := callResearch(t, cs, map[string]any{"question": "What is in there?", "sources": map[string]any{"corpus": []string{sub, bad}}}, nil)
		if !res.IsError || !strings.Contains(text(res), "outside the folders this server may read") || !strings.Contains(text(res), root) {
			t.Errorf("corpus %s: %q, want a refusal naming the roots", bad, text(res))
		}
	}
	if len(got) != 0 {
		t.Fatalf("a refused corpus started a run: %q", <-got)
	}
	callResearch(t, cs, map[string]any{"question": "What is in there?", "sources": map[string]any{"corpus": []string{sub + "/."}}}, nil)
	if c := <-got; len(c) != 1 || c[0] != sub {
		t.Errorf("the run got corpora %q, want [%s]", c, sub)
	}
}

// The tool's schema states the one rounds limit, and a call past it is refused before a run.
func TestRoundsLimitIsTheResearchOne(t *testing.T) {
	sc := inputSchema()
	r := sc.Properties["budget"].Properties["rounds"]
	if r.Maximum == nil || *r.Maximum != research.MaxRounds || !strings.Contains(r.Description, fmt.Sprint(research.MaxRounds)) {
		t.Errorf("rounds schema: max %v, %q", r.Maximum, r.Description)
	}
	s := idleServer(t, Config{Defaults: Sources{Web: "searxng"}})
	cs := connectInMemory(t, s, &recorder{})
	res := callResearch(t, cs, map[string]any{"question": "Why?", "budget": map[string]any{"rounds": research.MaxRounds + 1}}, nil)
	if !res.IsError || !strings.Contains(text(res), "rounds") {
		t.Errorf("rounds %d: %q", research.MaxRounds+1, text(res))
	}
}
