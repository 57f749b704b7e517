package chat

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/workspace"
)

// terminal is the user's side of a pseudo-terminal: what they type and what they see.
type terminal struct {
	t      *testing.T
	master *os.File
	mu     sync.Mutex
	seen   strings.Builder
	pos    int // end of the last match
	wake   chan struct{}
}

func newTerminal(t *testing.T) (*terminal, *os.File) {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	t.Cleanup(func() { master.Close(); tty.Close() })
	term := &terminal{t: t, master: master, wake: make(chan struct{}, 1)}
	go term.read()
	return term, tty
}

// read collects everything the terminal shows until it closes.
func (term *terminal) read() {
	buf := make([]byte, 4096)
	for {
		n, err := term.master.Read(buf)
		if n > 0 {
			term.mu.Lock()
			term.seen.Write(buf[:n])
			term.mu.Unlock()
			select {
			case term.wake <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// typeLine types a line and presses Enter.
func (term *terminal) typeLine(s string) {
	term.t.Helper()
	if _, err := term.master.Write([]byte(s + "\r")); err != nil {
		term.t.Fatalf("type %q: %v", s, err)
	}
}

// expectWithin bounds how long expect waits for the screen to show what it wants: long, since it waits for an
// event, not for time (a /deep-research under -race on a loaded 2-core machine takes tens of seconds).
const expectWithin = 3 * time.Minute

// expect waits until the screen shows re after the previous match and returns the match.
func (term *terminal) expect(re string) []string {
	term.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(expectWithin)
	for {
		term.mu.Lock()
		s := term.seen.String()
		loc := rx.FindStringSubmatchIndex(s[term.pos:])
		if loc != nil {
			m := rx.FindStringSubmatch(s[term.pos:])
			term.pos += loc[1]
			term.mu.Unlock()
			return m
		}
		term.mu.Unlock()
		select {
		case <-term.wake:
		case <-deadline:
			term.t.Fatalf("the terminal never showed %q; it shows:\n%s", re, s[term.pos:])
		}
	}
}

// brain is the scripted model: it answers from the conversation so the test can tell what the agent saw.
type brain struct {
	mu        sync.Mutex
	summaries []string      // instructions seen by summary calls
	requests  []string      // the conversation text of every request
	thinking  chan struct{} // receives when a slow turn ("think slowly") has reached the model
}

// sawSince reports whether a request after the first n contained s.
func (b *brain) sawSince(n int, s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.requests[min(n, len(b.requests)):] {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}

func (b *brain) calls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.requests)
}

func lastUser(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

func (b *brain) answer(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	var sb strings.Builder
	for _, m := range req.Messages {
		sb.WriteString(m.Content + "\n")
	}
	all := sb.String()
	b.mu.Lock()
	b.requests = append(b.requests, all)
	b.mu.Unlock()
	if len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, contextmgr.SummarizerPrompt[:40]) {
		b.mu.Lock()
		b.summaries = append(b.summaries, all)
		b.mu.Unlock()
		return scripted.Reply("SESSION INTENT\nLearn what is in the workspace.\n\nSUMMARY\nThe workspace holds notes.md; deep research on honeybees was run.\n\nARTIFACTS\nnotes.md\n\nNEXT STEPS\nNone"), nil
	}
	last := req.Messages[len(req.Messages)-1]
	user := lastUser(req)
	switch {
	case last.Role == llm.RoleTool:
		return scripted.Reply("The workspace holds: " + strings.Join(strings.Fields(last.Content), " ")), nil
	case strings.Contains(user, "What files"):
		return scripted.Reply("", llm.ToolCall{ID: "c1", Name: "ls", Arguments: `{"path":"."}`}), nil
	case strings.Contains(user, "think slowly"):
		select {
		case b.thinking <- struct{}{}:
		default:
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Second):
			return scripted.Reply("finally"), nil
		}
	case strings.Contains(user, "What do you remember"):
		// Answer only from what the resumed history actually holds.
		var facts []string
		for _, f := range []string{"notes.md", "report.md", "honeybees"} {
			if strings.Contains(all, f) {
				facts = append(facts, f)
			}
		}
		return scripted.Reply("I remember: " + strings.Join(facts, ", ")), nil
	}
	return scripted.Reply("echo: " + user), nil
}

type fixture struct {
	ws       *workspace.Workspace
	model    *scripted.Model
	brain    *brain
	cm       *contextmgr.Manager
	sessions Store
	eng      *researchtest.Engine
	runs     string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Notes\nbees\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(dir, workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := contextmgr.New(ws, contextmgr.Config{Preset: contextmgr.PresetHybrid, NoMemory: true, NoProjectMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	b := &brain{thinking: make(chan struct{}, 1)}
	return &fixture{
		ws: ws, brain: b, cm: cm,
		model:    scripted.New(llm.Info{Name: "scripted-chat", ContextWindow: 32_000, Price: llm.Price{Input: 1, Output: 2}}, b.answer),
		sessions: Store{Dir: filepath.Join(dir, ".deepresearch", "sessions")},
		eng:      researchtest.New(t, 0),
		runs:     t.TempDir(),
	}
}

func (f *fixture) config(in, out *os.File, resume string, interrupt chan struct{}, ledger *llm.Ledger) Config {
	model := llm.Metered(f.model, ledger, "agent")
	return Config{
		In: in, Out: out,
		Agent: agent.Config{
			Model:      model,
			System:     "You are a test assistant working in " + f.ws.Root(),
			Tools:      append(f.ws.Tools(), f.cm.Tools()...),
			Middleware: []agent.Middleware{f.cm},
		},
		Ledger:    ledger,
		Sessions:  f.sessions,
		Resume:    resume,
		Workspace: f.ws.Root(),
		Research: func(ctx context.Context, q, _ string, on func(research.Event)) (*research.Report, error) {
			id := fmt.Sprintf("run-%d", time.Now().UnixNano())
			return f.eng.Run(ctx, q, id, filepath.Join(f.runs, id), on)
		},
		Compact: func(ctx context.Context, st *agent.State, instr string) (string, error) {
			r, err := f.cm.Compact(ctx, st, instr)
			return r.Line, err
		},
		Context:   func(st *agent.State) string { return f.cm.Report(st).String() },
		Interrupt: interrupt,
	}
}

func startChat(t *testing.T, cfg Config) chan error {
	done := make(chan error, 1)
	go func() { done <- Run(t.Context(), cfg) }()
	return done
}

func waitExit(t *testing.T, done chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chat ended with %v", err)
		}
	case <-time.After(expectWithin):
		t.Fatal("chat did not exit")
	}
}

func TestChatThroughPTY(t *testing.T) {
	f := newFixture(t)
	term, tty := newTerminal(t)
	interrupt := make(chan struct{}, 1)
	done := startChat(t, f.config(tty, tty, "", interrupt, &llm.Ledger{}))

	id := term.expect(`deepresearch chat — session (\S+) in `)[1]
	term.expect(regexp.QuoteMeta(Prompt))

	// A turn with a tool call through the runtime's workspace tools.
	term.typeLine("What files are in the workspace?")
	term.expect(`→ ls \{"path":"\."\}`)
	term.expect(`The workspace holds: .*notes\.md`)
	term.expect(regexp.QuoteMeta(Prompt))

	// A long turn, so that /compact below has something to gain (it leaves the context alone otherwise).
	term.typeLine(strings.Repeat("hello again ", 250))
	term.expect(`echo: hello again`)
	term.expect(regexp.QuoteMeta(Prompt))

	// /context is the context manager's report.
	term.typeLine("/context")
	term.expect(`Context: [\d,]+ of 32,000 tokens`)
	term.expect(`tool schemas`)

	// /deep-research runs the graph and prints the report path and a summary.
	term.typeLine("/deep-research " + researchtest.Question)
	term.expect(`▸ scope`)
	m := term.expect(`Report: (\S+report\.md)`)
	if _, err := os.Stat(m[1]); err != nil {
		t.Errorf("printed report path %s: %v", m[1], err)
	}
	expectReportSummary(t, term)
	afterResearch := f.brain.calls()

	// /cost reports the ledger.
	term.typeLine("/cost")
	term.expect(`Session ` + regexp.QuoteMeta(id) + `: [1-9]\d* model calls, \d+ input tokens`)
	term.expect(`agent\s+\d+ calls`)

	// /compact goes through the context manager with the user's instructions.
	term.typeLine("/compact keep the file names")
	term.expect(`context compacted \(manual`)
	f.brain.mu.Lock()
	n := len(f.brain.summaries)
	steered := n > 0 && strings.Contains(f.brain.summaries[n-1], "keep the file names")
	f.brain.mu.Unlock()
	if !steered {
		t.Errorf("the summary call did not carry the /compact instructions (%d summary calls)", n)
	}

	// Ctrl-C cancels a running turn and the chat carries on.
	term.typeLine("please think slowly")
	select { // the turn is at the model: the interrupt cancels it, rather than arriving before it starts
	case <-f.brain.thinking:
	case <-time.After(expectWithin):
		t.Fatal("the slow turn never reached the model")
	}
	interrupt <- struct{}{}
	term.expect(`\(interrupted\)`)
	term.typeLine("hello again")
	term.expect(`echo: hello again`)
	// The agent was told where the report is: the model's requests since /deep-research carry the path.
	if !f.brain.sawSince(afterResearch, m[1]) {
		t.Errorf("no model request after /deep-research names the report %s", m[1])
	}

	// Unknown commands and bad usage get a clear message.
	term.typeLine("/deep-research")
	term.expect(`usage: /deep-research \[--new\] <question>`)
	term.typeLine("/frobnicate")
	term.expect(`unknown command /frobnicate`)

	term.typeLine("/exit")
	term.expect(`Resume it with: deepresearch chat --resume ` + regexp.QuoteMeta(id))
	waitExit(t, done)

	// The session is on disk with the whole conversation and its spend.
	sess, err := f.sessions.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Calls == 0 || sess.CostUSD <= 0 || len(sess.Reports) != 1 || sess.Reports[0] != m[1] || sess.Title != "What files are in the workspace?" {
		t.Errorf("saved session: calls %d, cost %v, reports %v, title %q", sess.Calls, sess.CostUSD, sess.Reports, sess.Title)
	}

	// Resume in a new "process": the history comes back and the model sees it.
	term2, tty2 := newTerminal(t)
	done2 := startChat(t, f.config(tty2, tty2, id, make(chan struct{}), &llm.Ledger{}))
	term2.expect(`Resumed session ` + regexp.QuoteMeta(id) + ` \(\d+ messages`)
	term2.typeLine("What do you remember?")
	term2.expect(`I remember: notes\.md, report\.md, honeybees`)
	term2.typeLine("/cost")
	// Spend carries over from the first process.
	mm := term2.expect(`Session \S+: (\d+) model calls`)
	if got := mm[1]; got == "0" || got == "1" {
		t.Errorf("resumed /cost shows %s calls, want the earlier ones too", got)
	}

	// /clear starts a new session; the old one stays.
	term2.typeLine("/clear")
	newID := term2.expect(`Cleared\. New session (\S+) \(the previous one, ` + regexp.QuoteMeta(id) + `, stays saved\)`)[1]
	term2.typeLine("What do you remember?")
	term2.expect(`I remember: \r?\n`)
	term2.typeLine("/exit")
	waitExit(t, done2)
	if _, err := f.sessions.Load(newID); err != nil {
		t.Errorf("cleared session not saved: %v", err)
	}
	if s, err := f.sessions.Load(id); err != nil || len(s.Messages) < len(sess.Messages) {
		t.Errorf("the old session was damaged by /clear: %v", err)
	}
}

// expectReportSummary checks what /deep-research prints after the report's path, up to the next prompt, by its
// shape rather than by which sentence the engine ranked first: the run's figures with at least one citation, then
// a summary with a line of prose that carries a citation marker.
func expectReportSummary(t *testing.T, term *terminal) {
	t.Helper()
	m := term.expect(`(?s)\d+ sources read, [1-9]\d* evidence items cited \(of [1-9]\d* gathered\), [1-9]\d* citations[^\n]*\n(.*?)` + regexp.QuoteMeta(Prompt))
	if !regexp.MustCompile(`(?m)^[^\r\n]*\pL[^\r\n]*\[\d+\]`).MatchString(m[1]) {
		t.Errorf("the summary has no line with a citation marker [n]:\n%s", m[1])
	}
}

func TestResumeErrors(t *testing.T) {
	f := newFixture(t)
	_, tty := newTerminal(t)
	cfg := f.config(tty, tty, "no-such-session", nil, &llm.Ledger{})
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "no such session") {
		t.Errorf("resume of a missing session: %v", err)
	}
	cfg.Resume = "../escape"
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "bad session id") {
		t.Errorf("resume with a path: %v", err)
	}
	if err := os.MkdirAll(f.sessions.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.sessions.Dir, "broken.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Resume = "broken"
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "not a valid session file") {
		t.Errorf("resume of a corrupt file: %v", err)
	}
}

func TestSummary(t *testing.T) {
	md := "# Title\n\n> Engine: x\n\n## Summary\n\nFirst sentence [1]. Second [2].\n\n## Details\n\n- more [1].\n\n## Sources\n\n1. a\n"
	if got := Summary(md, 500); got != "First sentence [1]. Second [2]." {
		t.Errorf("Summary = %q", got)
	}
	long := "# T\n\n" + strings.Repeat("word ", 400)
	if got := Summary(long, 100); len([]rune(got)) != 101 || !strings.HasSuffix(got, "…") {
		t.Errorf("long summary not clipped: %d runes", len([]rune(got)))
	}
}
