package state_test

import (
	"testing"

	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/research/state"
)

// A ping answers while the server does, fails while it is cut off, and answers again once it is back, over the
// same pinger (its broken connection replaced).
func TestPingerFollowsAnOutage(t *testing.T) {
	proxy := pgtest.NewProxy(t, pgtest.New(t))
	p, err := state.NewPinger(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Ping(t.Context()); err != nil {
		t.Fatalf("ping: %v", err)
	}
	proxy.Cut()
	if err := p.Ping(t.Context()); err == nil {
		t.Fatal("a ping through a cut connection answered")
	}
	proxy.Mend()
	if err := p.Ping(t.Context()); err != nil {
		t.Fatalf("ping after the outage: %v", err)
	}
	if _, err := state.NewPinger("postgres://u@host:notaport/db"); err == nil {
		t.Error("a malformed URL was taken")
	}
}
