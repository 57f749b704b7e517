package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/agent"
)

// Server is one connected MCP server. Its methods are safe for concurrent use.
type Server struct {
	name    string
	cfg     ServerConfig
	log     *slog.Logger
	session *mcp.ClientSession
	stderr  *tailBuffer
	cmd     *exec.Cmd // stdio servers only

	closing   atomic.Bool
	ready     chan struct{} // closed once the session is set up
	deadCh    chan struct{} // closed when the connection ended
	closeOnce sync.Once
	closeErr  error

	mu       sync.Mutex
	tools    []*Tool
	dead     error
	onChange func()
}

// Name is the server's name in .mcp.json.
func (s *Server) Name() string { return s.name }

// Config is the server's configuration entry.
func (s *Server) Config() ServerConfig { return s.cfg }

// Tools returns the server's current tools, wrapped for the agent.
func (s *Server) Tools() []*Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Tool(nil), s.tools...)
}

// Err reports why the server is no longer usable (it exited or closed the connection), or nil while it runs.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dead
}

// Stderr returns the tail of what a stdio server wrote to its standard error.
func (s *Server) Stderr() string { return s.stderr.String() }

// Pid is the process id of a stdio server (also its process group id), or 0.
func (s *Server) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Done is closed when the server's connection has ended, for whatever reason.
func (s *Server) Done() <-chan struct{} { return s.deadCh }

func newTransport(name string, cfg ServerConfig, opts *Options, stderr *tailBuffer) (mcp.Transport, *exec.Cmd, error) {
	if cfg.Transport != nil {
		return cfg.Transport, nil, nil
	}
	switch cfg.Kind() {
	case TypeStdio:
		cmd := exec.Command(cfg.Command, cfg.Args...)
		env := opts.Environ
		if env == nil {
			env = MinimalEnviron(os.Environ())
		}
		cmd.Env = append([]string(nil), env...)
		for _, k := range sortedKeys(cfg.Env) {
			cmd.Env = append(cmd.Env, k+"="+cfg.Env[k])
		}
		cmd.Dir = cfg.Cwd
		cmd.Stderr = stderr
		// A grandchild that inherited stderr must not keep Wait (and so Close) blocked on the pipe.
		cmd.WaitDelay = opts.TerminateTimeout
		setProcessGroup(cmd)
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: opts.TerminateTimeout}, cmd, nil
	case TypeHTTP:
		return &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: httpClient(opts.HTTPClient, cfg.Headers)}, nil, nil
	case TypeSSE:
		return &mcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: httpClient(opts.HTTPClient, cfg.Headers)}, nil, nil
	default:
		return nil, nil, fmt.Errorf("server %s: unknown type %q", name, cfg.Type)
	}
}

// httpClient returns a client that sends the configured headers (Authorization and friends) on every request.
func httpClient(base *http.Client, headers map[string]string) *http.Client {
	if base == nil {
		base = http.DefaultClient
	}
	if len(headers) == 0 {
		return base
	}
	c := *base
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = headerTransport{next: rt, headers: headers}
	return &c
}

type headerTransport struct {
	next    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

// connect starts (for stdio) and initialises one server, and lists its tools, all within the init timeout.
func connect(ctx context.Context, name string, cfg ServerConfig, opts *Options) (*Server, error) {
	s := &Server{name: name, cfg: cfg, log: opts.Logger.With("mcp_server", name), stderr: newTailBuffer(opts.StderrLimit), ready: make(chan struct{}), deadCh: make(chan struct{})}
	t, cmd, err := newTransport(name, cfg, opts, s.stderr)
	if err != nil {
		return nil, err
	}
	s.cmd = cmd
	timeout := opts.InitTimeout
	if cfg.InitTimeout != "" {
		if d, err := time.ParseDuration(cfg.InitTimeout); err == nil && d > 0 {
			timeout = d
		}
	}
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	client := mcp.NewClient(&mcp.Implementation{Name: opts.ClientName, Version: opts.ClientVersion}, &mcp.ClientOptions{
		// No roots: we have none to offer, and servers such as server-filesystem would otherwise replace the
		// directories they were started with by our (empty) list.
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			// The handler runs on the connection's reader; listing from here would wait on itself.
			go func() {
				select {
				case <-s.ready:
					s.refreshLogged()
				case <-s.deadCh:
				}
			}()
		},
	})
	session, err := client.Connect(ictx, t, nil)
	if err != nil {
		err = s.startError(ictx, "initialize", err, timeout)
		s.kill()
		return nil, err
	}
	s.session = session
	if err := s.refresh(ictx); err != nil {
		err = s.startError(ictx, "list tools", err, timeout)
		s.shutdown()
		return nil, err
	}
	close(s.ready)
	go s.watch()
	return s, nil
}

func (s *Server) startError(ctx context.Context, stage string, err error, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%s: no answer within %s: %w", stage, timeout, err)
	} else {
		err = fmt.Errorf("%s: %w", stage, err)
	}
	return &StartError{Server: s.name, Err: err, Stderr: s.stderr.String()}
}

