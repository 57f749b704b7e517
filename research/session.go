package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deepresearch/deepresearch/base/redact"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research/state"
)

// Session is one process's hold on a run whose state is shared (a PostgreSQL state, see state.OpenRun), for
// executing single steps of it: durable execution runs each step as an activity, each perhaps on another machine
// than the last, and every activity opens a session, runs its step and closes it. Everything a step needs from
// earlier steps — the plan, the pool, step markers, fetched texts, spend, the fuse — is read from the state.
type Session struct {
	r *runner
	// fuse is the fuse state the session opened with; Close writes it back only if the step changed it.
	fuse  fuseState
	ownDB bool
	// resident says the session holds the whole run (a run in one process), not one step of it.
	resident bool
	// retry is SessionConfig.Retry.
	retry   bool
	stageMu sync.Mutex
	stage   *openStage
}

// SessionConfig names the run and this attempt.
type SessionConfig struct {
	// State is the run's state: a postgres:// URL, or empty for a SQLite file in Config.OutDir (one machine).
	State string
	// SpendKey names this attempt in the run's spend ledger (an activity id and attempt); required.
	SpendKey string
	// Retry says this attempt is not its step's first: its spend row is written even when it spent nothing, so
	// that the ledger shows every retried attempt. A first attempt that called no model writes none.
	Retry bool
	// Ceiling is the most this process lets any run spend (a worker's configured limits, its operator's):
	// each of its non-zero limits bounds the run's own, the smaller winning, a limit the run leaves unset (no
	// fuse, or the default) included. StageTimeout is not capped: the engine that schedules the steps reads it.
	Ceiling Budget
}

// capped is b bounded by ceiling: for each limit ceiling sets, the smaller of the two, or ceiling's where b
// leaves the limit unset.
func capped(b, ceiling Budget) Budget {
	lower(&b.MaxTokens, ceiling.MaxTokens)
	lower(&b.MaxCalls, ceiling.MaxCalls)
	lower(&b.Concurrency, ceiling.Concurrency)
	lower(&b.MaxCostUSD, ceiling.MaxCostUSD)
	lower(&b.MaxTime, ceiling.MaxTime)
	return b
}

// lower sets the limit *v to c when c is set (positive) and *v is unset or larger.
func lower[T int | float64 | time.Duration](v *T, c T) {
	if c > 0 && (*v <= 0 || *v > c) {
		*v = c
	}
}

// fuseState is what a step leaves for the next about the fuse.
type fuseState struct {
	Fused    bool     `json:"fused"`
	CutShort []string `json:"cut_short"`
	Round    int      `json:"round"`
}

// OpenSession opens run cfg.RunID for one step. cfg.OutDir is this process's folder for the run (fetched texts
// cached, events, snapshots); default runs/<RunID>. The first session of a run creates its state from
// cfg.Question and the budget; later ones read them from the state.
func OpenSession(ctx context.Context, cfg Config, sc SessionConfig) (*Session, error) {
	return openSession(ctx, cfg, sc, nil)
}

