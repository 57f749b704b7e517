package qualitybench

import (
	"os"
	"strings"
	"testing"

	"deepresearch/research"
)

func TestScratchOne(t *testing.T) {
	dir := t.TempDir()
	r, err := Run(t.Context(), Options{SeedsDir: "/work/shared/seeds", WorkDir: dir, Only: strings.Split(os.Getenv("ID"), ",")})
	if err != nil { t.Fatal(err) }
	for _, q := range r.Questions {
		rep, err := research.LoadReport(dir + "/runs/" + q.ID)
		if err != nil { t.Fatal(err) }
		i := strings.Index(rep.Markdown, "## Sources")
		if i < 0 { i = strings.Index(rep.Markdown, "## 来源") }
		if i < 0 { i = len(rep.Markdown) }
		t.Logf("%s missing %q\n%s", q.ID, q.Missing, rep.Markdown[:i])
	}
}
