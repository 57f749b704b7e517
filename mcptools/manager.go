package mcptools

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/deepresearch/deepresearch/agent"
)

// Options tune how servers are started. The zero value means the defaults.
type Options struct {
	// InitTimeout bounds starting a server, the initialize handshake and the first tool listing; default 30s.
	InitTimeout time.Duration
	// TerminateTimeout is how long a stdio server gets to exit after its stdin is closed before it is signalled;
	// default 2s.
	TerminateTimeout time.Duration
	// StderrLimit is how many bytes of a stdio server's stderr are kept; default 64 KiB.
	StderrLimit int
	// Environ is the base environment of stdio servers (entries' env is added to it); nil means
	// MinimalEnviron(os.Environ()): no API key reaches a server unless its entry names it.
	Environ []string
	// HTTPClient is the base client for HTTP servers; nil means http.DefaultClient.
	HTTPClient *http.Client
	Logger     *slog.Logger
	// ClientName and ClientVersion identify us to servers; default "deepresearch" and "dev".
	ClientName, ClientVersion string
}

func (o Options) withDefaults() Options {
	if o.InitTimeout <= 0 {
		o.InitTimeout = 30 * time.Second
	}
	if o.TerminateTimeout <= 0 {
		o.TerminateTimeout = 2 * time.Second
	}
	if o.StderrLimit <= 0 {
		o.StderrLimit = 64 << 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ClientName == "" {
		o.ClientName = "deepresearch"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	return o
}

// ErrDisabled is the failure reported for servers marked "disabled" in the configuration.
var ErrDisabled = errors.New("disabled in the configuration")

// Failure is a server that could not be started.
type Failure struct {
	Server string
	Err    error
}

// Manager owns the started servers of one configuration. It is safe for concurrent use.
type Manager struct {
	servers  []*Server // sorted by name
	failures []Failure // sorted by server name

	mu        sync.Mutex
	listeners []func()
	closed    bool
}

// Start starts every server of f concurrently and returns once each has either answered its initialize handshake
// and listed its tools or failed. Failures never stop the others; they are listed by Failures. f may be nil.
func Start(ctx context.Context, f *File, opts Options) *Manager {
	opts = opts.withDefaults()
	m := &Manager{}
	if f == nil {
		return m
	}
	type outcome struct {
		s   *Server
		err error
	}
	names := sortedKeys(f.Servers)
	out := make([]outcome, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		cfg := f.Servers[name]
		switch {
		case cfg.Err != nil:
			out[i].err = cfg.Err
			continue
		case cfg.Disabled:
			out[i].err = ErrDisabled
			continue
		}
		wg.Go(func() {
			s, err := connect(ctx, name, cfg, &opts)
			out[i] = outcome{s, err}
		})
	}
	wg.Wait()
	for i, o := range out {
		if o.err != nil {
			opts.Logger.Info("mcp server not started", "mcp_server", names[i], "err", o.err)
			m.failures = append(m.failures, Failure{Server: names[i], Err: o.err})
			continue
		}
		o.s.mu.Lock()
		o.s.onChange = m.changed
		o.s.mu.Unlock()
		m.servers = append(m.servers, o.s)
	}
	return m
}

// Servers returns the servers that started, by name.
func (m *Manager) Servers() []*Server { return append([]*Server(nil), m.servers...) }

// Server returns the started server with the given name.
func (m *Manager) Server(name string) (*Server, bool) {
	for _, s := range m.servers {
		if s.name == name {
			return s, true
		}
	}
	return nil, false
}

// Failures lists the servers that could not be started, by name.
func (m *Manager) Failures() []Failure { return append([]Failure(nil), m.failures...) }

// Tools returns the tools of every server that is not subagent-only: what the main agent may see.
func (m *Manager) Tools() []agent.Tool { return m.tools(false) }

// SubagentTools returns the tools of the servers marked subagentOnly.
func (m *Manager) SubagentTools() []agent.Tool { return m.tools(true) }

// AllTools returns every server's tools.
func (m *Manager) AllTools() []agent.Tool { return append(m.tools(false), m.tools(true)...) }

func (m *Manager) tools(subagentOnly bool) []agent.Tool {
	var out []agent.Tool
	for _, s := range m.servers {
		if s.cfg.SubagentOnly == subagentOnly {
			out = append(out, s.agentTools()...)
		}
	}
	return out
}

// OnToolsChanged registers fn to be called (from a background goroutine) after a server announced a changed tool
// list and it was listed again; fn typically rebuilds the agent's tools with Agent.SetTools.
func (m *Manager) OnToolsChanged(fn func()) {
	m.mu.Lock()
	m.listeners = append(m.listeners, fn)
	m.mu.Unlock()
}

func (m *Manager) changed() {
	m.mu.Lock()
	ls := append([]func(){}, m.listeners...)
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return
	}
	for _, fn := range ls {
		fn()
	}
}

// Close shuts every server down concurrently: each stdio server's stdin is closed, it gets TerminateTimeout to
// exit, then its whole process group is killed. It returns the first error.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	errs := make([]error, len(m.servers))
	var wg sync.WaitGroup
	for i, s := range m.servers {
		wg.Go(func() { errs[i] = s.shutdown() })
	}
	wg.Wait()
	return errors.Join(errs...)
}
