package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/mcptools/mcptest"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/export"
)

// childEnv makes the test binary serve MCP over stdio instead of running tests, so the subprocess tests talk to
// a real process with a real engine behind it.
const childEnv = "DEEPRESEARCH_MCP_TEST_CHILD"

func TestMain(m *testing.M) {
	if work := os.Getenv(childEnv); work != "" {
		os.Exit(serveChild(work))
	}
	os.Exit(m.Run())
}

func serveChild(work string) int {
	eng, err := researchtest.Open(work, 20*time.Millisecond)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	defer eng.Index.Close()
	s, err := New(Config{RunsDir: filepath.Join(work, "runs"), Start: engineStart(eng), Version: "test"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	if err := s.Run(context.Background(), &StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// engineStart runs the test engine; the corpus a call names must be the engine's.
func engineStart(eng *researchtest.Engine) StartFunc {
	return func(ctx context.Context, req RunRequest) (*research.Report, error) {
		if !slices.Contains(req.Sources.Corpus, eng.Dir) {
			return nil, fmt.Errorf("test engine serves corpus %s, not %v", eng.Dir, req.Sources.Corpus)
		}
		return eng.Run(ctx, req.Question, req.RunID, req.OutDir, req.OnEvent)
	}
}

type recorder struct {
	mu    sync.Mutex
	progs []*mcp.ProgressNotificationParams
}

func (r *recorder) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	r.mu.Lock()
	r.progs = append(r.progs, req.Params)
	r.mu.Unlock()
}

func (r *recorder) list() []*mcp.ProgressNotificationParams {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.progs)
}

func connectInMemory(t *testing.T, s *Server, rec *recorder) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{ProgressNotificationHandler: rec.handler})
	cs, err := c.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callResearch(t *testing.T, cs *mcp.ClientSession, args map[string]any, token any) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: "deep_research", Arguments: args}
	if token != nil {
		p.SetProgressToken(token)
	}
	res, err := cs.CallTool(t.Context(), p)
	if err != nil {
		t.Fatalf("call deep_research: %v", err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// checkReport asserts what every client should get: the report text with citations, structured output naming
// the run, and a report.json whose every citation resolves to a grounded quote.
func checkReport(t *testing.T, runs string, out Output, body string) *research.Report {
	t.Helper()
	if out.RunID == "" || out.ReportURI != ReportURI(out.RunID) || out.Evidence == 0 || len(out.Sources) == 0 {
		t.Fatalf("structured output incomplete: %+v", out)
	}
	rep, err := research.LoadReport(filepath.Join(runs, out.RunID))
	if err != nil {
		t.Fatal(err)
	}
	md := export.AbsoluteLinks(rep.Markdown, filepath.Join(runs, out.RunID))
	if !strings.Contains(body, md) || !strings.Contains(body, "[1]") {
		t.Errorf("tool text does not carry the cited report:\n%s", body)
	}
	if strings.Contains(body, "]("+research.DocsDir+"/") {
		t.Errorf("tool text links the run folder relatively, which a client cannot open:\n%s", body)
	}
	if out.Report != md {
		t.Errorf("structured report differs from report.md")
	}
	for _, c := range rep.Citations {
		for _, id := range c.EvidenceIDs {
			found := false
			for _, e := range rep.Evidence {
				if e.ID == id {
					found = true
					src, err := research.LoadSourceText(filepath.Join(runs, out.RunID), e.Source)
					if err != nil || !strings.Contains(strings.Join(strings.Fields(src), " "), strings.Join(strings.Fields(e.Quote), " ")) {
						t.Errorf("citation [%d] → %s: quote not in the stored source (%v)", c.N, id, err)
					}
				}
			}
			if !found {
				t.Errorf("citation [%d] points to missing evidence %s", c.N, id)
			}
		}
	}
	return rep
}

func TestInMemoryToolProgressAndResources(t *testing.T) {
	eng := researchtest.New(t, 10*time.Millisecond)
	runs := t.TempDir()
	s, err := New(Config{RunsDir: runs, Start: engineStart(eng)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	cs := connectInMemory(t, s, rec)

	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != "deep_research" {
		t.Fatalf("tools = %+v", tools.Tools)
	}
	schema, _ := json.Marshal(tools.Tools[0].InputSchema)
	for _, want := range []string{`"question"`, `"sources"`, `"budget"`, `"corpus"`, `"max_cost_usd"`, `"required":["question"]`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("input schema lacks %s: %s", want, schema)
		}
	}

	res := callResearch(t, cs, map[string]any{
		"question": researchtest.Question,
		"sources":  map[string]any{"corpus": []string{eng.Dir}},
		"budget":   map[string]any{"max_cost_usd": 1, "rounds": 1},
	}, "tok-1")
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	var out Output
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	rep := checkReport(t, runs, out, text(res))
	if out.Status != StatusDone || out.Evidence != len(rep.CitedEvidence()) || out.Pooled != len(rep.Evidence) || out.Evidence > out.Pooled {
		t.Errorf("status %q, evidence %d (report cites %d), pooled %d (report holds %d)",
			out.Status, out.Evidence, len(rep.CitedEvidence()), out.Pooled, len(rep.Evidence))
	}
	if !strings.Contains(text(res), fmt.Sprintf("%d evidence items cited (of %d gathered)", out.Evidence, out.Pooled)) {
		t.Errorf("tool text does not state cited and gathered evidence: %s", tail(text(res), 3))
	}

	// Progress: on our token, strictly increasing out of a total of 100, arriving before the result, the last one
	// 100, and telling the run's story.
	progs := rec.list()
	if len(progs) < 5 {
		t.Fatalf("%d progress notifications, want a run's worth", len(progs))
	}
	var msgs []string
	for i, p := range progs {
		if p.ProgressToken != "tok-1" {
			t.Errorf("progress %d on token %v", i, p.ProgressToken)
		}
		if i > 0 && p.Progress <= progs[i-1].Progress {
			t.Errorf("progress not increasing: %v after %v", p.Progress, progs[i-1].Progress)
		}
		if p.Total != progressTotal || p.Progress > p.Total || (p.Progress == p.Total) != (i == len(progs)-1) {
			t.Errorf("progress %d: %v of %v (of %d notifications)", i, p.Progress, p.Total, len(progs))
		}
		msgs = append(msgs, p.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"plan: ", "evidence e1", "read file://", "report written"} {
		if !strings.Contains(all, want) {
			t.Errorf("progress messages lack %q:\n%s", want, all)
		}
	}

	// Resources: the finished run is listed and readable.
	rl, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range rl.Resources {
		uris = append(uris, r.URI)
	}
	if !slices.Contains(uris, out.ReportURI) || !slices.Contains(uris, out.JSONURI) {
		t.Fatalf("resources %v lack the run's report", uris)
	}
	rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: out.ReportURI})
	if err != nil {
		t.Fatal(err)
	}
	if rr.Contents[0].Text != out.Report || rr.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("report.md resource differs from the report")
	}
	rr, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: out.JSONURI})
	if err != nil {
		t.Fatal(err)
	}
	var rj research.Report
	if err := json.Unmarshal([]byte(rr.Contents[0].Text), &rj); err != nil || len(rj.Citations) == 0 {
		t.Errorf("report.json resource: %v, %d citations", err, len(rj.Citations))
	}
	for _, bad := range []string{"deepresearch://runs/../../etc/report.md", "deepresearch://runs/nope/report.md", "deepresearch://runs/" + out.RunID + "/state.db"} {
		if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: bad}); err == nil {
			t.Errorf("reading %s succeeded", bad)
		}
	}

	// A new server over the same folder publishes past runs at start.
	s2, err := New(Config{RunsDir: runs, Start: engineStart(eng)})
	if err != nil {
		t.Fatal(err)
	}
	cs2 := connectInMemory(t, s2, &recorder{})
	rl, err = cs2.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.Resources) != 2 || rl.Resources[0].Title == "" {
		t.Errorf("restarted server lists %+v, want the past run's two reports", rl.Resources)
	}
}

