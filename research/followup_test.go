package research_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/extractive"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

// beeCorpus is a small corpus about honeybees, indexed; fetches counts the documents the runs fetched.
type beeCorpus struct {
	ix      *corpus.Index
	fetches atomic.Int64
}

func (c *beeCorpus) Fetch(ctx context.Context, u string) (*sources.Document, error) {
	c.fetches.Add(1)
	return sources.Router{Corpus: c.ix}.Fetch(ctx, u)
}

func newBeeCorpus(t *testing.T) *beeCorpus {
	t.Helper()
	dir := t.TempDir()
	pages := map[string]string{"wax.md": "# Beeswax\n\nWorker bees secrete beeswax from eight glands on the underside of the abdomen.\n\n" +
		"Young workers build the honeycomb cells from beeswax flakes.\n"}
	for name, text := range beePages {
		pages[name] = text
	}
	docs, err := writeDocs(dir, pages)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := corpus.OpenWith(filepath.Join(dir, "index"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if _, err := ix.Add(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	return &beeCorpus{ix: ix}
}

func (c *beeCorpus) config(question, out, from string) research.Config {
	return research.Config{Question: question, Roles: extractive.New(extractive.Config{Searchers: []sources.Searcher{c.ix}}),
		Fetcher: c, OutDir: out, From: from}
}

const (
	danceQuestion = "How does the waggle dance tell honeybees where the flowers are?"
	waxQuestion   = "How do worker bees make beeswax for the honeycomb?"
	bothQuestion  = danceQuestion + " And how do worker bees make beeswax?"
)

// folderHashes hashes every file below dir (researchtest.FolderHashes), to show it was not written.
func folderHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	h, err := researchtest.FolderHashes(dir)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func sameHashes(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("the earlier run folder had %d files, now %d", len(before), len(after))
	}
	for p, h := range before {
		if after[p] != h {
			t.Fatalf("%s changed", p)
		}
	}
}

func earlierRun(t *testing.T, c *beeCorpus, root string) (*research.Report, string) {
	t.Helper()
	dir := filepath.Join(root, "earlier")
	rep, err := research.Run(t.Context(), c.config(danceQuestion, dir, ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Citations) == 0 {
		t.Fatalf("the earlier run cites nothing:\n%s", rep.Markdown)
	}
	return rep, dir
}

// TestFollowUpCarriesTheEarlierRun: a follow-up on another question carries the earlier run's documents and
// evidence (never fetching them again), links the earlier report, records what it carried, cites across both,
// and leaves the earlier run folder byte for byte as it was.
func TestFollowUpCarriesTheEarlierRun(t *testing.T) {
	c := newBeeCorpus(t)
	root := t.TempDir()
	first, earlier := earlierRun(t, c, root)
	before := folderHashes(t, earlier)
	c.fetches.Store(0)

	rep, err := research.Run(t.Context(), c.config(bothQuestion, filepath.Join(root, "next"), earlier))
	if err != nil {
		t.Fatal(err)
	}
	sameHashes(t, before, folderHashes(t, earlier))
	if rep.Follows == nil || rep.Follows.RunID != first.RunID || rep.Follows.Evidence != len(first.Evidence) || rep.Follows.Dropped != 0 {
		t.Fatalf("follows %+v; the earlier run had %d evidence items", rep.Follows, len(first.Evidence))
	}
	if !strings.Contains(rep.Markdown, "Follows up on run ["+first.RunID+"](../earlier/report.md): "+danceQuestion) {
		t.Fatalf("the report does not link the earlier one:\n%s", rep.Markdown)
	}
	if !strings.Contains(rep.Markdown, "carried from run "+first.RunID) {
		t.Fatalf("the report does not say what was carried:\n%s", rep.Markdown)
	}
	log, err := research.LoadLog(rep.Dir)
	if err != nil {
		t.Fatal(err)
	}
	carried := false
	for _, e := range log {
		carried = carried || e.Decision == "carried over" && strings.Contains(e.Detail, first.RunID)
	}
	if !carried {
		t.Fatal("the research log does not record the carry-over")
	}
	// The earlier quotes are in the pool, verbatim, and the report cites both runs' evidence.
	earlierQuotes := map[string]bool{}
	for _, e := range first.Evidence {
		earlierQuotes[e.Source+"\x00"+e.Quote] = true
	}
	var old, fresh int
	cited := map[string]bool{}
	for _, id := range rep.CitedEvidence() {
		cited[id] = true
	}
	for _, e := range rep.Evidence {
		if !cited[e.ID] {
			continue
		}
		if earlierQuotes[e.Source+"\x00"+e.Quote] {
			old++
		} else {
			fresh++
		}
	}
	if old == 0 || fresh == 0 {
		t.Fatalf("the follow-up cites %d earlier and %d new items; want both:\n%s", old, fresh, rep.Markdown)
	}
	// Documents the earlier run read were not fetched again.
	if n := c.fetches.Load(); n >= int64(len(first.Sources))+1 || n == 0 {
		t.Fatalf("the follow-up fetched %d documents; the earlier run had read %d sources", n, len(first.Sources))
	}
}

// TestFollowUpOfTheSameQuestionSearchesNothingNew: the sub-questions the earlier run asked are covered: not
// searched, not read, not fetched, and the report still cites the carried evidence.
func TestFollowUpOfTheSameQuestionSearchesNothingNew(t *testing.T) {
	c := newBeeCorpus(t)
	root := t.TempDir()
	_, earlier := earlierRun(t, c, root)
	c.fetches.Store(0)
	rep, err := research.Run(t.Context(), c.config(danceQuestion, filepath.Join(root, "again"), earlier))
	if err != nil {
		t.Fatal(err)
	}
	if c.fetches.Load() != 0 || rep.Stats.SourcesRead != 0 {
		t.Fatalf("fetched %d, read %d; want nothing new", c.fetches.Load(), rep.Stats.SourcesRead)
	}
	// The covered sub-questions' carried search markers are not this run's searches: only the others, at most
	// once a round, count.
	if rep.Follows != nil {
		if own := rep.Stats.Rounds * (rep.Stats.SubQuestions - len(rep.Follows.Covered)); rep.Stats.Searches > own {
			t.Errorf("%d searches counted, more than the %d the uncovered sub-questions can make", rep.Stats.Searches, own)
		}
	}
	if len(rep.Citations) == 0 || rep.Follows == nil || len(rep.Follows.Covered) == 0 {
		t.Fatalf("follows %+v, %d citations:\n%s", rep.Follows, len(rep.Citations), rep.Markdown)
	}
}

// TestFollowUpRefusesWhatItCannotFollow: a run that does not exist, one that did not finish, a corrupt state and
// Resume with From are refused clearly, and no run folder is created.
func TestFollowUpRefusesWhatItCannotFollow(t *testing.T) {
	c := newBeeCorpus(t)
	root := t.TempDir()
	_, earlier := earlierRun(t, c, root)

	stopped := filepath.Join(root, "stopped")
	ctx, cancel := context.WithCancel(t.Context())
	cfg := c.config(danceQuestion, stopped, "")
	cfg.OnEvent = func(e research.Event) {
		if e.Kind == research.EventPlan {
			cancel()
		}
	}
	if _, err := research.Run(ctx, cfg); err == nil {
		t.Fatal("the cancelled run finished")
	}

	corrupt := filepath.Join(root, "corrupt")
	if err := os.MkdirAll(corrupt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corrupt, research.StateFile), []byte("SQLite format 3\x00 but not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	corruptBefore := folderHashes(t, corrupt)

	for _, tc := range []struct{ name, from, want string }{
		{"missing", filepath.Join(root, "nothing"), "not a run folder"},
		{"stopped", stopped, "is stopped; only a finished run can be followed up"},
		{"corrupt", corrupt, "its state cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(root, "out-"+tc.name)
			_, err := research.Run(t.Context(), c.config(waxQuestion, out, tc.from))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v; want %q", err, tc.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a refused follow-up left %s behind (%v)", out, err)
			}
		})
	}
	sameHashes(t, corruptBefore, folderHashes(t, corrupt))

	if _, err := research.Resume(t.Context(), stopped, c.config("", "", earlier)); err == nil || !strings.Contains(err.Error(), "From applies to a new run only") {
		t.Fatalf("resume with From: %v", err)
	}
}

// TestFollowUpDropsEvidenceWhoseTextIsGone: evidence whose stored text was removed from the earlier run cannot be
// checked, so it is dropped and counted, and nothing the report cites comes from it.
func TestFollowUpDropsEvidenceWhoseTextIsGone(t *testing.T) {
	c := newBeeCorpus(t)
	root := t.TempDir()
	first, earlier := earlierRun(t, c, root)
	texts, err := filepath.Glob(filepath.Join(earlier, research.DocsDir, "*.txt"))
	if err != nil || len(texts) == 0 {
		t.Fatalf("no stored texts (%v)", err)
	}
	for _, p := range texts {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := research.Run(t.Context(), c.config(danceQuestion, filepath.Join(root, "next"), earlier))
	if err != nil && !errors.Is(err, research.ErrBadInput) {
		t.Fatal(err)
	}
	if rep.Follows == nil || rep.Follows.Dropped != len(first.Evidence) || rep.Follows.Evidence != 0 || rep.Follows.Documents != 0 {
		t.Fatalf("follows %+v; want all %d items dropped", rep.Follows, len(first.Evidence))
	}
	if !strings.Contains(rep.Markdown, "carried from run "+first.RunID+": 0 evidence items from 0 documents; ") {
		t.Fatalf("the drop is not counted in the report:\n%s", rep.Markdown)
	}
}

// TestFollowUpsAtOnceAndInAChain: two follow-ups of one run started together both finish and leave it unchanged;
// a follow-up of a follow-up links the one it follows and carries the whole chain's evidence.
func TestFollowUpsAtOnceAndInAChain(t *testing.T) {
	c := newBeeCorpus(t)
	root := t.TempDir()
	first, earlier := earlierRun(t, c, root)
	before := folderHashes(t, earlier)
	var wg sync.WaitGroup
	reps := make([]*research.Report, 2)
	errs := make([]error, 2)
	for i := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = research.Run(t.Context(), c.config(bothQuestion, filepath.Join(root, "both", string(rune('a'+i))), earlier))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("follow-up %d: %v", i, err)
		}
		if reps[i].Follows == nil || reps[i].Follows.Evidence != len(first.Evidence) {
			t.Fatalf("follow-up %d carried %+v", i, reps[i].Follows)
		}
	}
	sameHashes(t, before, folderHashes(t, earlier))

	second := reps[0]
	third, err := research.Run(t.Context(), c.config("Where do bees fly after following the dance?", filepath.Join(root, "third"), second.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if third.Follows == nil || third.Follows.RunID != second.RunID ||
		!strings.Contains(third.Markdown, "Follows up on run ["+second.RunID+"](../both/a/report.md): "+bothQuestion) {
		t.Fatalf("the third run does not link the second:\n%s", third.Markdown)
	}
	// What the second run accepted — its own and what it kept of the first's — is in the third's pool.
	pool := map[string]bool{}
	for _, e := range third.Evidence {
		pool[e.Quote] = true
	}
	firstQuotes := map[string]bool{}
	for _, e := range first.Evidence {
		firstQuotes[e.Quote] = true
	}
	fromFirst := 0
	for _, e := range second.Evidence {
		if e.Status != research.StatusAccepted {
			continue
		}
		if !pool[e.Quote] {
			t.Fatalf("the chain lost %s of the second run: %q", e.ID, e.Quote)
		}
		if firstQuotes[e.Quote] {
			fromFirst++
		}
	}
	if fromFirst == 0 {
		t.Fatal("the second run kept nothing of the first, so the chain proves nothing")
	}
}

// TestFollowUpWithAPlan: a plan given to a follow-up is researched as given, with the earlier evidence carried.
func TestFollowUpWithAPlan(t *testing.T) {
	c := newBeeCorpus(t)
	root := t.TempDir()
	first, earlier := earlierRun(t, c, root)
	cfg := c.config(waxQuestion, filepath.Join(root, "planned"), earlier)
	cfg.Plan = &research.Plan{SubQuestions: []research.SubQuestion{{Question: "Which glands secrete beeswax?"}}}
	rep, err := research.Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stats.SubQuestions != 1 || rep.Follows == nil || rep.Follows.Evidence != len(first.Evidence) {
		t.Fatalf("%d sub-questions, follows %+v", rep.Stats.SubQuestions, rep.Follows)
	}
}

// TestResolveRun: a run is named by its folder, its id or a unique prefix of it; anything else is refused.
func TestResolveRun(t *testing.T) {
	c := newBeeCorpus(t)
	root := t.TempDir()
	runs := filepath.Join(root, "runs")
	rep, err := research.Run(t.Context(), c.config(danceQuestion, filepath.Join(runs, "20260101-000000-abcdef"), ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{rep.Dir, "20260101-000000-abcdef", "20260101"} {
		got, err := research.ResolveRun(runs, ref)
		if err != nil || filepath.Base(got) != "20260101-000000-abcdef" {
			t.Fatalf("%q: %q, %v", ref, got, err)
		}
	}
	for _, ref := range []string{"", "nope", "../runs", root} {
		if _, err := research.ResolveRun(runs, ref); !errors.Is(err, research.ErrBadInput) {
			t.Fatalf("%q: %v", ref, err)
		}
	}
}

// TestFollowUpOfARunCutShortAndAResumedFollowUp: a run cut short by a fuse is finished and can be followed up; a
// follow-up interrupted before its plan carries the earlier run when resumed.
func TestFollowUpOfARunCutShortAndAResumedFollowUp(t *testing.T) {
	c := newBeeCorpus(t)
	root := t.TempDir()
	cut := filepath.Join(root, "cut")
	cfg := c.config(danceQuestion, cut, "")
	cfg.Budget.MaxCalls = 8
	first, err := research.Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if first.CutShort == "" || len(first.Evidence) == 0 {
		t.Fatalf("the earlier run was not cut short after finding evidence (%d calls, %d items)", first.Stats.Calls, len(first.Evidence))
	}
	next := filepath.Join(root, "next")
	ctx, cancel := context.WithCancel(t.Context())
	cfg = c.config(bothQuestion, next, cut)
	cfg.OnEvent = func(e research.Event) {
		if e.Kind == research.EventStageStart && e.Stage == research.StageScope {
			cancel()
		}
	}
	if _, err := research.Run(ctx, cfg); err == nil {
		t.Fatal("the interrupted follow-up finished")
	}
	if _, err := research.LoadPlan(next); err == nil {
		t.Fatal("the follow-up was interrupted after its plan; the test proves nothing")
	}
	rep, err := research.Resume(t.Context(), next, c.config("", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Follows == nil || rep.Follows.RunID != first.RunID || rep.Follows.Evidence != len(first.Evidence) {
		t.Fatalf("the resumed follow-up carried %+v; the cut-short run had %d items", rep.Follows, len(first.Evidence))
	}
}