// openSession opens a session, of run h when it is set (h's state, folder and events file, and what h already
// knows of the run), else of the state sc names.
func openSession(ctx context.Context, cfg Config, sc SessionConfig, h *SharedRun) (*Session, error) {
	if cfg.Roles.Planner == nil || cfg.Roles.Searcher == nil || cfg.Roles.Analyst == nil ||
		cfg.Roles.Verifier == nil || cfg.Roles.Synthesizer == nil {
		return nil, errors.New("research: Config.Roles must set all five roles")
	}
	if cfg.Fetcher == nil {
		return nil, errors.New("research: Config.Fetcher is required")
	}
	if strings.TrimSpace(cfg.RunID) == "" {
		return nil, errors.New("research: a session needs Config.RunID")
	}
	if h != nil && cfg.RunID != h.id {
		return nil, fmt.Errorf("research: a session of run %q opened on run %q", cfg.RunID, h.id)
	}
	if sc.SpendKey == "" {
		return nil, errors.New("research: a session needs SessionConfig.SpendKey")
	}
	if err := cfg.Budget.Validate(); err != nil {
		return nil, fmt.Errorf("research: %w", err)
	}
	r := &runner{cfg: cfg, scrub: redact.New(cfg.Secrets...), id: cfg.RunID, started: time.Now(), ledger: cfg.Ledger, log: cfg.Log,
		novelty: map[string]*novelty{}, docs: map[string]*docEntry{}, spendKey: sc.SpendKey}
	if r.ledger == nil {
		r.ledger = &llm.Ledger{}
	}
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var db *state.DB
	owned := false
	if h != nil {
		r.dir, db, r.eventFile = h.dir, h.db, h.events
	} else {
		r.dir = cfg.OutDir
		if r.dir == "" {
			r.dir = filepath.Join("runs", r.id)
		}
		if err := makeRunFolder(r.dir); err != nil {
			return nil, fmt.Errorf("research: run folder: %w", err)
		}
		location := sc.State
		if location == "" {
			location = filepath.Join(r.dir, StateFile)
		}
		var err error
		if db, err = state.OpenRun(ctx, location, r.id); err != nil {
			return nil, err
		}
		owned = true
	}
	r.db = db
	ok := false
	defer func() {
		if !ok && owned {
			db.Close()
		}
	}()
	rc := cfg.runConfig()
	known := false
	if f, cached := h.known(); cached {
		// What a run's creation wrote does not change: read once per SharedRun.
		known, r.question, r.created = true, f.question, f.created
		rc = merge(f.stored, rc)
	} else {
		var err error
		if _, known, err = db.Meta(ctx, "run_id"); err != nil {
			return nil, err
		}
		if known {
			info, err := readInfo(ctx, db, r.dir)
			if err != nil {
				return nil, err
			}
			r.question, r.created = info.Question, info.Created
			stored := storedConfig(ctx, db)
			h.remember(runFacts{question: r.question, created: r.created, stored: stored})
			rc = merge(stored, rc) // the run's own bounds win over this worker's
		} else {
			if err := CheckQuestion(cfg.Question); err != nil {
				return nil, fmt.Errorf("research: %w", err)
			}
			r.question, r.created = strings.TrimSpace(cfg.Question), r.started
		}
	}
	// The run's limits (as submitted, then as its creation stored them), with their defaults, under this
	// process's ceiling, which every session applies and none stores: workers with different ceilings each
	// hold the run to their own.
	r.ceiling = sc.Ceiling
	r.setConfig(rc)
	// What other steps change — on this process or another — is read again by every session, in one query: the
	// spend of every other attempt, the fuse, the status and the counts of the pool and the steps (the plan is
	// read until scope has stored it).
	g, err := db.Glance(ctx, sc.SpendKey, []string{"fuse", "status"}, progressTally...)
	if err != nil {
		return nil, err
	}
	others := g.Others
	r.base = spend{Tokens: others.Tokens, CostUSD: others.CostUSD, Calls: others.Calls, Estimated: others.Estimated}
	var fs fuseState
	if v, ok := g.Meta["fuse"]; ok {
		_ = json.Unmarshal([]byte(v), &fs)
	}
	r.fuse, r.cutShort, r.rounds = fs.Fused, fs.CutShort, fs.Round
	// A step's time limit counts from the run's creation, whichever worker runs the step.
	if err := r.arm(r.created); err != nil {
		return nil, err
	}
	r.events.shared = db
	// A run another step has marked running already is not written again, and a run marked stopped (its
	// workflow cancelled) stays stopped: a step that starts after the cancellation does not list it running again.
	if status := g.Meta["status"]; !known || (status != RunRunning && status != RunStopped) {
		if err := r.saveMeta(ctx, !known); err != nil {
			r.events.Close()
			return nil, err
		}
	}
	plan, done, err := h.plan(ctx, db)
	if err != nil {
		r.events.Close()
		return nil, err
	}
	if done {
		r.plan = plan
		r.applyDepth(plan)
		r.prog.SubQuestions = len(plan.SubQuestions)
		r.setTally(g.Tally)
		for _, role := range []any{cfg.Roles.Planner, cfg.Roles.Searcher, cfg.Roles.Analyst, cfg.Roles.Verifier, cfg.Roles.Synthesizer} {
			if k, ok := role.(PlanKnower); ok {
				k.KnowPlan(plan)
			}
		}
	}
	ok = true
	return &Session{r: r, fuse: fs, ownDB: owned, retry: sc.Retry}, nil
}

// Close saves what the step leaves for the next (spend, fuse) and closes the state.
func (s *Session) Close() error {
	r := s.r
	ctx := context.Background()
	if s.retry || len(r.ledger.Entries()) > 0 || r.reserved.Load() > 0 {
		// A first attempt that called no model (the bookkeeping between model steps) has nothing to add to the
		// ledger.
		r.saveSpend(ctx)
	}
	err := s.saveFuse(ctx)
	err = errors.Join(err, r.events.Close())
	if s.ownDB {
		err = errors.Join(err, r.db.Close())
	}
	return err
}