// TestToolLinksAreAbsolute: the links a report makes into its run folder (the stored text of a web page, at the
// quote's lines) reach the client as absolute file:// URLs of files that exist, and the text names the folder.
func TestToolLinksAreAbsolute(t *testing.T) {
	runs := t.TempDir()
	s, err := New(Config{RunsDir: runs, Start: func(_ context.Context, req RunRequest) (*research.Report, error) {
		if err := os.MkdirAll(filepath.Join(req.OutDir, research.DocsDir), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(req.OutDir, research.DocsDir, "ab12.txt"), []byte("Deletes write tombstones.\n"), 0o644); err != nil {
			return nil, err
		}
		return &research.Report{RunID: req.RunID, Question: req.Question, Dir: req.OutDir,
			Markdown: "Deletes write tombstones [1].\n\n## Citations\n\n- [1] “Deletes write tombstones.” — https://example.com/lsm (e1) · " +
				"[at the quote](https://example.com/lsm#:~:text=Deletes%20write%20tombstones.) · [text read, lines 1–1](docs/ab12.txt#L1-L1) · [out](docs/../../etc/passwd)\n",
			Citations: []research.Citation{{N: 1, EvidenceIDs: []string{"e1"}}},
			Evidence:  []research.Evidence{{ID: "e1", Quote: "Deletes write tombstones.", Source: "https://example.com/lsm"}}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, s, &recorder{})
	res := callResearch(t, cs, map[string]any{"question": "How do LSM trees delete?", "sources": map[string]any{"web": "searxng"}}, nil)
	body := text(res)
	if res.IsError {
		t.Fatalf("tool error: %s", body)
	}
	var out Output
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	want := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(out.Dir, research.DocsDir, "ab12.txt")), Fragment: "L1-L1"}).String()
	if !filepath.IsAbs(out.Dir) || !strings.Contains(body, "]("+want+")") || !strings.Contains(out.Report, "]("+want+")") {
		t.Fatalf("want the absolute link %s in the text and the structured report:\n%s", want, body)
	}
	u, _ := url.Parse(want)
	if _, err := os.Stat(u.Path); err != nil {
		t.Errorf("the link names no file: %v", err)
	}
	if !strings.Contains(body, "](docs/../../etc/passwd)") || strings.Contains(body, "file:///etc/passwd") {
		t.Errorf("a link climbing out of the run folder was made absolute:\n%s", body)
	}
	if !strings.Contains(body, "https://example.com/lsm#:~:text=") || !strings.Contains(body, "folder: file://"+filepath.ToSlash(out.Dir)+"/") {
		t.Errorf("the text lacks the link at the quote or the run folder:\n%s", body)
	}
}

