package state_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/research/state"
)

// backends opens the same run twice per backend — as two processes would — so every test below runs against
// SQLite and a real PostgreSQL server alike.
func backends(t *testing.T) map[string]func(t *testing.T, runID string) (*state.DB, *state.DB) {
	t.Helper()
	url := newDatabase(t)
	return map[string]func(t *testing.T, runID string) (*state.DB, *state.DB){
		state.SQLite: func(t *testing.T, runID string) (*state.DB, *state.DB) {
			path := filepath.Join(t.TempDir(), runID+".db")
			return openTwice(t, path, runID)
		},
		state.Postgres: func(t *testing.T, runID string) (*state.DB, *state.DB) {
			return openTwice(t, url, runID)
		},
	}
}

// server is one PostgreSQL server for the package's tests; each test gets a database of its own.
var server *pgtest.Server

func TestMain(m *testing.M) {
	s, err := pgtest.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server = s
	code := m.Run()
	s.Stop()
	os.Exit(code)
}

func newDatabase(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "_", "-", "_").Replace(t.Name()))
	url, err := server.NewDatabase(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return url
}

func openTwice(t *testing.T, location, runID string) (*state.DB, *state.DB) {
	t.Helper()
	var dbs [2]*state.DB
	for i := range dbs {
		db, err := state.OpenRun(t.Context(), location, runID)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs[0], dbs[1]
}

func TestBackendsShareOneRunWithoutDuplicates(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			a, b := open(t, "run-"+name)
			if a.Backend() != name {
				t.Fatalf("backend = %s", a.Backend())
			}
			ctx := t.Context()
			// 40 distinct quotes, each written 4 times: by two handles (two processes) and two goroutines each,
			// as retried or twice-delivered steps would.
			var wg sync.WaitGroup
			var mu sync.Mutex
			ids := map[string]map[string]bool{} // quote → ids returned
			addedCount := 0
			for _, db := range []*state.DB{a, b} {
				for g := 0; g < 2; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range 40 {
							e := good()
							e.Quote = fmt.Sprintf("quote number %d", i)
							id, added, err := db.AddEvidence(ctx, e)
							if err != nil {
								t.Error(err)
								return
							}
							if err := db.AddLog(ctx, state.LogEntry{Stage: "read", Decision: "read", Detail: e.Quote}); err != nil {
								t.Error(err)
								return
							}
							mu.Lock()
							if ids[e.Quote] == nil {
								ids[e.Quote] = map[string]bool{}
							}
							ids[e.Quote][id] = true
							if added {
								addedCount++
							}
							mu.Unlock()
						}
					}()
				}
			}
			wg.Wait()
			if addedCount != 40 {
				t.Errorf("added %d times, want 40 (once per distinct quote)", addedCount)
			}
			for q, set := range ids {
				if len(set) != 1 {
					t.Errorf("%s got ids %v, want one", q, set)
				}
			}
			pool, err := b.Evidence(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(pool) != 40 {
				t.Fatalf("pool has %d rows, want 40", len(pool))
			}
			for i, e := range pool {
				if want := fmt.Sprintf("e%d", i+1); e.ID != want {
					t.Fatalf("row %d id %s, want %s (dense, in order)", i, e.ID, want)
				}
			}
			logs, err := a.Log(ctx, "read")
			if err != nil {
				t.Fatal(err)
			}
			if len(logs) != 160 {
				t.Errorf("log has %d rows, want 160", len(logs))
			}
		})
	}
}