// saveFuse merges what this step changed about the fuse (fired, reasons, round) into the stored state. Steps
// of one run close concurrently, so a step that changed nothing writes nothing, and one that did adds to what
// is stored rather than replacing it.
func (s *Session) saveFuse(ctx context.Context) error {
	r := s.r
	r.mu.Lock()
	mine := fuseState{Fused: r.fuse, CutShort: append([]string(nil), r.cutShort...), Round: r.rounds}
	r.mu.Unlock()
	if mine.Fused == s.fuse.Fused && mine.Round == s.fuse.Round && len(mine.CutShort) == len(s.fuse.CutShort) {
		return nil
	}
	var stored fuseState
	if v, ok, err := r.db.Meta(ctx, "fuse"); err != nil {
		return err
	} else if ok {
		_ = json.Unmarshal([]byte(v), &stored)
	}
	stored.Fused = stored.Fused || mine.Fused
	stored.Round = max(stored.Round, mine.Round)
	for _, c := range mine.CutShort {
		if !slices.Contains(stored.CutShort, c) {
			stored.CutShort = append(stored.CutShort, c)
		}
	}
	b, _ := json.Marshal(stored)
	return r.db.SetMeta(ctx, "fuse", string(b))
}

// Dir is this process's folder for the run.
func (s *Session) Dir() string { return s.r.dir }

// Progress is the run's progress as this session sees it.
func (s *Session) Progress() Progress { return s.r.progress() }

// enter starts a step in a session of its own: the step's context is the run's, as far as this process sees it.
func (s *Session) enter(ctx context.Context) {
	if !s.resident {
		s.r.stopped = ctx.Done()
	}
}

func (s *Session) needPlan() error {
	if s.r.plan == nil {
		return errors.New("research: the run has no plan yet (scope has not run)")
	}
	return nil
}

// The steps of the graph over a session, one method each; the step table (Graph) declares them. A resident
// session (a run in one process) holds the run's pool, early stops and stage in memory; a session of one step
// (a durable run's activity) reads from the run's state what the steps before it left.

// Scope runs the scope step.
func (s *Session) Scope(ctx context.Context) (*Plan, error) {
	s.enter(ctx)
	return s.r.scopeStep(ctx)
}

// BeginRound starts a round of search and read.
func (s *Session) BeginRound(ctx context.Context, round int) (RoundPlan, error) {
	s.enter(ctx)
	if err := s.needPlan(); err != nil {
		return RoundPlan{}, err
	}
	rp, err := s.r.beginRound(ctx, round)
	if err != nil || rp.Fused {
		return rp, err
	}
	return rp, s.beginStage(ctx, StageSearch, round)
}

// Search runs one sub-question's searches.
func (s *Session) Search(ctx context.Context, round int, t Target) ([]Candidate, error) {
	s.enter(ctx)
	if err := s.needPlan(); err != nil {
		return nil, err
	}
	return s.r.searchStep(ctx, round, t)
}

// Collect ends the search stage and picks the round's reads from the searches' results.
func (s *Session) Collect(ctx context.Context, round int, targets []Target, found [][]Candidate) ([]Candidate, error) {
	s.enter(ctx)
	if err := s.needPlan(); err != nil {
		return nil, err
	}
	if err := s.closeStage(ctx); err != nil {
		return nil, err
	}
	picked, err := s.r.collectStep(ctx, round, targets, found)
	if err != nil {
		return nil, err
	}
	s.stageDone(ctx, StageSearch, round, fmt.Sprintf("%d sub-questions searched, %d candidates picked", len(targets), len(picked)))
	return picked, s.beginStage(ctx, StageRead, round)
}

// Read runs one read (fetch and analyst call); its sub-question's early stop is read from the state.
func (s *Session) Read(ctx context.Context, round int, c Candidate) (Reading, error) {
	s.enter(ctx)
	if err := s.needPlan(); err != nil {
		return Reading{}, err
	}
	if !s.resident {
		if done, err := s.r.db.Step(ctx, earlyStopStep(round, c.SubQuestion), nil); err != nil {
			return Reading{}, err
		} else if done {
			s.r.mu.Lock()
			s.r.novelty[c.SubQuestion] = &novelty{normed: map[string]bool{}, saturated: true}
			s.r.mu.Unlock()
		}
	}
	return s.r.readStep(ctx, round, c)
}