func TestToolRefusesBadInputClearly(t *testing.T) {
	called := false
	s, err := New(Config{RunsDir: t.TempDir(), Start: func(context.Context, RunRequest) (*research.Report, error) {
		called = true
		return nil, errors.New("should not run")
	}})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, s, &recorder{})
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"empty question", map[string]any{"question": "  ", "sources": map[string]any{"web": "searxng"}}, "question is empty"},
		{"no sources", map[string]any{"question": "Why?"}, "no sources"},
		{"missing corpus", map[string]any{"question": "Why?", "sources": map[string]any{"corpus": []string{"/no/such/dir"}}}, "cannot be used"},
		{"negative budget", map[string]any{"question": "Why?", "sources": map[string]any{"web": "searxng"}, "budget": map[string]any{"max_cost_usd": -1}}, "cost limit -1 is not"},
		{"endless minutes", map[string]any{"question": "Why?", "sources": map[string]any{"web": "searxng"}, "budget": map[string]any{"max_minutes": 1e308}}, "max_minutes"},
		{"negative minutes", map[string]any{"question": "Why?", "sources": map[string]any{"web": "searxng"}, "budget": map[string]any{"max_minutes": -5}}, "max_minutes"},
		{"huge cost", map[string]any{"question": "Why?", "sources": map[string]any{"web": "searxng"}, "budget": map[string]any{"max_cost_usd": 1e300}}, "cost limit"},
		{"negative tokens", map[string]any{"question": "Why?", "sources": map[string]any{"web": "searxng"}, "budget": map[string]any{"max_tokens": -3}}, "token fuse"},
		{"NUL in the question", map[string]any{"question": "Why\x00 not?", "sources": map[string]any{"web": "searxng"}}, "control character U+0000"},
		{"emoji-only question", map[string]any{"question": "🐝❓", "sources": map[string]any{"web": "searxng"}}, "no letter or digit"},
		{"unknown unjudged choice", map[string]any{"question": "Why?", "sources": map[string]any{"web": "searxng"}, "budget": map[string]any{"unjudged": "sometimes"}}, "budget.unjudged"},
		{"1 MB question", map[string]any{"question": strings.Repeat("why ", 1<<18), "sources": map[string]any{"web": "searxng"}}, "the limit is 4000"},
		{"too many corpora", map[string]any{"question": "Why?", "sources": map[string]any{"corpus": make([]string, 17)}}, "the limit is 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callResearch(t, cs, tt.args, nil)
			if !res.IsError || !strings.Contains(text(res), tt.want) {
				t.Errorf("got error=%v %q, want a tool error saying %q", res.IsError, text(res), tt.want)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			var out Output
			if err := json.Unmarshal(raw, &out); err != nil || out.Status != StatusRefused || !strings.Contains(out.Error, tt.want) || strings.Contains(string(raw), "run_id") {
				t.Errorf("structured content of a refused call: %s (%v)", raw, err)
			}
		})
	}
	if called {
		t.Error("bad input started a run")
	}
}