// StartError is why a server could not be started, with the tail of its stderr.
type StartError struct {
	Server string
	Err    error
	Stderr string
}

func (e *StartError) Error() string {
	msg := fmt.Sprintf("mcp server %s: %v", e.Server, e.Err)
	if tail := strings.TrimSpace(e.Stderr); tail != "" {
		msg += "\nstderr:\n" + indent(tail, "  ")
	}
	return msg
}

func (e *StartError) Unwrap() error { return e.Err }

// watch waits for the connection to end. An end we did not ask for is a crash: it is recorded with the exit
// status and stderr so that the next call explains it, and the process group is reaped.
func (s *Server) watch() {
	waitErr := s.session.Wait()
	if s.closing.Load() {
		close(s.deadCh)
		return
	}
	// Closing reaps the stdio process and gives us its exit status.
	closeErr := s.closeSession()
	s.kill()
	reason := "closed the connection"
	switch {
	case s.cmd != nil && s.cmd.ProcessState != nil:
		reason = "exited (" + s.cmd.ProcessState.String() + ")"
	case closeErr != nil:
		reason = "closed the connection: " + closeErr.Error()
	case waitErr != nil:
		reason = "closed the connection: " + waitErr.Error()
	}
	dead := &DeadError{Server: s.name, Reason: reason, Stderr: s.stderr.String()}
	s.mu.Lock()
	s.dead = dead
	s.mu.Unlock()
	close(s.deadCh)
	s.log.Warn("mcp server stopped", "reason", reason, "stderr", lastLines(dead.Stderr, 5))
}

// DeadError is the error of a call to a server that is no longer running.
type DeadError struct {
	Server string
	Reason string
	Stderr string
}

func (e *DeadError) Error() string {
	msg := fmt.Sprintf("mcp server %s %s", e.Server, e.Reason)
	if tail := strings.TrimSpace(e.Stderr); tail != "" {
		msg += "; its last stderr output:\n" + indent(lastLines(tail, 20), "  ")
	}
	return msg
}

func (s *Server) refreshLogged() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.refresh(ctx); err != nil {
		s.log.Warn("mcp server: refreshing the tool list failed", "err", err)
	}
}

// refresh lists the server's tools and replaces the wrapped set, then tells the manager.
func (s *Server) refresh(ctx context.Context) error {
	var list []*mcp.Tool
	for t, err := range s.session.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		list = append(list, t)
	}
	tools := make([]*Tool, 0, len(list))
	used := map[string]bool{}
	for _, t := range list {
		if t == nil || t.Name == "" {
			continue
		}
		name := ToolName(s.name, t.Name)
		for i := 2; used[name]; i++ {
			name = clipName(ToolName(s.name, t.Name), fmt.Sprintf("_%d", i))
		}
		used[name] = true
		tools = append(tools, newTool(s, t, name))
	}
	s.mu.Lock()
	s.tools = tools
	fn := s.onChange
	s.mu.Unlock()
	if fn != nil {
		fn()
	}
	return nil
}

// call runs one tool on the server.
func (s *Server) call(ctx context.Context, remote string, args json.RawMessage) (*mcp.CallToolResult, error) {
	if err := s.Err(); err != nil {
		return nil, err
	}
	res, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: remote, Arguments: args})
	if err == nil {
		return res, nil
	}
	var rpcErr *jsonrpc.Error
	if ctx.Err() != nil || errors.As(err, &rpcErr) {
		// Cancelled, or the server answered with an error: it is alive.
		return nil, err
	}
	// A broken pipe or closed connection usually means the process died; give the watcher a moment to collect
	// the exit status and stderr so the model (and the user) learn why.
	select {
	case <-s.deadCh:
		if d := s.Err(); d != nil {
			return nil, d
		}
	case <-time.After(2 * time.Second):
	}
	return nil, err
}

// shutdown closes the session and kills the process group.
func (s *Server) shutdown() error {
	s.closing.Store(true)
	err := s.closeSession()
	s.kill()
	if err != nil && s.cmd != nil && s.cmd.ProcessState != nil {
		// The exit status of a process we stopped ourselves is not an error worth reporting.
		err = nil
	}
	return err
}

// closeSession closes the session once; for stdio servers that waits for (and if needed kills) the process, so
// ProcessState may be read after it returns.
func (s *Server) closeSession() error {
	s.closeOnce.Do(func() {
		if s.session != nil {
			s.closeErr = s.session.Close()
		}
	})
	return s.closeErr
}

// kill kills the server's whole process group: children it spawned die with it.
func (s *Server) kill() {
	killProcessGroup(s.Pid())
}

func (s *Server) agentTools() []agent.Tool {
	ts := s.Tools()
	out := make([]agent.Tool, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	mu      sync.Mutex
	buf     []byte
	limit   int
	dropped int64
}

func newTailBuffer(limit int) *tailBuffer { return &tailBuffer{limit: limit} }

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.limit; over > 0 {
		b.dropped += int64(over)
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped > 0 {
		return fmt.Sprintf("…(%d earlier bytes dropped)\n%s", b.dropped, b.buf)
	}
	return string(b.buf)
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
