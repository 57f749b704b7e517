package graphbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/deepresearch/deepresearch/internal/bench/benchcpu"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/state"
)

// Config describes one graph benchmark run. Zero fields take the defaults in brackets.
type Config struct {
	Latency      time.Duration // per model call [200ms]
	SubQuestions int           // [5]
	PagesPerSQ   int           // pages the site holds per sub-question [6]
	GappedSQs    int           // sub-questions the first verdict sends back to search [2]
	Concurrency  int           // fleet bound [16]
	BatchSize    int           // reads in flight [8]
	// MaxCandidates is the reads the collector picks per round [30]; a wide fan-out sets it to the number of
	// pages so every page is read.
	MaxCandidates int
	Dir           string // where the run folder goes [a temporary folder, removed]
}

// Result is what a benchmark run measured.
type Result struct {
	Config Config
	Wall   time.Duration
	// Bound is the critical-path bound: the longest chain of model calls at the configured fan-outs and bounds,
	// times the latency (per round: ⌈searches/concurrency⌉ + ⌈reads/min(batch, concurrency)⌉ + 1 verify; plus
	// the plan and the synthesis).
	Bound time.Duration
	// Sequential is the same calls one after another: calls × latency.
	Sequential time.Duration
	Calls      int
	Chain      int // calls on the critical path
	Peak       int // most model calls in flight at once, measured at the model
	Rounds     int
	Searches   []int // per round
	Reads      []int // per round
	Evidence   int
	Citations  int
	// CPU is the CPU time (user + system) the process used during the run, 0 where it is not measured: the
	// run's own work, which wall time on a busy machine inflates by the wait for a core.
	CPU time.Duration
	// Stages is each stage's wall time against its share of the critical path, in the order they ran.
	Stages []StageTime
}

// StageTime is one stage of one round: its wall time (the research log's "stage done" row), the model calls it
// has on the critical path, and Over, what it took beyond those calls at the configured latency — the graph's
// own work and waits.
type StageTime struct {
	Round int
	Stage string
	Wall  time.Duration
	Chain int
	Over  time.Duration
}

// Overhead is the sum of the stages' Over: the part of Wall − Bound spent inside stages (the rest is between
// them).
func (r Result) Overhead() time.Duration {
	var d time.Duration
	for _, s := range r.Stages {
		d += s.Over
	}
	return d
}

// Ratio is Wall / Bound.
func (r Result) Ratio() float64 { return float64(r.Wall) / float64(r.Bound) }

func (c Config) withDefaults() Config {
	if c.Latency <= 0 {
		c.Latency = 200 * time.Millisecond
	}
	if c.SubQuestions <= 0 {
		c.SubQuestions = 5
	}
	if c.PagesPerSQ <= 0 {
		c.PagesPerSQ = 6
	}
	if c.GappedSQs < 0 {
		c.GappedSQs = 0
	} else if c.GappedSQs == 0 {
		c.GappedSQs = 2
	}
	c.GappedSQs = min(c.GappedSQs, c.SubQuestions)
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 8
	}
	return c
}

var topics = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}

