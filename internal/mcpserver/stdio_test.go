package mcpserver

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// rpcReply is one line the server wrote.
type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// stdioSession is a real server process spoken to in raw lines.
type stdioSession struct {
	t     *testing.T
	in    io.WriteCloser
	cmd   *exec.Cmd
	reply chan rpcReply
}

func startStdio(t *testing.T) *stdioSession {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+t.TempDir())
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &stdioSession{t: t, in: in, cmd: cmd, reply: make(chan rpcReply, 64)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r rpcReply
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				r.JSONRPC = "unparseable: " + sc.Text()
			}
			s.reply <- r
		}
		close(s.reply)
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return s
}

func (s *stdioSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("write %.40q: %v (server gone?)", line, err)
	}
}

func (s *stdioSession) next() rpcReply {
	s.t.Helper()
	select {
	case r, ok := <-s.reply:
		if !ok {
			s.t.Fatal("the server closed stdout: it died")
		}
		return r
	case <-time.After(30 * time.Second):
		s.t.Fatal("no reply within 30s")
	}
	return rpcReply{}
}

// TestStdioSurvivesMalformedFrames sends every kind of bad frame to a real `mcp` server process over stdio:
// each gets its JSON-RPC error, and the server then initializes and lists its tools as if nothing happened.
func TestStdioSurvivesMalformedFrames(t *testing.T) {
	s := startStdio(t)
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	bad := []struct {
		name, frame string
		code        int
		id          string
	}{
		{"not json", "not json", codeParseError, "null"},
		{"truncated json", `{"jsonrpc":"2.0","id":1,"method":"ping"`, codeParseError, "null"},
		{"empty object", `{}`, codeInvalidRequest, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, codeInvalidRequest, "null"},
		{"empty batch", `[]`, codeInvalidRequest, "null"},
		{"scalar", `42`, codeInvalidRequest, "null"},
		{"wrong version", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, codeInvalidRequest, "7"},
		{"missing version", `{"id":"a","method":"ping"}`, codeInvalidRequest, `"a"`},
		{"object id", `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, codeInvalidRequest, "null"},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, codeInvalidRequest, "null"},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, codeInvalidRequest, "null"},
		{"huge id", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, codeInvalidRequest, "null"},
		{"numeric method", `{"jsonrpc":"2.0","id":3,"method":5}`, codeInvalidRequest, "3"},
		{"scalar params", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":"x"}`, codeInvalidRequest, "4"},
		{"deep nesting", `{"jsonrpc":"2.0","id":5,"method":"ping","params":` + deep + `}`, codeParseError, "null"},
		{"moderately deep nesting", `{"jsonrpc":"2.0","id":6,"method":"ping","params":{"a":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}}`, codeInvalidRequest, "null"},
		{"20 MB line", `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"pad":"` + strings.Repeat("x", 20<<20) + `"}}`, codeInvalidRequest, "null"},
	}
	for _, b := range bad {
		s.send(b.frame)
		r := s.next()
		if r.Error == nil || r.Error.Code != b.code || string(r.ID) != b.id {
			t.Errorf("%s: reply %+v (error %+v), want code %d with id %s", b.name, r, r.Error, b.code, b.id)
		}
	}
	// Malformed responses get no reply (JSON-RPC never answers a response) and do no harm.
	s.send(`{"jsonrpc":"2.0","id":99,"error":"not an object"}`)
	s.send(`{"jsonrpc":"2.0","id":98}`)

	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if r := s.next(); r.Error != nil || string(r.ID) != "1" || !strings.Contains(string(r.Result), "deepresearch") {
		t.Fatalf("initialize after bad frames: %+v %+v", r, r.Error)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if r := s.next(); r.Error != nil || string(r.ID) != "2" || !strings.Contains(string(r.Result), "deep_research") {
		t.Fatalf("tools/list: %+v %+v", r, r.Error)
	}
	// A bad frame in the middle of a live session is answered too, and the session goes on.
	s.send(`{"jsonrpc":"2.0","id":{"evil":true},"method":"tools/list"}`)
	if r := s.next(); r.Error == nil || r.Error.Code != codeInvalidRequest {
		t.Fatalf("bad frame mid-session: %+v", r)
	}
	s.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if r := s.next(); r.Error != nil || string(r.ID) != "3" {
		t.Fatalf("ping after: %+v %+v", r, r.Error)
	}
}

func TestCheckFrameCanonical(t *testing.T) {
	frame, _, code, msg := checkFrame([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","JSONRPC":"1.0","extra":{"x":1}}`))
	if code != 0 {
		t.Fatalf("refused: %s", msg)
	}
	if got, want := string(frame), `{"id":1,"jsonrpc":"2.0","method":"ping"}`; got != want {
		t.Errorf("frame = %s, want %s", got, want)
	}
	for _, n := range []int{1, 63, 64} {
		if d := jsonDepth([]byte(strings.Repeat("[", n) + `"[{"` + strings.Repeat("]", n))); d != n {
			t.Errorf("depth(%d) = %d", n, d)
		}
	}
}
