package researchtest

import (
	"path/filepath"
	"testing"

	"github.com/deepresearch/deepresearch/research"
)

func TestEngineProducesCitedReport(t *testing.T) {
	e := New(t, 0)
	var kinds = map[string]int{}
	dir := filepath.Join(t.TempDir(), "run")
	rep, err := e.Run(t.Context(), Question, "r1", dir, func(ev research.Event) { kinds[ev.Kind]++ })
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Citations) == 0 || len(rep.Evidence) == 0 {
		t.Fatalf("report has %d citations and %d evidence:\n%s", len(rep.Citations), len(rep.Evidence), rep.Markdown)
	}
	for _, ev := range rep.Evidence {
		text, err := research.LoadSourceText(dir, ev.Source)
		if err != nil {
			t.Fatalf("source text of %s: %v", ev.ID, err)
		}
		if len(text) == 0 {
			t.Fatalf("empty source text for %s", ev.Source)
		}
	}
	if kinds[research.EventEvidence] == 0 || kinds[research.EventPlan] != 1 {
		t.Fatalf("events: %v", kinds)
	}
	t.Logf("%v\n%s", kinds, rep.Markdown)
}
