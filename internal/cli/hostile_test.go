package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// answers runs the command line and fails the test if it has not returned within a generous bound: a FIFO in
// a run folder used to block open(2) for good.
func answers(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	type result struct {
		out, err string
		code     int
	}
	done := make(chan result, 1)
	go func() {
		o, e, c := runCLI(t, args...)
		done <- result{o, e, c}
	}()
	select {
	case r := <-done:
		return r.out, r.err, r.code
	case <-time.After(30 * time.Second):
		t.Fatalf("%q did not answer", args)
		return "", "", 0
	}
}

// hostileBase makes a finished extractive run under runs/ and returns the runs folder and the run's folder.
func hostileBase(t *testing.T) (runs, run string) {
	t.Helper()
	isolateHome(t)
	docs := t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "bees.md"), []byte("# Bees\n\nHoney bees dance to tell the hive where flowers are.\n\nThe waggle dance gives the direction and the distance of the food.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs = filepath.Join(t.TempDir(), "runs")
	run = filepath.Join(runs, "good")
	if _, stderr, code := runCLI(t, "run", "--corpus", docs, "--out", run, "How do honey bees tell the hive where flowers are?"); code != 0 {
		t.Fatalf("base run: exit %d\n%s", code, stderr)
	}
	return runs, run
}