// Admit admits one read's items to the pool. In a session of one step, the round's early-stop state is rebuilt
// from the pool first (the reads before this one were admitted by other sessions).
func (s *Session) Admit(ctx context.Context, round int, c Candidate, rd Reading) (Admission, error) {
	s.enter(ctx)
	if err := s.needPlan(); err != nil {
		return Admission{}, err
	}
	if !s.resident {
		if err := s.r.rebuildNovelty(ctx, round); err != nil {
			return Admission{}, err
		}
	}
	return s.r.admitStep(ctx, round, c, rd)
}

// EndRound ends the round's read stage; fused reports that the budget fuse fired.
func (s *Session) EndRound(ctx context.Context, round int) (bool, error) {
	s.enter(ctx)
	if err := s.needPlan(); err != nil {
		return false, err
	}
	s.r.update(func(p *Progress) { p.ReadsPending = 0 })
	if err := s.closeStage(ctx); err != nil {
		return false, err
	}
	s.stageDone(ctx, StageRead, round, fmt.Sprintf("%d candidates", s.r.picked(round)))
	return s.r.endRound(ctx, round), nil
}

// Verify runs one round's verification step.
func (s *Session) Verify(ctx context.Context, round int) (*Verdict, error) {
	s.enter(ctx)
	if err := s.needPlan(); err != nil {
		return nil, err
	}
	return s.r.verifyStep(ctx, round)
}

// Next routes a verdict's gaps to the next round's targets.
func (s *Session) Next(ctx context.Context, round int, v *Verdict) ([]Target, error) {
	s.enter(ctx)
	if err := s.needPlan(); err != nil {
		return nil, err
	}
	return s.r.nextStep(ctx, round, v)
}

// Synthesize runs the synthesis step. In a session of one step, a run already published returns its stored
// report, and the report is stored for the next.
func (s *Session) Synthesize(ctx context.Context, v *Verdict) (*Report, error) {
	s.enter(ctx)
	if err := s.needPlan(); err != nil {
		return nil, err
	}
	if s.resident {
		return s.r.synthesizeStep(ctx, v)
	}
	if v, ok, _ := s.r.db.Meta(ctx, "report"); ok && v != "" {
		var rep Report
		if err := json.Unmarshal([]byte(v), &rep); err == nil {
			rep.Dir = s.r.dir
			return &rep, nil
		}
	}
	rep, err := s.r.synthesizeStep(ctx, v)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, fmt.Errorf("research: encode report: %w", err)
	}
	if err := s.r.db.SetMeta(ctx, "report", string(b)); err != nil {
		return nil, err
	}
	return rep, nil
}

// stageMark is where a stage (search, read) began: kept in the run's state, so that the step that ends it —
// perhaps in another session, on another machine — logs the stage's own duration and spend.
type stageMark struct {
	Start   time.Time `json:"start"`
	Tokens  int       `json:"tokens"`
	CostUSD float64   `json:"cost_usd"`
}

func stageMarkKey(stage string, round int) string { return fmt.Sprintf("stage:%s:r%d", stage, round) }

// openStage is the stage in progress of a resident session: its context (the stage timeout, the run's time
// limit) spans the stage's steps.
type openStage struct {
	name   string
	round  int
	ctx    context.Context
	cancel context.CancelFunc
}

// beginStage emits a stage's start and marks where it began; a resident session opens the stage's context.
// A session of one step leaves the stage's deadline to its engine.
func (s *Session) beginStage(ctx context.Context, stage string, round int) error {
	start, t0, c0 := s.r.stageStart(stage, round)
	b, _ := json.Marshal(stageMark{Start: start, Tokens: t0, CostUSD: c0})
	if err := s.r.db.SetMeta(ctx, stageMarkKey(stage, round), string(b)); err != nil {
		return storeErr(ctx, err)
	}
	if s.resident {
		sctx, cancel := s.r.stageCtx(ctx, stage)
		s.stageMu.Lock()
		s.stage = &openStage{name: stage, round: round, ctx: sctx, cancel: cancel}
		s.stageMu.Unlock()
	}
	return nil
}

// stageContext is the context of the stage in progress, ctx between stages and in a session of one step.
func (s *Session) stageContext(ctx context.Context) context.Context {
	s.stageMu.Lock()
	defer s.stageMu.Unlock()
	if s.stage == nil {
		return ctx
	}
	return s.stage.ctx
}

