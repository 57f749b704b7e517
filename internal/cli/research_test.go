package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/publish"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errw bytes.Buffer
	code := Main(t.Context(), args, strings.NewReader(""), &out, &errw, func(string) string { return "" })
	return out.String(), errw.String(), code
}

func TestRunCommandExtractiveEndToEnd(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	docs := filepath.Join(t.TempDir(), "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"channels.md": "# Channels\n\nA send on a channel is synchronized before the completion of the corresponding receive from that channel.\n\n" +
			"The closing of a channel is synchronized before a receive that returns a zero value because the channel is closed.\n",
		"mutex.md": "# Mutexes\n\nFor any sync.Mutex variable l and n < m, call n of l.Unlock() is synchronized before call m of l.Lock() returns.\n\n" +
			"A mutex protects shared memory from concurrent access by goroutines.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runDir := filepath.Join(t.TempDir(), "runs", "r1")
	stdout, stderr, code := runCLI(t, "run", "--corpus", docs, "--out", runDir,
		"What does a channel send synchronize with?")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if strings.TrimSpace(stdout) != filepath.Join(runDir, research.ReportMarkdownFile) {
		t.Fatalf("stdout = %q", stdout)
	}
	// Not a terminal: plain progress lines.
	for _, want := range []string{"sub-questions", "candidates picked", "report with"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "\x1b[") {
		t.Error("escape codes written to a non-terminal")
	}
	// The summary counts steps, not model calls, tokens and dollars that were never spent.
	if !regexp.MustCompile(`\d+ steps · no model calls, no cost`).MatchString(stderr) || strings.Contains(stderr, "tokens · $") {
		t.Errorf("summary line:\n%s", stderr)
	}
	rep, err := research.LoadReport(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Engine != "extractive" || !strings.Contains(rep.Markdown, "extractive mode — no language model") {
		t.Fatalf("engine %q, header:\n%s", rep.Engine, rep.Markdown)
	}
	if len(rep.Citations) == 0 {
		t.Fatalf("no citations:\n%s", rep.Markdown)
	}
	for _, c := range rep.Citations {
		for _, id := range c.EvidenceIDs {
			for _, e := range rep.Evidence {
				if e.ID != id {
					continue
				}
				text, err := research.LoadSourceText(runDir, e.Source)
				if err != nil || !publish.Grounded(text, e.Quote) {
					t.Fatalf("[%d] %s not grounded in %s: %v", c.N, id, e.Source, err)
				}
			}
		}
	}

	out, _, code := runCLI(t, "runs", "--dir", filepath.Dir(runDir))
	if code != 0 || !strings.Contains(out, rep.RunID) || !strings.Contains(out, "done") {
		t.Fatalf("runs: %d %q", code, out)
	}
	out, _, code = runCLI(t, "show", runDir)
	if code != 0 || out != rep.Markdown {
		t.Fatalf("show: %d %q", code, out)
	}
	out, _, code = runCLI(t, "resume", runDir)
	if code != 0 || !strings.Contains(out, "already finished") {
		t.Fatalf("resume of a finished run: %d %q", code, out)
	}
	_, errOut, code := runCLI(t, "show", "no-such-run")
	if code == 0 || !strings.Contains(errOut, `no run "no-such-run"`) {
		t.Fatalf("show missing: %d %q", code, errOut)
	}
}

func TestRunCommandNeedsASource(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	_, errOut, code := runCLI(t, "run", "--out", filepath.Join(t.TempDir(), "r"), "a question")
	if code == 0 || !strings.Contains(errOut, "no sources") {
		t.Fatalf("%d %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "run", "--engine", "llm", "--corpus", t.TempDir(), "a question")
	if code == 0 || !strings.Contains(errOut, "needs a model") {
		t.Fatalf("%d %q", code, errOut)
	}
}

func TestProgressDisplayPlainLines(t *testing.T) {
	var buf bytes.Buffer
	d := newProgressDisplay(&buf, "extractive", false)
	d.Event(research.Event{Stage: research.StageRead, Kind: research.EventEarlyStop, SubQuestion: "q2", Message: "no new claim"})
	d.Event(research.Event{Stage: research.StageRead, Kind: research.EventSkip})
	d.Finish()
	if got := buf.String(); !strings.Contains(got, "early stop for q2: no new claim") || strings.Count(got, "\n") != 1 {
		t.Fatalf("%q", got)
	}
}

func TestClipWidth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		w    int
		want string
	}{
		{"  stage: read", 8, "  stage:"},
		{"研究问题abc", 5, "研究"},
		{"short", 10, "short"},
	} {
		if got := clipWidth(tc.in, tc.w); got != tc.want {
			t.Errorf("clipWidth(%q, %d) = %q, want %q", tc.in, tc.w, got, tc.want)
		}
	}
}