func TestBackendsSameBehaviour(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			db, other := open(t, "behaviour")
			ctx := t.Context()
			if err := db.SetMeta(ctx, "status", "running"); err != nil {
				t.Fatal(err)
			}
			if err := other.SetMeta(ctx, "status", "done"); err != nil {
				t.Fatal(err)
			}
			if v, ok, err := db.Meta(ctx, "status"); err != nil || !ok || v != "done" {
				t.Errorf("meta = %q %v %v", v, ok, err)
			}
			for _, s := range []string{"search:r1:q2", "search:r1:q1", "pick:r1"} {
				if err := db.MarkStep(ctx, s, map[string]int{"n": len(s)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := other.MarkStep(ctx, "search:r1:q2", map[string]int{"n": 99}); err != nil {
				t.Fatal(err)
			}
			var out map[string]int
			if ok, err := other.Step(ctx, "search:r1:q2", &out); err != nil || !ok || out["n"] != len("search:r1:q2") {
				t.Errorf("step = %v %v %v (first record must stay)", out, ok, err)
			}
			names, err := other.StepNames(ctx, "search:")
			if err != nil || strings.Join(names, ",") != "search:r1:q2,search:r1:q1" {
				t.Errorf("step names = %v %v", names, err)
			}
			id, _, err := db.AddEvidence(ctx, good())
			if err != nil {
				t.Fatal(err)
			}
			e2 := good()
			e2.Quote = "another quote"
			id2, _, err := db.AddEvidence(ctx, e2)
			if err != nil {
				t.Fatal(err)
			}
			if err := other.SetEvidenceStatus(ctx, id2, state.Rejected, "off topic"); err != nil {
				t.Fatal(err)
			}
			if err := other.SetEvidenceStatus(ctx, "e999", state.Rejected, "x"); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Errorf("unknown evidence: %v", err)
			}
			// The tally counts what the other process wrote, as the lists do.
			if tl, err := db.Tally(ctx, "search:", "pick:", "read:"); err != nil || tl.Accepted != 1 || tl.Other != 1 ||
				fmt.Sprint(tl.Steps) != "[2 1 0]" {
				t.Errorf("tally = %+v %v, want 1 accepted, 1 other, steps [2 1 0]", tl, err)
			}
			acc, _ := db.Evidence(ctx, state.Accepted)
			if len(acc) != 1 || acc[0].ID != id || acc[0].Confidence != 0.7 {
				t.Errorf("accepted = %+v", acc)
			}
			if err := db.SetCitations(ctx, []state.Citation{{ConclusionID: "c1", Text: "A.", EvidenceID: id2, Source: "https://example.com/a", N: 1}}); err == nil ||
				!strings.Contains(err.Error(), "is rejected") {
				t.Errorf("citation to rejected evidence: %v", err)
			}
			cs := []state.Citation{{ConclusionID: "c2", Text: "B.", EvidenceID: id, Source: "https://example.com/a", N: 2},
				{ConclusionID: "c1", Text: "A.", EvidenceID: id, Source: "https://example.com/a", N: 1}}
			if err := db.SetCitations(ctx, cs); err != nil {
				t.Fatal(err)
			}
			got, _ := other.Citations(ctx)
			if len(got) != 2 || got[0].ConclusionID != "c1" {
				t.Errorf("citations = %+v", got)
			}
			for _, u := range []string{"https://example.com/b", "https://example.com/a"} {
				if err := db.PutDocument(ctx, state.Document{URL: u, Hash: "h" + u[len(u)-1:], Path: "docs/x.txt", Truncated: true}); err != nil {
					t.Fatal(err)
				}
			}
			docs, err := other.Documents(ctx)
			if err != nil || len(docs) != 2 || docs[0].URL != "https://example.com/b" || !docs[0].Truncated {
				t.Errorf("documents = %+v %v", docs, err)
			}
			if _, err := other.Document(ctx, "https://example.com/zzz"); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Errorf("missing document: %v", err)
			}
			if err := db.PutText(ctx, "hb", "the text of b"); err != nil {
				t.Fatal(err)
			}
			if txt, err := other.Text(ctx, "hb"); err != nil || txt != "the text of b" {
				t.Errorf("text = %q %v", txt, err)
			}
			if err := db.SetSpend(ctx, "worker-a", state.Spend{Tokens: 10, CostUSD: 0.5, Calls: 2}); err != nil {
				t.Fatal(err)
			}
			if err := other.SetSpend(ctx, "worker-b", state.Spend{Tokens: 5, CostUSD: 0.25, Calls: 1}); err != nil {
				t.Fatal(err)
			}
			if err := db.SetSpend(ctx, "worker-a", state.Spend{Tokens: 20, CostUSD: 1, Calls: 3}); err != nil {
				t.Fatal(err)
			}
			if s, err := other.TotalSpend(ctx); err != nil || s.Tokens != 25 || s.Calls != 4 || s.CostUSD != 1.25 {
				t.Errorf("total spend = %+v %v", s, err)
			}
			if s, _ := other.TotalSpend(ctx, "worker-a"); s.Tokens != 5 {
				t.Errorf("spend except worker-a = %+v", s)
			}
			if err := db.SetSpend(ctx, "w", state.Spend{CostUSD: -1}); err == nil {
				t.Error("negative spend accepted")
			}
		})
	}
}

