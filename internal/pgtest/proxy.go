package pgtest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// Proxy stands between clients and a server on loopback, to play an outage: Cut closes every connection and
// refuses new ones, as a database that went down does; Mend lets connections through again.
type Proxy struct {
	// URL reaches the server through the proxy (NewProxy); Addr is the proxy's HOST:PORT.
	URL    string
	Addr   string
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]bool
}

// NewProxy starts a proxy to s for the test, closed when the test ends.
func NewProxy(t testing.TB, s *Server) *Proxy {
	t.Helper()
	// postgres://user@127.0.0.1:PORT/db?… : the host and port are between "@" and the path.
	rest := s.URL[strings.Index(s.URL, "@")+1:]
	target := rest[:strings.IndexAny(rest, "/?")]
	p := NewTCPProxy(t, target)
	p.URL = strings.Replace(s.URL, "@"+target, "@"+p.Addr, 1)
	return p
}

// NewTCPProxy starts a proxy to any TCP server at target (HOST:PORT) — a Temporal frontend — for the test; Addr is
// where clients reach it (URL is empty).
func NewTCPProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]bool{}, Addr: ln.Addr().String()}
	t.Cleanup(func() { ln.Close(); p.Cut() })
	go p.serve()
	return p
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); up.Close() }()
		go func() { _, _ = io.Copy(c, up); c.Close() }()
	}
}

// Cut closes every connection through the proxy and refuses new ones until Mend.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// Mend lets connections through again.
func (p *Proxy) Mend() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// IsCut reports whether the proxy is cut.
func (p *Proxy) IsCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}