// Run runs the full research graph once — the scripted model at a fixed latency driving all five roles,
// a local HTTP site as the web — and measures its wall time against the critical-path bound.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg = cfg.withDefaults()
	if cfg.SubQuestions > len(topics) {
		return nil, fmt.Errorf("bench: at most %d sub-questions", len(topics))
	}
	var pages []researchtest.Page
	plan := research.Plan{Language: "en"}
	for i := range cfg.SubQuestions {
		t := topics[i]
		plan.SubQuestions = append(plan.SubQuestions, research.SubQuestion{ID: fmt.Sprintf("q%d", i+1),
			Question: "What is known about " + t + "?", Queries: []string{t + " facts"}})
		for j := range cfg.PagesPerSQ {
			pages = append(pages, researchtest.Page{Path: fmt.Sprintf("/%s/%d", t, j), Title: fmt.Sprintf("%s facts %d", t, j),
				Body: fmt.Sprintf("The %s facts page %d reports a measured value of %d units. Observers of %s noted trend %d in the %s facts series.",
					t, j, 10*i+j, t, j, t)})
		}
		pages = append(pages, researchtest.Page{Path: fmt.Sprintf("/%s/deep", t), Title: t + " deep dive",
			Body: fmt.Sprintf("The %s deep dive covers the missing details of %s in full.", t, t)})
	}
	site := researchtest.NewSite(pages)
	defer site.Close()
	ledger := &llm.Ledger{}
	roles := &researchtest.Roles{Site: site, Plan: plan, Ledger: ledger, PerQuery: cfg.PagesPerSQ}
	roles.NewModel(cfg.Latency)
	roles.Verify = func(call int, plan *research.Plan, _ []research.Evidence) research.Verdict {
		if call > 1 {
			return research.Verdict{Pass: true}
		}
		v := research.Verdict{}
		for i := range cfg.GappedSQs {
			t := topics[i]
			v.Gaps = append(v.Gaps, research.Gap{SubQuestion: plan.SubQuestions[i].ID, Missing: "details",
				Queries: []string{t + " deep dive"}})
		}
		v.Pass = len(v.Gaps) == 0
		return v
	}
	dir := cfg.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "deepresearch-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	runDir := filepath.Join(dir, research.NewRunID())
	start, cpu := time.Now(), benchcpu.Process()
	rep, err := research.Run(ctx, research.Config{
		Question: "What is known about " + fmt.Sprint(topics[:cfg.SubQuestions]) + "?", Roles: roles.Set(),
		Fetcher: site.Fetcher(), OutDir: runDir, Ledger: ledger, BatchSize: cfg.BatchSize, MaxCandidates: cfg.MaxCandidates,
		Budget: research.Budget{Concurrency: cfg.Concurrency}, EarlyStopWindow: -1,
	})
	if err != nil {
		return nil, err
	}
	res := &Result{Config: cfg, Wall: time.Since(start), CPU: benchcpu.Process() - cpu, Calls: roles.Model.Calls(), Peak: roles.Model.PeakConcurrency(),
		Evidence: rep.Stats.EvidenceAccepted, Citations: len(rep.Citations), Rounds: rep.Stats.Rounds}

	// The critical path, from the research log: what each round actually searched and read.
	db, err := state.OpenReadOnly(ctx, filepath.Join(runDir, research.StateFile))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	log, err := db.Log(ctx, "")
	if err != nil {
		return nil, err
	}
	res.Searches = make([]int, res.Rounds)
	res.Reads = make([]int, res.Rounds)
	verifies, synths := 0, rep.Stats.SynthAttempts
	for _, e := range log {
		if e.Round < 1 || e.Round > res.Rounds {
			continue
		}
		switch {
		case e.Stage == research.StageSearch && e.Decision == "searched":
			res.Searches[e.Round-1]++
		case e.Stage == research.StageRead && e.Decision == "read":
			res.Reads[e.Round-1]++
		case e.Stage == research.StageVerify && (e.Decision == "pass" || e.Decision == "gaps"):
			verifies++
		}
	}
	readWidth := min(cfg.BatchSize, cfg.Concurrency)
	res.Chain = 1 + verifies + synths
	for i := range res.Rounds {
		res.Chain += ceilDiv(res.Searches[i], cfg.Concurrency) + ceilDiv(res.Reads[i], readWidth)
	}
	for _, e := range log {
		if e.Decision != "stage done" {
			continue
		}
		st := StageTime{Round: e.Round, Stage: e.Stage, Wall: e.Duration}
		switch i := e.Round - 1; {
		case e.Stage == research.StageScope:
			st.Chain = 1
		case e.Stage == research.StageSynth:
			st.Chain = synths
		case e.Stage == research.StageVerify:
			st.Chain = 1
		case i >= 0 && i < res.Rounds && e.Stage == research.StageSearch:
			st.Chain = ceilDiv(res.Searches[i], cfg.Concurrency)
		case i >= 0 && i < res.Rounds && e.Stage == research.StageRead:
			st.Chain = ceilDiv(res.Reads[i], readWidth)
		}
		st.Over = st.Wall - time.Duration(st.Chain)*cfg.Latency
		res.Stages = append(res.Stages, st)
	}
	res.Bound = time.Duration(res.Chain) * cfg.Latency
	res.Sequential = time.Duration(res.Calls) * cfg.Latency
	return res, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
