package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/research/state"
)

// ptyTerm is the person's side of a pseudo-terminal: what the program shows, and what is typed.
type ptyTerm struct {
	t      *testing.T
	master *os.File
	mu     sync.Mutex
	seen   strings.Builder
	pos    int
}

func newPTY(t *testing.T) (*ptyTerm, *os.File) {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	t.Cleanup(func() { master.Close(); tty.Close() })
	p := &ptyTerm{t: t, master: master}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.seen.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return p, tty
}

// expect waits for re to appear after the last match.
func (p *ptyTerm) expect(re string) []string {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(3 * time.Minute) // waits for the output, not for time: long on a loaded machine
	for time.Now().Before(deadline) {
		p.mu.Lock()
		s := p.seen.String()[p.pos:]
		if loc := rx.FindStringSubmatchIndex(s); loc != nil {
			m := rx.FindStringSubmatch(s)
			p.pos += loc[1]
			p.mu.Unlock()
			return m
		}
		p.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t.Fatalf("the terminal never showed %q; it shows:\n%s", re, p.seen.String()[p.pos:])
	return nil
}

func (p *ptyTerm) typeLine(s string) {
	p.t.Helper()
	if _, err := p.master.Write([]byte(s + "\r")); err != nil {
		p.t.Fatal(err)
	}
}

// runOnPTY runs the CLI with the terminal as standard input and error output, and returns its exit code.
func runOnPTY(t *testing.T, tty *os.File, env map[string]string, args ...string) chan int {
	done := make(chan int, 1)
	go func() {
		var out strings.Builder
		done <- Main(t.Context(), args, tty, &out, tty, func(k string) string { return env[k] })
	}()
	return done
}

// endedPlan waits for the run runOnPTY started to end with exit 0 (long: it waits for the run, not for time) and
// returns the plan it researched, from its run folder.
func endedPlan(t *testing.T, done chan int, runDir string) *research.Plan {
	t.Helper()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("the run did not end")
	}
	plan, err := research.ParsePlan(mustReadFile(t, filepath.Join(runDir, research.PlanFile)))
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func kilnCorpus(t *testing.T) string {
	t.Helper()
	docs := filepath.Join(t.TempDir(), "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range kilnDocs {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return docs
}

// fakeEditor writes an editor script that replaces the file it is given with each of edits in turn (one per
// run), exiting with the status that follows it ("0", "1").
func fakeEditor(t *testing.T, edits ...[2]string) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("#!/bin/sh\nn=$(cat \"" + dir + "/n\" 2>/dev/null || echo 0)\necho $((n+1)) > \"" + dir + "/n\"\ncase $n in\n")
	for i, e := range edits {
		name := filepath.Join(dir, "edit"+string(rune('0'+i)))
		if err := os.WriteFile(name, []byte(e[0]), 0o644); err != nil {
			t.Fatal(err)
		}
		b.WriteString("  " + string(rune('0'+i)) + ") cp \"" + name + "\" \"$1\"; exit " + e[1] + ";;\n")
	}
	b.WriteString("esac\nexit 3\n")
	script := filepath.Join(dir, "editor.sh")
	if err := os.WriteFile(script, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// TestReviewThePlanOnATerminal drives run --review in a real pseudo-terminal: the plan is shown before anything
// is searched; an editor that exits with an error and one that writes invalid YAML lose nothing (the terminal
// says where the edits are kept, and they are there); a valid edit, a dropped and an added sub-question are what
// the run researches, and plan.yaml holds it.
func TestReviewThePlanOnATerminal(t *testing.T) {
	isolateHome(t)
	docs := kilnCorpus(t)
	srv := openaifake.New(t, openaifake.Config{APIKey: "fake-key", GapSubQuestion: -1})
	editor := fakeEditor(t,
		[2]string{"sub_questions:\n  - How fast does the Kestrel kiln dry timber\n", "1"}, // the editor fails
		[2]string{"sub_questions: [unclosed\n", "0"},                                      // invalid YAML
		[2]string{"sub_questions:\n  - question: How fast does the Kestrel kiln dry oak boards?\n    queries: [summer trial boards dried]\n  - question: What does a Kestrel kiln cost?\n", "0"})
	term, tty := newPTY(t)
	runDir := filepath.Join(t.TempDir(), "runs", "reviewed")
	done := runOnPTY(t, tty, map[string]string{"OPENAI_API_KEY": "fake-key", "EDITOR": editor, "TERM": "dumb"},
		"--config", writeConfig(t, ""), "run", "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "fake-research",
		"--corpus", docs, "--out", runDir, "--plain", "--review", kilnQuestion)

	term.expect(`The plan for "` + regexp.QuoteMeta(kilnQuestion) + `"`)
	term.expect(`Research this plan\?`)
	if n := srv.Count(openaifake.RoleSearcher); n != 0 {
		t.Fatalf("%d searches before the plan was accepted", n)
	}
	term.typeLine("e")
	m := term.expect(`the editor \(.*\) failed: exit status 1\s+Your edits are kept in (\S+)\.`)
	if b, err := os.ReadFile(m[1]); err != nil || !strings.Contains(string(b), "How fast does the Kestrel kiln dry timber") {
		t.Fatalf("the failed edit's file %s: %q, %v", m[1], b, err)
	}
	term.typeLine("e")
	m = term.expect(`not valid YAML.*\s+Your edits are kept in (\S+)\.`)
	if b, _ := os.ReadFile(m[1]); !strings.Contains(string(b), "[unclosed") {
		t.Fatalf("the invalid edit was not kept in %s: %q", m[1], b)
	}
	term.typeLine("e")
	term.expect(`1\. How fast does the Kestrel kiln dry oak boards\?`)
	term.expect(`Research this plan\?`)
	term.typeLine("d 2")
	term.expect(`Research this plan\?`)
	term.typeLine("+ How long do oak planks need in December and January?")
	term.expect(`2\. How long do oak planks need in December and January\?`)
	term.expect(`Research this plan\?`)
	term.typeLine("")
	plan := endedPlan(t, done, runDir)
	if len(plan.SubQuestions) != 2 || plan.SubQuestions[0].Question != "How fast does the Kestrel kiln dry oak boards?" ||
		plan.SubQuestions[1].Question != "How long do oak planks need in December and January?" {
		t.Fatalf("plan.yaml holds %+v", plan.SubQuestions)
	}
	if _, err := os.Stat(filepath.Join(runDir, editFile)); err == nil {
		t.Errorf("the edit file is left after a good edit")
	}
	if srv.Count(openaifake.RolePlanner) != 1 {
		t.Errorf("%d planner calls", srv.Count(openaifake.RolePlanner))
	}
}

// TestReviewAndClarifyNeedATerminal: --review with no terminal is refused before anything runs (pointing to
// --plan); --clarify with no terminal plans without asking.
func TestReviewAndClarifyNeedATerminal(t *testing.T) {
	isolateHome(t)
	docs := kilnCorpus(t)
	srv := openaifake.New(t, openaifake.Config{APIKey: "fake-key", GapSubQuestion: -1, Clarify: []string{"Which kiln?"}})
	base := []string{"--config", writeConfig(t, ""), "run", "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "fake-research", "--corpus", docs}
	_, stderr, code := runLLM(t, map[string]string{"OPENAI_API_KEY": "fake-key"}, append(base, "--review", "--out", filepath.Join(t.TempDir(), "r"), kilnQuestion)...)
	if code != 2 || !strings.Contains(stderr, "needs a terminal") || !strings.Contains(stderr, "--plan FILE") || srv.Count(openaifake.RolePlanner) != 0 {
		t.Fatalf("exit %d, %d planner calls:\n%s", code, srv.Count(openaifake.RolePlanner), stderr)
	}
	_, stderr, code = runLLM(t, map[string]string{"OPENAI_API_KEY": "fake-key"}, append(base, "--clarify", "--out", filepath.Join(t.TempDir(), "c"), kilnQuestion)...)
	if code != 0 || !strings.Contains(stderr, "no terminal to ask clarifying questions on") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	for _, c := range srv.Calls() {
		if c.Clarify {
			t.Fatal("the planner was asked to clarify with no terminal")
		}
	}
}

// TestRunWithAPlanFile: run --plan researches the file's sub-questions without asking the planner; a hostile
// plan file is refused with the reason before anything runs.
func TestRunWithAPlanFile(t *testing.T) {
	isolateHome(t)
	docs := kilnCorpus(t)
	srv := openaifake.New(t, openaifake.Config{APIKey: "fake-key", GapSubQuestion: -1})
	base := []string{"--config", writeConfig(t, ""), "run", "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "fake-research", "--corpus", docs}
	dir := t.TempDir()
	good := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(good, []byte("- How much do the materials of a Kestrel kiln cost in euros?\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "run")
	stdout, stderr, code := runLLM(t, map[string]string{"OPENAI_API_KEY": "fake-key"}, append(base, "--plan", good, "--out", runDir, kilnQuestion)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	rep := checkReport(t, runDir)
	if srv.Count(openaifake.RolePlanner) != 0 || rep.Stats.SubQuestions != 1 || !strings.Contains(rep.Markdown, "2,400 euros") {
		t.Fatalf("%d planner calls, %d sub-questions:\n%s", srv.Count(openaifake.RolePlanner), rep.Stats.SubQuestions, rep.Markdown)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("sub_questions:\n"+strings.Repeat("  - Why?\n", 3000)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runLLM(t, map[string]string{"OPENAI_API_KEY": "fake-key"}, append(base, "--plan", bad, "--out", filepath.Join(dir, "bad"), kilnQuestion)...)
	if code != 2 || !strings.Contains(stderr, "3000 sub-questions; a run researches at most 8") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	_, stderr, code = runLLM(t, map[string]string{"OPENAI_API_KEY": "fake-key"}, append(base, "--plan", filepath.Join(dir, "missing.yaml"), kilnQuestion)...)
	if code != 2 || !strings.Contains(stderr, "missing.yaml") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestClarifyOnATerminal: with --clarify on a terminal the planner's questions are asked inline, the typed
// answers (one left open with Enter) reach the plan, and the research log records both.
func TestClarifyOnATerminal(t *testing.T) {
	isolateHome(t)
	docs := kilnCorpus(t)
	srv := openaifake.New(t, openaifake.Config{APIKey: "fake-key", GapSubQuestion: -1,
		Clarify: []string{"Which kiln do you mean?", "For which season?"}})
	term, tty := newPTY(t)
	runDir := filepath.Join(t.TempDir(), "runs", "clarified")
	done := runOnPTY(t, tty, map[string]string{"OPENAI_API_KEY": "fake-key", "TERM": "dumb"},
		"--config", writeConfig(t, ""), "run", "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "fake-research",
		"--corpus", docs, "--out", runDir, "--plain", "--clarify", "What does the kiln cost?")
	term.expect(`2 question\(s\) about what you mean`)
	term.expect(`1\. Which kiln do you mean\?\s+> `)
	term.typeLine("the Kestrel solar kiln")
	term.expect(`2\. For which season\?\s+> `)
	term.typeLine("")
	plan := endedPlan(t, done, runDir)
	if !strings.Contains(plan.SubQuestions[0].Question, "the Kestrel solar kiln") {
		t.Errorf("the answer did not reach the plan: %+v", plan.SubQuestions)
	}
	db, err := state.OpenReadOnly(t.Context(), filepath.Join(runDir, research.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	log, err := db.Log(t.Context(), research.StageScope)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range log {
		if e.Decision == "clarified" {
			got = append(got, e.Detail)
		}
	}
	if len(got) != 2 || got[0] != "Which kiln do you mean? → the Kestrel solar kiln" || got[1] != "For which season? → (no answer)" {
		t.Errorf("the research log holds %q", got)
	}
}