func writeRunsConfig(t *testing.T, runs string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "deepresearch.yaml")
	if err := os.WriteFile(p, []byte("research:\n  out_dir: "+runs+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// copyRun copies a run folder (files and docs/) to a new folder beside it.
func copyRun(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A run folder may come from someone else. A FIFO as state.db or events.jsonl, or a link out of the folder as
// events.jsonl or docs/, must neither hang a command nor let resume write outside the folder.
func TestHostileRunFolders(t *testing.T) {
	runs, good := hostileBase(t)
	cfg := writeRunsConfig(t, runs)
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(outside, "bashrc")
	if err := os.WriteFile(target, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, change func(dir string)) string {
		dir := filepath.Join(runs, name)
		copyRun(t, good, dir)
		// A stopped run, so that resume has work to do.
		db, err := state.Open(context.Background(), filepath.Join(dir, research.StateFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.SetMeta(context.Background(), "status", research.RunStopped); err != nil {
			t.Fatal(err)
		}
		db.Close()
		os.Remove(filepath.Join(dir, research.ReportJSONFile))
		os.Remove(filepath.Join(dir, research.ReportMarkdownFile))
		change(dir)
		return dir
	}
	fifo := func(p string) {
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stateFIFO := mk("state-fifo", func(d string) {
		for _, s := range []string{"", "-wal", "-shm"} {
			os.Remove(filepath.Join(d, research.StateFile+s))
		}
		fifo(filepath.Join(d, research.StateFile))
	})
	eventsFIFO := mk("events-fifo", func(d string) { fifo(filepath.Join(d, research.EventsFile)) })
	eventsLink := mk("events-link", func(d string) {
		os.Remove(filepath.Join(d, research.EventsFile))
		if err := os.Symlink(target, filepath.Join(d, research.EventsFile)); err != nil {
			t.Fatal(err)
		}
	})
	docsLink := mk("docs-link", func(d string) {
		os.RemoveAll(filepath.Join(d, research.DocsDir))
		if err := os.Symlink(outside, filepath.Join(d, research.DocsDir)); err != nil {
			t.Fatal(err)
		}
	})

	stdout, stderr, code := answers(t, "--config", cfg, "runs")
	if code != 0 || !strings.Contains(stdout, "state-fifo") || !strings.Contains(stdout, "good") {
		t.Errorf("runs: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // in stderr when the command fails
	}{
		{"show a FIFO state", []string{"show", stateFIFO}, "FIFO"},
		{"resume a FIFO state", []string{"resume", stateFIFO}, "FIFO"},
		{"show the events of a FIFO", []string{"show", "--events", eventsFIFO}, "FIFO"},
		{"resume with a FIFO as events", []string{"resume", eventsFIFO}, "FIFO"},
		{"resume with events linked out", []string{"resume", eventsLink}, "escapes"},
		{"resume with docs linked out", []string{"resume", docsLink}, "escapes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := answers(t, append([]string{"--config", cfg}, tc.args...)...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want a failure naming %q:\n%s", code, tc.want, stderr)
			}
		})
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me\n" {
		t.Errorf("resume wrote through events.jsonl's link: %q", b)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("resume wrote into the folder docs/ links to: %v", ents)
	}
}

// Text from outside — a page, a corpus file and its name, a question stored in a run folder — never reaches the
// terminal with its control sequences: OSC 52 (clipboard), OSC 0 (title), CSI 2J (clear), bidi overrides.
func TestEscapesNeverReachTheTerminal(t *testing.T) {
	const hostile = "\x1b]52;c;ZWNobyBvd25lZA==\x07\x1b]0;owned\x07\x1b[2J\u202e"
	clean := func(t *testing.T, what, s string) {
		t.Helper()
		for _, bad := range []string{"\x1b", "\x07", "\u202e", "\u009b"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s printed %q raw:\n%q", what, bad, s)
			}
		}
	}
	runs, good := hostileBase(t)
	cfg := writeRunsConfig(t, runs)

	docs := t.TempDir()
	name := "notes" + hostile + ".md"
	if err := os.WriteFile(filepath.Join(docs, name), []byte("# Waggle"+hostile+"\n\nThe waggle dance"+hostile+" points bees to flowers.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := answers(t, "index", "-v", docs)
	if code != 0 {
		t.Fatalf("index: %d %s", code, errs)
	}
	clean(t, "index -v", out+errs)
	if !strings.Contains(out, `\u001b]52`) {
		t.Errorf("index -v does not show the escaped name:\n%s", out)
	}
	out, errs, code = answers(t, "search", "--corpus", docs, "waggle dance")
	if code != 0 || !strings.Contains(out, "waggle") {
		t.Fatalf("search: %d\n%s\n%s", code, out, errs)
	}
	clean(t, "search", out+errs)

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head><title>Bees%s</title></head><body><main><h1>Waggle%s</h1><p>The waggle dance%s tells bees where the flowers are, and how far away they grow.</p></main></body></html>", hostile, hostile, hostile)
	}))
	defer page.Close()
	out, errs, code = answers(t, "fetch", "--allow-host", "127.0.0.1", page.URL)
	if code != 0 || !strings.Contains(out, "waggle dance") {
		t.Fatalf("fetch: %d\n%s\n%s", code, out, errs)
	}
	clean(t, "fetch", out+errs)

	// A run folder from elsewhere whose stored question and report carry the sequences.
	db, err := state.Open(context.Background(), filepath.Join(good, research.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetMeta(context.Background(), "question", "bees"+hostile); err != nil {
		t.Fatal(err)
	}
	db.Close()
	md, err := os.ReadFile(filepath.Join(good, research.ReportMarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(good, research.ReportMarkdownFile), append(md, hostile...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = answers(t, "--config", cfg, "runs")
	if code != 0 || !strings.Contains(out, "bees") {
		t.Fatalf("runs: %d\n%s\n%s", code, out, errs)
	}
	clean(t, "runs", out+errs)
	for _, args := range [][]string{{"show", good}, {"show", "--json", good}, {"show", "--events", good}} {
		out, errs, _ = answers(t, append([]string{"--config", cfg}, args...)...)
		clean(t, strings.Join(args, " "), out+errs)
	}
	// A question typed with the sequences is refused before any folder exists (TestQuestionsNeedWords); the
	// error that says so is printed escaped too.
	out, errs, code = answers(t, "run", "--corpus", docs, "--out", filepath.Join(runs, "q"), "bees"+hostile)
	if code == 0 {
		t.Fatal("a question with control characters was accepted")
	}
	clean(t, "run's error", out+errs)
}

// A question with no letter or digit (emoji only, zero-width characters) or with a control character is refused
// before a run folder is created, and too many rounds likewise.
func TestQuestionsNeedWords(t *testing.T) {
	isolateHome(t)
	docs := t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "a.md"), []byte("# A\nBees dance.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, question string
		extra          []string
		want           string
	}{
		{"emoji only", "🐝🐝❓", nil, "no letter or digit"},
		{"zero width only", "\u200b\u200c\u200d\ufeff", nil, "no letter or digit"},
		{"punctuation only", "?!…", nil, "no letter or digit"},
		{"NUL", "what do bees\x00 do", nil, "control character U+0000"},
		{"escape", "what do bees\x1b[2J do", nil, "control character U+001B"},
		{"rounds over the limit", "what do bees do", []string{"--rounds", "11"}, "--rounds 11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"run", "--corpus", docs, "--out", out}, tc.extra...)
			_, stderr, code := runCLI(t, append(args, tc.question)...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want a refusal naming %q:\n%s", code, tc.want, stderr)
			}
			if strings.Contains(stderr, "resume") {
				t.Errorf("the refusal suggests a resume that cannot succeed:\n%s", stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused question left a run folder (%v)", err)
			}
		})
	}
	// A question in any script, with a newline, is a question.
	out := filepath.Join(t.TempDir(), "run")
	// (Its report may cite nothing, exit 3: the run is what counts.)
	if _, stderr, code := runCLI(t, "run", "--corpus", docs, "--out", out, "蜜蜂\n做什么？"); code != 0 && code != ExitNothing {
		t.Errorf("a Chinese question was refused:\n%s", stderr)
	}
}

// A finished run whose report.md was deleted is not a dead end: resume and show write it again from
// report.json; without report.json both say what still works instead of pointing at each other.
func TestReportFilesRestored(t *testing.T) {
	_, good := hostileBase(t)
	md := filepath.Join(good, research.ReportMarkdownFile)
	want, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(md)
	out, stderr, code := answers(t, "resume", good)
	if code != 0 || !strings.Contains(out, "written again") {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, stderr)
	}
	if got, _ := os.ReadFile(md); string(got) != string(want) {
		t.Fatalf("report.md not restored whole")
	}
	os.Remove(md)
	os.Remove(filepath.Join(good, research.ReportJSONFile))
	for _, cmd := range []string{"show", "resume"} {
		_, stderr, code := answers(t, cmd, good)
		if code == 0 || !strings.Contains(stderr, "was removed") || strings.Contains(stderr, "deepresearch resume") {
			t.Errorf("%s of a run whose report files were removed: exit %d\n%s", cmd, code, stderr)
		}
	}
}
