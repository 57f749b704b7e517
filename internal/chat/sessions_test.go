package chat

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/llm"
)

// TestSessionsCommand lists saved sessions through the terminal: id, last update, first user message and
// message count, newest first, with the current session marked; /help mentions the command.
func TestSessionsCommand(t *testing.T) {
	f := newFixture(t)
	// A clock that moves a minute per reading, so the updates differ and the order is known.
	var mu sync.Mutex
	clock := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Minute)
		return clock
	}
	// An older session that only ran /deep-research: it has no title, so its first user message is shown.
	old := &Session{ID: "20240101-080000-abcdef", Created: time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC), Updated: time.Date(2024, 1, 1, 8, 5, 0, 0, time.UTC),
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "system prompt", Pinned: true},
			{Role: llm.RoleUser, Content: "/deep-research How do honeybees find food?"},
			{Role: llm.RoleAssistant, Content: "I ran deep research."},
		}}
	if err := f.sessions.Save(old); err != nil {
		t.Fatal(err)
	}
	// A damaged file must not hide the others.
	if err := os.WriteFile(filepath.Join(f.sessions.Dir, "damaged.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}

	term, tty := newTerminal(t)
	cfg := f.config(tty, tty, "", make(chan struct{}), &llm.Ledger{})
	cfg.Now = now
	done := startChat(t, cfg)
	first := term.expect(`deepresearch chat — session (\S+) in `)[1]

	term.typeLine("/help")
	term.expect(`/sessions\s+list saved sessions`)

	// Before the first message only the old session is on disk; the current one is named as unsaved.
	term.typeLine("/sessions")
	term.expect(regexp.QuoteMeta(old.ID) + `\s+2024-01-01 \d\d:\d\d\s+2 messages\s+"/deep-research How do honeybees find food\?"`)
	term.expect(`\* ` + regexp.QuoteMeta(first) + `\s+\(this session: saved after your first message\)`)

	term.typeLine("What files are in the workspace?")
	term.expect(`The workspace holds: .*notes\.md`)
	term.typeLine("/clear")
	second := term.expect(`Cleared\. New session (\S+) `)[1]
	term.typeLine("hello again")
	term.expect(`echo: hello again`)
	term.expect(regexp.QuoteMeta(Prompt))

	term.typeLine("/sessions")
	m := term.expect(`(?s)Saved sessions in (\S+) \(most recent first, \* is this one\):\r?\n(.*?)Resume one with: deepresearch chat --resume <id>`)
	if m[1] != f.sessions.Dir {
		t.Errorf("listed folder %s, want %s", m[1], f.sessions.Dir)
	}
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(m[2], "\r", ""), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 sessions listed (the damaged file skipped), got %d:\n%s", len(lines), m[2])
	}
	// Each line shows what is stored: newest first, the current session marked. (The chat now waits for input,
	// so the files are as they were when listed.)
	for i, want := range []struct {
		id, mark, first string
	}{
		{second, "*", "hello again"},
		{first, " ", "What files are in the workspace?"},
		{old.ID, " ", "/deep-research How do honeybees find food?"},
	} {
		s, err := f.sessions.Load(want.id)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, msg := range s.Messages {
			if msg.Role != llm.RoleSystem {
				n++
			}
		}
		if want.id != old.ID && n < 2 {
			t.Errorf("session %s holds %d messages; the turn was not saved", want.id, n)
		}
		re := fmt.Sprintf(`^%s %s\s+%s\s+%d messages\s+%s$`, regexp.QuoteMeta(want.mark), regexp.QuoteMeta(want.id),
			regexp.QuoteMeta(s.Updated.Local().Format("2006-01-02 15:04")), n, regexp.QuoteMeta(strconv.Quote(want.first)))
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want it to match %s", i+1, lines[i], re)
		}
	}
	term.typeLine("/exit")
	waitExit(t, done)
}
