package cli_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/base/syncio"
	"github.com/deepresearch/deepresearch/internal/cli"
	"github.com/deepresearch/deepresearch/llm/providers"
	"github.com/deepresearch/deepresearch/research"
)

func TestVersion(t *testing.T) {
	code, flag, _ := runCLI(t, nil, "--version")
	code2, cmd, _ := runCLI(t, nil, "version", "--config", emptyConfig(t))
	if code != 0 || code2 != 0 || !strings.HasPrefix(flag, "deepresearch ") || flag != cmd {
		t.Errorf("--version %q (exit %d), version %q (exit %d)", flag, code, cmd, code2)
	}
}

func TestFlagMistakesAreExplained(t *testing.T) {
	cfg := emptyConfig(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--max-cots", "1", "q"}, "Did you mean --max-cost?"},
		{[]string{"runs", "--jsno"}, "Did you mean --json?"},
		{[]string{"show", "--opne"}, "Did you mean --open?"},
		{[]string{"run", "--xyzzy", "q"}, "See 'deepresearch run --help'."},
		{[]string{"search", "--provider", "tavily", "q"}, "pass it as --web tavily"},
	} {
		code, _, stderr := runCLI(t, nil, append(tc.args, "--config", cfg)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}

// The README names every provider the CLI accepts, and no other.
func TestReadmeProviderList(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)`--provider` accepts (.*?)\\(each").FindSubmatch(data)
	if m == nil {
		t.Fatal("README does not say which providers --provider accepts")
	}
	listed := regexp.MustCompile("`([a-z]+)`").FindAllSubmatch(m[1], -1)
	var names []string
	for _, l := range listed {
		names = append(names, string(l[1]))
	}
	if strings.Join(names, ",") != strings.Join(providers.Names(), ",") {
		t.Errorf("README lists %v, the CLI accepts %v", names, providers.Names())
	}
}

func TestBenchQualityUnknownIDListsTheIDs(t *testing.T) {
	code, _, stderr := runCLI(t, nil, "bench", "quality", "--only", "nope", "--config", emptyConfig(t))
	if code == 0 || !strings.Contains(stderr, "unknown question id nope") || !strings.Contains(stderr, "mem-channels") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// runsFixture makes two finished runs in a runs folder named by the configuration.
func runsFixture(t *testing.T) (cfg, runs string, ids []string) {
	t.Helper()
	runs = filepath.Join(t.TempDir(), "runs")
	cfg = filepath.Join(t.TempDir(), "deepresearch.yaml")
	if err := os.WriteFile(cfg, []byte("research:\n  out_dir: "+runs+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	corpus := t.TempDir()
	if err := os.WriteFile(filepath.Join(corpus, "bees.md"), []byte("# Bees\n\nHoneybees dance to tell nestmates where food is.\n\nThe waggle dance points at distant food.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"How do honeybees tell where food is?", "What does the waggle dance point at?"} {
		code, _, stderr := runCLI(t, nil, "run", "--plain", "--corpus", corpus, "--config", cfg, q)
		if code != 0 {
			t.Fatalf("run %q: exit %d\n%s", q, code, stderr)
		}
	}
	list, err := research.ListRuns(runs)
	if err != nil || len(list) != 2 {
		t.Fatalf("runs: %v %v", list, err)
	}
	return cfg, runs, []string{list[1].ID, list[0].ID} // oldest first
}

func TestRunsByPrefixLatestRmAndPrune(t *testing.T) {
	cfg, runs, ids := runsFixture(t)
	// No argument: the latest run.
	code, out, stderr := runCLI(t, nil, "show", "--config", cfg)
	if code != 0 || !strings.Contains(out, "waggle dance point") {
		t.Errorf("show with no run: exit %d, %q %s", code, out, stderr)
	}
	// A unique prefix; an ambiguous one names the candidates.
	common := commonPrefix(ids[0], ids[1])
	code, out, _ = runCLI(t, nil, "show", ids[0][:len(common)+1], "--config", cfg)
	if code != 0 || !strings.Contains(out, "tell where food is") {
		t.Errorf("show by unique prefix: exit %d, %q", code, out)
	}
	code, _, stderr = runCLI(t, nil, "show", common, "--config", cfg)
	if code == 0 || !strings.Contains(stderr, "matches 2 runs") || !strings.Contains(stderr, ids[0]) {
		t.Errorf("ambiguous prefix %q: exit %d, %s", common, code, stderr)
	}
	code, _, stderr = runCLI(t, nil, "show", "zzz", "--config", cfg)
	if code == 0 || !strings.Contains(stderr, `no run "zzz"`) {
		t.Errorf("unknown run: exit %d, %s", code, stderr)
	}

	code, out, _ = runCLI(t, nil, "runs", "rm", "--yes", ids[0], "--config", cfg)
	if code != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("runs rm: exit %d %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(runs, ids[0])); !os.IsNotExist(err) {
		t.Errorf("runs rm left the folder: %v", err)
	}
	_, out, _ = runCLI(t, nil, "runs", "--config", cfg)
	if strings.Contains(out, ids[0]) || !strings.Contains(out, ids[1]) {
		t.Errorf("runs after rm:\n%s", out)
	}
	code, out, _ = runCLI(t, nil, "runs", "prune", "--older-than", "30d", "--config", cfg)
	if code != 0 || !strings.Contains(out, "removed 0 run(s)") {
		t.Errorf("prune of nothing old: exit %d %q", code, out)
	}
	code, out, _ = runCLI(t, nil, "runs", "prune", "--older-than", "1ns", "--dry-run", "--config", cfg)
	if code != 0 || !strings.Contains(out, "would remove "+filepath.Join(runs, ids[1])) {
		t.Errorf("prune --dry-run: exit %d %q", code, out)
	}
	code, _, stderr = runCLI(t, nil, "runs", "prune", "--older-than", "soon", "--config", cfg)
	if code == 0 || !strings.Contains(stderr, "not an age") {
		t.Errorf("prune with a bad age: exit %d %s", code, stderr)
	}
	code, _, _ = runCLI(t, nil, "runs", "prune", "--older-than", "1ns", "--config", cfg)
	if list, _ := research.ListRuns(runs); code != 0 || len(list) != 0 {
		t.Errorf("prune left %d runs (exit %d)", len(list), code)
	}
}

func commonPrefix(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return a[:i]
}

// show --open serves the run in the web viewer and hands the link to the browser.
func TestShowOpen(t *testing.T) {
	cfg, _, ids := runsFixture(t)
	opened := filepath.Join(t.TempDir(), "opened")
	browser := filepath.Join(t.TempDir(), "browser")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\necho \"$1\" > "+opened+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out syncio.Buffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, []string{"show", "--open", ids[0][:len(ids[0])-1], "--config", cfg}, strings.NewReader(""), &out, io.Discard,
			fakeEnv(map[string]string{"BROWSER": browser}))
	}()
	linkRE := regexp.MustCompile(`http://127\.0\.0\.1:\d+/runs/\S+`)
	deadline := time.Now().Add(30 * time.Second)
	link := ""
	for link == "" {
		link = linkRE.FindString(out.String())
		if time.Now().After(deadline) {
			t.Fatalf("no link printed: %q", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.HasSuffix(link, "/runs/"+ids[0]) {
		t.Errorf("link %s does not open run %s", link, ids[0])
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "tell where food is") {
		t.Errorf("viewer page: %d", resp.StatusCode)
	}
	for {
		b, err := os.ReadFile(opened)
		if err == nil && strings.TrimSpace(string(b)) == link {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the browser was not given the link: %q %v", b, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("show --open exit %d", code)
	}
}

// A model that cannot be reached fails the run with one message, and an unknown model name is explained once.
func TestModelFailureAndUnknownModelSaidOnce(t *testing.T) {
	corpus := t.TempDir()
	if err := os.WriteFile(filepath.Join(corpus, "b.md"), []byte("# Bees\n\nHoneybees dance.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, map[string]string{"OPENAI_API_KEY": "x"}, "run", "--plain", "--config", emptyConfig(t),
		"--provider", "openai", "--base-url", "http://127.0.0.1:1/v1", "--model", "my-local-llm",
		"--corpus", corpus, "--out", filepath.Join(t.TempDir(), "run"), "how do bees dance")
	if code == 0 {
		t.Fatal("a run against a closed port succeeded")
	}
	if n := strings.Count(stderr, "connection refused"); n != 1 {
		t.Errorf("the model failure is printed %d times:\n%s", n, stderr)
	}
	if n := strings.Count(stderr, `model "my-local-llm" is not in the built-in catalogue`); n != 1 || !strings.Contains(stderr, "--max-cost cannot trip") ||
		!strings.Contains(stderr, "my-local-llm: {context_window:") {
		t.Errorf("the unknown model is explained %d times:\n%s", n, stderr)
	}
	if strings.Contains(stderr, "level=") {
		t.Errorf("raw log lines on the terminal:\n%s", stderr)
	}
}

// chat with no model still starts: /deep-research runs with the extractive engine, conversation says how to
// configure a model, and the run it started is listed by `runs` in that folder. ask explains the same.
func TestChatAndAskWithoutAModel(t *testing.T) {
	ws := t.TempDir()
	for name, text := range map[string]string{
		"waggle.md": "# Waggle dance\n\nHoneybees communicate the location of distant food sources with the waggle dance.\n",
		"scent.md":  "# Scent\n\nBesides dancing, honeybees use scent to communicate where food is.\n",
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(ws)
	cfg := emptyConfig(t)
	var out, errb bytes.Buffer
	in := strings.NewReader("hello there\n/deep-research How do honeybees communicate the location of food?\n/exit\n")
	code := cli.Main(t.Context(), []string{"chat", "--config", cfg}, in, &out, &errb, fakeEnv(nil))
	stdout := out.String()
	if code != 0 {
		t.Fatalf("chat without a model: exit %d\n%s\n%s", code, stdout, errb.String())
	}
	for _, want := range []string{"no model: /deep-research <question> works", "No model is configured, so there is no conversation",
		"--provider ollama --model qwen3", "Report: ", "evidence items cited"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("chat output lacks %q:\n%s", want, stdout)
		}
	}
	code, listed, stderr := runCLI(t, nil, "runs", "--config", cfg)
	if code != 0 || !strings.Contains(listed, "How do honeybees communicate the location of food?") {
		t.Errorf("runs does not list the chat's run (exit %d):\n%s%s", code, listed, stderr)
	}
	code, _, stderr = runCLI(t, nil, "ask", "--config", cfg, "hi")
	if code == 0 || !strings.Contains(stderr, "--provider ollama --model qwen3") {
		t.Errorf("ask without a model: exit %d, %s", code, stderr)
	}
}
