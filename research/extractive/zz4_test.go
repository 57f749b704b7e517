package extractive

import (
	"os"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

func TestZZAnalyze(t *testing.T) {
	dir := os.Getenv("ZZ_INDEX")
	if dir == "" {
		t.Skip()
	}
	ix, err := corpus.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	roles := New(Config{Searchers: []sources.Searcher{ix}})
	sq := research.SubQuestion{ID: "q1", Question: os.Getenv("ZZ_SQ"), Queries: strings.Split(os.Getenv("ZZ_QS"), ",")}
	for _, u := range strings.Split(os.Getenv("ZZ_URLS"), ",") {
		d, err := ix.Fetch(t.Context(), u)
		if err != nil {
			t.Fatal(err)
		}
		d.URL = u
		ev, err := roles.Analyst.Analyze(t.Context(), sq, d)
		t.Logf("== %s: %d items, err %v", u, len(ev), err)
		for _, e := range ev {
			t.Logf("   %.2f %s | %s", e.Confidence, e.Source, lexicalClip(e.Quote))
		}
	}
}

func lexicalClip(s string) string {
	if len(s) > 110 {
		return s[:110]
	}
	return s
}
