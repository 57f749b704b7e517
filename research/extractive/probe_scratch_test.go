package extractive

import (
	"os"
	"testing"

	"deepresearch/research"
	"deepresearch/sources"
)

func TestScratchProbe(t *testing.T) {
	text, _ := os.ReadFile(os.Getenv("F"))
	plan, _ := New(Config{}).Planner.Plan(t.Context(), os.Getenv("Q"))
	for _, sq := range plan.SubQuestions {
		t.Logf("%s %q", sq.Question, sq.Queries)
	}
	a := New(Config{EvidencePerSource: 8}).Analyst
	d := &sources.Document{URL: "file:///x.md", Title: os.Getenv("T"), Text: string(text)}
	ev, _ := a.Analyze(t.Context(), plan.SubQuestions[0], d)
	for _, e := range ev {
		t.Logf("%.2f %s %q", e.Confidence, e.Source, e.Claim)
	}
	_ = research.Plan{}
}
