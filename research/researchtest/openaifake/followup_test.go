package openaifake_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
)

// TestFollowUpWithAModel: a follow-up run with a language model shows the planner the earlier run's sub-questions
// and findings, which plans only what they do not cover; the follow-up reads less than the earlier run, cites the
// carried evidence through the same integrity check and judge, and links the earlier report.
func TestFollowUpWithAModel(t *testing.T) {
	srv := openaifake.New(t, openaifake.Config{GapSubQuestion: -1})
	root := t.TempDir()
	first, err := steerRunOn(t, srv, research.Config{Question: openaifake.KilnQuestion, OutDir: filepath.Join(root, "first")})
	if err != nil {
		t.Fatal(err)
	}
	callsBefore := len(srv.Calls())

	rep, err := steerRunOn(t, srv, research.Config{Question: openaifake.KilnQuestion, OutDir: filepath.Join(root, "again"),
		From: first.Dir})
	if err != nil {
		t.Fatal(err)
	}
	var planner *openaifake.Call
	calls := srv.Calls()[callsBefore:]
	for i := range calls {
		if calls[i].Role == "planner" && !calls[i].Clarify {
			planner = &calls[i]
		}
	}
	if planner == nil || planner.Earlier == 0 {
		t.Fatalf("the follow-up's planner was not shown the earlier findings: %+v", planner)
	}
	// Reads, not analyst calls: the three sub-questions read the same three sources, and which of them the
	// evidence lands under varies with timing, so whether the one planned again is covered (read nothing) varies
	// too; planning one sub-question instead of three reads less either way.
	readsOf := func(dir string) int { return strings.Count(researchLog(t, dir), "\nread: ") }
	if before, after := readsOf(first.Dir), readsOf(rep.Dir); after >= before {
		t.Fatalf("the follow-up read %d sources; the earlier run read %d", after, before)
	}
	if rep.Follows == nil || rep.Follows.Evidence == 0 || len(rep.Citations) == 0 || rep.Stats.Judge == nil {
		t.Fatalf("follows %+v, %d citations, judge %+v:\n%s", rep.Follows, len(rep.Citations), rep.Stats.Judge, rep.Markdown)
	}
	if !strings.Contains(rep.Markdown, "Follows up on run [first](../first/report.md)") {
		t.Fatalf("no link to the earlier report:\n%s", rep.Markdown)
	}
	// Every cited item is in the pool as accepted, whichever run found it.
	byID := map[string]research.Evidence{}
	for _, e := range rep.Evidence {
		byID[e.ID] = e
	}
	for _, id := range rep.CitedEvidence() {
		if byID[id].Status != research.StatusAccepted {
			t.Fatalf("cited %s is %q", id, byID[id].Status)
		}
	}
}
