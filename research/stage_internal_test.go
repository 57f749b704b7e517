package research

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research/state"
)

// expiringCtx is a caller's context whose deadline passes right after the first Err check once armed: the
// interleaving in which a stage context ends through its parent between two checks of stageEnded.
type expiringCtx struct {
	mu    sync.Mutex
	done  chan struct{}
	err   error
	after []func()
	armed bool
}

func (c *expiringCtx) arm() {
	c.mu.Lock()
	c.armed = true
	c.mu.Unlock()
}

func newExpiringCtx() *expiringCtx { return &expiringCtx{done: make(chan struct{})} }

func (c *expiringCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *expiringCtx) Done() <-chan struct{}       { return c.done }
func (c *expiringCtx) Value(any) any               { return nil }

func (c *expiringCtx) Err() error {
	c.mu.Lock()
	err := c.err
	fire := c.armed && err == nil
	c.mu.Unlock()
	if fire {
		c.expire()
	}
	return err
}

func (c *expiringCtx) expire() {
	c.mu.Lock()
	c.err = context.DeadlineExceeded
	close(c.done)
	fs := c.after
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// AfterFunc lets child contexts learn of the expiry synchronously, as they do from the standard contexts.
func (c *expiringCtx) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.after = append(c.after, f)
	return func() bool { return false }
}

func testRunner(t *testing.T) *runner {
	t.Helper()
	db, err := state.Open(t.Context(), filepath.Join(t.TempDir(), StateFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &runner{db: db, rc: defaults(runConfig{}), log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		started: time.Now()}
}

func TestStageEndedThroughParentIsNotATimeout(t *testing.T) {
	r := testRunner(t)
	parent := newExpiringCtx()
	sctx, cancel := r.stageCtx(parent, StageSearch)
	defer cancel()
	parent.arm()
	err := r.stageEnded(parent, sctx, StageSearch, 1)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stageEnded = %v, want the caller's deadline error", err)
	}
	if cut := r.cutShortText(); cut != "" {
		t.Fatalf("a stage that ended through its parent was reported as %q", cut)
	}
	log, err := r.db.Log(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range log {
		if strings.Contains(e.Detail, "timed out") {
			t.Fatalf("research log: %+v", e)
		}
	}
}

func TestStageEndedReportsWhatEnded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		budget  Budget
		stage   string
		want    string
		tripped bool
	}{
		{"stage timeout", Budget{StageTimeout: time.Millisecond, MaxTime: time.Hour}, StageSearch,
			"search stage of round 1 timed out after 1ms", false},
		{"run time limit", Budget{MaxTime: time.Millisecond}, StageRead, "time limit of 1ms reached", true},
		{"released", Budget{}, StageSearch, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testRunner(t)
			r.rc = defaults(runConfig{Budget: tc.budget})
			if tc.budget.MaxTime > 0 {
				r.deadline = r.started.Add(tc.budget.MaxTime)
			}
			sctx, cancel := r.stageCtx(t.Context(), tc.stage)
			if tc.want != "" {
				<-sctx.Done()
			}
			cancel()
			if err := r.stageEnded(t.Context(), sctx, tc.stage, 1); err != nil {
				t.Fatal(err)
			}
			if got := r.cutShortText(); got != tc.want {
				t.Fatalf("cut short %q, want %q", got, tc.want)
			}
			if r.fused() != tc.tripped {
				t.Fatalf("fuse %v, want %v", r.fused(), tc.tripped)
			}
		})
	}
}

// Spend saves asked for at once share writes, yet each returns only once the stored spend holds everything
// recorded before it was asked for.
func TestSpendSavesCoalesceWithoutLosingAny(t *testing.T) {
	r := testRunner(t)
	r.ledger = &llm.Ledger{}
	ctx := t.Context()
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.ledger.Record(llm.Entry{Usage: llm.Usage{InputTokens: 1 + i}})
			before, _, _ := r.spendNow()
			r.saveSpend(ctx)
			v, ok, err := r.db.Meta(ctx, "spend")
			var got spend
			if err == nil && ok {
				err = json.Unmarshal([]byte(v), &got)
			}
			if err != nil || !ok || got.Tokens < before {
				t.Errorf("after a save asked for at %d tokens the stored spend is %q (%v)", before, v, err)
			}
		}()
	}
	wg.Wait()
	v, _, _ := r.db.Meta(ctx, "spend")
	var got spend
	if err := json.Unmarshal([]byte(v), &got); err != nil || got.Tokens != 64*65/2 {
		t.Fatalf("final stored spend %q, want %d tokens (%v)", v, 64*65/2, err)
	}
	if r.spendSaves.active != nil || r.spendSaves.saved != 64 {
		t.Fatalf("saves left: active %v, covered %d of 64", r.spendSaves.active != nil, r.spendSaves.saved)
	}
}
