package extractive

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"deepresearch/research"
	"deepresearch/sources"
	"deepresearch/textrank"
)

// miniRun drives the five roles the way the graph does — plan, search, read, verify with directed re-search,
// synthesize — so the roles can be tested together without the graph. It also checks what the graph checks: every
// quote occurs in the text that was read.
func miniRun(t testing.TB, ctx context.Context, roles research.Roles, f sources.Fetcher, question string, rounds int) (*research.Plan, []research.Evidence, *research.Verdict, *research.Draft) {
	t.Helper()
	plan, err := roles.Planner.Plan(ctx, question)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	var pool []research.Evidence
	seen := map[string]bool{}
	queries := map[string][]string{}
	for _, sq := range plan.SubQuestions {
		queries[sq.ID] = sq.Queries
	}
	var verdict *research.Verdict
	for round := 0; ; round++ {
		for _, sq := range plan.SubQuestions {
			qs, ok := queries[sq.ID]
			if !ok {
				continue
			}
			cands, err := roles.Searcher.Search(ctx, sq, qs)
			if err != nil {
				t.Fatalf("search %s: %v", sq.ID, err)
			}
			for _, c := range cands {
				key := sq.ID + " " + sources.NormalizeURL(c.URL)
				if seen[key] {
					continue
				}
				seen[key] = true
				doc, err := f.Fetch(ctx, c.URL)
				if err != nil {
					t.Fatalf("fetch %s: %v", c.URL, err)
				}
				ev, err := roles.Analyst.Analyze(ctx, sq, doc)
				if err != nil {
					t.Fatalf("analyze: %v", err)
				}
				for _, e := range ev {
					if !strings.Contains(doc.Text, e.Quote) {
						t.Fatalf("quote not verbatim in %s: %q", c.URL, e.Quote)
					}
					dup := false
					for _, p := range pool {
						if p.SubQuestion == e.SubQuestion && p.Source == e.Source && p.Quote == e.Quote {
							dup = true
						}
					}
					if dup {
						continue
					}
					e.ID = fmt.Sprintf("e%d", len(pool)+1)
					e.Round = round
					pool = append(pool, e)
				}
			}
		}
		verdict, err = roles.Verifier.Verify(ctx, plan, pool)
		if err != nil {
			t.Fatalf("verify: %v", err)
		}
		if verdict.Pass || round >= rounds {
			break
		}
		queries = map[string][]string{}
		for _, g := range verdict.Gaps {
			queries[g.SubQuestion] = g.Queries
		}
	}
	rejected := map[string]bool{}
	for _, r := range verdict.Rejected {
		rejected[r.EvidenceID] = true
	}
	var accepted []research.Evidence
	for _, e := range pool {
		if !rejected[e.ID] {
			accepted = append(accepted, e)
		}
	}
	draft, err := roles.Synthesizer.Synthesize(ctx, research.SynthesisInput{Plan: plan, Evidence: accepted, Verdict: verdict})
	if err != nil {
		t.Fatalf("synthesize: %v", err)
	}
	return plan, accepted, verdict, draft
}

var _ = textrank.Tokenize
