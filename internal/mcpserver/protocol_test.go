package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/base/syncio"
	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/research"
)

type httpReply struct {
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// post sends one raw JSON-RPC body and decodes the answer, plain JSON or one SSE event.
func post(t *testing.T, url, session, body string) (int, string, httpReply) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	payload := data
	if i := bytes.Index(data, []byte("data: ")); i >= 0 {
		payload = data[i+len("data: "):]
		if j := bytes.IndexByte(payload, '\n'); j >= 0 {
			payload = payload[:j]
		}
	}
	var r httpReply
	_ = json.Unmarshal(payload, &r)
	if session == "" && strings.Contains(body, `"initialize"`) {
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), r
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), r
}

func newTestServer(t *testing.T, log *slog.Logger) *Server {
	t.Helper()
	s, err := New(Config{RunsDir: t.TempDir(), Log: log, WebProviders: []string{"brave", "exa", "searxng", "tavily"},
		Start: func(context.Context, RunRequest) (*research.Report, error) { return nil, errors.New("no engine here") }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// legacyProtocol is the session-based protocol version the TypeScript SDK and most clients speak; with it the
// server pushes list_changed and resources/updated to every interested session.
const legacyProtocol = "2025-11-25"

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestHTTPRefusalsAreJSONRPC: every refusal of the HTTP transport is a JSON-RPC error with a real code and the
// HTTP status the transport specification gives it.
func TestHTTPRefusalsAreJSONRPC(t *testing.T) {
	ts := httptest.NewServer(newTestServer(t, nil).HTTPHandler(HTTPConfig{}))
	defer ts.Close()
	status, session, r := post(t, ts.URL, "", initBody)
	if status != http.StatusOK || session == "" || r.Error != nil {
		t.Fatalf("initialize: %d, session %q, %+v", status, session, r.Error)
	}
	post(t, ts.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	tests := []struct {
		name, session, body string
		status, code        int
	}{
		{"no session", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, http.StatusBadRequest, -32600},
		{"unknown method", session, `{"jsonrpc":"2.0","id":3,"method":"tools/destroy"}`, http.StatusOK, -32601},
		{"unknown session", "not-a-session", `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, http.StatusNotFound, -32001},
		{"not JSON", session, `{"jsonrpc":"2.0","id":5,"method":`, http.StatusBadRequest, -32700},
		{"unknown resource", session, `{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"deepresearch://runs/nope/report.md"}}`, http.StatusOK, -32002},
		{"resource of no template", session, `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"file:///etc/passwd"}}`, http.StatusOK, -32002},
		{"bad log level", session, `{"jsonrpc":"2.0","id":8,"method":"logging/setLevel","params":{"level":"verbose"}}`, http.StatusOK, -32602},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, ctype, r := post(t, ts.URL, tt.session, tt.body)
			if status != tt.status || r.Error == nil || r.Error.Code != tt.code {
				t.Fatalf("HTTP %d %s %+v, want HTTP %d with JSON-RPC error %d", status, ctype, r.Error, tt.status, tt.code)
			}
			if strings.HasPrefix(ctype, "text/plain") {
				t.Errorf("content type %s", ctype)
			}
		})
	}
	if status, _, r := post(t, ts.URL, session, `{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"warning"}}`); status != http.StatusOK || r.Error != nil {
		t.Errorf("a valid log level: %d %+v", status, r.Error)
	}
}

// TestIdleSessionsExpireQuietly: a client that goes away without a goodbye loses its session after the idle
// timeout, and announcing a new report to the sessions that remain warns about no one.
func TestIdleSessionsExpireQuietly(t *testing.T) {
	var logs syncio.Buffer
	s := newTestServer(t, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	ts := httptest.NewServer(s.HTTPHandler(HTTPConfig{SessionTimeout: 2 * time.Second}))
	defer ts.Close()

	// Abandoned clients: they initialise, then vanish (no DELETE).
	var sessions []string
	for range 3 {
		_, session, _ := post(t, ts.URL, "", initBody)
		post(t, ts.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		sessions = append(sessions, session)
	}
	// One well-behaved client stays connected, keeps using its session and receives list_changed.
	changed := make(chan struct{}, 10)
	c := mcp.NewClient(&mcp.Implementation{Name: "live", Version: "1"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, &mcp.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	stopPing := make(chan struct{})
	pinged := make(chan struct{})
	go func() {
		defer close(pinged)
		for {
			select {
			case <-stopPing:
				return
			case <-time.After(100 * time.Millisecond):
				_ = cs.Ping(t.Context(), nil)
			}
		}
	}()
	defer func() { close(stopPing); <-pinged }()

	// Wait (without touching them, which would keep them alive) until the abandoned sessions are closed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		gone := 0
		for _, session := range sessions {
			if strings.Contains(logs.String(), `msg="server session disconnected" session_id=`+session) {
				gone++
			}
		}
		if gone == len(sessions) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("abandoned sessions still open long after their idle timeout:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, session := range sessions {
		if status, _, r := post(t, ts.URL, session, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); status != http.StatusNotFound || r.Error == nil || r.Error.Code != -32001 {
			t.Errorf("expired session answers HTTP %d %+v, want 404 with -32001", status, r.Error)
		}
	}
	for i := range 3 {
		s.publish("run-"+string(rune('a'+i)), "question")
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatalf("the live client was not told the resource list changed:\n%s", logs.String())
	}
	if err := cs.Ping(t.Context(), nil); err != nil {
		t.Errorf("the live session expired: %v", err)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("warnings about gone clients:\n%s", logs.String())
	}
}

func TestCompletionAndPrompt(t *testing.T) {
	s := newTestServer(t, nil)
	cs := connectInMemory(t, s, &recorder{})
	if caps := cs.InitializeResult().Capabilities; caps.Completions == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil {
		t.Fatalf("capabilities %+v", caps)
	}
	complete := func(ref *mcp.CompleteReference, arg, value string) []string {
		t.Helper()
		res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
		if err != nil {
			t.Fatalf("complete %s=%q: %v", arg, value, err)
		}
		return res.Completion.Values
	}
	prompt := &mcp.CompleteReference{Type: "ref/prompt", Name: "deep_research"}
	if got := complete(prompt, "web", "TA"); !slices.Equal(got, []string{"tavily"}) {
		t.Errorf("web completion of TA = %v", got)
	}
	if got := complete(prompt, "web", ""); len(got) != 4 {
		t.Errorf("web completion of nothing = %v", got)
	}
	if got := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "someone_elses"}, "x", "a"); got == nil || len(got) != 0 {
		t.Errorf("completion of an unknown prompt = %#v, want an empty list", got)
	}
	// Run ids of finished runs complete the report templates.
	for _, id := range []string{"20260101-101010-aaaaaa", "20260202-101010-bbbbbb"} {
		writeFinishedRun(t, s.cfg.RunsDir, id)
	}
	tmpl := &mcp.CompleteReference{Type: "ref/resource", URI: uriPrefix + "{id}" + reportMDSuffix}
	if got := complete(tmpl, "id", "2026"); !slices.Equal(got, []string{"20260202-101010-bbbbbb", "20260101-101010-aaaaaa"}) {
		t.Errorf("id completion = %v, want newest first", got)
	}
	if got := complete(tmpl, "id", "2026010"); !slices.Equal(got, []string{"20260101-101010-aaaaaa"}) {
		t.Errorf("id completion of a prefix = %v", got)
	}

	pl, err := cs.ListPrompts(t.Context(), nil)
	if err != nil || len(pl.Prompts) != 1 || pl.Prompts[0].Name != "deep_research" || pl.Prompts[0].Description == "" {
		t.Fatalf("prompts %+v, %v", pl, err)
	}
	gp, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "deep_research", Arguments: map[string]string{"question": "Why is the sky blue?", "web": "tavily"}})
	if err != nil {
		t.Fatal(err)
	}
	msg := gp.Messages[0].Content.(*mcp.TextContent).Text
	for _, want := range []string{"deep_research", `"Why is the sky blue?"`, `sources.web "tavily"`, "[n]"} {
		if !strings.Contains(msg, want) {
			t.Errorf("prompt text lacks %s: %s", want, msg)
		}
	}
	_, err = cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "deep_research", Arguments: map[string]string{}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, "question") {
		t.Errorf("prompt without a question: %v", err)
	}
}

// writeFinishedRun stores a minimal finished run the way research writes one.
func writeFinishedRun(t *testing.T, runs, id string) {
	t.Helper()
	eng := researchtest.New(t, 0)
	if _, err := eng.Run(t.Context(), researchtest.Question, id, filepath.Join(runs, id), nil); err != nil {
		t.Fatal(err)
	}
}

// TestSubscribeToAReportBeforeItExists: a client subscribes to the report of the run it starts, and is told when
// the report is written.
func TestSubscribeToAReportBeforeItExists(t *testing.T) {
	eng := researchtest.New(t, 0)
	runs := t.TempDir()
	var runID string
	s, err := New(Config{RunsDir: runs, Defaults: Sources{Corpus: []string{eng.Dir}}, Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
		runID = req.RunID
		return eng.Run(ctx, req.Question, req.RunID, req.OutDir, req.OnEvent)
	}})
	if err != nil {
		t.Fatal(err)
	}
	updated := make(chan string, 10)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "sub", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	cs, err := c.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// A report that does not exist yet can be subscribed to.
	early := ReportURI("20991231-000000-abcdef")
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: early}); err != nil {
		t.Fatalf("subscribing to a report not yet written: %v", err)
	}
	res := callResearch(t, cs, map[string]any{"question": researchtest.Question}, nil)
	if res.IsError {
		t.Fatal(text(res))
	}
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: ReportURI(runID)}); err != nil {
		t.Fatal(err)
	}
	s.notifyReportUpdated(t.Context(), runID)
	select {
	case uri := <-updated:
		if uri != ReportURI(runID) {
			t.Errorf("updated %s, want %s", uri, ReportURI(runID))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no notifications/resources/updated for the subscribed report")
	}
	if err := cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: early}); err != nil {
		t.Error(err)
	}
}

// TestCancelledCallStopsTheRun: a client that cancels the call leaves a run marked stopped, resumable, with no
// flood of error events.
func TestCancelledCallStopsTheRun(t *testing.T) {
	eng := researchtest.New(t, 30*time.Millisecond)
	runs := t.TempDir()
	started := make(chan RunRequest, 1)
	finished := make(chan error, 1)
	s, err := New(Config{RunsDir: runs, Defaults: Sources{Corpus: []string{eng.Dir}}, Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
		started <- req
		rep, err := eng.Run(ctx, req.Question, req.RunID, req.OutDir, req.OnEvent)
		finished <- err
		return rep, err
	}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	cs := connectInMemory(t, s, rec)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		// Cancel once the run has produced some progress.
		for len(rec.list()) < 3 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	p := &mcp.CallToolParams{Name: "deep_research", Arguments: map[string]any{"question": researchtest.Question}}
	p.SetProgressToken("c")
	if _, err := cs.CallTool(ctx, p); err == nil {
		t.Fatal("a cancelled call returned a result")
	}
	req := <-started
	select {
	case err := <-finished:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("run ended with %v, want cancellation", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run went on after the call was cancelled")
	}
	info, err := research.LoadRunInfo(req.OutDir)
	if err != nil || info.Status != research.RunStopped {
		t.Fatalf("run after cancel: %+v, %v", info, err)
	}
	raw, err := os.ReadFile(filepath.Join(req.OutDir, research.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	data := string(raw)
	if n := strings.Count(data, `"kind":"error"`); n > 0 {
		t.Errorf("%d error events after a cancel", n)
	}
	if strings.Count(data, `"kind":"`+research.EventRunStopped+`"`) != 1 {
		t.Errorf("events.jsonl does not end with one run_stopped:\n%s", tail(data, 3))
	}
}

// Corpus indexing, before the run's first stage, is told as progress too: counted, and rising.
func TestIndexingProgress(t *testing.T) {
	p := &progress{}
	var last float64
	for i := 1; i <= 3; i++ {
		e := research.Event{Stage: research.StageIndex, Kind: research.EventIndexProgress, Count: i, Total: 3,
			Message: fmt.Sprintf("indexing /docs: %d/3 files", i)}
		at := p.advance(e)
		if at <= last || at >= 5 {
			t.Errorf("indexing event %d: progress %v after %v, want rising within the indexing span", i, at, last)
		}
		last = at
		if d := Describe(e); !strings.HasPrefix(d, fmt.Sprintf("indexing /docs: %d/3 files", i)) {
			t.Errorf("Describe = %q", d)
		}
	}
	if at := p.advance(research.Event{Stage: research.StageScope, Kind: research.EventStageStart}); at <= last {
		t.Errorf("scope after indexing: %v after %v", at, last)
	}
}