// closeStage releases the stage's context and explains how it ended (a timeout logged, the time limit's fuse).
func (s *Session) closeStage(ctx context.Context) error {
	s.stageMu.Lock()
	st := s.stage
	s.stage = nil
	s.stageMu.Unlock()
	if st == nil {
		return nil
	}
	st.cancel()
	return s.r.stageEnded(ctx, st.ctx, st.name, st.round)
}

// releaseStage releases a stage left open (a round cut short as it began).
func (s *Session) releaseStage() {
	s.stageMu.Lock()
	defer s.stageMu.Unlock()
	if s.stage != nil {
		s.stage.cancel()
		s.stage = nil
	}
}

// stageDone logs a stage's end with the duration and spend since its mark; a stage with no mark (begun by an
// earlier version) logs none.
func (s *Session) stageDone(ctx context.Context, stage string, round int, detail string) {
	m := stageMark{Start: time.Now()}
	m.Tokens, m.CostUSD, _ = s.r.spendNow()
	if v, ok, err := s.r.db.Meta(ctx, stageMarkKey(stage, round)); err == nil && ok {
		_ = json.Unmarshal([]byte(v), &m)
	}
	s.r.stageDone(ctx, stage, round, m.Start, m.Tokens, m.CostUSD, detail)
}

// WriteReport writes a report's report.md and report.json into dir (created if needed), as a finished run
// leaves them; durable runs use it to put a report from the engine where the user asked for it.
func WriteReport(dir string, rep *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("research: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, ReportMarkdownFile), []byte(rep.Markdown)); err != nil {
		return fmt.Errorf("research: write report: %w", err)
	}
	return writeJSONAtomic(filepath.Join(dir, ReportJSONFile), rep)
}

// ListSharedRuns lists the runs a shared (PostgreSQL) state holds, oldest first, for any machine to see: one pool
// and a bounded number of queries however many runs the state holds; a run whose schema cannot be read is listed
// as unreadable with the reason.
func ListSharedRuns(ctx context.Context, stateURL string) ([]RunSummary, error) {
	listed, err := state.ListRunsWithMeta(ctx, stateURL, []string{"question", "engine", "status", "error", "cut_short", "created", "finished"})
	if err != nil {
		return nil, err
	}
	out := make([]RunSummary, 0, len(listed))
	for _, l := range listed {
		s := RunSummary{ID: l.ID, Dir: SharedLabel(stateURL)}
		if l.Err != nil {
			s.Status, s.Error = RunUnreadable, l.Err.Error()
			out = append(out, s)
			continue
		}
		get := func(k string) string { return l.Meta[k] }
		s.Question, s.Engine, s.Status, s.Error, s.CutShort = get("question"), get("engine"), get("status"), get("error"), get("cut_short")
		s.Created, _ = time.Parse(time.RFC3339Nano, get("created"))
		s.Updated = s.Created
		if f, err := time.Parse(time.RFC3339Nano, get("finished")); err == nil {
			s.Updated = f
		}
		s.Evidence = l.Accepted
		out = append(out, s)
	}
	return out, nil
}

// MarkSharedStopped records in a shared (PostgreSQL) state that a run still going was stopped (its durable
// workflow cancelled), so every listing shows it stopped; a run that has ended is left as it is and a run the
// state does not hold is ErrNotFound.
func MarkSharedStopped(ctx context.Context, stateURL, runID string) error {
	ro, err := state.OpenRunReadOnly(ctx, stateURL, runID)
	if err != nil {
		return err
	}
	ro.Close()
	db, err := state.OpenRun(ctx, stateURL, runID)
	if err != nil {
		return err
	}
	defer db.Close()
	if status, _, err := db.Meta(ctx, "status"); err != nil || status != RunRunning {
		return err
	}
	if err := db.SetMeta(ctx, "status", RunStopped); err != nil {
		return err
	}
	return db.SetMeta(ctx, "error", "cancelled on Temporal")
}

// LoadSharedReport returns the published report of a run in a shared (PostgreSQL) state.
func LoadSharedReport(ctx context.Context, stateURL, runID string) (*Report, error) {
	db, err := state.OpenRunReadOnly(ctx, stateURL, runID)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	v, ok, err := db.Meta(ctx, "report")
	if err != nil {
		return nil, err
	}
	if !ok || v == "" {
		status, _, _ := db.Meta(ctx, "status")
		return nil, fmt.Errorf("research: run %s has no report yet (status %s)", runID, status)
	}
	var rep Report
	if err := json.Unmarshal([]byte(v), &rep); err != nil {
		return nil, fmt.Errorf("research: run %s: stored report: %w", runID, err)
	}
	return &rep, nil
}
