package chat

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/llm"
)

// press sends keys as a terminal would, without Enter.
func (term *terminal) press(keys string) {
	term.t.Helper()
	if _, err := term.master.Write([]byte(keys)); err != nil {
		term.t.Fatalf("press %q: %v", keys, err)
	}
}

// count is how often re matched in everything the terminal showed.
func (term *terminal) count(re string) int {
	term.mu.Lock()
	defer term.mu.Unlock()
	return len(regexp.MustCompile(re).FindAllStringIndex(term.seen.String(), -1))
}

const (
	keyUp = "\x1b[A"
	ctrlC = "\x03"
	ctrlD = "\x04"
	ctrlU = "\x15"
)

// commandScript drives every slash command, misspelt and malformed ones included, and hostile input at the
// prompt; want is what each step must print (nil: anything, as long as the prompt comes back).
func commandScript(t *testing.T, term *terminal, withModel bool) {
	t.Helper()
	prompt := regexp.QuoteMeta(Prompt)
	step := func(keys, want string) {
		t.Helper()
		term.press(keys)
		if want != "" {
			term.expect(want)
		}
		term.expect(prompt)
	}
	step("/help\r", `/deep-research <question>`)
	if withModel {
		step("/context\r", `Context: [\d,]+ of 32,000 tokens`)
		step("/compact keep the notes\r", `(context compacted|conversation compacted|nothing to gain: compacting)`)
	} else {
		step("/context\r", `Context: no model is configured, so there is no context window; the conversation holds \d+ messages`)
		step("/compact\r", `error: /compact needs a model`)
	}
	step("/cost\r", `Session \S+: \d+ model calls`)
	step("/sessions\r", `(Saved sessions in|No saved sessions in)`)
	step("/deep-research\r", `usage: /deep-research \[--new\] <question>`)
	step("/research\r", `usage: /deep-research \[--new\] <question>`)
	step("/\r", `unknown command / `)
	step("/contxt\r", `unknown command /contxt — did you mean /context\?`)
	step("/clear\r", `Cleared\. New session`)
	step("/deep-research "+researchtest.Question+"\r", `Report: \S+report\.md`)
	step("/context extra words\r", `Context:`)

	// Hostile input at the prompt. A line longer than the editor holds is not sent; what was kept comes back
	// with Up.
	step(strings.Repeat("x", 6000)+"\r", `Not sent: the message was cut`)
	// A pasted line has no editor limit; past MaxMessage it is cut and refused the same way.
	if withModel {
		step("\x1b[200~"+strings.Repeat("p", MaxMessage+100)+"\x1b[201~\r", `Not sent: the message was cut`)
	}
	// Control bytes, a stray escape sequence and an OSC clipboard write are typed as text, never obeyed.
	step("\x00\x0f\x11\x16\x18\x1c\x1f\x1b[999~\x1b]52;c;aGk=\x07 ping\r", "")
	// Ctrl-C at the prompt drops the line; the next message is sent alone.
	term.press("half a thought" + ctrlC)
	term.expect(`Ctrl-C at the prompt drops the line`)
	term.expect(prompt)
	if withModel {
		step("whole thought\r", `echo: whole thought`)
	} else {
		step("whole thought\r", `No model is configured, so there is no conversation`)
	}
	// A multi-line message: a line ending in a backslash goes on.
	term.press(`first line \` + "\r")
	term.expect(regexp.QuoteMeta(ContinuePrompt))
	if withModel {
		step("second line\r", `echo: first line \r?\nsecond line`)
	} else {
		step("second line\r", `No model is configured`)
	}
	// Bracketed paste: pasted lines are one message.
	if withModel {
		step("\x1b[200~pasted one\rpasted two\x1b[201~\r", `echo: pasted one\r?\npasted two`)
	}
}

// TestTerminalEveryCommand drives every slash command and hostile input in a real pseudo-terminal, with and
// without a model, and ends with Ctrl-D: the chat never panics or stops early, and each command prints what it
// should.
func TestTerminalEveryCommand(t *testing.T) {
	for _, withModel := range []bool{true, false} {
		name := "no-model"
		if withModel {
			name = "model"
		}
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			term, tty := newTerminal(t)
			cfg := f.config(tty, tty, "", make(chan struct{}), &llm.Ledger{})
			cfg.HistoryFile = filepath.Join(t.TempDir(), "state", "chat_history")
			if !withModel {
				cfg.Agent.Model = nil
				cfg.Compact, cfg.Context = nil, nil
				cfg.NoModel = "Configure one with --provider and --model."
			}
			done := startChat(t, cfg)
			term.expect(`deepresearch chat — session \S+`)
			term.expect(regexp.QuoteMeta(Prompt))
			commandScript(t, term, withModel)
			term.press(ctrlD)
			term.expect(`Resume it with: deepresearch chat --resume`)
			waitExit(t, done)
			if !withModel {
				// The long hint was given once (in the banner, and by /help when asked), not with every message.
				if n := term.count(`Configure one with --provider and --model\.`); n != 2 {
					t.Errorf("the how-to-configure hint was shown %d times, want 2 (banner and /help)", n)
				}
			}
			if withModel {
				term.mu.Lock()
				seen := term.seen.String()
				term.mu.Unlock()
				if strings.Contains(seen, "\x1b]52") {
					t.Error("the OSC 52 sequence typed at the prompt reached the terminal as a sequence")
				}
			}
		})
	}
}

// TestTerminalHistoryAndCompletion checks the line editor: Up recalls messages of this and an earlier session
// from a history file only the user can read, and Tab completes slash commands and workspace paths.
func TestTerminalHistoryAndCompletion(t *testing.T) {
	f := newFixture(t)
	histFile := filepath.Join(t.TempDir(), "state", "deepresearch", "chat_history")
	prompt := regexp.QuoteMeta(Prompt)

	term, tty := newTerminal(t)
	cfg := f.config(tty, tty, "", make(chan struct{}), &llm.Ledger{})
	cfg.HistoryFile = histFile
	done := startChat(t, cfg)
	term.expect(prompt)
	term.press("the first question\r")
	term.expect(`echo: the first question`)
	// The status line above the prompt names the model and how full its window is.
	term.expect(`scripted-chat · context ≈[\d.]+k? of 32k \(\d+%\)`)
	term.expect(prompt)
	term.press("the second question\r")
	term.expect(`echo: the second question`)
	term.expect(prompt)
	// Up twice: the first question again.
	term.press(keyUp + keyUp + "\r")
	term.expect(`echo: the first question`)
	term.expect(prompt)
	// Tab completes a command.
	term.press("/con\t\r")
	term.expect(`Context: [\d,]+ of 32,000 tokens`)
	term.expect(prompt)
	// Several commands match: a Tab lists them and leaves the line alone.
	term.press("/c\t")
	term.expect(`/compact  /context  /cost  /clear`)
	term.press(ctrlU)
	// Tab completes a path in the workspace.
	term.press("read ./no\t\r")
	term.expect(`echo: read \./notes\.md`)
	term.expect(prompt)
	term.press(" a secret line\r") // a leading space keeps a message out of the history
	term.expect(`echo: a secret line`)
	term.expect(prompt)
	term.press("/exit\r")
	waitExit(t, done)

	st, err := os.Stat(histFile)
	if err != nil {
		t.Fatalf("history file: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("history file mode %v, want 0600", st.Mode().Perm())
	}
	b, _ := os.ReadFile(histFile)
	if strings.Contains(string(b), "secret line") || !strings.Contains(string(b), "the second question") {
		t.Errorf("history file holds:\n%s", b)
	}

	// A later session recalls the earlier one's messages.
	term2, tty2 := newTerminal(t)
	cfg2 := f.config(tty2, tty2, "", make(chan struct{}), &llm.Ledger{})
	cfg2.HistoryFile = histFile
	done2 := startChat(t, cfg2)
	term2.expect(prompt)
	term2.press(keyUp + "\r")
	term2.expect(`echo: read \./notes\.md`)
	term2.expect(prompt)
	term2.press(ctrlD)
	waitExit(t, done2)
}

// TestPipedInputIsLineByLine keeps the non-terminal path: each line is a message, a line past MaxMessage is
// refused without ending the chat, and the end of input saves and quits.
func TestPipedInputIsLineByLine(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	script := "hello there\n/cost\n" + strings.Repeat("y", MaxMessage+10) + "\n/contxt\nlast words"
	if err := os.WriteFile(in, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	inf, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer inf.Close()
	outPath := filepath.Join(dir, "out.txt")
	outf, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer outf.Close()
	cfg := f.config(inf, outf, "", make(chan struct{}), &llm.Ledger{})
	done := startChat(t, cfg)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(expectWithin):
		t.Fatal("chat did not end at the end of its input")
	}
	out, _ := os.ReadFile(outPath)
	for _, want := range []string{"echo: hello there", "model calls", "Not sent: the message was cut", "did you mean /context?", "echo: last words", "Resume it with"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("piped chat output lacks %q:\n%s", want, lastBytes(string(out), 2000))
		}
	}
	if strings.Contains(string(out), "context ≈") {
		t.Error("a status line was printed to a non-terminal")
	}
}

func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
