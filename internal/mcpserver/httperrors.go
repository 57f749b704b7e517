package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// JSON-RPC error codes the HTTP transport answers with (besides codeParseError and codeInvalidRequest).
const (
	codeMethodNotFound = -32601
	// codeSessionNotFound is what MCP SDKs answer for an unknown or expired Mcp-Session-Id (with HTTP 404), so that
	// the client starts a new session.
	codeSessionNotFound = -32001
)

// maxRequestBody bounds one POSTed JSON-RPC message (a tool call's arguments are small).
const maxRequestBody = 4 << 20

// clientMethods are the requests a client may send to an MCP server (the specification's client-to-server
// methods). Anything else is answered with -32601 Method not found.
var clientMethods = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "prompts/list": true, "prompts/get": true,
	"completion/complete": true, "logging/setLevel": true, "server/discover": true, "subscriptions/listen": true,
}

// newProtocolVersion is the first protocol version in which a request may arrive without a session.
const newProtocolVersion = "2026-07-28"

// jsonRPCErrors puts JSON-RPC error bodies on the transport's own refusals, which the SDK writes as text/plain:
// a request without a session (400, -32600), an unknown method (-32601), an unknown or expired session (404,
// -32001), a body that is not JSON (400, -32700), a session past the bound (429, -32000). Successful responses and streams pass through untouched.
func jsonRPCErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var id json.RawMessage
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
			if err != nil {
				var tooBig *http.MaxBytesError
				if errors.As(err, &tooBig) {
					writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, "request body larger than 4 MiB")
					return
				}
				writeRPCError(w, http.StatusBadRequest, nil, codeParseError, "reading the request body: "+err.Error())
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			trimmed := bytes.TrimSpace(body)
			if len(trimmed) > 0 && trimmed[0] == '{' {
				if err := json.Unmarshal(trimmed, &msg); err != nil {
					writeRPCError(w, http.StatusBadRequest, nil, codeParseError, "Parse error: "+err.Error())
					return
				}
				id = msg.ID
				isRequest := len(msg.ID) > 0 && string(msg.ID) != "null" && msg.Method != ""
				if isRequest && !clientMethods[msg.Method] {
					writeRPCError(w, http.StatusOK, id, codeMethodNotFound, "Method not found: "+msg.Method)
					return
				}
				if isRequest && msg.Method != "initialize" && r.Header.Get("Mcp-Session-Id") == "" &&
					r.Header.Get("Mcp-Protocol-Version") < newProtocolVersion {
					writeRPCError(w, http.StatusBadRequest, id, codeInvalidRequest,
						"Bad Request: no Mcp-Session-Id header; start a session with initialize")
					return
				}
			}
		}
		tw := &textErrors{ResponseWriter: w, id: id}
		next.ServeHTTP(tw, r)
		tw.finish()
	})
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	w.Header().Del("X-Content-Type-Options")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// textErrors rewrites a text/plain error response into a JSON-RPC error; anything else is written through.
type textErrors struct {
	http.ResponseWriter
	id       json.RawMessage
	status   int // set when an error response is being captured
	captured bytes.Buffer
}

func (t *textErrors) WriteHeader(code int) {
	if code >= 400 && code != http.StatusUnauthorized && strings.HasPrefix(t.Header().Get("Content-Type"), "text/plain") {
		t.status = code
		return
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *textErrors) Write(b []byte) (int, error) {
	if t.status != 0 {
		return t.captured.Write(b)
	}
	return t.ResponseWriter.Write(b)
}

func (t *textErrors) Flush() {
	if t.status != 0 {
		return
	}
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (t *textErrors) Unwrap() http.ResponseWriter { return t.ResponseWriter }

func (t *textErrors) finish() {
	if t.status == 0 {
		return
	}
	msg := strings.TrimSpace(t.captured.String())
	code := codeInvalidRequest
	if t.status == http.StatusTooManyRequests {
		code = codeServerBusy
	}
	if t.status == http.StatusNotFound {
		code = codeSessionNotFound
		msg = "Session not found: the session expired or was closed; start a new one with initialize"
	}
	writeRPCError(t.ResponseWriter, t.status, t.id, code, msg)
}
