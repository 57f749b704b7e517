package qualitybench

import (
	"os"
	"strings"
	"testing"

	"deepresearch/research"
)

func TestScratchEv(t *testing.T) {
	dir := t.TempDir()
	if _, err := Run(t.Context(), Options{SeedsDir: "/work/shared/seeds", WorkDir: dir, Only: []string{os.Getenv("ID")}}); err != nil { t.Fatal(err) }
	evs, _ := research.LoadEvents(dir + "/runs/" + os.Getenv("ID"))
	for _, e := range evs {
		if e.Kind == research.EventRead || e.Kind == research.EventSkip || e.Kind == research.EventEarlyStop {
			t.Logf("%s %s %s n=%d %s", e.Kind, e.SubQuestion, e.URL, e.Count, e.Message)
		}
		if e.Kind == research.EventEvidence && strings.Contains(e.Evidence.Source, os.Getenv("SRC")) {
			t.Logf("   ev %s %s %.2f %q", e.Evidence.SubQuestion, e.Evidence.Source, e.Evidence.Confidence, e.Evidence.Claim)
		}
	}
}
