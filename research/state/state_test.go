package state_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research/state"
)

func open(t *testing.T) *state.DB {
	t.Helper()
	db, err := state.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func good() state.Evidence {
	return state.Evidence{SubQuestion: "q1", Claim: "Alpha is fast.", Quote: "alpha reaches ten units",
		Source: "https://example.com/a", Confidence: 0.7, Round: 1, Status: state.Accepted}
}

func TestEvidenceCheckedOnWrite(t *testing.T) {
	db := open(t)
	for _, tc := range []struct {
		name string
		mod  func(*state.Evidence)
		want string
	}{
		{"confidence high", func(e *state.Evidence) { e.Confidence = 1.5 }, "confidence 1.5 outside 0..1"},
		{"confidence negative", func(e *state.Evidence) { e.Confidence = -0.1 }, "outside 0..1"},
		{"relative url", func(e *state.Evidence) { e.Source = "/a/b" }, "want an http(s) URL or a file:// anchor"},
		{"no host", func(e *state.Evidence) { e.Source = "https:///x" }, "has no host"},
		{"bad anchor", func(e *state.Evidence) { e.Source = "file:///doc.md#section" }, "#L3 or #L3-L9"},
		{"relative file", func(e *state.Evidence) { e.Source = "file:doc.md" }, "absolute path"},
		{"empty quote", func(e *state.Evidence) { e.Quote = " " }, "quote is empty"},
		{"bad status", func(e *state.Evidence) { e.Status = "maybe" }, `status "maybe"`},
		{"round zero", func(e *state.Evidence) { e.Round = 0 }, "round 0"},
	} {
		e := good()
		tc.mod(&e)
		_, _, err := db.AddEvidence(t.Context(), e)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	pool, _ := db.Evidence(t.Context(), "")
	if len(pool) != 0 {
		t.Fatalf("refused rows were written: %d", len(pool))
	}
	e := good()
	e.Source = "file:///corpus/doc.md#L3-L9"
	if _, _, err := db.AddEvidence(t.Context(), e); err != nil {
		t.Fatalf("file anchor refused: %v", err)
	}
}

func TestEvidenceIdempotent(t *testing.T) {
	db := open(t)
	id1, added, err := db.AddEvidence(t.Context(), good())
	if err != nil || !added || id1 != "e1" {
		t.Fatalf("%s %v %v", id1, added, err)
	}
	dup := good()
	dup.Quote = "alpha  reaches\nten units" // same quote after white-space normalisation
	dup.Source = "https://EXAMPLE.com/a?utm_source=x"
	dup.Claim = "restated"
	id2, added, err := db.AddEvidence(t.Context(), dup)
	if err != nil || added || id2 != id1 {
		t.Fatalf("duplicate: %s %v %v", id2, added, err)
	}
	other := good()
	other.Quote = "another quote entirely"
	if id, _, _ := db.AddEvidence(t.Context(), other); id != "e2" {
		t.Fatalf("second id = %s", id)
	}
	if err := db.SetEvidenceStatus(t.Context(), "e2", state.Rejected, "weak"); err != nil {
		t.Fatal(err)
	}
	if err := db.SetEvidenceStatus(t.Context(), "e9", state.Rejected, "x"); err == nil {
		t.Fatal("unknown id accepted")
	}
	acc, _ := db.Evidence(t.Context(), state.Accepted)
	if len(acc) != 1 || acc[0].ID != "e1" {
		t.Fatalf("accepted = %+v", acc)
	}
}

func TestLogAndCitationsChecked(t *testing.T) {
	db := open(t)
	if err := db.AddLog(t.Context(), state.LogEntry{Stage: "summarise", Decision: "x"}); err == nil ||
		!strings.Contains(err.Error(), `stage "summarise" is not one of scope|search|read|verify|synth`) {
		t.Fatalf("err = %v", err)
	}
	if err := db.AddLog(t.Context(), state.LogEntry{Stage: "verify", Decision: "gaps", Gaps: []string{"q2: prices"}, Tokens: 10}); err != nil {
		t.Fatal(err)
	}
	log, _ := db.Log(t.Context(), "verify")
	if len(log) != 1 || log[0].Gaps[0] != "q2: prices" || log[0].Tokens != 10 {
		t.Fatalf("log = %+v", log)
	}
	id, _, _ := db.AddEvidence(t.Context(), good())
	rej := good()
	rej.Quote = "a rejected quote here"
	rid, _, _ := db.AddEvidence(t.Context(), rej)
	_ = db.SetEvidenceStatus(t.Context(), rid, state.Rejected, "weak")
	if err := db.SetCitations(t.Context(), []state.Citation{{ConclusionID: "c1", Text: "x", EvidenceID: rid, Source: rej.Source, N: 1}}); err == nil ||
		!strings.Contains(err.Error(), "is rejected") {
		t.Fatalf("citation of rejected evidence: %v", err)
	}
	if err := db.SetCitations(t.Context(), []state.Citation{{ConclusionID: "c1", Text: "x", EvidenceID: "e99", Source: rej.Source, N: 1}}); err == nil ||
		!strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("citation of missing evidence: %v", err)
	}
	if err := db.SetCitations(t.Context(), []state.Citation{{ConclusionID: "c1", Text: "x", EvidenceID: id, Source: good().Source, N: 1}}); err != nil {
		t.Fatal(err)
	}
	cs, _ := db.Citations(t.Context())
	if len(cs) != 1 || cs[0].EvidenceID != id {
		t.Fatalf("citations = %+v", cs)
	}
}

func TestStepsKeepFirstRecord(t *testing.T) {
	db := open(t)
	if err := db.MarkStep(t.Context(), "scope", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	_ = db.MarkStep(t.Context(), "scope", map[string]int{"n": 2})
	var got map[string]int
	if ok, err := db.Step(t.Context(), "scope", &got); !ok || err != nil || got["n"] != 1 {
		t.Fatalf("step = %v %v %v", got, ok, err)
	}
	if ok, _ := db.Step(t.Context(), "verify:r1", nil); ok {
		t.Fatal("unmarked step reported done")
	}
}

// TestCarriedEvidenceIsAdopted: an item carried from an earlier run keeps its id when this run finds the same
// quote again, and is pooled under the sub-question that found it; an item of this run is never re-pooled.
func TestCarriedEvidenceIsAdopted(t *testing.T) {
	ctx := t.Context()
	db, err := state.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e := state.Evidence{SubQuestion: state.CarriedPrefix + "q3", Claim: "old", Quote: "Bees dance.", Source: "https://example.org/a",
		Confidence: 0.9, Round: 1, Status: state.Accepted}
	id, added, err := db.AddEvidence(ctx, e)
	if err != nil || !added {
		t.Fatal(id, added, err)
	}
	e.SubQuestion, e.Claim, e.Round = "q1", "new", 2
	again, added, err := db.AddEvidence(ctx, e)
	if err != nil || !added || again != id {
		t.Fatalf("re-found carried item: %s %v %v (want %s, added)", again, added, err, id)
	}
	e.SubQuestion = "q2"
	if _, added, err := db.AddEvidence(ctx, e); err != nil || added {
		t.Fatalf("an item of this run was pooled again: %v %v", added, err)
	}
	pool, err := db.Evidence(ctx, "")
	if err != nil || len(pool) != 1 || pool[0].SubQuestion != "q1" || pool[0].Claim != "new" || pool[0].Round != 2 {
		t.Fatalf("pool %+v, %v", pool, err)
	}
}
