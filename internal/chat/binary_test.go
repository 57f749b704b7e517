package chat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
)

// fakeOpenAI is an OpenAI-compatible chat completions server that streams scripted answers, so the real binary
// can be driven end to end with no network.
func fakeOpenAI(t *testing.T) (*httptest.Server, *atomic.Int64, *requestLog) {
	var calls atomic.Int64
	reqs := &requestLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		content := func(i int) string {
			switch c := req.Messages[i].Content.(type) {
			case string:
				return c
			case []any:
				var b strings.Builder
				for _, p := range c {
					if m, ok := p.(map[string]any); ok {
						fmt.Fprint(&b, m["text"])
					}
				}
				return b.String()
			}
			return ""
		}
		last := len(req.Messages) - 1
		var all strings.Builder
		for i := range req.Messages {
			all.WriteString(content(i) + "\n")
		}
		reqs.add(all.String())
		user := ""
		for i := last; i >= 0; i-- {
			if req.Messages[i].Role == "user" {
				user = content(i)
				break
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		chunk := func(delta map[string]any, finish any, usage any) {
			c := map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
			if usage != nil {
				c["usage"] = usage
				c["choices"] = []any{}
			}
			b, _ := json.Marshal(c)
			fmt.Fprintf(w, "data: %s\n\n", b)
			fl.Flush()
		}
		usage := map[string]any{"prompt_tokens": 9000, "completion_tokens": 10, "total_tokens": 9010} // of the order of the prompt sent
		switch {
		case req.Messages[last].Role == "tool":
			chunk(map[string]any{"role": "assistant", "content": "Listed: " + strings.Join(strings.Fields(content(last)), " ")}, nil, nil)
			chunk(map[string]any{}, "stop", nil)
		case strings.Contains(user, "What files"):
			chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
				"function": map[string]any{"name": "ls", "arguments": `{"path":"."}`}}}}, nil, nil)
			chunk(map[string]any{}, "tool_calls", nil)
		case strings.Contains(user, "think slowly"):
			chunk(map[string]any{"role": "assistant", "content": "Thinking"}, nil, nil)
			select {
			case <-r.Context().Done():
				return
			case <-time.After(expectWithin):
			}
			chunk(map[string]any{}, "stop", nil)
		default:
			chunk(map[string]any{"role": "assistant", "content": "echo: " + user}, nil, nil)
			chunk(map[string]any{}, "stop", nil)
		}
		chunk(nil, nil, usage)
		fmt.Fprint(w, "data: [DONE]\n\n")
		fl.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv, &calls, reqs
}

// requestLog keeps the conversation text of every request the fake API received.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *requestLog) add(s string) {
	l.mu.Lock()
	l.reqs = append(l.reqs, s)
	l.mu.Unlock()
}

// since reports whether a request after the first n contains s, and how many requests there are.
func (l *requestLog) since(n int, s string) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.reqs[min(n, len(l.reqs)):] {
		if strings.Contains(r, s) {
			return true, len(l.reqs)
		}
	}
	return false, len(l.reqs)
}

func (l *requestLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reqs)
}

