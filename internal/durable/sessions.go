package durable

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
)

// Bounds of the runs a worker keeps open between their steps.
const (
	// sessionsMax is how many runs a worker keeps open while none of their steps runs; a run opened past it is
	// closed when its step ends.
	sessionsMax = 64
	// sessionsIdle is how long a run no step has used stays open.
	sessionsIdle = 2 * time.Minute
)

// runKey names a run unambiguously on a worker: the state it lives in (a PostgreSQL URL, whose database and
// namespace name the deployment, or a SQLite file) and its id.
type runKey struct {
	state, runID string
}

// runCache keeps each run's open hold (a research.SharedRun) on this worker across the steps of the run that
// come to it, so that a step does not pay for opening the run: every step of a run on this worker, concurrent ones
// too, opens its session from one open run. It is bounded by count (max runs kept while unused) and by idle time
// (a run unused for idle is closed); a run is also closed when its workflow finishes or fails (forget), when a step
// of it fails on the state (the hold may be broken; the next step opens it afresh), and when the worker stops
// (closeAll). Nothing a step leaves is held only here: a killed worker loses the cache and nothing else.
type runCache[T io.Closer] struct {
	max  int
	idle time.Duration

	mu     sync.Mutex
	open   map[runKey]*cachedRun[T]
	closed bool
}

type cachedRun[T io.Closer] struct {
	ready chan struct{} // closed once opening ended (run or err set)
	run   T
	err   error
	users int
	last  time.Time
	// kept says the cache holds the run for later steps: false once it is forgotten, evicted or over the bound,
	// and then the last user to release it closes it.
	kept  bool
	timer *time.Timer
}

func newRunCache[T io.Closer](max int, idle time.Duration) *runCache[T] {
	return &runCache[T]{max: max, idle: idle, open: map[runKey]*cachedRun[T]{}}
}

// errCacheClosed refuses a step on a worker that is stopping.
var errCacheClosed = errors.New("durable: the worker is stopping")

// acquire returns the run of key, opened with open if this worker holds none; concurrent acquires of one run wait
// for one open. release gives it back; release(true) says the step failed on the run's state: the run is closed
// once no step uses it, and the next step opens it again.
func (c *runCache[T]) acquire(ctx context.Context, key runKey, open func(context.Context) (T, error)) (T, func(broken bool), error) {
	var zero T
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return zero, nil, errCacheClosed
	}
	e, ok := c.open[key]
	if !ok {
		e = &cachedRun[T]{ready: make(chan struct{}), kept: true}
		c.open[key] = e
	}
	e.users++
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	c.mu.Unlock()
	if !ok {
		e.run, e.err = open(ctx)
		close(e.ready)
		if e.err != nil {
			c.mu.Lock()
			e.users--
			if c.open[key] == e {
				delete(c.open, key) // the next step tries again
			}
			c.mu.Unlock()
			return zero, nil, e.err
		}
	} else {
		select {
		case <-e.ready:
		case <-ctx.Done():
			c.release(key, e, false)
			return zero, nil, ctx.Err()
		}
		if e.err != nil {
			c.mu.Lock()
			e.users--
			c.mu.Unlock()
			return zero, nil, e.err
		}
	}
	var once sync.Once
	return e.run, func(broken bool) { once.Do(func() { c.release(key, e, broken) }) }, nil
}

func (c *runCache[T]) release(key runKey, e *cachedRun[T], broken bool) {
	c.mu.Lock()
	e.users--
	e.last = time.Now()
	if broken {
		c.dropLocked(key, e)
	}
	var toClose []T
	if e.users == 0 {
		if !e.kept {
			toClose = append(toClose, e.run)
		} else {
			toClose = c.trimLocked()
			if e.kept {
				e.timer = time.AfterFunc(c.idle, func() { c.expire(key, e) })
			}
		}
	}
	c.mu.Unlock()
	closeRuns(toClose)
}

// dropLocked stops keeping e; its last user closes it.
func (c *runCache[T]) dropLocked(key runKey, e *cachedRun[T]) {
	e.kept = false
	if c.open[key] == e {
		delete(c.open, key)
	}
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
}

// trimLocked drops the runs idle longest while more than max are unused, returning those to close.
func (c *runCache[T]) trimLocked() []T {
	var out []T
	for {
		var oldest *cachedRun[T]
		var oldestKey runKey
		unused := 0
		for k, e := range c.open {
			if e.users > 0 {
				continue
			}
			unused++
			if oldest == nil || e.last.Before(oldest.last) {
				oldest, oldestKey = e, k
			}
		}
		if unused <= c.max || oldest == nil {
			return out
		}
		c.dropLocked(oldestKey, oldest)
		out = append(out, oldest.run)
	}
}

