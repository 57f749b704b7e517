package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"

	"github.com/deepresearch/deepresearch/base/syncio"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Frame limits of the stdio transport.
const (
	// DefaultMaxFrame is the largest stdio frame accepted (a deep_research call is a few kilobytes).
	DefaultMaxFrame = 4 << 20
	// maxFrameDepth bounds the nesting of arrays and objects in one frame.
	maxFrameDepth = 64
)

// JSON-RPC error codes sent for frames refused before they reach the protocol.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	// dropFrame marks a malformed response: JSON-RPC never answers a response, so it is logged and dropped.
	dropFrame = 1
)

// StdioTransport serves MCP over newline-delimited JSON-RPC on a reader and a writer (stdin and stdout by
// default). Unlike the SDK's own stdio transport, which ends the session on the first frame it cannot decode,
// it answers each malformed frame (not JSON, not an object, a batch, a wrong "jsonrpc", an id that is not a
// string or number, too deep, too long) with a JSON-RPC error (-32700 or -32600) and goes on serving, so one bad
// line never loses the runs in progress. Only frames it has checked, re-encoded with exactly the standard
// members, reach the SDK.
type StdioTransport struct {
	In  io.Reader // default os.Stdin
	Out io.Writer // default os.Stdout
	// MaxFrame is the largest frame in bytes; longer lines are refused and skipped. 0 means DefaultMaxFrame.
	MaxFrame int
	Log      *slog.Logger
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	in, out := t.In, t.Out
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	limit := t.MaxFrame
	if limit <= 0 {
		limit = DefaultMaxFrame
	}
	log := t.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The SDK's frames and the transport's error frames share the output, each written with one Write call.
	w := syncio.NewWriter(out)
	pr, pw := io.Pipe()
	go filterFrames(in, pw, w, limit, log)
	return (&mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: -1}).Connect(ctx)
}

// filterFrames reads lines from in, passes checked frames to pw and answers the others on out.
func filterFrames(in io.Reader, pw *io.PipeWriter, out io.Writer, limit int, log *slog.Logger) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, limit)
		if tooLong {
			log.Warn("mcp stdio: frame refused", "reason", "too long", "max", limit)
			writeError(out, nil, codeInvalidRequest, fmt.Sprintf("frame longer than %d bytes refused", limit))
		} else if len(bytes.TrimSpace(line)) > 0 {
			frame, id, code, msg := checkFrame(line)
			if code != 0 {
				log.Warn("mcp stdio: frame refused", "reason", msg)
				if code != dropFrame {
					writeError(out, id, code, msg)
				}
			} else if frame != nil {
				if _, werr := pw.Write(append(frame, '\n')); werr != nil {
					return // the session has ended
				}
			}
		}
		if err != nil {
			pw.CloseWithError(err)
			return
		}
	}
}

// readLine returns the next line without its newline. A line longer than limit is read to its end and dropped
// (tooLong), never buffered whole. err is io.EOF (or the read error) after the last line.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+2 { // +2: the line end is not part of the frame
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// checkFrame validates one JSON-RPC 2.0 message and re-encodes it with exactly the standard members. On
// refusal it returns the code and message to answer with, and the request's id when it could be read.
func checkFrame(line []byte) (frame []byte, id json.RawMessage, code int, msg string) {
	if !json.Valid(line) {
		return nil, nil, codeParseError, "parse error: the frame is not valid JSON"
	}
	if d := jsonDepth(line); d > maxFrameDepth {
		return nil, nil, codeInvalidRequest, fmt.Sprintf("invalid request: nested %d deep (the limit is %d)", d, maxFrameDepth)
	}
	switch bytes.TrimSpace(line)[0] {
	case '{':
	case '[':
		return nil, nil, codeInvalidRequest, "invalid request: batches are not supported"
	default:
		return nil, nil, codeInvalidRequest, "invalid request: a message must be a JSON object"
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, nil, codeParseError, "parse error: " + err.Error()
	}
	rawID, hasID := m["id"]
	if hasID && !validID(rawID) {
		return nil, nil, codeInvalidRequest, "invalid request: id must be a string, an integer or null"
	}
	if hasID && string(rawID) != "null" {
		id = rawID
	}
	var version string
	if err := json.Unmarshal(m["jsonrpc"], &version); err != nil || version != "2.0" {
		return nil, id, codeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`
	}
	out := map[string]json.RawMessage{"jsonrpc": m["jsonrpc"]}
	if hasID {
		out["id"] = rawID
	}
	if rawMethod, ok := m["method"]; ok {
		var method string
		if err := json.Unmarshal(rawMethod, &method); err != nil || method == "" {
			return nil, id, codeInvalidRequest, `invalid request: "method" must be a non-empty string`
		}
		out["method"] = rawMethod
		if p, ok := m["params"]; ok && string(p) != "null" {
			if c := bytes.TrimSpace(p)[0]; c != '{' && c != '[' {
				return nil, id, codeInvalidRequest, `invalid request: "params" must be an object or an array`
			}
			out["params"] = p
		}
	} else {
		// A response to a request of the server's. Nothing is answered for a bad one (JSON-RPC never
		// answers responses); it is dropped.
		if id == nil {
			return nil, nil, codeInvalidRequest, "invalid request: neither a request (no method) nor a response (no id)"
		}
		if e, ok := m["error"]; ok {
			var we struct {
				Code    int64           `json:"code"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data,omitempty"`
			}
			if err := json.Unmarshal(e, &we); err != nil {
				return nil, nil, dropFrame, "malformed error in a response"
			}
			out["error"], _ = json.Marshal(we)
		} else if res, ok := m["result"]; ok {
			out["result"] = res
		} else {
			return nil, nil, dropFrame, "a response with neither result nor error"
		}
	}
	frame, err := json.Marshal(out)
	if err != nil {
		return nil, id, codeParseError, "parse error: " + err.Error()
	}
	return frame, nil, 0, ""
}

// validID reports whether raw is a JSON-RPC id the SDK can hold: a string, null, or an integer it can
// represent exactly.
func validID(raw json.RawMessage) bool {
	switch c := bytes.TrimSpace(raw)[0]; {
	case c == '"', string(raw) == "null":
		return true
	case c == '-' || c >= '0' && c <= '9':
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			return false
		}
		return f == math.Trunc(f) && math.Abs(f) <= 1<<53
	}
	return false
}

// jsonDepth returns the deepest nesting of arrays and objects in valid JSON.
func jsonDepth(b []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

func writeError(w io.Writer, id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	_, _ = w.Write(append(b, '\n'))
}