// TestBinaryChatThroughPTY drives the real `deepresearch chat` in a pseudo-terminal against an OpenAI-compatible
// server: a tool-using turn, /deep-research over the workspace, Ctrl-C that cancels a turn without ending the
// chat, /exit, and --resume in a second process.
func TestBinaryChatThroughPTY(t *testing.T) {
	bin := researchtest.BuildBinary(t)
	api, calls, reqs := fakeOpenAI(t)
	home := t.TempDir()
	ws := researchtest.New(t, 0).Dir // the honeybee corpus is the workspace
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"DEEPRESEARCH_PROVIDER=openai", "DEEPRESEARCH_MODEL=fake-model", "DEEPRESEARCH_BASE_URL="+api.URL+"/v1",
		"OPENAI_API_KEY=test", "DEEPRESEARCH_ENGINE=extractive", "DEEPRESEARCH_WEB=", "TERM=dumb")

	start := func(args ...string) (*terminal, *exec.Cmd) {
		cmd := exec.Command(bin, append([]string{"chat", "--workspace", ws}, args...)...)
		cmd.Env = env
		cmd.Dir = home
		master, err := pty.Start(cmd)
		if err != nil {
			t.Fatalf("start in a pty: %v", err)
		}
		t.Cleanup(func() { master.Close(); cmd.Process.Kill(); cmd.Wait() })
		term := &terminal{t: t, master: master, wake: make(chan struct{}, 1)}
		go term.read()
		return term, cmd
	}
	wait := func(cmd *exec.Cmd) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("deepresearch chat exited with %v", err)
			}
		case <-time.After(expectWithin):
			t.Fatal("deepresearch chat did not exit")
		}
	}

	term, cmd := start()
	id := term.expect(`deepresearch chat — session (\S+) in `)[1]
	term.expect(regexp.QuoteMeta(Prompt))
	term.typeLine("What files are in the workspace?")
	term.expect(`→ ls`)
	term.expect(`Listed: .*waggle-dance\.md`)

	term.expect(regexp.QuoteMeta(Prompt))
	term.typeLine("/deep-research " + researchtest.Question)
	m := term.expect(`Report: (\S+report\.md)`)
	if !strings.HasPrefix(m[1], filepath.Join(ws, ".deepresearch", "runs")) {
		t.Errorf("report written to %s, want under the workspace's .deepresearch/runs", m[1])
	}
	if _, err := os.Stat(m[1]); err != nil {
		t.Errorf("printed report path %s: %v", m[1], err)
	}
	expectReportSummary(t, term)

	afterResearch := reqs.len()

	term.typeLine("/context")
	term.expect(`Context: [\d,]+ of [\d,]+ tokens`)

	// A real Ctrl-C from the terminal: the turn stops, the chat stays.
	term.expect(regexp.QuoteMeta(Prompt))
	term.typeLine("please think slowly")
	term.expect(`Thinking`)
	if _, err := term.master.Write([]byte{3}); err != nil {
		t.Fatal(err)
	}
	term.expect(`\(interrupted\)`)
	term.expect(regexp.QuoteMeta(Prompt))
	term.typeLine("still there?")
	term.expect(`echo: still there\?`)
	// The agent was told where the report is: the model's next requests carry the path in the conversation.
	if told, n := reqs.since(afterResearch, m[1]); !told {
		t.Errorf("none of the %d model requests after /deep-research names the report %s", n-afterResearch, m[1])
	}

	term.expect(regexp.QuoteMeta(Prompt))
	term.typeLine("/cost")
	term.expect(`Session ` + regexp.QuoteMeta(id) + `: [1-9]\d* model calls`)
	term.expect(regexp.QuoteMeta(Prompt))
	term.typeLine("/exit")
	term.expect(`Resume it with: deepresearch chat --resume ` + regexp.QuoteMeta(id))
	wait(cmd)

	if _, err := os.Stat(filepath.Join(ws, ".deepresearch", "sessions", id+".json")); err != nil {
		t.Fatalf("session not saved in the workspace: %v", err)
	}
	before := calls.Load()
	term2, cmd2 := start("--resume", id)
	term2.expect(`Resumed session ` + regexp.QuoteMeta(id))
	term2.expect(regexp.QuoteMeta(Prompt))
	term2.typeLine("hello")
	term2.expect(`echo: hello`)
	if calls.Load() == before {
		t.Error("the resumed chat made no model call")
	}
	// End of input (Ctrl-D) saves and quits too.
	term2.expect(regexp.QuoteMeta(Prompt))
	term2.master.Write([]byte{4})
	term2.expect(`Resume it with`)
	wait(cmd2)
	saveTranscript(t, "chat-session-1.txt", term)
	saveTranscript(t, "chat-session-2-resumed.txt", term2)

	// With no model the real program starts too; every command that needs none works, and the rest say briefly
	// what to do. This is where /context used to panic.
	env = append(env, "DEEPRESEARCH_PROVIDER=", "DEEPRESEARCH_MODEL=", "DEEPRESEARCH_BASE_URL=", "OPENAI_API_KEY=",
		"XDG_STATE_HOME="+filepath.Join(home, "state"))
	term3, cmd3 := start()
	term3.expect(`no model: /deep-research <question> works`)
	term3.expect(`no model · /deep-research works without one · session`)
	term3.expect(regexp.QuoteMeta(Prompt))
	for _, step := range []struct{ keys, want string }{
		{"/context\r", `Context: no model is configured`},
		{"/compact\r", `/compact needs a model`},
		{"hello?\r", `No model is configured, so there is no conversation`},
		{"/cost\r", `Session \S+: 0 model calls`},
		{"/sessions\r", `sessions in`},
		{"/help\r", `No model is configured, so only /deep-research`},
		{"half a line\x03", `Ctrl-C at the prompt drops the line`},
		{"/exit\r", `Resume it with`},
	} {
		term3.press(step.keys)
		term3.expect(step.want)
		if step.keys != "/exit\r" {
			// The next keys wait for the prompt: the editor prints it once the terminal is in raw mode. Before
			// that, a Ctrl-C is the terminal's interrupt (a signal), not a key the editor reads.
			term3.expect(regexp.QuoteMeta(Prompt))
		}
	}
	wait(cmd3)
	// What was typed is kept in the state folder ($XDG_STATE_HOME), readable only by the user.
	hist := filepath.Join(home, "state", "deepresearch", "chat_history")
	st, err := os.Stat(hist)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("history file %s: %v %v", hist, err, st)
	}
	if b, _ := os.ReadFile(hist); !strings.Contains(string(b), `"hello?"`) || strings.Contains(string(b), "half a line") {
		t.Errorf("history file holds:\n%s", b)
	}
	saveTranscript(t, "chat-session-3-no-model.txt", term3)
}

// saveTranscript keeps what the terminal showed under $DEEPRESEARCH_ARTIFACTS, for reading by eye.
func saveTranscript(t *testing.T, name string, term *terminal) {
	dir := os.Getenv("DEEPRESEARCH_ARTIFACTS")
	if dir == "" {
		return
	}
	dir = filepath.Join(dir, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	term.mu.Lock()
	defer term.mu.Unlock()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(term.seen.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
