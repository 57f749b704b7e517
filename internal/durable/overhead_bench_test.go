package durable

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

// BenchmarkStepOverhead prints what a worker pays per activity around the step itself — building the run's
// roles, opening the run's session on the shared PostgreSQL state, closing it — for a run that has finished its
// first workflow (a plan, a pool of evidence, a long events file): the activity runs a step that does nothing.
// ms/activity is the whole overhead; build, open and close its parts (from the worker's debug log line).
// fixture builds the durable tests' roles (nothing to open); corpus builds what a worker builds for an extractive
// run over a corpus folder (request.Builder, as `deepresearch worker` does: the corpus index opened and its
// folder checked for changes, the extractive roles, the fetcher).
//
//	go test -run '^$' -bench StepOverhead -benchtime 200x ./internal/durable/
func BenchmarkStepOverhead(b *testing.B) {
	b.Run("fixture", func(b *testing.B) { benchStepOverhead(b, false) })
	b.Run("corpus", func(b *testing.B) { benchStepOverhead(b, true) })
}

func benchStepOverhead(b *testing.B, withCorpus bool) {
	pg := pgtest.New(b)
	f := newFixture(b)
	phases := &phaseLog{}
	acts := &Activities{Dir: b.TempDir(), State: pg.URL, Log: phases.logger(), KeepBuilds: true,
		Build: func(context.Context, Input) (research.Config, func(), error) { return f.config(), func() {}, nil }}
	defer acts.Close()
	in := Input{Request: request.Research{RunID: "overhead", Question: question}}
	var realBuild atomic.Bool
	if withCorpus {
		dir := b.TempDir()
		for i, topic := range []string{"alpha", "bravo", "charlie"} {
			body := fmt.Sprintf("# %s\n\nThe %s facts report a value of %d units. Observers of %s noted a trend in the series.\n", topic, topic, 10*i, topic)
			if err := os.WriteFile(filepath.Join(dir, topic+".md"), []byte(strings.Repeat(body, 20)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		in.Request.Corpora, in.Request.Engine = []string{dir}, "extractive"
		builder := &request.Builder{Config: config.Defaults(),
			OpenCorpus: func(ctx context.Context, path string, _ func(corpus.Progress), followLinks bool) (*corpus.Index, error) {
				ix, err := corpus.OpenWith(corpus.DefaultDir(path), &corpus.Options{FollowLinks: followLinks})
				if err != nil {
					return nil, err
				}
				if _, err := ix.Add(ctx, path); err != nil {
					ix.Close()
					return nil, err
				}
				return ix, nil
			}}
		fixtureBuild := acts.Build
		acts.Build = func(ctx context.Context, in Input) (research.Config, func(), error) {
			if !realBuild.Load() { // the first workflow runs on the fixture's roles, which make the plan and the pool
				return fixtureBuild(ctx, in)
			}
			return builder.Build(ctx, in.Request)
		}
	}

	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	register(env, acts, nil)
	env.ExecuteWorkflow(WorkflowName, in)
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		b.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	realBuild.Store(true)

	var mu sync.Mutex
	var inside time.Duration
	noop := func(ctx context.Context, in Input) (int, error) {
		t0 := time.Now()
		n, err := 0, error(nil)
		s, done, err := acts.session(ctx, in)
		if err == nil {
			n = s.Progress().Evidence
			done(nil)
		}
		mu.Lock()
		inside += time.Since(t0)
		mu.Unlock()
		return n, err
	}
	aenv := s.NewTestActivityEnvironment()
	aenv.RegisterActivity(noop)
	phases.reset()
	b.ResetTimer()
	for range b.N {
		v, err := aenv.ExecuteActivity(noop, in)
		if err != nil {
			b.Fatal(err)
		}
		var n int
		if err := v.Get(&n); err != nil || n == 0 {
			b.Fatalf("the step saw %d evidence (%v)", n, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(inside.Microseconds())/1000/float64(b.N), "ms/activity")
	for _, p := range phases.means() {
		b.ReportMetric(p.ms, p.name+"-ms")
	}
}

// phaseLog reads the "step" debug lines of Activities.session: each step's build, open and close times.
type phaseLog struct {
	mu     sync.Mutex
	n      int
	totals map[string]time.Duration
}

func (p *phaseLog) logger() *slog.Logger { return slog.New(p) }

func (p *phaseLog) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n, p.totals = 0, map[string]time.Duration{}
}

type phase struct {
	name string
	ms   float64
}

func (p *phaseLog) means() []phase {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []phase
	for _, k := range []string{"build", "open", "close"} {
		if p.n > 0 {
			out = append(out, phase{k, float64(p.totals[k].Microseconds()) / 1000 / float64(p.n)})
		}
	}
	return out
}

func (p *phaseLog) Enabled(context.Context, slog.Level) bool { return true }
func (p *phaseLog) WithAttrs([]slog.Attr) slog.Handler       { return p }
func (p *phaseLog) WithGroup(string) slog.Handler            { return p }
func (p *phaseLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "step" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.totals == nil {
		p.totals = map[string]time.Duration{}
	}
	p.n++
	r.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindDuration {
			p.totals[a.Key] += a.Value.Duration()
		}
		return true
	})
	return nil
}
