package mcpserver

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzCheckFrame feeds arbitrary stdio lines to the frame check: no panic, and every frame it passes on is one
// the SDK decodes — so no line can end the session.
func FuzzCheckFrame(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x"}}`,
		`not json`, `{}`, `[]`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":5}`, `{"jsonrpc":"2.0","id":9,"error":"str"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
		`{"jsonrpc":"2.0","id":-0,"method":"ping","JSONRPC":"1.0","Method":"x"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		frame, _, code, _ := checkFrame([]byte(line))
		if code != 0 {
			return
		}
		if _, err := jsonrpc.DecodeMessage(frame); err != nil {
			t.Fatalf("checkFrame passed %q as %q, which the SDK refuses: %v", line, frame, err)
		}
	})
}
