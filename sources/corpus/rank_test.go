package corpus

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/deepresearch/deepresearch/sources"
)

// rankWords is a small vocabulary, so that words are shared by many chunks, titles repeat and two-word phrases
// occur by chance as well as on purpose.
var rankWords = strings.Fields(`memory model goroutine channel happens before after lock mutex atomic value
compiler runtime garbage collector heap stack pointer interface method struct field type package import module
scheduler thread signal file network socket buffer reader writer error panic defer select slice map string`)

// rankCorpus writes n Markdown files of several paragraphs, Zipf-distributed words, some titles sharing words
// and the phrase "happens before" planted in every seventh file, plus a few Chinese files.
func rankCorpus(t testing.TB, n int) string {
	t.Helper()
	root := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(r, 1.2, 3, uint64(len(rankWords)-1))
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s %s\n\n", rankWords[z.Uint64()], rankWords[z.Uint64()])
		for p := range 2 + r.IntN(5) {
			for range 30 + r.IntN(60) {
				b.WriteString(rankWords[z.Uint64()] + " ")
			}
			if i%7 == 0 && p == 1 {
				b.WriteString("happens before ")
			}
			b.WriteString(".\n\n")
		}
		writeFile(t, filepath.Join(root, fmt.Sprintf("d%d", i/50), fmt.Sprintf("f%04d.md", i)), b.String())
	}
	for i := range 6 {
		writeFile(t, filepath.Join(root, "zh", fmt.Sprintf("z%d.md", i)), fmt.Sprintf(
			"# 内存模型 %d\n\n在 Go 的内存模型中，同步事件建立先行发生关系。%s\n\n通道的发送先行发生于接收完成。\n", i, strings.Repeat("互斥锁保护共享变量。", i)))
	}
	return root
}

// Ranking by walking the postings gives the results of the full query run through Bleve over the whole index —
// same chunks, same order, same scores — whether it keeps as many chunks as the search looks at, many more, or
// too few, when it must fall back to the full query; and for queries of more words than it ranks itself.
func TestPostingsRankingEqualsFullQuery(t *testing.T) {
	root := rankCorpus(t, 240)
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	queries := []string{
		"happens before", "memory model", "goroutine channel lock", "mutex mutex", "happens before memory",
		"garbage collector heap stack", "before happens", "string", "select map slice panic", "内存模型", "先行发生",
		"Go 内存模型 channel", "zzzz nothing matches", "happens zzzz", "!!! ???", "happens-before", "the",
		strings.Repeat("memory model happens before ", 8), // 32 words, the most a query keeps
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 16 {
		k := 2 + r.IntN(3)
		q := make([]string, k)
		for j := range q {
			q[j] = rankWords[r.IntN(len(rankWords))]
		}
		queries = append(queries, strings.Join(q, " "))
	}
	g, release, err := ix.acquire()
	if err != nil || g == nil {
		t.Fatalf("acquire: %v", err)
	}
	defer release()
	for _, d := range []struct {
		name           string
		d              depth
		postings, full bool // must have been used at least once
	}{
		{"defaults", depth{}, true, true},
		{"keeping many", depth{keep: 1 << 20}, true, true},
		{"keeping too few", depth{keep: 2}, true, true},
		{"a short phrase list", depth{compact: 2}, true, true},
	} {
		t.Run(d.name, func(t *testing.T) {
			ix.depth = d.d
			before := ix.SearchStats()
			for _, q := range queries {
				for _, limit := range []int{1, 5, 10} {
					got, err := ix.Search(t.Context(), q, limit)
					if err != nil {
						t.Fatal(err)
					}
					want, err := g.rankFull(scored(t, g), newRankQuery(q, limit, 2, queryAnalyzerName))
					if err != nil {
						t.Fatal(err)
					}
					if !sameResults(got, want) {
						t.Errorf("%q limit %d:\n got %s\nwant %s", q, limit, urls(got), urls(want))
					}
				}
			}
			after := ix.SearchStats()
			if d.postings && after.Postings == before.Postings {
				t.Errorf("no search was certified by rescoring (%+v → %+v)", before, after)
			}
			if d.full && after.Full == before.Full {
				t.Errorf("no search fell back to the full query (%+v → %+v)", before, after)
			}
		})
	}
}

// sameResults reports whether got and want are the same results in the same order. Scores must be equal but for
// the last bits: with ten or more words, Bleve's disjunction adds the words' scores in an order that depends on
// the documents it visited before, so the same chunk's score can differ in its last bit between two searches.
func sameResults(got, want []sources.Result) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if math.Abs(g.Score-w.Score) > 1e-12*math.Abs(w.Score) {
			return false
		}
		g.Score = w.Score
		if !reflect.DeepEqual(g, w) {
			return false
		}
	}
	return true
}

