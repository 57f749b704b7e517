// Package mcptools connects deepresearch agents to the MCP servers users already run and keeps what those tools
// send back from drowning the context window.
//
// It has four parts:
//
//   - A client for stdio and Streamable HTTP servers configured in the .mcp.json format of Claude Code and Cursor
//     (Load, Start, Manager). Servers start concurrently; a server that fails is reported and skipped. Each stdio
//     server runs in its own process group, which is killed as a whole on shutdown, and its stderr is kept in a
//     bounded buffer so that a crash can be explained. Tools reach the model as mcp__<server>__<tool>.
//   - Guard, the one wrapper around every tool call (built-in and MCP): a per-call timeout, a hard ceiling on the
//     result size, and errors and panics turned into error results that name the tool.
//   - Lazy, deferred tool schemas: when all schemas together exceed a share of the model's window, MCP tools are
//     hidden behind a tool_search tool and shown from the call after the model found them.
//   - Searcher, which turns a search-like MCP tool into a sources.Searcher for the research graph.
package mcptools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// File is a parsed .mcp.json file.
type File struct {
	// Servers maps a server name to its configuration.
	Servers map[string]ServerConfig `json:"mcpServers"`
	// Path is where the file was read from, if anywhere.
	Path string `json:"-"`
}

// Transport kinds of ServerConfig.Type.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// ServerConfig is one entry of .mcp.json: a command to run over stdio, or a URL to reach over HTTP.
type ServerConfig struct {
	// Type is stdio (the default when Command is set), http (Streamable HTTP; the default when URL is set) or sse
	// (the older HTTP+SSE transport). "streamable-http" and "streamableHttp" are accepted for http.
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Cwd is the working directory of a stdio server; default the current directory.
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// SubagentOnly keeps this server's tools out of the main agent: only subagents see them, so raw MCP output
	// never reaches the main context.
	SubagentOnly bool `json:"subagentOnly,omitempty"`
	// SearchTools names this server's tools (exact names or path.Match patterns of the server's own names) that
	// `deepresearch run` may use as search sources. Unset: tools whose name contains "search".
	SearchTools []string `json:"searchTools,omitempty"`
	// Disabled servers are listed but not started.
	Disabled bool `json:"disabled,omitempty"`
	// InitTimeout bounds start-up and the initialize handshake, as a Go duration ("45s"); default Options.InitTimeout.
	InitTimeout string `json:"initTimeout,omitempty"`

	// Err is set when the entry cannot be used (a variable that is not set, no command); Start reports it as the
	// server's failure.
	Err error `json:"-"`
	// Transport, when set, is used as is instead of Command or URL (in-process servers, tests, embedding).
	Transport mcp.Transport `json:"-"`
}

// Kind returns the normalised transport kind.
func (c ServerConfig) Kind() string {
	switch strings.ToLower(c.Type) {
	case "":
		if c.Transport != nil {
			return "custom"
		}
		if c.Command == "" && c.URL != "" {
			return TypeHTTP
		}
		return TypeStdio
	case "stdio":
		return TypeStdio
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		return TypeHTTP
	case "sse":
		return TypeSSE
	default:
		return strings.ToLower(c.Type)
	}
}

func (c ServerConfig) validate() error {
	if c.Transport != nil {
		return nil
	}
	switch c.Kind() {
	case TypeStdio:
		if c.Command == "" {
			return errors.New(`stdio server needs a "command"`)
		}
	case TypeHTTP, TypeSSE:
		if c.URL == "" {
			return fmt.Errorf(`%s server needs a "url"`, c.Kind())
		}
	default:
		return fmt.Errorf("unknown server type %q (want stdio, http or sse)", c.Type)
	}
	if c.InitTimeout != "" {
		if _, err := time.ParseDuration(c.InitTimeout); err != nil {
			return fmt.Errorf("initTimeout %q: %w", c.InitTimeout, err)
		}
	}
	return nil
}

// Load reads a .mcp.json file and expands ${VAR} and ${VAR:-default} in commands, arguments, environment values,
// URLs and headers. getenv nil means os.Getenv.
func Load(path string, getenv func(string) string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcp config: %w", err)
	}
	f, err := Parse(data, getenv)
	if err != nil {
		return nil, fmt.Errorf("mcp config %s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

// Parse parses .mcp.json content; see Load. Only a file that is not JSON, or has no mcpServers object, is an
// error: an entry that cannot be used (a variable that is not set, a missing command) keeps its problem in
// ServerConfig.Err, and Start reports it as that server's failure while the other servers start.
func Parse(data []byte, getenv func(string) string) (*File, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var raw struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if raw.Servers == nil {
		return nil, errors.New(`no "mcpServers" object`)
	}
	f := &File{Servers: make(map[string]ServerConfig, len(raw.Servers))}
	for _, name := range sortedKeys(raw.Servers) {
		if name == "" {
			return nil, errors.New("a server has an empty name")
		}
		var c ServerConfig
		if err := json.Unmarshal(raw.Servers[name], &c); err != nil {
			f.Servers[name] = ServerConfig{Err: fmt.Errorf("entry: %w", err)}
			continue
		}
		var err error
		if c, err = c.expand(getenv); err != nil {
			c.Err = err
		} else if err := c.validate(); err != nil {
			c.Err = err
		}
		f.Servers[name] = c
	}
	return f, nil
}

func (c ServerConfig) expand(getenv func(string) string) (ServerConfig, error) {
	var firstErr error
	x := func(s string) string {
		out, err := Expand(s, getenv)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return out
	}
	c.Command = x(c.Command)
	c.Cwd = x(c.Cwd)
	c.URL = x(c.URL)
	if c.Args != nil {
		args := make([]string, len(c.Args))
		for i, a := range c.Args {
			args[i] = x(a)
		}
		c.Args = args
	}
	c.Env = expandMap(c.Env, x)
	c.Headers = expandMap(c.Headers, x)
	return c, firstErr
}

func expandMap(m map[string]string, x func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = x(v)
	}
	return out
}

// Expand replaces ${VAR} with the variable's value and ${VAR:-default} with the value or, when the variable is
// unset or empty, the default. A variable that is unset and has no default is an error, because a server started
// with an empty token fails later with a far less helpful message. "$$" is a literal "$".
func Expand(s string, getenv func(string) string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	var missing []string
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			b.WriteByte('$')
			i += 2
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return s, fmt.Errorf("unterminated ${ in %q", s)
			}
			expr := s[i+2 : i+end]
			name, def, hasDef := strings.Cut(expr, ":-")
			if !validVarName(name) {
				return s, fmt.Errorf("bad variable name %q in %q", name, s)
			}
			v := getenv(name)
			switch {
			case v != "":
				b.WriteString(v)
			case hasDef:
				b.WriteString(def)
			default:
				missing = append(missing, name)
			}
			i += end + 1
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	if len(missing) > 0 {
		return b.String(), fmt.Errorf("environment variable %s is not set (use ${%s:-default} for a fallback)", strings.Join(missing, ", "), missing[0])
	}
	return b.String(), nil
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
