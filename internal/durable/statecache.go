package durable

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/deepresearch/deepresearch/research/state"
)

// stateCache keeps each run's state open on this worker while its steps come, so a step does not pay for
// opening (and migrating) the state: every step of a run on this worker shares one handle, and one writer
// batches their writes. A handle no step has used for stateIdle is closed.
type stateCache struct {
	mu   sync.Mutex
	open map[string]*cachedState
}

type cachedState struct {
	db    *state.DB
	users int
	last  time.Time
}

const stateIdle = 2 * time.Minute

// acquire returns the run's state, opening it if needed; release gives it back.
func (c *stateCache) acquire(ctx context.Context, location, runID string) (*state.DB, func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open == nil {
		c.open = map[string]*cachedState{}
	}
	now := time.Now()
	for id, e := range c.open {
		if e.users == 0 && now.Sub(e.last) > stateIdle {
			e.db.Close()
			delete(c.open, id)
		}
	}
	e, ok := c.open[runID]
	if !ok {
		if !state.IsPostgresURL(location) {
			if err := os.MkdirAll(filepath.Dir(location), 0o755); err != nil {
				return nil, nil, err
			}
		}
		db, err := state.OpenRun(ctx, location, runID)
		if err != nil {
			return nil, nil, err
		}
		e = &cachedState{db: db}
		c.open[runID] = e
	}
	e.users++
	return e.db, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		e.users--
		e.last = time.Now()
		if e.users == 0 && c.open[runID] != e {
			e.db.Close() // forgotten while in use
		}
	}, nil
}

// forget closes a finished run's state once no step uses it.
func (c *stateCache) forget(runID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.open[runID]
	if !ok {
		return
	}
	delete(c.open, runID)
	if e.users == 0 {
		e.db.Close()
	}
}

func (c *stateCache) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, e := range c.open {
		if e.users == 0 {
			e.db.Close()
		}
		delete(c.open, id)
	}
}