func urls(rs []sources.Result) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\n  %s %.17g", r.URL, r.Score)
	}
	return b.String()
}

// Chunks with equal scores rank in chunk-id order, so every build of the same folder gives the same results
// whatever order parallel extraction finished in (internal document numbers follow that order), on both ranking
// paths.
func TestTiedScoresRankByChunkID(t *testing.T) {
	root := t.TempDir()
	body := "# Fuses\n\nThe cost fuse stops new searches and reads once the budget is spent.\n"
	for i := range 24 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("copy-%02d.md", (i*7)%24)), body)
	}
	var first []string
	for build := range 4 {
		ix := openIndex(t, t.TempDir())
		ix.keepCopies = true // 24 copies of one file: collapsed to one otherwise
		if _, err := ix.Add(t.Context(), root); err != nil {
			t.Fatal(err)
		}
		for _, d := range []depth{{}, {keep: 2}} { // certified, and falling back to the full query
			ix.depth = d
			got, err := ix.Search(t.Context(), "cost fuse budget", 10)
			if err != nil {
				t.Fatal(err)
			}
			var us []string
			for _, r := range got {
				if r.Score != got[0].Score {
					t.Fatalf("scores differ (%v): the files are not tied", urls(got))
				}
				us = append(us, r.URL)
			}
			if len(us) != 10 || !slices.IsSorted(us) {
				t.Fatalf("build %d, depth %+v: tied chunks not in id order: %v", build, d, us)
			}
			if first == nil {
				first = us
			} else if !slices.Equal(us, first) {
				t.Fatalf("build %d, depth %+v: %v, first build gave %v", build, d, us, first)
			}
		}
	}
}

