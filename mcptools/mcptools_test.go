package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/mcptools"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestExpand(t *testing.T) {
	vars := env(map[string]string{"TOKEN": "s3cret", "EMPTY": "", "HOME": "/home/u"})
	tests := []struct {
		in, want string
		wantErr  string
	}{
		{in: "plain", want: "plain"},
		{in: "Bearer ${TOKEN}", want: "Bearer s3cret"},
		{in: "${HOME}/data:${TOKEN}", want: "/home/u/data:s3cret"},
		{in: "${MISSING:-fallback}", want: "fallback"},
		{in: "${EMPTY:-fallback}", want: "fallback"},
		{in: "${TOKEN:-fallback}", want: "s3cret"},
		{in: "${MISSING:-}", want: ""},
		{in: "cost $$5", want: "cost $5"},
		{in: "$TOKEN stays", want: "$TOKEN stays"},
		{in: "${MISSING}", wantErr: "MISSING is not set"},
		{in: "${TOKEN", wantErr: "unterminated"},
		{in: "${1BAD}", wantErr: "bad variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := mcptools.Expand(tt.in, vars)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Expand(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseKeepsBadEntriesAsFailures(t *testing.T) {
	data := `{"mcpServers": {
		"fs":     {"command": "npx", "args": ["-y", "server-filesystem", "${ROOT:-/tmp}"], "env": {"KEY": "${KEY}"}},
		"remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${KEY}"}},
		"bare":   {"url": "https://mcp.example.com/sse", "type": "sse"},
		"private": {"command": "srv", "subagentOnly": true},
		"nocmd":  {"args": ["x"]},
		"notok":  {"type": "http", "url": "https://x/${NOPE}"},
		"weird":  {"type": "carrier-pigeon", "url": "https://x"},
		"broken": ["not", "an", "object"]
	}}`
	f, err := mcptools.Parse([]byte(data), env(map[string]string{"KEY": "k1"}))
	if err != nil {
		t.Fatal(err)
	}
	fs := f.Servers["fs"]
	if fs.Err != nil || fs.Kind() != mcptools.TypeStdio || fs.Args[2] != "/tmp" || fs.Env["KEY"] != "k1" {
		t.Errorf("fs = %+v", fs)
	}
	if r := f.Servers["remote"]; r.Err != nil || r.Kind() != mcptools.TypeHTTP || r.Headers["Authorization"] != "Bearer k1" {
		t.Errorf("remote = %+v", r)
	}
	if b := f.Servers["bare"]; b.Err != nil || b.Kind() != mcptools.TypeSSE {
		t.Errorf("bare = %+v", b)
	}
	if p := f.Servers["private"]; !p.SubagentOnly || p.Err != nil {
		t.Errorf("private = %+v", p)
	}
	for name, want := range map[string]string{"nocmd": "needs a \"command\"", "notok": "NOPE is not set", "weird": "unknown server type", "broken": "entry"} {
		if e := f.Servers[name].Err; e == nil || !strings.Contains(e.Error(), want) {
			t.Errorf("%s: Err = %v, want %q", name, e, want)
		}
	}
	if _, err := mcptools.Parse([]byte(`{"servers": {}}`), nil); err == nil {
		t.Error("a file without mcpServers must be an error")
	}
	if _, err := mcptools.Parse([]byte(`{`), nil); err == nil {
		t.Error("invalid JSON must be an error")
	}
}

// memServer starts an in-process server and returns its client-side transport.
func memServer(t *testing.T, setup func(*mcp.Server)) (*mcp.Server, mcp.Transport) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
	setup(s)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	return s, ct
}

type cityIn struct {
	City string `json:"city" jsonschema:"the city"`
}

func addWeather(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "forecast", Description: "Weather forecast for a city."}, func(_ context.Context, _ *mcp.CallToolRequest, in cityIn) (*mcp.CallToolResult, any, error) {
		if in.City == "Atlantis" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "unknown city"}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "Sunny in " + in.City},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte("PNGDATA")},
		}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "alerts.list", Description: "Severe weather alerts."}, func(context.Context, *mcp.CallToolRequest, emptyIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "none"}}}, nil, nil
	})
}

