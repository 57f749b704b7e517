package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/base/syncio"
	"github.com/deepresearch/deepresearch/internal/cli"
	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/research"
)

// serveEnv keeps the corpus index cache and any user configuration out of the developer's home and returns an
// empty configuration file, so the extractive engine runs with no model.
func serveEnv(t *testing.T) (configFile string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	configFile = filepath.Join(home, "deepresearch.yaml")
	if err := os.WriteFile(configFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return configFile
}

// copyCorpus copies the surfaces' honeybee test corpus into a fresh folder.
func copyCorpus(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "corpus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(researchtest.CorpusDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(researchtest.CorpusDir(), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var servingRE = regexp.MustCompile(`deepresearch: serving on (http://127\.0\.0\.1:\d+)/\n`)

// servedCLI is `deepresearch serve` running in this process, as startServe started it.
type servedCLI struct {
	stdout, stderr syncio.Buffer
	exited         chan int
	cancel         context.CancelFunc
}

// startServe runs `deepresearch serve args…` with env (nil: empty) until the test ends or stop, waits until its
// output shows re (a server on a port the OS picks prints its address: the only way to find it) and returns re's
// first group. serveWait bounds the wait: long, as it waits for the output, not for time.
func startServe(t *testing.T, re *regexp.Regexp, env map[string]string, args ...string) (string, *servedCLI) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s := &servedCLI{exited: make(chan int, 1), cancel: cancel}
	go func() {
		s.exited <- cli.Main(ctx, append([]string{"serve"}, args...), strings.NewReader(""), &s.stdout, &s.stderr,
			func(k string) string { return env[k] })
	}()
	t.Cleanup(func() { s.stop(t) })
	deadline := time.After(serveWait)
	for {
		if m := re.FindStringSubmatch(s.stdout.String()); m != nil {
			return m[1], s
		}
		select {
		case code := <-s.exited:
			s.exited <- code
			t.Fatalf("serve exited with %d before printing %s\nstdout:\n%s\nstderr:\n%s", code, re, s.stdout.String(), s.stderr.String())
		case <-deadline:
			t.Fatalf("serve printed no %s\nstdout:\n%s\nstderr:\n%s", re, s.stdout.String(), s.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

const serveWait = 2 * time.Minute

// stop ends the server's context and returns its exit code, failing the test if it does not return.
func (s *servedCLI) stop(t *testing.T) int {
	t.Helper()
	s.cancel()
	select {
	case code := <-s.exited:
		s.exited <- code // a second stop sees the same code
		return code
	case <-time.After(serveWait):
		t.Fatal("serve did not stop when its context ended")
		return -1
	}
}

// sseFrame is one server-sent event.
type sseFrame struct{ id, event, data string }

// readSSE reads frames until the stream ends.
func readSSE(r io.Reader) ([]sseFrame, error) {
	var frames []sseFrame
	var cur sseFrame
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur != (sseFrame{}) {
				frames = append(frames, cur)
			}
			cur = sseFrame{}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			cur.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data += strings.TrimPrefix(line, "data: ")
		}
	}
	return frames, sc.Err()
}

// TestServeCommandEndToEnd drives `deepresearch serve` as a user would: it starts on a port the OS picks and
// prints the address, a run is started over a local corpus with the extractive engine, its event stream is
// followed to the end, the report is read and both downloads fetched; cancelling the context stops the server.
func TestServeCommandEndToEnd(t *testing.T) {
	cfg := serveEnv(t)
	corpus := copyCorpus(t)
	runs := filepath.Join(t.TempDir(), "runs")
	base, srv := startServe(t, servingRE, nil, "--addr", "127.0.0.1:0", "--runs", runs, "--config", cfg, "--root", corpus)

	loc := postRun(t, base, corpus)
	id := strings.TrimPrefix(loc, "/runs/")

	// Follow the live stream to its end.
	sctx, scancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer scancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", base+loc+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET events: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	frames, err := readSSE(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("read the event stream: %v (stderr:\n%s)", err, srv.stderr.String())
	}
	kinds := map[string]int{}
	var last sseFrame
	for i, f := range frames {
		last = f
		if f.event != "progress" {
			continue
		}
		var e research.Event
		if err := json.Unmarshal([]byte(f.data), &e); err != nil {
			t.Fatalf("progress event %d is not an event: %v\n%s", i, err, f.data)
		}
		if e.RunID != id {
			t.Errorf("event %d belongs to run %q, want %q", i, e.RunID, id)
		}
		kinds[e.Kind]++
	}
	for _, k := range []string{research.EventRunStart, research.EventPlan, research.EventStageStart, research.EventRead, research.EventEvidence, research.EventRunDone} {
		if kinds[k] == 0 {
			t.Errorf("the stream carried no %q event; kinds seen: %v", k, kinds)
		}
	}
	var end struct{ Status, Error string }
	if last.event != "end" || json.Unmarshal([]byte(last.data), &end) != nil || end.Status != research.RunDone {
		t.Fatalf("the stream did not end with a finished run: %+v (stderr:\n%s)", last, srv.stderr.String())
	}

	get := func(p string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", p, resp.StatusCode, b)
		}
		return resp, string(b)
	}

	// The downloads are the run folder's files, offered as attachments.
	resp, md := get(loc + "/report.md")
	if !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/markdown") {
		t.Errorf("report.md served as %q / %q", resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"))
	}
	onDisk, err := os.ReadFile(filepath.Join(runs, id, research.ReportMarkdownFile))
	if err != nil || string(onDisk) != md {
		t.Errorf("report.md download differs from %s (%v)", filepath.Join(runs, id, research.ReportMarkdownFile), err)
	}
	resp, js := get(loc + "/report.json")
	if !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("report.json served as %q / %q", resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"))
	}
	var rep research.Report
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatalf("report.json does not parse: %v", err)
	}
	if rep.RunID != id || rep.Question != researchtest.Question || rep.Engine != "extractive" || len(rep.Citations) == 0 || rep.Markdown != md {
		t.Errorf("report.json: run %q, question %q, engine %q, %d citations, markdown matches report.md: %v",
			rep.RunID, rep.Question, rep.Engine, len(rep.Citations), rep.Markdown == md)
	}

	// The report page links its citations, and a citation opens its quote highlighted in the source text.
	_, page := get(loc)
	if !strings.Contains(page, `<a class="cite" href="/runs/`+id+`/cite/`) {
		t.Errorf("the report page has no citation links:\n%s", page)
	}
	_, cite := get(loc + "/cite/" + strconv.Itoa(rep.Citations[0].N))
	if !strings.Contains(cite, `<mark id="quote">`) {
		t.Errorf("citation [%d] does not highlight its quote:\n%s", rep.Citations[0].N, cite)
	}
	// Nothing the application serves points at another origin; the corpus run has no http sources, so there is
	// no user content to exempt.
	for _, p := range []string{"/", loc, loc + "/cite/" + strconv.Itoa(rep.Citations[0].N), "/static/app.css", "/static/app.js"} {
		_, body := get(p)
		if m := regexp.MustCompile(`https?://|["'(]//`).FindString(body); m != "" {
			t.Errorf("GET %s references another origin (%q)", p, m)
		}
	}
	var listed []research.RunSummary
	_, api := get("/api/runs")
	if err := json.Unmarshal([]byte(api), &listed); err != nil || len(listed) != 1 || listed[0].ID != id || listed[0].Status != research.RunDone {
		t.Errorf("/api/runs = %s (%v)", api, err)
	}

	if code := srv.stop(t); code != 0 {
		t.Errorf("serve exited with %d after its context ended\nstderr:\n%s", code, srv.stderr.String())
	}
	if _, err := http.Get(base + "/"); err == nil {
		t.Error("the server still answers after serve returned")
	}
}

