package durable

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources"
)

// cutOnFetch cuts the database the first time a page is fetched, after the fetch: the read has its text and
// storing it fails.
type cutOnFetch struct {
	sources.Fetcher
	proxy *pgtest.Proxy
	path  string
	once  *sync.Once
}

func (f cutOnFetch) Fetch(ctx context.Context, u string) (*sources.Document, error) {
	doc, err := f.Fetcher.Fetch(ctx, u)
	if strings.HasSuffix(u, f.path) {
		f.once.Do(f.proxy.Cut)
	}
	return doc, err
}

// PostgreSQL goes down in the middle of the reads (a read has fetched its page and cannot store it, the reads
// and admissions in flight lose their connections): the steps fail on the state store and are retried once it
// is back, and the finished run has exactly the evidence of an undisturbed run — no source taken for
// unreadable, no read skipped.
func TestStateOutageMidReadLosesNothing(t *testing.T) {
	pg := pgtest.New(t)
	f := newFixture(t)
	undisturbed := f.localRun(t, "")
	want := evidenceKeys(undisturbed.Evidence)

	proxy := pgtest.NewProxy(t, pg)
	url := proxy.URL
	var once sync.Once
	acts := &Activities{Dir: t.TempDir(), State: url, Build: func(context.Context, Input) (research.Config, func(), error) {
		c := f.config()
		c.Fetcher = cutOnFetch{Fetcher: c.Fetcher, proxy: proxy, path: "/bravo/2", once: &once}
		return c, func() {}, nil
	}}
	defer acts.Close()
	tel, err := NewTelemetry()
	if err != nil {
		t.Fatal(err)
	}
	acts.Metrics = tel.Metrics
	// The database comes back after three steps have failed on it.
	var failed, storeFailed atomic.Int32
	var mu sync.Mutex
	var failures []string
	watch := func(err error) {
		if err == nil || !proxy.IsCut() {
			return
		}
		mu.Lock()
		failures = append(failures, err.Error())
		mu.Unlock()
		var ae interface{ Type() string }
		if errors.As(err, &ae) && ae.Type() == ErrStateStore {
			storeFailed.Add(1)
		}
		if failed.Add(1) >= 3 {
			proxy.Mend()
		}
	}
	rep := runWorkflow(t, acts, map[string]any{
		act("Read"): func(ctx context.Context, in Input, round int, c research.Candidate) (research.Reading, error) {
			rd, err := acts.Activity(step("Read")).(func(context.Context, Input, int, research.Candidate) (research.Reading, error))(ctx, in, round, c)
			watch(err)
			return rd, err
		},
		act("Admit"): func(ctx context.Context, in Input, round int, c research.Candidate, rd research.Reading) (research.Admission, error) {
			a, err := acts.Activity(step("Admit")).(func(context.Context, Input, int, research.Candidate, research.Reading) (research.Admission, error))(ctx, in, round, c, rd)
			watch(err)
			return a, err
		},
	}, "outage")
	once.Do(func() {}) // the cut happened (or the test below fails)
	if failed.Load() < 3 || storeFailed.Load() == 0 {
		t.Fatalf("%d steps failed during the outage, %d of them as state-store failures: the outage was not exercised:\n%s",
			failed.Load(), storeFailed.Load(), strings.Join(failures, "\n"))
	}
	// Every step that failed on the store is counted as such, by where it was classified.
	if got := sample(t, tel, MetricStateErrors+"_total", nil); got < float64(storeFailed.Load()) ||
		sample(t, tel, MetricSteps+"_total", map[string]string{"outcome": ErrStateStore}) != got {
		t.Errorf("state-store errors counted %v, steps failed on the store %v; the watched reads and admissions saw %d",
			got, sample(t, tel, MetricSteps+"_total", map[string]string{"outcome": ErrStateStore}), storeFailed.Load())
	}
	db, pool := storedPool(t, pg.URL, "outage")
	got := map[string]bool{}
	for _, e := range pool {
		got[state.EvidenceKey(e.Source, e.Quote)] = true
	}
	for k := range want {
		if !got[k] {
			t.Errorf("evidence of the undisturbed run missing after the outage: %s", k)
		}
	}
	if len(got) != len(want) || rep.Stats.EvidenceAccepted != undisturbed.Stats.EvidenceAccepted ||
		rep.Stats.SourcesRead != undisturbed.Stats.SourcesRead || rep.Stats.SourcesUnreadable != 0 {
		t.Errorf("after the outage: %d evidence (report %d), %d sources read, %d unreadable; undisturbed: %d, %d, %d",
			len(got), rep.Stats.EvidenceAccepted, rep.Stats.SourcesRead, rep.Stats.SourcesUnreadable,
			len(want), undisturbed.Stats.SourcesRead, undisturbed.Stats.SourcesUnreadable)
	}
	if names, _ := db.StepNames(t.Context(), "unreadable:"); len(names) > 0 {
		t.Errorf("sources marked unreadable by the outage: %v", names)
	}
}
