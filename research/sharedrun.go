package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/deepresearch/deepresearch/research/state"
)

// SharedRun is one process's open hold on a run whose state is shared, kept across the steps the process runs
// of it: each step opens its Session from it (SharedRun.OpenSession) instead of opening the run anew. It keeps the
// run's state and this process's events file open, and remembers only what does not change once written — the
// question, when the run was created, the configuration it was started with, the plan once scope has stored it.
// Everything other steps change, on this process or another (spend, the fuse, the status, the pool, the step
// markers), each session reads from the state as OpenSession does; nothing a step leaves is held back in memory
// (a session's Close writes it), so a process that dies loses nothing a fresh session would have had.
//
// Sessions of one SharedRun may be open at once, on any goroutines.
type SharedRun struct {
	id, dir string
	db      *state.DB
	events  *eventFile

	mu       sync.Mutex
	facts    *runFacts
	planJSON []byte // the stored plan, once scope has run
	closed   bool
}

// runFacts is what a run's creation wrote.
type runFacts struct {
	question string
	created  time.Time
	stored   runConfig
}

// OpenSharedRun opens run runID of the state at location (a postgres:// URL, or a SQLite file's path for one
// machine) for the steps this process will run of it; dir is this process's folder for the run (created if
// needed).
func OpenSharedRun(ctx context.Context, location, runID, dir string) (*SharedRun, error) {
	if strings.TrimSpace(runID) == "" {
		return nil, errors.New("research: a shared run needs a run id")
	}
	if dir == "" {
		return nil, errors.New("research: a shared run needs this process's folder for it")
	}
	if err := makeRunFolder(dir); err != nil {
		return nil, fmt.Errorf("research: run folder: %w", err)
	}
	db, err := state.OpenRun(ctx, location, runID)
	if err != nil {
		return nil, err
	}
	ev, err := openEventFile(dir)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &SharedRun{id: runID, dir: dir, db: db, events: ev}, nil
}

// OpenSession opens a session of the run for one step, as the package's OpenSession does, on this SharedRun's
// state and folder (sc.State and cfg.OutDir are not read). Its Close leaves the SharedRun open.
func (h *SharedRun) OpenSession(ctx context.Context, cfg Config, sc SessionConfig) (*Session, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil, errors.New("research: the shared run is closed")
	}
	return openSession(ctx, cfg, sc, h)
}

// MarkFailed records that the run failed for good on a step no session could be opened for (a worker that cannot
// satisfy the run's input: a corpus folder it cannot read, an engine it has no model for), so that every listing —
// `runs --state`, the viewer, the MCP server — shows it failed with msg. A run that has finished or was stopped is
// left as it is; a run no step has started yet gets its question, so that listings can show which run failed.
func (h *SharedRun) MarkFailed(ctx context.Context, question, msg string) error {
	status, _, err := h.db.Meta(ctx, "status")
	if err != nil {
		return err
	}
	if status == RunDone || status == RunStopped {
		return nil
	}
	b := h.db.Batch()
	if _, ok, err := h.db.Meta(ctx, "question"); err != nil {
		return err
	} else if !ok && strings.TrimSpace(question) != "" {
		b.SetMeta("question", strings.TrimSpace(question))
		b.SetMeta("created", time.Now().UTC().Format(time.RFC3339Nano))
	}
	b.SetMeta("status", RunFailed)
	b.SetMeta("error", msg)
	return b.Commit(ctx)
}

// Close closes the run's state and events file; sessions still open must be closed first.
func (h *SharedRun) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	return errors.Join(h.events.close(), h.db.Close())
}

// known returns what the run's creation wrote, once a session has read it (never on a nil SharedRun).
func (h *SharedRun) known() (runFacts, bool) {
	if h == nil {
		return runFacts{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.facts == nil {
		return runFacts{}, false
	}
	return *h.facts, true
}

func (h *SharedRun) remember(f runFacts) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.facts = &f
}

// plan returns the run's plan and whether scope has stored it: read from the state until it is there, then from
// what was read (each session gets its own copy).
func (h *SharedRun) plan(ctx context.Context, db *state.DB) (*Plan, bool, error) {
	var cached []byte
	if h != nil {
		h.mu.Lock()
		cached = h.planJSON
		h.mu.Unlock()
	}
	var p Plan
	if cached != nil {
		if err := json.Unmarshal(cached, &p); err != nil {
			return nil, false, fmt.Errorf("research: cached plan: %w", err)
		}
		return &p, true, nil
	}
	done, err := db.Step(ctx, "scope", &p)
	if err != nil || !done {
		return nil, false, err
	}
	if h != nil {
		if b, err := json.Marshal(&p); err == nil {
			h.mu.Lock()
			h.planJSON = b
			h.mu.Unlock()
		}
	}
	return &p, true, nil
}