// TestServeRefusesOpenBindWithoutToken: serving beyond loopback without an access token is refused before
// anything listens, with a message that says what to do; with DEEPRESEARCH_TOKEN the printed link carries it.
func TestServeRefusesOpenBindWithoutToken(t *testing.T) {
	cfg := serveEnv(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		code := cli.Main(ctx, []string{"serve", "--addr", addr, "--runs", t.TempDir(), "--config", cfg},
			strings.NewReader(""), &stdout, &stderr, func(string) string { return "" })
		cancel()
		if code == 0 || !strings.Contains(stderr.String(), "requires an access token (--token or DEEPRESEARCH_TOKEN)") {
			t.Errorf("serve --addr %s without a token: exit %d, stderr %q", addr, code, stderr.String())
		}
		if strings.Contains(stdout.String(), "serving on") {
			t.Errorf("serve --addr %s without a token listened: %q", addr, stdout.String())
		}
	}

	// A token from the environment is honoured (here on loopback, so the test opens nothing to the network):
	// the printed link carries it, and requests without it are refused.
	linkRE := regexp.MustCompile(`serving on (http://127\.0\.0\.1:\d+)/\?token=tok-456\n`)
	base, srv := startServe(t, linkRE, map[string]string{"DEEPRESEARCH_TOKEN": "tok-456"},
		"--addr", "127.0.0.1:0", "--runs", t.TempDir(), "--config", cfg)
	resp, err := http.Get(base + "/api/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("request without the token: %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", base+"/api/runs", nil)
	req.Header.Set("Authorization", "Bearer tok-456")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("request with the token: %d, want 200", resp.StatusCode)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("serve exited with %d", code)
	}
}

// postRun starts a run of researchtest.Question over corpus through the viewer at base, as its form does, and
// returns the run's page, where the viewer redirects.
func postRun(t *testing.T, base, corpus string) string {
	t.Helper()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(base+"/runs", url.Values{"question": {researchtest.Question}, "corpus": {corpus}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/runs/") {
		t.Fatalf("POST /runs: %d → %q", resp.StatusCode, loc)
	}
	return loc
}
