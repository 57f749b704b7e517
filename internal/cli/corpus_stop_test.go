package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/research"
)

// bigFolder writes n Markdown notes of about 10 KB: enough that indexing them lasts several seconds, well past the
// first progress report (the terminal shows none before a second has passed), also on a fast machine.
func bigFolder(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "notes")
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", i%50))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d\n\nHive %d keeps %d frames of comb; the forager bees of hive %d dance %d times an hour.\n", i, i, i%17, i, i%23)
		for p := range 48 {
			fmt.Fprintf(&b, "\n## Visit %d\n\nThe beekeeper checked hive %d on day %d and wrote down the brood pattern, the honey stores, "+
				"the temper of the colony and whether queen cells were drawn; the smoker was lit with pine needles %d times.\n", p, i, p*7+i%5, p+i%3)
		}
		body := b.String()
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("note%05d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var filesDoneRE = regexp.MustCompile(`: (\d+)/(\d+) files`)

// midIndexing reports whether an indexing message says some but not all files are done.
func midIndexing(msg string) bool {
	m := filesDoneRE.FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	done, _ := strconv.Atoi(m[1])
	total, _ := strconv.Atoi(m[2])
	return done > 0 && done < total
}

// entries lists a folder's entries (none when it does not exist).
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestStoppingWhileIndexing: Ctrl-C on run, the viewer's Stop and an MCP client's cancellation, each arriving while
// a fresh folder is being indexed, stop the indexing, report the run as stopped (not failed) without offering a
// resume of a run that never began, leave no run folder behind, and leave an index that the next update completes.
func TestStoppingWhileIndexing(t *testing.T) {
	bin := researchtest.BuildBinary(t)
	env, config := procEnv(t)
	const n = 6000
	folder := bigFolder(t, n)

	t.Run("ctrl-c", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run")
		cmd := exec.Command(bin, "run", "--config", config, "--out", out, "--corpus", folder, researchtest.Question)
		cmd.Env = env
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		var all bytes.Buffer
		sc := bufio.NewScanner(stderr)
		interrupted := false
		var sent time.Time
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if !interrupted && midIndexing(sc.Text()) {
				if err := cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
				interrupted, sent = true, time.Now()
				t.Logf("Ctrl-C at %q", sc.Text())
			}
		}
		err = cmd.Wait()
		if !interrupted {
			t.Fatalf("no progress line while indexing %d files:\n%s", n, all.String())
		}
		t.Logf("run exited %s after Ctrl-C", time.Since(sent).Round(time.Millisecond))
		if err == nil {
			t.Errorf("an interrupted run exited 0:\n%s", all.String())
		}
		if s := all.String(); !strings.Contains(s, "interrupted before the run began") || strings.Contains(s, "deepresearch resume") {
			t.Errorf("Ctrl-C while indexing should say the run never began and offer no resume:\n%s", s)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("run folder %s left behind (%v)", out, err)
		}
	})

	t.Run("viewer stop", func(t *testing.T) {
		runs := filepath.Join(t.TempDir(), "runs")
		base := startServer(t, bin, env, "serve", "--addr", "127.0.0.1:0", "--runs", runs, "--config", config, "--root", folder)
		loc := postRun(t, base, folder)
		ev, err := http.Get(base + loc + "/events")
		if err != nil {
			t.Fatal(err)
		}
		defer ev.Body.Close()
		frames := make(chan sseFrame)
		go func() {
			defer close(frames)
			sc := bufio.NewScanner(ev.Body)
			sc.Buffer(make([]byte, 64<<10), 4<<20)
			var cur sseFrame
			for sc.Scan() {
				line := sc.Text()
				switch {
				case line == "":
					frames <- cur
					cur = sseFrame{}
				case strings.HasPrefix(line, "event: "):
					cur.event = strings.TrimPrefix(line, "event: ")
				case strings.HasPrefix(line, "data: "):
					cur.data += strings.TrimPrefix(line, "data: ")
				}
			}
		}()
		first, stopped := true, false
		var sent time.Time
		end := ""
		for f := range frames {
			if f.event == "end" {
				end = f.data
				break
			}
			if f.event != "progress" {
				continue
			}
			var e research.Event
			if err := json.Unmarshal([]byte(f.data), &e); err != nil {
				t.Fatalf("progress frame %q: %v", f.data, err)
			}
			// The stream opens with the indexing, before the run's own stages.
			if first && e.Stage != research.StageIndex {
				t.Errorf("first event %s/%s, want an indexing event", e.Stage, e.Kind)
			}
			first = false
			if !stopped && e.Kind == research.EventIndexProgress && e.Total > 0 && e.Count > 0 && e.Count < e.Total {
				noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
				r, err := noRedirect.PostForm(base+loc+"/cancel", nil)
				if err != nil {
					t.Fatal(err)
				}
				r.Body.Close()
				stopped, sent = true, time.Now()
			}
		}
		if !stopped {
			t.Fatalf("no index_progress event with files done/total while indexing %d files", n)
		}
		t.Logf("viewer run ended %s after Stop", time.Since(sent).Round(time.Millisecond))
		if !strings.Contains(end, `"stopped"`) {
			t.Errorf("stream ended with %q, want status stopped", end)
		}
		page, err := http.Get(base + loc)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(page.Body)
		page.Body.Close()
		if !strings.Contains(string(body), `id="run-stopped"`) || strings.Contains(string(body), "deepresearch resume") {
			t.Errorf("run page of a run stopped while indexing: want the stopped note without a resume command")
		}
		if names := entries(t, runs); len(names) != 0 {
			t.Errorf("run folders left behind: %v", names)
		}
	})

	t.Run("mcp cancel", func(t *testing.T) {
		runs := filepath.Join(t.TempDir(), "mcpruns")
		base := startServer(t, bin, env, "mcp", "--http", "127.0.0.1:0", "--runs", runs, "--config", config, "--root", folder)
		rpc := newRawMCP(t, base+"/mcp")
		stream := rpc.post(t, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{
			"name": "deep_research", "arguments": map[string]any{"question": researchtest.Question, "sources": map[string]any{"corpus": []string{folder}}},
			"_meta": map[string]any{"progressToken": "tok"},
		}})
		defer stream.Body.Close()
		sc := bufio.NewScanner(stream.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		cancelled := false
		var sent time.Time
		var result json.RawMessage
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Message string   `json:"message"`
					Total   *float64 `json:"total"`
				} `json:"params"`
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal([]byte(data), &msg); err != nil {
				t.Fatalf("frame %q: %v", data, err)
			}
			if msg.Result != nil {
				result = msg.Result
				break
			}
			if msg.Method != "notifications/progress" {
				continue
			}
			if msg.Params.Total == nil || *msg.Params.Total <= 0 {
				t.Errorf("progress notification without a total: %s", data)
			}
			if !cancelled && midIndexing(msg.Params.Message) {
				r := rpc.post(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 2, "reason": "test"}})
				r.Body.Close()
				cancelled, sent = true, time.Now()
			}
		}
		if !cancelled {
			t.Fatalf("no progress notification with files done/total while indexing %d files", n)
		}
		t.Logf("MCP call answered %s after cancellation", time.Since(sent).Round(time.Millisecond))
		// A client that cancelled may ignore the answer; the server still answers, and truthfully.
		var res struct {
			IsError           bool `json:"isError"`
			Content           []struct{ Text string }
			StructuredContent struct{ Status, Dir string }
		}
		if err := json.Unmarshal(result, &res); err != nil {
			t.Fatalf("result %s: %v", result, err)
		}
		if res.StructuredContent.Status != research.RunStopped || res.StructuredContent.Dir != "" ||
			len(res.Content) == 0 || strings.Contains(res.Content[0].Text, "can be resumed") {
			t.Errorf("result of a call cancelled while indexing: want stopped, no folder, no resume offered: %s", result)
		}
		if names := entries(t, runs); len(names) != 0 {
			t.Errorf("run folders left behind: %v", names)
		}
	})

	// Three stops left the index consistent: the next update completes it, keeping what was done.
	out := runProc(t, bin, env, "index", "--config", config, folder)
	m := regexp.MustCompile(`(\d+) indexed \(\d+ added, 0 updated\), (\d+) unchanged, 0 removed;.* (\d+) documents in the index`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("index after the stops:\n%s", out)
	}
	added, _ := strconv.Atoi(m[1])
	kept, _ := strconv.Atoi(m[2])
	docs, _ := strconv.Atoi(m[3])
	if kept == 0 || added+kept != n || docs != n {
		t.Errorf("after the stops: %d kept, %d added, %d documents; want some kept and all %d indexed:\n%s", kept, added, docs, n, out)
	}
	out = runProc(t, bin, env, "search", "--config", config, "--corpus", folder, "hive 4321 frames")
	if !strings.Contains(out, "note04321.md#L") {
		t.Errorf("search after the stops does not find note 4321:\n%s", out)
	}
}

// rawMCP speaks MCP's Streamable HTTP by hand, so that a test sees what the server sends after a cancellation
// (the SDK's client drops it, as clients may).
type rawMCP struct {
	endpoint, session string
}

func newRawMCP(t *testing.T, endpoint string) *rawMCP {
	t.Helper()
	c := &rawMCP{endpoint: endpoint}
	resp := c.post(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"},
	}})
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.session = resp.Header.Get("Mcp-Session-Id")
	if c.session == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	resp = c.post(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	resp.Body.Close()
	return c
}

func (c *rawMCP) post(t *testing.T, msg any) *http.Response {
	t.Helper()
	body, _ := json.Marshal(msg)
	req, err := http.NewRequestWithContext(t.Context(), "POST", c.endpoint, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("POST %s: %s %s", c.endpoint, resp.Status, b)
	}
	return resp
}
