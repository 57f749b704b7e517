package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

// procEnv is the environment of the processes a test starts: its own cache (where the per-folder indexes live),
// configuration and home.
func procEnv(t *testing.T) (env []string, config string) {
	t.Helper()
	home := t.TempDir()
	config = filepath.Join(home, "deepresearch.yaml")
	if err := os.WriteFile(config, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=")
	return env, config
}

// runProc runs the binary to completion and returns its combined output, failing the test on a non-zero exit.
func runProc(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	// A hang guard, not a timing: indexing thousands of files with a race-built binary on a loaded 2-core machine
	// once took over two minutes.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("deepresearch %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

var addrRE = regexp.MustCompile(`serving on (http://127\.0\.0\.1:\d+)`)

// startServer starts a long-lived surface and returns its base URL; the process is stopped at the end of the test.
func startServer(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case base := <-found:
		return base
	case <-time.After(30 * time.Second):
		t.Fatalf("deepresearch %s printed no address", strings.Join(args, " "))
	}
	return ""
}

// waitRun follows a viewer run's event stream to its end and returns the final frame's data and the kinds of the
// progress events seen, in order.
func waitRun(t *testing.T, base, loc string) (string, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+loc+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	frames, err := readSSE(resp.Body)
	if err != nil || len(frames) == 0 {
		t.Fatalf("event stream: %v (%d frames)", err, len(frames))
	}
	var kinds []string
	for _, f := range frames {
		var e research.Event
		if f.event == "progress" && json.Unmarshal([]byte(f.data), &e) == nil {
			kinds = append(kinds, e.Kind)
		}
	}
	return frames[len(frames)-1].data, kinds
}

// TestCorpusSharedByProcesses: after a viewer and an MCP server have each run research over a folder and sit idle,
// the command-line run, search and index still work on that folder — also when the folder changed and must be
// re-indexed — instead of timing out on a lock the servers hold.
func TestCorpusSharedByProcesses(t *testing.T) {
	bin := researchtest.BuildBinary(t)
	env, config := procEnv(t)
	folder := copyCorpus(t)

	base := startServer(t, bin, env, "serve", "--addr", "127.0.0.1:0", "--runs", filepath.Join(t.TempDir(), "runs"), "--config", config, "--root", folder)
	end, kinds := waitRun(t, base, postRun(t, base, folder))
	if !strings.Contains(end, `"done"`) {
		t.Fatalf("viewer run did not finish: %s", end)
	}
	// Indexing the fresh folder showed as run events before the run started searching.
	if i := slices.Index(kinds, research.EventIndexProgress); i < 0 || i > slices.Index(kinds, research.EventRunStart) {
		t.Errorf("no index_progress event before run_start: %v", kinds)
	}

	mcpBase := startServer(t, bin, env, "mcp", "--http", "127.0.0.1:0", "--runs", filepath.Join(t.TempDir(), "mcpruns"), "--config", config, "--root", folder)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: mcpBase + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "deep_research", Arguments: map[string]any{
		"question": researchtest.Question, "sources": map[string]any{"corpus": []string{folder}},
	}})
	if err != nil || res.IsError {
		t.Fatalf("MCP deep_research: %v %+v", err, res)
	}

	// Both servers are idle now. Change the folder so that the next use must write a new index.
	if err := os.WriteFile(filepath.Join(folder, "waggle-note.md"), []byte("# Note\n\nThe waggle run encodes the distance to the flowers.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runProc(t, bin, env, "run", "--config", config, "--out", filepath.Join(t.TempDir(), "run1"), "--corpus", folder, researchtest.Question)
	if !strings.Contains(out, "1 added") {
		t.Errorf("run did not index the new file:\n%s", out)
	}
	out = runProc(t, bin, env, "search", "--config", config, "--corpus", folder, "waggle run distance")
	if !strings.Contains(out, "waggle-note.md#L") {
		t.Errorf("search did not find the new file:\n%s", out)
	}
	if err := os.Remove(filepath.Join(folder, "waggle-note.md")); err != nil {
		t.Fatal(err)
	}
	out = runProc(t, bin, env, "index", "--config", config, folder)
	if !strings.Contains(out, "1 removed") {
		t.Errorf("index did not drop the removed file:\n%s", out)
	}
	// The servers still answer, over the index the CLI changed under them.
	if end, _ := waitRun(t, base, postRun(t, base, folder)); !strings.Contains(end, `"done"`) {
		t.Fatalf("second viewer run did not finish: %s", end)
	}
}

// TestConcurrentRunsIndexOnce: eight runs started at once over the same fresh folder all succeed; the folder is
// indexed by one of them while the others wait, and the index is whole afterwards.
func TestConcurrentRunsIndexOnce(t *testing.T) {
	bin := researchtest.BuildBinary(t)
	env, config := procEnv(t)
	folder := copyCorpus(t)
	files, _ := os.ReadDir(folder)
	// Files found not to be documents only by reading them: the first update remembers them, and the runs that
	// waited for it find nothing to do instead of each reading them again and writing a generation of its own.
	for name, content := range map[string]string{
		"gen.go":      "// Code generated by stringer. DO NOT EDIT.\n\npackage gen\n",
		"gen.js":      "// @generated\nexport const x = 1;\n",
		"nul.txt":     "words\x00\x01 and a NUL byte\n",
		"utf16.txt":   "\xff\xfeT\x00h\x00e\x00 \x00b\x00e\x00e\x00\n\x00",
		"broken.docx": "not a zip archive",
	} {
		if err := os.MkdirAll(filepath.Join(folder, "other"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(folder, "other", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const n = 8
	outs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "run", "--config", config, "--out", filepath.Join(t.TempDir(), fmt.Sprint("run", i)),
				"--corpus", folder, researchtest.Question)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			outs[i], errs[i] = string(out), err
		})
	}
	wg.Wait()
	indexed := 0
	for i := range n {
		if errs[i] != nil {
			t.Errorf("run %d: %v\n%s", i, errs[i], outs[i])
		}
		if regexp.MustCompile(`[1-9]\d* added`).MatchString(outs[i]) {
			indexed++
		}
	}
	if indexed != 1 {
		t.Errorf("%d runs indexed the folder, want exactly 1", indexed)
	}

	// One generation was built, and it is complete: an update finds nothing to do and search works.
	dir := filepath.Join(envValue(env, "XDG_CACHE_HOME"), "deepresearch", "corpus")
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 {
		t.Fatalf("index dirs under %s: %v %v", dir, ents, err)
	}
	cur, err := os.ReadFile(filepath.Join(dir, ents[0].Name(), "current"))
	if err != nil || strings.TrimSpace(string(cur)) != "g000000000001" {
		t.Errorf("current generation %q (%v), want the first one", cur, err)
	}
	out := runProc(t, bin, env, "index", "--config", config, folder)
	for _, want := range []string{
		fmt.Sprintf("0 indexed (0 added, 0 updated), %d unchanged, 0 removed", len(files)),
		"2 binary, 2 excluded (hidden, vendored, generated or .gitignore'd), 1 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("index after the runs: want %q in\n%s", want, out)
		}
	}
	if cur, err := os.ReadFile(filepath.Join(dir, ents[0].Name(), "current")); err != nil || strings.TrimSpace(string(cur)) != "g000000000001" {
		t.Errorf("current generation after index %q (%v), want the first one", cur, err)
	}
	ix, err := corpus.Open(filepath.Join(dir, ents[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.DocCount() != len(files) {
		t.Errorf("index holds %d documents, folder %d", ix.DocCount(), len(files))
	}
	rs, err := ix.Search(t.Context(), "waggle dance", 5)
	if err != nil || len(rs) == 0 {
		t.Errorf("search after the runs: %v %v", rs, err)
	}
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