// A failing write committed in the same batch as others takes only itself down.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			db, _ := open(t, "isolate")
			ctx := t.Context()
			var wg sync.WaitGroup
			errs := make([]error, 64)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if i%2 == 0 {
						errs[i] = db.SetEvidenceStatus(ctx, fmt.Sprintf("e%d", 1000+i), state.Rejected, "no such row")
					} else {
						errs[i] = db.AddLog(ctx, state.LogEntry{Stage: "verify", Decision: "x", Detail: fmt.Sprint(i)})
					}
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if (i%2 == 0) != (err != nil) {
					t.Errorf("write %d: err = %v", i, err)
				}
			}
			logs, _ := db.Log(ctx, "verify")
			if len(logs) != 32 {
				t.Errorf("%d log rows, want 32", len(logs))
			}
		})
	}
}

func TestPostgresRunsAreSeparateAndListed(t *testing.T) {
	ctx := t.Context()
	url := newDatabase(t)
	for _, id := range []string{"20260101-000000-aaaaaa", "Weird ID; DROP TABLE x"} {
		db, err := state.OpenRun(ctx, url, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.AddEvidence(ctx, good()); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	runs, err := state.ListRuns(ctx, url)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs = %v %v", runs, err)
	}
	for _, id := range runs {
		db, err := state.OpenRunReadOnly(ctx, url, id)
		if err != nil {
			t.Fatal(err)
		}
		pool, _ := db.Evidence(ctx, "")
		if len(pool) != 1 || pool[0].ID != "e1" {
			t.Errorf("%s: pool %+v", id, pool)
		}
		if err := db.SetMeta(ctx, "k", "v"); err == nil {
			t.Error("write to a read-only state accepted")
		}
		db.Close()
	}
	if _, err := state.OpenRunReadOnly(ctx, url, "never-started"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing run: %v", err)
	}
	if _, err := state.OpenRun(ctx, url, " "); err == nil {
		t.Error("empty run id accepted")
	}
}

// Two deployments sharing one database, each under its own namespace (?namespace= in the state URL), and the
// default deployment beside them: each lists only its own runs, a run id used by both is two runs with two
// pools, and the namespace never reaches the server as a setting. A malformed namespace is refused.
func TestNamespacesSeparateDeployments(t *testing.T) {
	ctx := t.Context()
	url := newDatabase(t)
	deployments := map[string]string{"": url, "alpha": url + "&namespace=alpha", "beta": url + "&namespace=beta"}
	for ns, u := range deployments {
		for _, id := range []string{"shared-id", "only-" + ns} {
			db, err := state.OpenRun(ctx, u, id)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SetMeta(ctx, "owner", ns); err != nil {
				t.Fatal(err)
			}
			db.Close()
		}
	}
	for ns, u := range deployments {
		ids, err := state.ListRuns(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(ids, ",") != "shared-id,only-"+ns {
			t.Errorf("namespace %q lists %v, want only its own two runs", ns, ids)
		}
		listed, err := state.ListRunsWithMeta(ctx, u, []string{"owner"})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range listed {
			if l.Err != nil || l.Meta["owner"] != ns {
				t.Errorf("namespace %q: run %s belongs to %q (%v)", ns, l.ID, l.Meta["owner"], l.Err)
			}
		}
		db, err := state.OpenRunReadOnly(ctx, u, "shared-id")
		if err != nil {
			t.Fatal(err)
		}
		if v, _, _ := db.Meta(ctx, "owner"); v != ns {
			t.Errorf("namespace %q opened the run of %q", ns, v)
		}
		db.Close()
		for other := range deployments {
			if other == ns {
				continue
			}
			if _, err := state.OpenRunReadOnly(ctx, u, "only-"+other); !errors.Is(err, state.ErrNotFound) {
				t.Errorf("namespace %q reaches a run of %q: %v", ns, other, err)
			}
		}
	}
	for _, bad := range []string{"Upper", "a-b", "a;drop", strings.Repeat("n", 17)} {
		if _, err := state.OpenRun(ctx, url+"&namespace="+bad, "r"); err == nil || !strings.Contains(err.Error(), "namespace") {
			t.Errorf("namespace %q: %v", bad, err)
		}
		if _, err := state.ListRuns(ctx, url+"&namespace="+bad); err == nil {
			t.Errorf("namespace %q listed", bad)
		}
	}
}

// A run folder written before migrations were versioned opens, migrates in place and keeps its rows; a schema
// newer than the program is refused, not guessed at.
func TestSQLiteMigrations(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
		INSERT INTO meta VALUES ('question', 'old run')`); err != nil {
		t.Fatal(err)
	}
	db, err := state.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := db.Meta(ctx, "question"); v != "old run" {
		t.Errorf("meta lost: %q", v)
	}
	if err := db.PutText(ctx, "h", "t"); err != nil {
		t.Errorf("migrated schema lacks texts: %v", err)
	}
	db.Close()
	var versions []int
	rows, _ := raw.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	for rows.Next() {
		var v int
		_ = rows.Scan(&v)
		versions = append(versions, v)
	}
	rows.Close()
	sort.Ints(versions)
	if len(versions) != state.SchemaVersion() || versions[len(versions)-1] != state.SchemaVersion() {
		t.Errorf("versions = %v, want 1..%d", versions, state.SchemaVersion())
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (99, 'future')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, err := state.Open(ctx, path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("future schema: %v", err)
	}
}

func TestRunSchemaNames(t *testing.T) {
	seen := map[string]bool{}
	for _, id := range []string{"a", "A", "a-b", "a_b", strings.Repeat("x", 200), `"; DROP`} {
		s := state.RunSchema(id)
		if seen[s] || len(s) > 63 || strings.ContainsAny(s, `"; -`) {
			t.Errorf("RunSchema(%q) = %q", id, s)
		}
		seen[s] = true
	}
}

// Events written by two processes working on one run form one sequence any reader follows in pieces; a document
// that is not JSON, or too large, is refused and leaves the sequence as it was.
func TestBackendsShareEvents(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			a, b := open(t, "events-"+name)
			ctx := t.Context()
			var wg sync.WaitGroup
			for w, db := range []*state.DB{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 30 {
						if err := db.AddEvents(ctx, fmt.Appendf(nil, `{"writer":%d,"n":%d}`, w, i)); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			for _, bad := range [][]byte{[]byte(`{"torn":`), []byte(strings.Repeat(" ", 1<<20) + "{}")} {
				if err := a.AddEvents(ctx, bad); err == nil {
					t.Errorf("event %.20q accepted", bad)
				}
			}
			var got []state.StoredEvent
			var after int64
			for {
				page, err := b.Events(ctx, after, 7)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 {
					break
				}
				got = append(got, page...)
				after = page[len(page)-1].Seq
			}
			if len(got) != 60 {
				t.Fatalf("%d events, want 60", len(got))
			}
			next := map[string]int{}
			for i, e := range got {
				if i > 0 && e.Seq <= got[i-1].Seq {
					t.Fatalf("event %d: seq %d after %d", i, e.Seq, got[i-1].Seq)
				}
				var v struct{ Writer, N int }
				if err := json.Unmarshal([]byte(e.Data), &v); err != nil {
					t.Fatal(err)
				}
				// Each writer's events keep their order.
				if k := fmt.Sprint(v.Writer); v.N != next[k] {
					t.Fatalf("writer %d: event %d after %d", v.Writer, v.N, next[k]-1)
				}
				next[fmt.Sprint(v.Writer)]++
			}
		})
	}
}