// Walking the postings scores every chunk exactly as Bleve's searchers score it under the full query, bit for bit;
// keeps every chunk that scores above the k-th, whatever k; and passes over chunks, skips common words' postings and
// asks Bleve's phrase searcher only where that cannot change the best k.
func TestRankScoresAreBleves(t *testing.T) {
	root := rankCorpus(t, 240)
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	g, r := chunkReader(t, ix)
	queries := []string{
		"happens before", "memory model", "goroutine channel lock", "mutex mutex", "happens before memory",
		"garbage collector heap stack", "before happens", "string", "select map slice panic", "内存模型", "先行发生",
		"Go 内存模型 channel", "zzzz nothing matches", "happens zzzz", "!!! ???", "happens-before", "memory memory memory",
	}
	rnd := rand.New(rand.NewPCG(8, 9))
	for range 24 {
		q := make([]string, 2+rnd.IntN(4))
		for j := range q {
			q[j] = rankWords[rnd.IntN(len(rankWords))]
		}
		queries = append(queries, strings.Join(q, " "))
	}
	ctx := scored(t, g)
	var total rankStats
	for _, q := range queries {
		rq := newRankQuery(q, 10, 2, queryAnalyzerName)
		req := bleve.NewSearchRequestOptions(rq.full, 100000, 0, false)
		req.SortBy([]string{"-_score", "_id"})
		res, err := g.idx.SearchInContext(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		bleveScore := map[string]float64{}
		for _, h := range res.Hits {
			bleveScore[h.ID] = h.Score
		}
		for _, k := range []int{1, 3, 10, 40, 1 << 20} {
			kept, kth, st, ok, err := postingsRank(ctx, r, g.idx.Mapping(), rq, k, depth{compact: 2})
			if err != nil || !ok {
				t.Fatalf("%q k=%d: ok=%v err=%v", q, k, ok, err)
			}
			total.passed += st.passed
			total.skipped += st.skipped
			total.checked += st.checked
			total.phrase += st.phrase
			got := map[string]float64{}
			for _, e := range kept {
				id, err := r.ExternalID(internalID(e.num))
				if err != nil {
					t.Fatal(err)
				}
				got[id] = e.score
				if want, found := bleveScore[id]; !found || e.score != want {
					t.Errorf("%q k=%d: %s scored %.17g, Bleve %.17g (found %v)", q, k, id, e.score, want, found)
				}
			}
			if len(res.Hits) <= k {
				if !math.IsInf(kth, -1) || len(kept) != len(res.Hits) {
					t.Errorf("%q k=%d: %d of %d chunks kept, k-th score %g", q, k, len(kept), len(res.Hits), kth)
				}
				continue
			}
			if kth > res.Hits[k-1].Score {
				t.Errorf("%q k=%d: k-th score %.17g above Bleve's %.17g", q, k, kth, res.Hits[k-1].Score)
			}
			for _, h := range res.Hits {
				if _, in := got[h.ID]; !in && h.Score > kth {
					t.Errorf("%q k=%d: %s (score %.17g) left out, k-th score %.17g", q, k, h.ID, h.Score, kth)
				}
			}
		}
	}
	if total.passed == 0 || total.skipped == 0 || total.checked == 0 || total.phrase == 0 {
		t.Errorf("some part of the ranking was never used: %+v", total)
	}
}

// Whatever the query — any bytes, any script, repeated words, punctuation, more words than are ranked by the
// postings — a search gives the full query's results.
func FuzzPostingsRanking(f *testing.F) {
	for _, q := range []string{
		"happens before", "mutex mutex mutex", "内存模型 先行发生", "!!! ???", "before happens before",
		"memory model goroutine channel happens before after lock mutex atomic value", "Go 的 channel", "ÄÖ ǅ ﬁ",
		"heap\x00stack", "stack heap", "type", "happens-before memory", "happens|occurs before|after", "|", "a||b |x|",
		"内存|记忆 model", "mutex|lock|lock|aardvark channel",
	} {
		f.Add(q)
	}
	root := rankCorpus(f, 120)
	ix := openIndex(f, f.TempDir())
	if _, err := ix.Add(f.Context(), root); err != nil {
		f.Fatal(err)
	}
	g, release, err := ix.acquire()
	if err != nil || g == nil {
		f.Fatalf("acquire: %v", err)
	}
	defer release()
	f.Fuzz(func(t *testing.T, q string) {
		for _, limit := range []int{1, 10} {
			got, err := ix.Search(t.Context(), q, limit)
			if err != nil {
				if strings.TrimSpace(q) != "" {
					t.Fatalf("%q: %v", q, err)
				}
				continue
			}
			rq := newRankQuery(capQuery(strings.TrimSpace(q)), limit, 2, queryAnalyzerName)
			if _, err := g.structure(t.Context(), &rq); err != nil {
				t.Fatal(err)
			}
			want, err := g.rankFull(scored(t, g), rq)
			if err != nil {
				t.Fatal(err)
			}
			if !sameResults(got, want) {
				t.Errorf("%q limit %d:\n got %s\nwant %s", q, limit, urls(got), urls(want))
			}
		}
	})
}

// BenchmarkRanking ranks the same queries by walking the postings and with the full query through Bleve's
// searchers, side by side, on a corpus whose words are all common (the hard case for skipping postings):
//
//	go test -run XXX -bench BenchmarkRanking ./sources/corpus/
func BenchmarkRanking(b *testing.B) {
	root := rankCorpus(b, 3000)
	ix := openIndex(b, b.TempDir())
	if _, err := ix.Add(b.Context(), root); err != nil {
		b.Fatal(err)
	}
	g, release, err := ix.acquire()
	if err != nil || g == nil {
		b.Fatalf("acquire: %v", err)
	}
	defer release()
	rnd := rand.New(rand.NewPCG(1, 2))
	var queries []rankQuery
	for range 20 {
		q := make([]string, 2+rnd.IntN(3))
		for j := range q {
			q[j] = rankWords[rnd.IntN(len(rankWords))]
		}
		queries = append(queries, newRankQuery(strings.Join(q, " "), 10, 2, queryAnalyzerName))
	}
	ctx := scored(b, g)
	b.Run("postings", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, ok, err := g.rankCertified(ctx, queries[i%len(queries)], depth{}); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("bleve-full-query", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := g.rankFull(ctx, queries[i%len(queries)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// scored is a context carrying g's scoring statistics, as Search scores with.
func scored(tb testing.TB, g *generation) context.Context {
	tb.Helper()
	ctx, err := g.scoring(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	return ctx
}

// The same files give the same scores whatever the layout of the index's segments: one build writing a batch a
// few chunks (many segments, left as the merger had them when the build closed) and one writing them all in one
// batch (one segment) rank every query alike, score for score. Bleve's own average field length adds up the
// segments' dictionaries, so without the generation's scoring statistics the two differ. The split build's
// statistics are taken out of its info, as a generation written by an earlier version has none: its searches
// count them, and its next update writes them.
func TestScoresDoNotDependOnSegments(t *testing.T) {
	root := rankCorpus(t, 200)
	// Words from a pool of a thousand, each file using a few hundred, so that every segment's dictionary holds
	// most of the pool and their sum is several times the distinct words.
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		var b strings.Builder
		fmt.Fprintf(&b, "# memory notes %d\n\n", i)
		for range 300 {
			fmt.Fprintf(&b, "memory pool%d ", r.IntN(1000))
		}
		writeFile(t, filepath.Join(root, fmt.Sprintf("pool%03d.md", i)), b.String())
	}
	build := func(batchOps int) *Index {
		ix, err := OpenWith(t.TempDir(), &Options{BatchOps: batchOps})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		if _, err := ix.Add(t.Context(), root); err != nil {
			t.Fatal(err)
		}
		return ix
	}
	split, whole := build(7), build(1<<20)
	// A generation written before the statistics were kept with it has them counted by its first search.
	name, err := readCurrent(split.dir)
	if err != nil {
		t.Fatal(err)
	}
	infoPath := filepath.Join(split.dir, name, infoName)
	data, err := os.ReadFile(infoPath)
	if err != nil {
		t.Fatal(err)
	}
	var info map[string]any
	if err := json.Unmarshal(data, &info); err != nil || info["scoring"] == nil {
		t.Fatalf("info.json keeps no scoring statistics (%v): %s", err, data)
	}
	delete(info, "scoring")
	if data, err = json.Marshal(info); err != nil {
		t.Fatal(err)
	}
	writeFile(t, infoPath, string(data))
	cardinality := func(ix *Index) (segments, summed int) {
		_, r := chunkReader(t, ix)
		summed, err := r.(index.BM25Reader).FieldCardinality("text")
		if err != nil {
			t.Fatal(err)
		}
		return len(r.(*scorch.IndexSnapshot).Segments()), summed
	}
	segs, splitCard := cardinality(split)
	_, wholeCard := cardinality(whole)
	t.Logf("%d segments, text cardinality %d against %d", segs, splitCard, wholeCard)
	if segs < 2 || splitCard == wholeCard {
		t.Fatalf("the split build has %d segments and Bleve's text cardinality %d against %d: not the case this test is about", segs, splitCard, wholeCard)
	}
	queries := []string{"happens before", "memory model", "goroutine channel lock", "select map slice panic", "heap stack"}
	for _, q := range queries {
		got, err := split.Search(t.Context(), q, 10)
		if err != nil {
			t.Fatal(err)
		}
		want, err := whole.Search(t.Context(), q, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || len(got) != len(want) {
			t.Fatalf("%q: %d results against %d", q, len(got), len(want))
		}
		for i := range got {
			if got[i].URL != want[i].URL || got[i].Score != want[i].Score {
				t.Errorf("%q #%d: %s scored %.17g in the split build, %s %.17g in the whole one", q, i, got[i].URL, got[i].Score, want[i].URL, want[i].Score)
			}
		}
	}
	// The next update writes them into a new generation though no file changed, and the one after leaves it be.
	for k, wantNew := range []bool{true, false} {
		before, err := readCurrent(split.dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := split.Add(t.Context(), root); err != nil {
			t.Fatal(err)
		}
		after, err := readCurrent(split.dir)
		if err != nil {
			t.Fatal(err)
		}
		if (after != before) != wantNew {
			t.Errorf("update %d: generation %s → %s, want a new one: %v", k+1, before, after, wantNew)
		}
		info, err := readGenInfo(filepath.Join(split.dir, after))
		if err != nil || info.Scoring == nil {
			t.Errorf("update %d: generation %s keeps no scoring statistics (%v)", k+1, after, err)
		}
	}
}

// chunkReader is ix's current generation and a reader of its chunks, released when the test ends.
func chunkReader(t *testing.T, ix *Index) (*generation, index.IndexReader) {
	t.Helper()
	g, release, err := ix.acquire()
	if err != nil || g == nil {
		t.Fatalf("acquire: %v", err)
	}
	t.Cleanup(release)
	r, err := openReader(g.idx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return g, r
}

// Scoring statistics in a generation's info that disagree with its index (a damaged or hand-edited info.json) are
// counted again, not scored with: searches rank as in an index that never had them wrong.
func TestScoringStatsThatDisagreeAreCounted(t *testing.T) {
	root := rankCorpus(t, 60)
	damaged, clean := openIndex(t, t.TempDir()), openIndex(t, t.TempDir())
	for _, ix := range []*Index{damaged, clean} {
		if _, err := ix.Add(t.Context(), root); err != nil {
			t.Fatal(err)
		}
	}
	name, err := readCurrent(damaged.dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := readGenInfo(filepath.Join(damaged.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []search.BM25Stats{
		{DocCount: 1, FieldCardinality: map[string]int{"text": 1 << 30, "title": 5}},
		{DocCount: info.Scoring.DocCount, FieldCardinality: map[string]int{"text": -3, "title": 5}},
		{DocCount: info.Scoring.DocCount, FieldCardinality: map[string]int{"text": 40}},
	} {
		info.Scoring = &bad
		data, err := json.Marshal(info)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(damaged.dir, name, infoName), string(data))
		damaged.Close()
		if damaged, err = Open(damaged.dir); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"happens before", "memory model", "goroutine channel lock"} {
			got, err := damaged.Search(t.Context(), q, 10)
			if err != nil {
				t.Fatalf("%+v: %v", bad, err)
			}
			want, err := clean.Search(t.Context(), q, 10)
			if err != nil {
				t.Fatal(err)
			}
			if !sameResults(got, want) {
				t.Errorf("%+v, %q:\n got %s\nwant %s", bad, q, urls(got), urls(want))
			}
		}
	}
	damaged.Close()
}
