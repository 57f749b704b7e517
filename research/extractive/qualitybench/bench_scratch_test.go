package qualitybench

import (
	"os"
	"testing"
)

func TestScratchAll(t *testing.T) {
	r, err := Run(t.Context(), Options{SeedsDir: "/work/shared/seeds"})
	if err != nil { t.Fatal(err) }
	r.WriteTable(os.Stdout)
	for _, q := range r.Questions {
		if len(q.Missing) > 0 || len(q.Ungrounded) > 0 { t.Logf("%s missing %q ungrounded %q", q.ID, q.Missing, q.Ungrounded) }
	}
}