// The pool holds a quote once: a second read that finds it more relevant raises its confidence, a weaker one leaves
// it, and neither adds an item or moves it to another sub-question — on both backends, from either of two handles.
func TestEvidenceFoundAgainKeepsTheBestConfidence(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			a, b := open(t, "again-"+name)
			e := state.Evidence{SubQuestion: "q1", Claim: "Generators are a special class of functions.",
				Quote: "Generators are a special class of functions.", Source: "https://example.com/functional",
				Confidence: 0.61, Round: 1, Status: state.Accepted}
			id, added, err := a.AddEvidence(t.Context(), e)
			if err != nil || !added {
				t.Fatalf("first: %s %v %v", id, added, err)
			}
			for _, again := range []struct {
				db   *state.DB
				sq   string
				conf float64
				want float64
			}{{b, "q2", 0.95, 0.95}, {a, "q3", 0.4, 0.95}, {b, "q1", 0.95, 0.95}} {
				e2 := e
				e2.SubQuestion, e2.Confidence = again.sq, again.conf
				id2, added, err := again.db.AddEvidence(t.Context(), e2)
				if err != nil || added || id2 != id {
					t.Fatalf("again from %s at %.2f: %s %v %v", again.sq, again.conf, id2, added, err)
				}
				all, err := a.Evidence(t.Context(), "")
				if err != nil {
					t.Fatal(err)
				}
				if len(all) != 1 || all[0].Confidence != again.want || all[0].SubQuestion != "q1" {
					t.Fatalf("after %s at %.2f: pool = %+v; want one item of q1 at %.2f", again.sq, again.conf, all, again.want)
				}
			}
		})
	}
}