func TestFailedRunIsToolError(t *testing.T) {
	s, err := New(Config{RunsDir: t.TempDir(), Defaults: Sources{Web: "searxng"}, Start: func(context.Context, RunRequest) (*research.Report, error) {
		return nil, errors.New("searxng: connection refused")
	}})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, s, &recorder{})
	res := callResearch(t, cs, map[string]any{"question": "Why?"}, nil)
	if !res.IsError || !strings.Contains(text(res), "connection refused") {
		t.Errorf("failed run: error=%v %q", res.IsError, text(res))
	}
	// The structured content names the run the text names.
	var out Output
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	// The run failed before it made its folder: no folder is named, and the text says it never began.
	if out.RunID == "" || !strings.Contains(text(res), out.RunID) || out.Status != StatusFailed || !strings.Contains(out.Error, "connection refused") || out.Dir != "" ||
		!strings.Contains(text(res), "before it began") {
		t.Errorf("structured content of a failed run: %s %q", raw, text(res))
	}
}

func TestStreamableHTTP(t *testing.T) {
	eng := researchtest.New(t, 0)
	runs := t.TempDir()
	s, err := New(Config{RunsDir: runs, Start: engineStart(eng), Defaults: Sources{Corpus: []string{eng.Dir}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.HTTPHandler(HTTPConfig{Token: "t0k"}))
	defer ts.Close()

	// Without the token nothing is served.
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", resp.StatusCode)
	}

	rec := &recorder{}
	c := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, &mcp.ClientOptions{ProgressNotificationHandler: rec.handler})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: bearer{"t0k"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// No sources in the call: the server's defaults apply.
	res := callResearch(t, cs, map[string]any{"question": researchtest.Question}, 7)
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	var out Output
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &out)
	checkReport(t, runs, out, text(res))
	if len(rec.list()) == 0 {
		t.Error("no progress notifications over HTTP")
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestCheckBind(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:0": true, "localhost:9": true, "0.0.0.0:8080": false, ":8080": false} {
		if err := CheckBind(addr, ""); (err == nil) != ok {
			t.Errorf("CheckBind(%q) = %v", addr, err)
		}
	}
	if err := CheckBind("0.0.0.0:8080", "x"); err != nil {
		t.Errorf("with a token: %v", err)
	}
}

// TestStdioSubprocess talks to a real server process over stdio with the Go SDK's command transport.
func TestStdioSubprocess(t *testing.T) {
	work := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+work)
	cmd.Stderr = os.Stderr
	rec := &recorder{}
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, &mcp.ClientOptions{ProgressNotificationHandler: rec.handler})
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "deepresearch" {
		t.Errorf("server name %q", got)
	}
	res := callResearch(t, cs, map[string]any{
		"question": researchtest.Question,
		"sources":  map[string]any{"corpus": []string{filepath.Join(work, "corpus")}},
	}, "p")
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	var out Output
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &out)
	checkReport(t, filepath.Join(work, "runs"), out, text(res))
	if len(rec.list()) == 0 {
		t.Error("no progress notifications over stdio")
	}
}

