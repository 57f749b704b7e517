package state_test

import (
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research/state"
)

// A batch's writes land together, in order, with each write's result, on both backends; a write refused by its
// check is not queued; nothing is visible to another handle before Commit.
func TestBatchCommitsInOrderWithResults(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			a, b := open(t, "batch-"+name)
			ctx := t.Context()
			pre, _, err := a.AddEvidence(ctx, good())
			if err != nil {
				t.Fatal(err)
			}
			batch := a.Batch()
			second := good()
			second.Quote = "alpha reaches twenty units"
			var res [3]state.AddedEvidence
			for i, e := range []state.Evidence{good(), second, second} {
				if err := batch.AddEvidence(e, &res[i]); err != nil {
					t.Fatal(err)
				}
			}
			bad := good()
			bad.Source = "javascript:alert(1)"
			var unused state.AddedEvidence
			if err := batch.AddEvidence(bad, &unused); err == nil {
				t.Fatal("evidence with a bad source queued")
			}
			if err := batch.AddLog(state.LogEntry{Stage: "nonsense", Decision: "x"}); err == nil {
				t.Fatal("log entry with an unknown stage queued")
			}
			// A later write sees what the writes before it found.
			batch.Later(func(b *state.Batch) error {
				added := 0
				for _, r := range res {
					if r.Added {
						added++
					}
				}
				return b.MarkStep("read:q1:https://example.com/a", map[string]int{"evidence": added})
			})
			if err := batch.AddLog(state.LogEntry{Stage: "read", Decision: "read", Detail: "two items"}); err != nil {
				t.Fatal(err)
			}
			if batch.Len() != 5 {
				t.Fatalf("queued %d writes, want 5", batch.Len())
			}
			if pool, _ := b.Evidence(ctx, ""); len(pool) != 1 {
				t.Fatalf("before commit the other handle sees %d items", len(pool))
			}
			if err := batch.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if batch.Len() != 0 {
				t.Fatal("a committed batch keeps its writes")
			}
			if res[0] != (state.AddedEvidence{ID: pre}) || !res[1].Added || res[2] != (state.AddedEvidence{ID: res[1].ID}) ||
				res[1].ID == pre {
				t.Fatalf("results %+v (earlier id %s)", res, pre)
			}
			pool, err := b.Evidence(ctx, "")
			if err != nil || len(pool) != 2 || pool[1].ID != res[1].ID {
				t.Fatalf("pool %+v, %v", pool, err)
			}
			var data map[string]int
			if ok, err := b.Step(ctx, "read:q1:https://example.com/a", &data); !ok || err != nil || data["evidence"] != 1 {
				t.Fatalf("step %v %v %v", ok, err, data)
			}
			log, err := b.Log(ctx, "read")
			if err != nil || len(log) != 1 || log[0].Detail != "two items" {
				t.Fatalf("log %+v, %v", log, err)
			}
			if err := a.Batch().Commit(ctx); err != nil {
				t.Fatalf("empty batch: %v", err)
			}
		})
	}
}

// When one write of a batch fails in the database, none of its writes stay, and the writer goes on serving.
func TestBatchWritesAllOrNothing(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := state.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// Another process breaks the log table: a log row of the batch cannot be written.
	if _, err := raw.ExecContext(ctx, `DROP TABLE log`); err != nil {
		t.Fatal(err)
	}
	batch := db.Batch()
	var res state.AddedEvidence
	if err := batch.AddEvidence(good(), &res); err != nil {
		t.Fatal(err)
	}
	if err := batch.MarkStep("read:q1:https://example.com/a", nil); err != nil {
		t.Fatal(err)
	}
	if err := batch.AddLog(state.LogEntry{Stage: "read", Decision: "read"}); err != nil {
		t.Fatal(err)
	}
	err = batch.Commit(ctx)
	if err == nil || !strings.Contains(err.Error(), "log") {
		t.Fatalf("commit with the log table gone: %v", err)
	}
	if pool, err := db.Evidence(ctx, ""); err != nil || len(pool) != 0 {
		t.Fatalf("the failed batch left %d items (%v)", len(pool), err)
	}
	if ok, _ := db.Step(ctx, "read:q1:https://example.com/a", nil); ok {
		t.Fatal("the failed batch left its step marked")
	}
	if _, added, err := db.AddEvidence(ctx, good()); err != nil || !added {
		t.Fatalf("write after a failed batch: added %v, %v", added, err)
	}

	// A later write that fails takes the writes before it back too.
	batch = db.Batch()
	second := good()
	second.Quote = "alpha reaches twenty units"
	if err := batch.AddEvidence(second, &res); err != nil {
		t.Fatal(err)
	}
	batch.Later(func(*state.Batch) error { return errors.New("refused after the fact") })
	if err := batch.Commit(ctx); err == nil || !strings.Contains(err.Error(), "refused after the fact") {
		t.Fatalf("commit with a failing later write: %v", err)
	}
	if pool, err := db.Evidence(ctx, ""); err != nil || len(pool) != 1 {
		t.Fatalf("the failed batch left %d items (%v)", len(pool), err)
	}
}
