package state_test

import (
	"testing"

	"github.com/deepresearch/deepresearch/research/state"
)

// Glance reads in one query what TotalSpend, Meta and Tally read apart, on both backends, as another process
// left it.
func TestGlanceReadsWhatOtherProcessesLeft(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			db, other := open(t, "glance")
			g, err := other.Glance(ctx, "mine", []string{"fuse", "status"}, "search:", "read:")
			if err != nil || g.Others != (state.Spend{}) || len(g.Meta) != 0 || g.Tally.Accepted != 0 || len(g.Tally.Steps) != 2 {
				t.Fatalf("an empty run: %+v %v", g, err)
			}
			for _, s := range []struct {
				key string
				sp  state.Spend
			}{
				{"mine", state.Spend{Tokens: 7, Calls: 1, CostUSD: 0.1, Estimated: 7}},
				{"theirs#1", state.Spend{Tokens: 30, Calls: 2, CostUSD: 0.25, Estimated: 12}},
				{"theirs#2", state.Spend{Tokens: 10, Calls: 1, CostUSD: 0.5}},
			} {
				if err := db.SetSpend(ctx, s.key, s.sp); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.SetMeta(ctx, "status", "running"); err != nil {
				t.Fatal(err)
			}
			for _, step := range []string{"search:q1", "search:q2", "read:q1:a", "scope"} {
				if err := db.MarkStep(ctx, step, nil); err != nil {
					t.Fatal(err)
				}
			}
			if _, _, err := db.AddEvidence(ctx, state.Evidence{SubQuestion: "q1", Claim: "c", Quote: "q", Source: "https://example.com/a",
				Status: state.Accepted, Round: 1, Confidence: 0.9}); err != nil {
				t.Fatal(err)
			}
			g, err = other.Glance(ctx, "mine", []string{"fuse", "status"}, "search:", "read:")
			if err != nil {
				t.Fatal(err)
			}
			want := state.Spend{Tokens: 40, Calls: 3, CostUSD: 0.75, Estimated: 12}
			if g.Others != want {
				t.Errorf("others' spend %+v, want %+v", g.Others, want)
			}
			if _, ok := g.Meta["fuse"]; ok || g.Meta["status"] != "running" {
				t.Errorf("meta %v: want status running and no fuse", g.Meta)
			}
			tally, err := other.Tally(ctx, "search:", "read:")
			if err != nil || g.Tally.Accepted != 1 || g.Tally.Steps[0] != 2 || g.Tally.Steps[1] != 1 ||
				tally.Accepted != g.Tally.Accepted || tally.Steps[0] != g.Tally.Steps[0] {
				t.Errorf("glance tally %+v, tally %+v %v; want 1 accepted, 2 searches, 1 read", g.Tally, tally, err)
			}
			// TotalSpend sums the estimated part too; an attempt cannot say more was estimated than it spent.
			if s, err := other.TotalSpend(ctx); err != nil || s.Estimated != 19 || s.Tokens != 47 {
				t.Errorf("total %+v %v: want 47 tokens, 19 estimated", s, err)
			}
			if err := db.SetSpend(ctx, "w", state.Spend{Tokens: 3, Estimated: 4}); err == nil {
				t.Error("more tokens estimated than spent accepted")
			}
		})
	}
}
