// Package researchtest runs real research for the surfaces' tests (web viewer, MCP server, chat): research.Run
// with the extractive engine over a small local corpus indexed with the real corpus index. An optional delay per
// role call makes progress observable the way a model-backed run would be.
package researchtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/extractive"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

// Question is a question the test corpus answers.
const Question = "How do honeybees communicate the location of food?"

// CorpusDir returns the folder of the test corpus (a few Markdown files about honeybee communication and one
// unrelated file).
func CorpusDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "corpus")
}

// Engine runs research over an indexed copy of the test corpus.
type Engine struct {
	Index *corpus.Index
	// Dir is the corpus folder the index was built from (a copy of CorpusDir).
	Dir string
	// Delay is added to every role call.
	Delay time.Duration
}

// New copies the test corpus into a temporary folder, indexes it, and returns an engine whose index is closed
// when the test ends.
func New(t testing.TB, delay time.Duration) *Engine {
	t.Helper()
	e, err := Open(t.TempDir(), delay)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Index.Close() })
	return e
}

// Open copies the test corpus into work/corpus and indexes it into work/index; for test helpers that run
// outside a test function (a child process serving MCP). The caller closes e.Index.
func Open(work string, delay time.Duration) (*Engine, error) {
	dir := filepath.Join(work, "corpus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(CorpusDir())
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(CorpusDir(), e.Name()))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			return nil, err
		}
	}
	ix, err := corpus.Open(filepath.Join(work, "index"))
	if err != nil {
		return nil, err
	}
	if _, err := ix.Add(context.Background(), dir); err != nil {
		ix.Close()
		return nil, fmt.Errorf("index test corpus: %w", err)
	}
	return &Engine{Index: ix, Dir: dir, Delay: delay}, nil
}

// Config returns a research configuration for question that writes to outDir and reports events to onEvent.
func (e *Engine) Config(question, runID, outDir string, onEvent func(research.Event)) research.Config {
	roles := extractive.New(extractive.Config{Searchers: []sources.Searcher{e.Index}})
	if e.Delay > 0 {
		roles = Slow(roles, e.Delay)
	}
	return research.Config{
		Question: question,
		Roles:    roles,
		Fetcher:  sources.Router{Corpus: e.Index},
		RunID:    runID,
		OutDir:   outDir,
		OnEvent:  onEvent,
		Settings: map[string]string{"corpus": e.Dir},
	}
}

// Run runs research for question into outDir.
func (e *Engine) Run(ctx context.Context, question, runID, outDir string, onEvent func(research.Event)) (*research.Report, error) {
	return research.Run(ctx, e.Config(question, runID, outDir, onEvent))
}

// Slow wraps every role so each call first waits d (or until ctx ends).
func Slow(r research.Roles, d time.Duration) research.Roles {
	s := slow{r: r, d: d}
	return research.Roles{Engine: r.Engine, Planner: s, Searcher: s, Analyst: s, Verifier: s, Synthesizer: s}
}

type slow struct {
	r research.Roles
	d time.Duration
}

func (s slow) wait(ctx context.Context) error {
	t := time.NewTimer(s.d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s slow) Plan(ctx context.Context, q string) (*research.Plan, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.r.Planner.Plan(ctx, q)
}

func (s slow) Search(ctx context.Context, sq research.SubQuestion, queries []string) ([]research.Candidate, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.r.Searcher.Search(ctx, sq, queries)
}

func (s slow) Analyze(ctx context.Context, sq research.SubQuestion, doc *sources.Document) ([]research.Evidence, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.r.Analyst.Analyze(ctx, sq, doc)
}

func (s slow) Verify(ctx context.Context, plan *research.Plan, pool []research.Evidence) (*research.Verdict, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.r.Verifier.Verify(ctx, plan, pool)
}

func (s slow) Synthesize(ctx context.Context, in research.SynthesisInput) (*research.Draft, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.r.Synthesizer.Synthesize(ctx, in)
}
