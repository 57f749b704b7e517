package mcpserver

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// codeServerBusy is the JSON-RPC error (implementation-defined server error) for a request refused because the
// server is at one of its bounds: open sessions over HTTP (with HTTP 429), research runs in progress.
const codeServerBusy = -32000

// Default bounds of the server.
const (
	// DefaultMaxSessions bounds the open Streamable HTTP sessions.
	DefaultMaxSessions = 60
	// DefaultMaxRuns bounds the deep_research calls running at once, over every session and transport.
	DefaultMaxRuns = 10
	// DefaultIdleEvict is how long a session must have gone unused before a new one may take its place when the
	// sessions are at their bound.
	DefaultIdleEvict = 5 * time.Minute
)

// runSlots bounds the deep_research calls running at once.
type runSlots chan struct{}

// acquire takes a slot, or returns the -32000 refusal that says why not.
func (r runSlots) acquire() (release func(), err error) {
	select {
	case r <- struct{}{}:
		return func() { <-r }, nil
	default:
		return nil, &jsonrpc.Error{Code: codeServerBusy, Message: fmt.Sprintf(
			"too many research runs in progress: this server runs at most %d at once; call deep_research again when one has finished", cap(r))}
	}
}

// sessionLimit bounds the open HTTP sessions. A request that would open a session past the bound first closes
// the session unused for longest, if it has been idle for at least idle and has no request in progress; failing
// that it is refused with HTTP 429 (a JSON-RPC -32000 error, see jsonRPCErrors). Sessions also expire on their
// own after HTTPConfig.SessionTimeout.
type sessionLimit struct {
	srv  *mcp.Server
	max  int
	idle time.Duration
	now  func() time.Time
	next http.Handler

	mu      sync.Mutex
	opening int                    // requests without a session being served (each may open one)
	use     map[string]*sessionUse // by Mcp-Session-Id
}

type sessionUse struct {
	last   time.Time // when its last request ended
	active int       // requests in progress (an open GET stream counts)
}

func (l *sessionLimit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		l.mu.Lock()
		u := l.use[id]
		if u == nil {
			u = &sessionUse{}
			l.use[id] = u
		}
		u.active++
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			u.active--
			u.last = l.now()
			l.mu.Unlock()
		}()
		l.next.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		l.next.ServeHTTP(w, r)
		return
	}
	if !l.reserve() {
		w.Header().Set("Retry-After", "60")
		http.Error(w, fmt.Sprintf("too many MCP sessions open: this server keeps at most %d; close one (DELETE with its Mcp-Session-Id) or wait for an idle one to expire", l.max),
			http.StatusTooManyRequests)
		return
	}
	defer func() {
		l.mu.Lock()
		l.opening--
		if id := w.Header().Get("Mcp-Session-Id"); id != "" && l.use[id] == nil {
			l.use[id] = &sessionUse{last: l.now()}
		}
		l.mu.Unlock()
	}()
	l.next.ServeHTTP(w, r)
}

// reserve counts a request about to open a session, making room by closing the longest idle session when the
// bound is reached; false when there is no room.
func (l *sessionLimit) reserve() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	open := map[string]*mcp.ServerSession{}
	for ss := range l.srv.Sessions() {
		if id := ss.ID(); id != "" {
			open[id] = ss
		}
	}
	for id := range l.use {
		if open[id] == nil {
			delete(l.use, id) // expired, deleted or closed: forget it
		}
	}
	if len(open)+l.opening < l.max {
		l.opening++
		return true
	}
	var oldest string
	for id, u := range l.use {
		if u.active == 0 && l.now().Sub(u.last) >= l.idle && (oldest == "" || u.last.Before(l.use[oldest].last)) {
			oldest = id
		}
	}
	if oldest == "" || len(open)-1+l.opening >= l.max {
		return false
	}
	delete(l.use, oldest)
	_ = open[oldest].Close()
	l.opening++
	return true
}