func start(t *testing.T, servers map[string]mcptools.ServerConfig, opts mcptools.Options) *mcptools.Manager {
	t.Helper()
	m := mcptools.Start(t.Context(), &mcptools.File{Servers: servers}, opts)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func toolByName(t *testing.T, tools []agent.Tool, name string) agent.Tool {
	t.Helper()
	for _, tl := range tools {
		if tl.Spec().Name == name {
			return tl
		}
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Spec().Name)
	}
	t.Fatalf("no tool %s among %v", name, names)
	return nil
}

func TestInMemoryServerTools(t *testing.T) {
	_, tr := memServer(t, addWeather)
	m := start(t, map[string]mcptools.ServerConfig{"weather": {Transport: tr}}, mcptools.Options{})
	if f := m.Failures(); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	tools := m.Tools()
	if len(tools) != 2 {
		t.Fatalf("got %d tools, want 2", len(tools))
	}
	// A dot is not allowed in provider tool names: it is replaced, and the call still reaches alerts.list.
	alerts := toolByName(t, tools, "mcp__weather__alerts_list")
	if res, err := alerts.Run(t.Context(), nil); err != nil || res.Content != "none" {
		t.Fatalf("alerts = %+v, %v", res, err)
	}
	fc := toolByName(t, tools, "mcp__weather__forecast")
	var schema map[string]any
	if err := json.Unmarshal(fc.Spec().Schema, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("schema = %s (%v)", fc.Spec().Schema, err)
	}
	res, err := fc.Run(t.Context(), json.RawMessage(`{"city":"Lyon"}`))
	if err != nil || res.IsError || !strings.Contains(res.Content, "Sunny in Lyon") || !strings.Contains(res.Content, "[image image/png, 7 bytes, not shown]") {
		t.Fatalf("forecast = %+v, %v", res, err)
	}
	res, err = fc.Run(t.Context(), json.RawMessage(`{"city":"Atlantis"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "mcp__weather__forecast: unknown city") {
		t.Fatalf("server-side error = %+v, %v", res, err)
	}
	res, err = fc.Run(t.Context(), json.RawMessage(`{"city":`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "invalid JSON") {
		t.Fatalf("bad JSON = %+v, %v", res, err)
	}
	if m.SubagentTools() != nil {
		t.Error("no server is subagent-only")
	}
}

func TestSubagentOnlyServers(t *testing.T) {
	_, tr1 := memServer(t, addWeather)
	_, tr2 := memServer(t, addWeather)
	m := start(t, map[string]mcptools.ServerConfig{"pub": {Transport: tr1}, "priv": {Transport: tr2, SubagentOnly: true}}, mcptools.Options{})
	for _, tl := range m.Tools() {
		if mcptools.ServerOf(tl.Spec().Name) != "pub" {
			t.Errorf("main agent sees %s", tl.Spec().Name)
		}
	}
	sub := m.SubagentTools()
	if len(sub) != 2 || mcptools.ServerOf(sub[0].Spec().Name) != "priv" {
		t.Errorf("subagent tools = %v", sub)
	}
}

func TestToolListChangesArePickedUp(t *testing.T) {
	srv, tr := memServer(t, addWeather)
	m := start(t, map[string]mcptools.ServerConfig{"weather": {Transport: tr}}, mcptools.Options{})
	changed := make(chan struct{}, 4)
	m.OnToolsChanged(func() { changed <- struct{}{} })
	mcp.AddTool(srv, &mcp.Tool{Name: "radar", Description: "Radar image."}, func(context.Context, *mcp.CallToolRequest, emptyIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "radar"}}}, nil, nil
	})
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no tool-list change was picked up")
	}
	toolByName(t, m.Tools(), "mcp__weather__radar")
	stale := toolByName(t, m.Tools(), "mcp__weather__forecast")
	srv.RemoveTools("forecast")
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("tool removal was not picked up")
	}
	for _, tl := range m.Tools() {
		if tl.Spec().Name == "mcp__weather__forecast" {
			t.Error("removed tool is still offered")
		}
	}
	// A call that still reaches the removed tool (an agent mid-step) is an error result, not a failure.
	res, err := stale.Run(t.Context(), json.RawMessage(`{"city":"Oslo"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "forecast") {
		t.Fatalf("call to a removed tool = %+v, %v", res, err)
	}
}

func TestHTTPServerHeadersAndFailingServerSkipped(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	addWeather(srv)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-123" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the manager's cleanup, which ends the standalone SSE stream
	dir := t.TempDir()
	file := filepath.Join(dir, ".mcp.json")
	cfg := `{"mcpServers": {
		"good":   {"type": "http", "url": "` + ts.URL + `", "headers": {"Authorization": "Bearer ${API_TOKEN}"}},
		"noauth": {"type": "http", "url": "` + ts.URL + `"},
		"nobin":  {"command": "/nonexistent/mcp-server"},
		"badenv": {"command": "x", "env": {"K": "${UNSET_VAR}"}}
	}}`
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := mcptools.Load(file, env(map[string]string{"API_TOKEN": "tok-123"}))
	if err != nil {
		t.Fatal(err)
	}
	m := start(t, f.Servers, mcptools.Options{InitTimeout: 10 * time.Second})
	res, err := toolByName(t, m.Tools(), "mcp__good__forecast").Run(t.Context(), json.RawMessage(`{"city":"Oslo"}`))
	if err != nil || !strings.Contains(res.Content, "Sunny in Oslo") {
		t.Fatalf("call over HTTP = %+v, %v", res, err)
	}
	failed := map[string]string{}
	for _, fl := range m.Failures() {
		failed[fl.Server] = fl.Err.Error()
	}
	if len(failed) != 3 {
		t.Fatalf("failures = %v, want noauth, nobin and badenv", failed)
	}
	if !strings.Contains(failed["noauth"], "Unauthorized") && !strings.Contains(failed["noauth"], "401") {
		t.Errorf("noauth failure = %q", failed["noauth"])
	}
	if !strings.Contains(failed["nobin"], "/nonexistent/mcp-server") {
		t.Errorf("nobin failure = %q", failed["nobin"])
	}
	if !strings.Contains(failed["badenv"], "UNSET_VAR") {
		t.Errorf("badenv failure = %q", failed["badenv"])
	}
}

func TestStdioServerCrashMidCallReportsStderr(t *testing.T) {
	m := start(t, map[string]mcptools.ServerConfig{"helper": helperServer(t, "serve")}, mcptools.Options{})
	if f := m.Failures(); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	tools := m.Tools()
	res, err := toolByName(t, tools, "mcp__helper__echo").Run(t.Context(), json.RawMessage(`{"text":"hello"}`))
	if err != nil || res.Content != "hello" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	res, err = toolByName(t, tools, "mcp__helper__die").Run(t.Context(), nil)
	if err != nil {
		t.Fatalf("a dying server must give an error result, not a Go error: %v", err)
	}
	if !res.IsError || !strings.Contains(res.Content, "exit status 3") || !strings.Contains(res.Content, "disk on fire") {
		t.Fatalf("result of a call that killed the server = %q", res.Content)
	}
	s, _ := m.Server("helper")
	var dead *mcptools.DeadError
	if !errors.As(s.Err(), &dead) {
		t.Fatalf("server Err = %v, want a DeadError", s.Err())
	}
	// Later calls fail at once with the same explanation.
	res, _ = toolByName(t, tools, "mcp__helper__echo").Run(t.Context(), json.RawMessage(`{"text":"again"}`))
	if !res.IsError || !strings.Contains(res.Content, "disk on fire") {
		t.Fatalf("call to a dead server = %q", res.Content)
	}
}

func TestStdioStartFailures(t *testing.T) {
	m := start(t, map[string]mcptools.ServerConfig{
		"crash": helperServer(t, "crash-on-start"),
		"mute":  helperServer(t, "mute"),
		"ok":    helperServer(t, "serve"),
	}, mcptools.Options{InitTimeout: 2 * time.Second})
	failed := map[string]string{}
	for _, f := range m.Failures() {
		failed[f.Server] = f.Err.Error()
	}
	if !strings.Contains(failed["crash"], "missing API token") {
		t.Errorf("crash failure should show its stderr, got %q", failed["crash"])
	}
	if !strings.Contains(failed["mute"], "no answer within 2s") {
		t.Errorf("mute failure = %q", failed["mute"])
	}
	if _, ok := failed["ok"]; ok || len(m.Tools()) != 5 {
		t.Errorf("the healthy server must start regardless: failures %v, tools %d", failed, len(m.Tools()))
	}
}

func TestCloseKillsTheWholeProcessGroup(t *testing.T) {
	m := mcptools.Start(t.Context(), &mcptools.File{Servers: map[string]mcptools.ServerConfig{"helper": helperServer(t, "serve")}}, mcptools.Options{})
	res, err := toolByName(t, m.Tools(), "mcp__helper__spawn").Run(t.Context(), nil)
	if err != nil || res.IsError {
		t.Fatalf("spawn = %+v, %v", res, err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(res.Content))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(child, 0); err != nil {
		t.Fatalf("child %d should be running: %v", child, err)
	}
	s, _ := m.Server("helper")
	if pgid, err := syscall.Getpgid(child); err != nil || pgid != s.Pid() {
		t.Fatalf("child's process group = %d (%v), want the server's own group %d", pgid, err, s.Pid())
	}
	if pgid, _ := syscall.Getpgid(0); pgid == s.Pid() {
		t.Fatal("the server must not share the test's process group")
	}
	_ = m.Close()
	// The helper exits by itself when its stdin closes, but its child would live on; only the group kill ends it.
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(child, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("child %d of the server survived Close", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStderrIsBounded(t *testing.T) {
	m := start(t, map[string]mcptools.ServerConfig{"helper": helperServer(t, "serve")}, mcptools.Options{StderrLimit: 8})
	s, _ := m.Server("helper")
	got := s.Stderr()
	if !strings.Contains(got, "earlier bytes dropped") || !strings.HasSuffix(got, "started\n") {
		t.Fatalf("stderr tail = %q", got)
	}
}

func TestToolName(t *testing.T) {
	tests := []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"my server", "a.b/c", "mcp__my_server__a_b_c"},
		{"fs", "read-file", "mcp__fs__read-file"},
	}
	for _, tt := range tests {
		if got := mcptools.ToolName(tt.server, tt.tool); got != tt.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
	}
	long1 := mcptools.ToolName("a-very-long-server-name-indeed", "an-even-longer-tool-name-that-goes-on-and-on-1")
	long2 := mcptools.ToolName("a-very-long-server-name-indeed", "an-even-longer-tool-name-that-goes-on-and-on-2")
	if len(long1) > 64 || len(long2) > 64 || long1 == long2 {
		t.Errorf("long names must be clipped to 64 and stay distinct: %q %q", long1, long2)
	}
	if mcptools.ServerOf("mcp__my_server__x") != "my_server" || mcptools.ServerOf("read_file") != "" {
		t.Error("ServerOf")
	}
}

// Models send "null" for a tool without parameters; that is no arguments, not a JSON null the server must
// make sense of. Render of no result at all describes it instead of panicking.
func TestNullArgumentsAndNilResult(t *testing.T) {
	_, tr := memServer(t, addWeather)
	m := start(t, map[string]mcptools.ServerConfig{"weather": {Transport: tr}}, mcptools.Options{})
	alerts := toolByName(t, m.Tools(), "mcp__weather__alerts_list")
	if res, err := alerts.Run(t.Context(), json.RawMessage(" null ")); err != nil || res.IsError || res.Content != "none" {
		t.Fatalf("alerts(null) = %+v, %v", res, err)
	}
	fc := toolByName(t, m.Tools(), "mcp__weather__forecast")
	if res, err := fc.Run(t.Context(), json.RawMessage(`"Lyon"`)); err != nil || !res.IsError || !strings.Contains(res.Content, "invalid JSON arguments") {
		t.Fatalf("forecast(string) = %+v, %v", res, err)
	}
	if got := mcptools.Render(nil); got != "(the tool returned no content)" {
		t.Errorf("Render(nil) = %q", got)
	}
}

func TestSearchSourcesFollowSearchTools(t *testing.T) {
	setup := func(s *mcp.Server) {
		for _, name := range []string{"web_search", "lookup_docs", "forecast"} {
			mcp.AddTool(s, &mcp.Tool{Name: name, Description: name}, func(context.Context, *mcp.CallToolRequest, emptyIn) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{}, nil, nil
			})
		}
	}
	_, byName := memServer(t, setup)
	_, byConfig := memServer(t, setup)
	mgr := mcptools.Start(t.Context(), &mcptools.File{Servers: map[string]mcptools.ServerConfig{
		"a": {Transport: byName},
		"b": {Transport: byConfig, SearchTools: []string{"lookup_*"}},
	}}, mcptools.Options{})
	defer mgr.Close()
	var got []string
	for _, tool := range mgr.AllTools() {
		if mt, ok := tool.(*mcptools.Tool); ok && mt.IsSearchSource() {
			got = append(got, tool.Spec().Name)
		}
	}
	slices.Sort(got)
	if want := []string{"mcp__a__web_search", "mcp__b__lookup_docs"}; !slices.Equal(got, want) {
		t.Errorf("search sources = %v, want %v", got, want)
	}
}