// expire closes e if no step has used it since its timer was set.
func (c *runCache[T]) expire(key runKey, e *cachedRun[T]) {
	c.mu.Lock()
	if e.users > 0 || !e.kept || c.open[key] != e || time.Since(e.last) < c.idle {
		c.mu.Unlock()
		return
	}
	c.dropLocked(key, e)
	c.mu.Unlock()
	closeRuns([]T{e.run})
}

// forget stops keeping a run whose workflow has ended (done, or failed for good): it is closed once no step uses it.
func (c *runCache[T]) forget(key runKey) {
	c.mu.Lock()
	e, ok := c.open[key]
	var toClose []T
	if ok {
		c.dropLocked(key, e)
		if e.users == 0 {
			toClose = append(toClose, e.run)
		}
	}
	c.mu.Unlock()
	closeRuns(toClose)
}

// closeAll closes the runs no step uses and stops keeping the others (each closed by its last step); later acquires
// are refused.
func (c *runCache[T]) closeAll() {
	c.mu.Lock()
	c.closed = true
	var toClose []T
	for k, e := range c.open {
		c.dropLocked(k, e)
		if e.users == 0 {
			toClose = append(toClose, e.run)
		}
	}
	c.mu.Unlock()
	closeRuns(toClose)
}

// held is how many runs the cache holds open (in use or not).
func (c *runCache[T]) held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.open)
}

func closeRuns[T io.Closer](runs []T) {
	for _, r := range runs {
		_ = r.Close()
	}
}

// buildsMax bounds the built configurations a worker keeps for one run while no step uses them.
const buildsMax = 8

// heldRun is what a worker keeps of a run between its steps: the open run and the configurations its steps built
// (roles, searchers, fetcher: a corpus index opened and checked, MCP servers started), each used by one step at a
// time and kept for the next step of the run that comes to this worker. A build is kept only for the input it was
// built from: a step whose input differs (the run submitted again under its id with other sources or engine)
// closes the builds of the old one and builds its own.
type heldRun struct {
	run *research.SharedRun

	mu     sync.Mutex
	sig    string   // the input the idle builds were made from
	idle   []*built // builds no step uses, newest last
	closed bool
}

// built is one configuration a step built, and what releases it.
type built struct {
	cfg     research.Config
	cleanup func()
	// step is the ledger of the step using the build: the build's own ledger (its roles record there) passes
	// every call on to it, so that each attempt's spend is its own.
	step atomic.Pointer[llm.Ledger]
}

// newBuilt wraps a fresh build: its ledger forwards each call to the ledger of the step that holds it.
func newBuilt(cfg research.Config, cleanup func()) *built {
	b := &built{cfg: cfg, cleanup: cleanup}
	if b.cfg.Ledger == nil {
		b.cfg.Ledger = &llm.Ledger{}
	}
	l := b.cfg.Ledger
	prev := l.OnEntry
	l.OnEntry = func(e llm.Entry) {
		if prev != nil {
			prev(e)
		}
		if step := b.step.Load(); step != nil {
			step.Record(e)
		}
	}
	return b
}

// take returns an idle build of input sig, or nil; builds of another input are closed.
func (h *heldRun) take(sig string) *built {
	h.mu.Lock()
	var stale []*built
	if h.sig != sig {
		stale, h.idle, h.sig = h.idle, nil, sig
	}
	var b *built
	if n := len(h.idle); n > 0 {
		b, h.idle = h.idle[n-1], h.idle[:n-1]
	}
	h.mu.Unlock()
	closeBuilds(stale)
	return b
}

// put gives a build back for the next step of input sig; past buildsMax, or once the run is closed or its input
// changed, it is closed instead.
func (h *heldRun) put(sig string, b *built) {
	b.step.Store(nil)
	h.mu.Lock()
	keep := !h.closed && h.sig == sig && len(h.idle) < buildsMax
	if keep {
		h.idle = append(h.idle, b)
	}
	h.mu.Unlock()
	if !keep {
		closeBuilds([]*built{b})
	}
}

// builds is how many builds the run keeps idle.
func (h *heldRun) builds() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.idle)
}

// Close closes the idle builds and the run; a build in use is closed when its step gives it back.
func (h *heldRun) Close() error {
	h.mu.Lock()
	idle := h.idle
	h.idle, h.closed = nil, true
	h.mu.Unlock()
	closeBuilds(idle)
	return h.run.Close()
}

func closeBuilds(bs []*built) {
	for _, b := range bs {
		if b.cleanup != nil {
			b.cleanup()
		}
	}
}