// TestTypeScriptClient drives the server with a client from another implementation, the official TypeScript
// SDK, which spawns the server over stdio: first this test binary serving the test engine, then the real
// deepresearch binary (`deepresearch mcp`, extractive engine, no model).
func TestTypeScriptClient(t *testing.T) {
	t.Run("test-server", func(t *testing.T) {
		work := t.TempDir()
		runTSClient(t, filepath.Join(work, "corpus"), filepath.Join(work, "runs"), []string{childEnv + "=" + work}, "", os.Args[0])
	})
	t.Run("deepresearch-binary", func(t *testing.T) {
		bin := researchtest.BuildBinary(t)
		home := t.TempDir()
		corpusDir := researchtest.New(t, 0).Dir
		runs := filepath.Join(home, "runs")
		env := []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
			"DEEPRESEARCH_PROVIDER=", "DEEPRESEARCH_MODEL=", "DEEPRESEARCH_ENGINE=extractive"}
		runTSClient(t, corpusDir, runs, env, home, bin, "mcp", "--runs", runs)
	})
}

func runTSClient(t *testing.T, corpusDir, runs string, env []string, dir string, server ...string) {
	t.Helper()
	node := mcptest.Node(t)
	cache := mcptest.NodeCache()
	if _, err := os.Stat(filepath.Join(cache, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the TypeScript MCP SDK is not installed in %s: run internal/mcpserver/testdata/install.sh", cache)
	}
	// The script must sit next to node_modules for Node's module resolution.
	script, err := os.ReadFile(filepath.Join("testdata", "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(cache, "client-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	clientPath := f.Name()
	defer os.Remove(clientPath)
	if _, err := f.Write(script); err != nil {
		t.Fatal(err)
	}
	f.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	args := append([]string{clientPath, researchtest.Question, corpusDir, "--"}, server...)
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, stdout)
	}
	var (
		tools     []map[string]any
		progress  int
		result    *mcp.CallToolResult
		resources []string
		read      struct{ URI, Text string }
	)
	for _, line := range strings.Split(strings.TrimSpace(string(stdout)), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("client printed %q: %v", line, err)
		}
		switch {
		case m["tools"] != nil:
			json.Unmarshal(m["tools"], &tools)
		case m["progress"] != nil:
			progress++
		case m["result"] != nil:
			var r struct {
				Content           []map[string]any `json:"content"`
				StructuredContent Output           `json:"structuredContent"`
				IsError           bool             `json:"isError"`
			}
			if err := json.Unmarshal(m["result"], &r); err != nil {
				t.Fatal(err)
			}
			if r.IsError {
				t.Fatalf("tool error: %v", r.Content)
			}
			result = &mcp.CallToolResult{StructuredContent: r.StructuredContent}
			for _, c := range r.Content {
				if c["type"] == "text" {
					result.Content = append(result.Content, &mcp.TextContent{Text: c["text"].(string)})
				}
			}
		case m["resources"] != nil:
			json.Unmarshal(m["resources"], &resources)
		case m["read"] != nil:
			json.Unmarshal(m["read"], &read)
		}
	}
	if len(tools) != 1 || tools[0]["name"] != "deep_research" {
		t.Errorf("tools seen by the TS client: %v", tools)
	}
	if result == nil {
		t.Fatalf("no result printed:\n%s", stdout)
	}
	out := result.StructuredContent.(Output)
	checkReport(t, runs, out, text(result))
	if progress == 0 {
		t.Error("the TypeScript client saw no progress notifications")
	}
	if !slices.Contains(resources, out.ReportURI) || read.Text != out.Report {
		t.Errorf("resources %v; read %q", resources, read.URI)
	}
}
