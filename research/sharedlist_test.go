package research_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// sharedRun writes a run into a shared state as a worker leaves it: its meta, accepted and rejected evidence.
func sharedRun(tb testing.TB, ctx context.Context, url, id, status string, accepted, rejected int) {
	tb.Helper()
	db, err := state.OpenRun(ctx, url, id)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for k, v := range map[string]string{"question": "Question of " + id, "engine": "graph", "status": status,
		"created": time.Now().UTC().Format(time.RFC3339Nano)} {
		if err := db.SetMeta(ctx, k, v); err != nil {
			tb.Fatal(err)
		}
	}
	if status == research.RunFailed {
		if err := db.SetMeta(ctx, "error", "model refused"); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range accepted + rejected {
		st := state.Accepted
		if i >= accepted {
			st = state.Rejected
		}
		e := state.Evidence{SubQuestion: "q1", Claim: fmt.Sprintf("Claim %d.", i), Quote: fmt.Sprintf("quote number %d", i),
			Source: fmt.Sprintf("https://example.org/%s/%d", id, i), Confidence: 0.8, Round: 1, Status: st}
		if _, _, err := db.AddEvidence(ctx, e); err != nil {
			tb.Fatal(err)
		}
	}
}

func rawExec(t *testing.T, url string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// Listing a shared state reads every run's status and accepted-evidence count in one pass, and a run whose
// schema is half-migrated, damaged, newer than this program or gone is listed as unreadable with its reason while
// the others are listed as usual.
func TestListSharedRunsStatesAndDamage(t *testing.T) {
	pg := pgtest.New(t)
	ctx := t.Context()
	sharedRun(t, ctx, pg.URL, "done-1", research.RunDone, 3, 2)
	sharedRun(t, ctx, pg.URL, "going-1", research.RunRunning, 1, 0)
	sharedRun(t, ctx, pg.URL, "failed-1", research.RunFailed, 0, 1)
	sharedRun(t, ctx, pg.URL, "stopped-1", research.RunStopped, 2, 0)
	for _, id := range []string{"half-1", "badcol-1", "future-1", "gone-1"} {
		sharedRun(t, ctx, pg.URL, id, research.RunDone, 1, 0)
	}
	q := func(id string) string { return `"` + state.RunSchema(id) + `"` }
	rawExec(t, pg.URL,
		// A schema left with its first tables only: no evidence table, no recorded migration.
		`DROP TABLE `+q("half-1")+`.evidence CASCADE`, `DROP TABLE `+q("half-1")+`.schema_migrations`,
		// A schema whose tables are there but the evidence status is not text.
		`DROP TABLE `+q("badcol-1")+`.evidence CASCADE`, `CREATE TABLE `+q("badcol-1")+`.evidence (status INTEGER)`,
		`INSERT INTO `+q("future-1")+`.schema_migrations VALUES (99, 'later')`,
		`DROP SCHEMA `+q("gone-1")+` CASCADE`,
	)
	list, err := research.ListSharedRuns(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]research.RunSummary{}
	var order []string
	for _, s := range list {
		got[s.ID] = s
		order = append(order, s.ID)
	}
	if len(list) != 8 {
		t.Fatalf("listed %d runs: %v", len(list), order)
	}
	if order[0] != "done-1" || order[7] != "gone-1" {
		t.Errorf("not oldest first: %v", order)
	}
	for _, c := range []struct {
		id, status, err string
		evidence        int
	}{
		{"done-1", research.RunDone, "", 3},
		{"going-1", research.RunRunning, "", 1},
		{"failed-1", research.RunFailed, "model refused", 0},
		{"stopped-1", research.RunStopped, "", 2},
		{"half-1", research.RunUnreadable, "no schema_migrations.version, evidence.status", 0},
		{"badcol-1", research.RunUnreadable, "run badcol-1: schema " + state.RunSchema("badcol-1"), 0},
		{"future-1", research.RunUnreadable, "schema version 99 is newer", 0},
		{"gone-1", research.RunUnreadable, "does not exist", 0},
	} {
		s := got[c.id]
		if s.Status != c.status || s.Evidence != c.evidence || !strings.Contains(s.Error, c.err) || (c.err == "" && s.Error != "") {
			t.Errorf("%s: status %q evidence %d error %q; want %q %d %q", c.id, s.Status, s.Evidence, s.Error, c.status, c.evidence, c.err)
		}
		if c.status != research.RunUnreadable && (s.Question != "Question of "+c.id || s.Engine != "graph" || s.Created.IsZero()) {
			t.Errorf("%s: %+v", c.id, s)
		}
	}
}

// listPerRunPools is how listing read a shared state before it became one pass: a pool and several queries per
// run. It stays here as the benchmark's baseline.
func listPerRunPools(ctx context.Context, url string) (int, error) {
	ids, err := state.ListRuns(ctx, url)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		db, err := state.OpenRunReadOnly(ctx, url, id)
		if err != nil {
			return 0, err
		}
		for _, k := range []string{"question", "engine", "status", "error", "cut_short", "created", "finished"} {
			if _, _, err := db.Meta(ctx, k); err != nil {
				db.Close()
				return 0, err
			}
		}
		pool, err := db.Evidence(ctx, state.Accepted)
		db.Close()
		if err != nil {
			return 0, err
		}
		n += len(pool)
	}
	return n, nil
}

// BenchmarkListSharedRuns lists 300 runs of a real PostgreSQL state: per-run pools (before) and one pass (now).
func BenchmarkListSharedRuns(b *testing.B) {
	pg := pgtest.New(b)
	ctx := context.Background()
	const runs = 300
	for i := range runs {
		sharedRun(b, ctx, pg.URL, fmt.Sprintf("run-%03d", i), research.RunDone, 3, 1)
	}
	b.Run("per-run-pools", func(b *testing.B) {
		for b.Loop() {
			if n, err := listPerRunPools(ctx, pg.URL); err != nil || n != 3*runs {
				b.Fatalf("%d, %v", n, err)
			}
		}
	})
	b.Run("one-pass", func(b *testing.B) {
		for b.Loop() {
			list, err := research.ListSharedRuns(ctx, pg.URL)
			if err != nil || len(list) != runs || list[runs-1].Evidence != 3 {
				b.Fatalf("%d runs, %v", len(list), err)
			}
		}
	})
}

// Marking a stopped durable run: a run going is listed stopped afterwards, a finished run keeps its status, a
// run the state does not hold is ErrNotFound and no schema is created for it.
func TestMarkSharedStopped(t *testing.T) {
	pg := pgtest.New(t)
	ctx := t.Context()
	sharedRun(t, ctx, pg.URL, "going-1", research.RunRunning, 1, 0)
	sharedRun(t, ctx, pg.URL, "done-1", research.RunDone, 1, 0)
	for _, id := range []string{"going-1", "done-1"} {
		if err := research.MarkSharedStopped(ctx, pg.URL, id); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	if err := research.MarkSharedStopped(ctx, pg.URL, "nowhere-1"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("a run that is nowhere: %v", err)
	}
	list, err := research.ListSharedRuns(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range list {
		got[s.ID] = s.Status
	}
	if len(list) != 2 || got["going-1"] != research.RunStopped || got["done-1"] != research.RunDone {
		t.Errorf("listed %v", got)
	}
}
