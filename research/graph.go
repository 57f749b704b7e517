package research

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"deepresearch/internal/atomicfile"
	"deepresearch/llm"
	"deepresearch/research/state"
	"deepresearch/sources"
	"deepresearch/textrank"
)

// errFuse is returned by gated calls once the budget fuse has fired.
var errFuse = errors.New("research: budget fuse fired")

// permanentError marks a failure that a retry cannot fix (a source that could not be fetched).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// runConfig is the part of Config stored with a run, so Resume continues with the same bounds.
type runConfig struct {
	Budget          Budget `json:"budget"`
	Rounds          int    `json:"rounds"`
	MaxCandidates   int    `json:"max_candidates"`
	BatchSize       int    `json:"batch_size"`
	EarlyStopWindow int    `json:"early_stop_window"`
}

// spend is what earlier attempts of a run consumed.
type spend struct {
	Tokens  int     `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	Calls   int     `json:"calls"`
}

// docEntry is one source's text, fetched once however many sub-questions read it: the first reader fetches,
// the others wait for ready.
type docEntry struct {
	ready chan struct{}
	doc   *sources.Document
	norm  string // NormalizeQuote(doc.Text), computed once
	err   error
}

type novelty struct {
	claims    [][]string // token lists of the sub-question's claims so far
	normed    map[string]bool
	stale     int
	saturated bool
}

type runner struct {
	cfg      Config
	rc       runConfig
	id       string
	dir      string
	question string
	created  time.Time
	db       *state.DB
	fleet    *Fleet
	ledger   *llm.Ledger
	log      *slog.Logger
	events   *eventSink
	started  time.Time
	deadline time.Time
	base     spend

	mu       sync.Mutex
	prog     Progress
	cutShort []string
	fuse     bool
	plan     *Plan
	novelty  map[string]*novelty
	docs     map[string]*docEntry
	rounds   int
	synthN   int
}

func defaults(rc runConfig) runConfig {
	b := &rc.Budget
	if b.StageTimeout <= 0 {
		b.StageTimeout = 10 * time.Minute
	}
	if b.Concurrency <= 0 {
		b.Concurrency = 16
	}
	if b.MaxCalls <= 0 {
		b.MaxCalls = 1000
	}
	if b.Retries == 0 {
		b.Retries = 1
	}
	if b.SynthRetries == 0 {
		b.SynthRetries = 2
	}
	if rc.Rounds == 0 {
		rc.Rounds = 2
	}
	if rc.MaxCandidates <= 0 {
		rc.MaxCandidates = 30
	}
	if rc.BatchSize <= 0 {
		rc.BatchSize = 8
	}
	if rc.EarlyStopWindow == 0 {
		rc.EarlyStopWindow = 10
	}
	return rc
}

// merge fills zero fields of rc from stored.
func merge(rc, stored runConfig) runConfig {
	b, s := &rc.Budget, stored.Budget
	if b.MaxCostUSD == 0 {
		b.MaxCostUSD = s.MaxCostUSD
	}
	if b.MaxTokens == 0 {
		b.MaxTokens = s.MaxTokens
	}
	if b.MaxTime == 0 {
		b.MaxTime = s.MaxTime
	}
	if b.StageTimeout == 0 {
		b.StageTimeout = s.StageTimeout
	}
	if b.Concurrency == 0 {
		b.Concurrency = s.Concurrency
	}
	if b.MaxCalls == 0 {
		b.MaxCalls = s.MaxCalls
	}
	if b.Retries == 0 {
		b.Retries = s.Retries
	}
	if b.SynthRetries == 0 {
		b.SynthRetries = s.SynthRetries
	}
	if rc.Rounds == 0 {
		rc.Rounds = stored.Rounds
	}
	if rc.MaxCandidates == 0 {
		rc.MaxCandidates = stored.MaxCandidates
	}
	if rc.BatchSize == 0 {
		rc.BatchSize = stored.BatchSize
	}
	if rc.EarlyStopWindow == 0 {
		rc.EarlyStopWindow = stored.EarlyStopWindow
	}
	return rc
}

// NewRunID returns a time-ordered run id such as 20260102-150405-a1b2c3.
func NewRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

func run(ctx context.Context, cfg Config, resumeDir string) (rep *Report, err error) {
	if cfg.Roles.Planner == nil || cfg.Roles.Searcher == nil || cfg.Roles.Analyst == nil ||
		cfg.Roles.Verifier == nil || cfg.Roles.Synthesizer == nil {
		return nil, errors.New("research: Config.Roles must set all five roles")
	}
	if cfg.Fetcher == nil {
		return nil, errors.New("research: Config.Fetcher is required")
	}
	r := &runner{cfg: cfg, started: time.Now(), ledger: cfg.Ledger, log: cfg.Log,
		novelty: map[string]*novelty{}, docs: map[string]*docEntry{}}
	if r.ledger == nil {
		r.ledger = &llm.Ledger{}
	}
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	rc := runConfig{Budget: cfg.Budget, Rounds: cfg.Rounds, MaxCandidates: cfg.MaxCandidates,
		BatchSize: cfg.BatchSize, EarlyStopWindow: cfg.EarlyStopWindow}

	if resumeDir != "" {
		r.dir = resumeDir
		if _, err := os.Stat(filepath.Join(r.dir, StateFile)); err != nil {
			return nil, fmt.Errorf("research: resume %s: not a run folder (no %s)", r.dir, StateFile)
		}
	} else {
		if strings.TrimSpace(cfg.Question) == "" {
			return nil, errors.New("research: Config.Question is empty")
		}
		r.id = cfg.RunID
		if r.id == "" {
			r.id = NewRunID()
		}
		r.dir = cfg.OutDir
		if r.dir == "" {
			r.dir = filepath.Join("runs", r.id)
		}
		if _, err := os.Stat(filepath.Join(r.dir, StateFile)); err == nil {
			return nil, fmt.Errorf("research: %s already holds a run; resume it or choose another --out", r.dir)
		}
		if err := os.MkdirAll(filepath.Join(r.dir, DocsDir), 0o755); err != nil {
			return nil, fmt.Errorf("research: create run folder: %w", err)
		}
	}
	db, err := state.Open(ctx, filepath.Join(r.dir, StateFile))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r.db = db

	if resumeDir != "" {
		info, err := readInfo(ctx, db, r.dir)
		if err != nil {
			return nil, err
		}
		if info.Status == RunDone {
			return LoadReport(r.dir)
		}
		if cfg.Roles.Engine != "" && info.Engine != "" && cfg.Roles.Engine != info.Engine {
			return nil, fmt.Errorf("research: resume %s: the run was started with the %s engine, not %s",
				r.dir, info.Engine, cfg.Roles.Engine)
		}
		r.id, r.question, r.created = info.ID, info.Question, info.Created
		var stored runConfig
		if v, ok, _ := db.Meta(ctx, "config"); ok {
			_ = json.Unmarshal([]byte(v), &stored)
		}
		rc = merge(rc, stored)
		if v, ok, _ := db.Meta(ctx, "spend"); ok {
			_ = json.Unmarshal([]byte(v), &r.base)
		}
		if err := os.MkdirAll(filepath.Join(r.dir, DocsDir), 0o755); err != nil {
			return nil, fmt.Errorf("research: run folder: %w", err)
		}
	} else {
		r.question = strings.TrimSpace(cfg.Question)
		r.created = r.started
	}
	r.rc = defaults(rc)
	r.fleet = NewFleet(r.rc.Budget.Concurrency, max(r.rc.Budget.MaxCalls-r.base.Calls, 1))
	if r.rc.Budget.MaxCalls-r.base.Calls <= 0 {
		r.tripFuse("", fmt.Sprintf("fleet call cap of %d calls reached", r.rc.Budget.MaxCalls))
	}
	if r.rc.Budget.MaxTime > 0 {
		r.deadline = r.started.Add(r.rc.Budget.MaxTime)
	}
	if r.events, err = openEventSink(filepath.Join(r.dir, EventsFile), r.id, cfg.OnEvent, r.progress); err != nil {
		return nil, err
	}
	defer r.events.Close()

	if err := r.saveMeta(ctx, resumeDir == ""); err != nil {
		return nil, err
	}
	if resumeDir != "" {
		r.emit(Event{Stage: StageRun, Kind: EventResumed, Message: "resumed from " + r.dir})
	} else {
		r.emit(Event{Stage: StageRun, Kind: EventRunStart, Message: r.question})
	}
	rep, err = r.execute(ctx)
	if err != nil {
		status := RunFailed
		if ctx.Err() != nil {
			status = RunRunning // interrupted: resumable as it stands
		}
		_ = db.SetMeta(context.WithoutCancel(ctx), "status", status)
		_ = db.SetMeta(context.WithoutCancel(ctx), "error", err.Error())
		r.emit(Event{Stage: StageRun, Kind: EventRunFailed, Err: err.Error()})
		return nil, err
	}
	r.emit(Event{Stage: StageRun, Kind: EventRunDone, Message: filepath.Join(r.dir, ReportMarkdownFile)})
	return rep, nil
}

func (r *runner) saveMeta(ctx context.Context, fresh bool) error {
	set := func(k, v string) error { return r.db.SetMeta(ctx, k, v) }
	if fresh {
		cfgJSON, _ := json.Marshal(r.rc)
		settings, _ := json.Marshal(r.cfg.Settings)
		for _, kv := range [][2]string{
			{"run_id", r.id}, {"question", r.question}, {"engine", r.cfg.Roles.Engine},
			{"created", r.created.UTC().Format(time.RFC3339Nano)}, {"config", string(cfgJSON)},
			{"settings", string(settings)},
		} {
			if err := set(kv[0], kv[1]); err != nil {
				return err
			}
		}
	}
	if err := set("status", RunRunning); err != nil {
		return err
	}
	return set("error", "")
}

func (r *runner) execute(ctx context.Context) (*Report, error) {
	plan, err := r.scope(ctx)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.plan = plan
	r.prog.SubQuestions = len(plan.SubQuestions)
	r.mu.Unlock()
	if err := r.restoreProgress(ctx); err != nil {
		return nil, err
	}

	targets := make([]target, len(plan.SubQuestions))
	for i, sq := range plan.SubQuestions {
		targets[i] = target{sq: sq, queries: sq.Queries}
	}
	var verdict *Verdict
	for round := 1; ; round++ {
		r.mu.Lock()
		r.rounds, r.prog.Round = round, round
		r.mu.Unlock()
		if err := r.rebuildNovelty(ctx, round); err != nil {
			return nil, err
		}
		if r.fused() {
			break
		}
		if err := r.searchAndRead(ctx, round, targets); err != nil {
			return nil, err
		}
		if r.fused() {
			r.logf(ctx, StageVerify, round, "", "skipped", "cut short: going to synthesis with the evidence at hand", nil)
			r.snapshotEvidence(ctx, round)
			break
		}
		v, err := r.verify(ctx, round)
		if err != nil {
			return nil, err
		}
		r.snapshotEvidence(ctx, round)
		if v == nil {
			break // the verifier failed; logged and visible — synthesise with the unverified pool
		}
		verdict = v
		if v.Pass {
			break
		}
		if round > r.rc.Rounds {
			r.logf(ctx, StageVerify, round, "", "rounds exhausted",
				fmt.Sprintf("the verifier still reports %d gaps after %d extra rounds", len(v.Gaps), max(r.rc.Rounds, 0)), nil)
			break
		}
		targets = r.gapTargets(ctx, round, v)
		if len(targets) == 0 {
			break
		}
		var ids []string
		for _, t := range targets {
			ids = append(ids, t.sq.ID)
		}
		r.emit(Event{Stage: StageVerify, Kind: EventResearch, Round: round + 1,
			Message: "directed re-search for " + strings.Join(ids, ", ")})
	}
	return r.synthesize(ctx, verdict)
}

// ---- progress and events ----

func (r *runner) progress() Progress {
	r.mu.Lock()
	p := r.prog
	r.mu.Unlock()
	tokens, cost, calls := r.spendNow()
	p.Tokens, p.CostUSD, p.Calls = tokens, cost, calls
	if r.fleet != nil {
		p.InFlight = r.fleet.InFlight()
	}
	return p
}

func (r *runner) emit(e Event) {
	if r.events != nil {
		r.events.emit(e)
	}
}

func (r *runner) update(fn func(p *Progress)) {
	r.mu.Lock()
	fn(&r.prog)
	r.mu.Unlock()
}

// restoreProgress sets the counters from the tables, so a resumed run's display starts where it stopped.
func (r *runner) restoreProgress(ctx context.Context) error {
	pool, err := r.db.Evidence(ctx, "")
	if err != nil {
		return err
	}
	searches, err := r.db.StepNames(ctx, "search:")
	if err != nil {
		return err
	}
	reads, err := r.db.StepNames(ctx, "read:")
	if err != nil {
		return err
	}
	r.update(func(p *Progress) {
		p.Searches, p.SourcesRead = len(searches), len(reads)
		p.Evidence, p.Rejected = 0, 0
		for _, e := range pool {
			if e.Status == state.Accepted {
				p.Evidence++
			} else {
				p.Rejected++
			}
		}
	})
	return nil
}

// logf appends to the research log; a failure to log is itself logged, never fatal.
func (r *runner) logf(ctx context.Context, stage string, round int, sq, decision, detail string, err error, opts ...func(*state.LogEntry)) {
	e := state.LogEntry{Stage: stage, Round: round, SubQuestion: sq, Decision: decision, Detail: detail}
	if err != nil {
		e.Error = err.Error()
	}
	for _, o := range opts {
		o(&e)
	}
	if lerr := r.db.AddLog(context.WithoutCancel(ctx), e); lerr != nil {
		r.log.Error("research log", "err", lerr)
	}
	r.log.Debug("research", "stage", stage, "round", round, "sq", sq, "decision", decision, "detail", detail, "err", err)
}

// ---- spend and the fuse ----

func (r *runner) spendNow() (tokens int, cost float64, calls int) {
	u, c, _ := r.ledger.Totals()
	n := 0
	if r.fleet != nil {
		n = r.fleet.Calls()
	}
	return r.base.Tokens + u.InputTokens + u.OutputTokens, r.base.CostUSD + c, r.base.Calls + n
}

func (r *runner) saveSpend(ctx context.Context) {
	t, c, n := r.spendNow()
	b, _ := json.Marshal(spend{Tokens: t, CostUSD: c, Calls: n})
	if err := r.db.SetMeta(context.WithoutCancel(ctx), "spend", string(b)); err != nil {
		r.log.Error("save spend", "err", err)
	}
}

func (r *runner) fused() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fuse
}

// checkFuse fires the fuse when spend or time has crossed the budget; it returns errFuse once fired.
func (r *runner) checkFuse(stage string) error {
	if r.fused() {
		return errFuse
	}
	b := r.rc.Budget
	tokens, cost, _ := r.spendNow()
	var reason string
	switch {
	case b.MaxCostUSD > 0 && cost >= b.MaxCostUSD:
		reason = fmt.Sprintf("cost fuse: spent $%.4f of the $%.4f budget", cost, b.MaxCostUSD)
	case b.MaxTokens > 0 && tokens >= b.MaxTokens:
		reason = fmt.Sprintf("token fuse: used %d of the %d-token budget", tokens, b.MaxTokens)
	case !r.deadline.IsZero() && !time.Now().Before(r.deadline):
		reason = fmt.Sprintf("time limit of %s reached", b.MaxTime)
	}
	if reason == "" {
		return nil
	}
	r.tripFuse(stage, reason)
	return errFuse
}

// tripFuse records why the run is cut short (once per reason) and stops new searches and reads.
func (r *runner) tripFuse(stage, reason string) {
	r.mu.Lock()
	first := !r.fuse
	r.fuse = true
	dup := false
	for _, c := range r.cutShort {
		dup = dup || c == reason
	}
	if !dup {
		r.cutShort = append(r.cutShort, reason)
	}
	r.mu.Unlock()
	if dup || !first && stage == "" {
		return
	}
	if stage == "" {
		stage = StageSearch
	}
	if r.db != nil {
		r.logf(context.Background(), stage, r.currentRound(), "", "cut short", reason, nil)
	}
	r.emit(Event{Stage: stage, Kind: EventCutShort, Message: reason})
}

func (r *runner) currentRound() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rounds
}

func (r *runner) noteCutShort(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.cutShort {
		if c == reason {
			return
		}
	}
	r.cutShort = append(r.cutShort, reason)
}

func (r *runner) cutShortText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.cutShort, "; ")
}

// roleCall runs one role call as a fleet call, with the retry cap. Searches and reads pass a gate that checks
// the fuse inside their fleet slot, right before they start, so spend passes the fuse by at most the calls
// already in flight. A failure after the last retry is logged and emitted — never a silent skip.
func (r *runner) roleCall(ctx context.Context, stage string, round int, sq, what string, gate func() error, fn func(context.Context) error) error {
	retries := max(r.rc.Budget.Retries, 0)
	for attempt := 0; ; attempt++ {
		start := time.Now()
		err := r.fleet.DoGated(ctx, gate, fn)
		r.saveSpend(ctx)
		if err == nil {
			return nil
		}
		if errors.Is(err, errFuse) || errors.Is(err, errSaturated) {
			return err
		}
		if errors.Is(err, ErrCallCap) {
			r.tripFuse(stage, fmt.Sprintf("fleet call cap of %d calls reached", r.rc.Budget.MaxCalls))
			return errFuse
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var perm *permanentError
		if attempt >= retries || errors.As(err, &perm) {
			decision := "error"
			if perm != nil {
				decision = "fetch failed"
			}
			r.logf(ctx, stage, round, sq, decision, what, err, func(e *state.LogEntry) {
				e.Retries, e.Duration = attempt, time.Since(start)
			})
			r.emit(Event{Stage: stage, Kind: EventError, Round: round, SubQuestion: sq, Message: what, Err: err.Error()})
			return err
		}
		r.logf(ctx, stage, round, sq, "retry", what, err, func(e *state.LogEntry) { e.Retries = attempt + 1 })
		r.emit(Event{Stage: stage, Kind: EventRetry, Round: round, SubQuestion: sq, Message: what, Err: err.Error()})
	}
}

// Causes of a stage context's end, so that stageEnded reports what actually happened: ctx.Err() alone is
// DeadlineExceeded for the stage timeout, the run's time limit and any deadline of the caller's context alike.
var (
	errStageTimeout = errors.New("research: stage timeout")
	errTimeLimit    = errors.New("research: run time limit")
)

// stageCtx bounds one stage: the stage timeout and, for search and reading, the run's time limit.
func (r *runner) stageCtx(ctx context.Context, stage string) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithTimeoutCause(ctx, r.rc.Budget.StageTimeout, errStageTimeout)
	if (stage == StageSearch || stage == StageRead) && !r.deadline.IsZero() {
		dctx, dcancel := context.WithDeadlineCause(sctx, r.deadline, errTimeLimit)
		return dctx, func() { dcancel(); cancel() }
	}
	return sctx, cancel
}

// stageEnded explains a stage context that ended before the stage released it. It reads the context's cause,
// never a deadline guessed from the clock: a stage timeout is reported as one, the run's time limit trips the
// fuse, and an end that came from the caller's context (cancelled or past its own deadline, perhaps between two
// checks here) is returned as that context's error.
func (r *runner) stageEnded(ctx context.Context, sctx context.Context, stage string, round int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Read after the check above: the parent may end in between, and then the cause is the parent's.
	cause := context.Cause(sctx)
	switch {
	case errors.Is(cause, errTimeLimit):
		r.tripFuse(stage, fmt.Sprintf("time limit of %s reached", r.rc.Budget.MaxTime))
		return nil
	case errors.Is(cause, errStageTimeout):
		reason := fmt.Sprintf("%s stage of round %d timed out after %s", stage, round, r.rc.Budget.StageTimeout)
		r.logf(ctx, stage, round, "", "timeout", reason, context.DeadlineExceeded)
		r.emit(Event{Stage: stage, Kind: EventError, Round: round, Message: reason, Err: context.DeadlineExceeded.Error()})
		r.noteCutShort(reason)
		return nil
	case cause != nil && !errors.Is(cause, context.Canceled):
		// The stage context ended through its parent (the caller's deadline passed after the check above):
		// that is the parent's end, not a stage timeout.
		return cause
	}
	return nil // the stage finished and released its context
}

func (r *runner) stageStart(stage string, round int) (time.Time, int, float64) {
	r.emit(Event{Stage: stage, Kind: EventStageStart, Round: round})
	t, c, _ := r.spendNow()
	return time.Now(), t, c
}

func (r *runner) stageDone(ctx context.Context, stage string, round int, start time.Time, tokens0 int, cost0 float64, detail string) {
	t, c, _ := r.spendNow()
	r.logf(ctx, stage, round, "", "stage done", detail, nil, func(e *state.LogEntry) {
		e.Duration, e.Tokens, e.CostUSD = time.Since(start), max(t-tokens0, 0), max(c-cost0, 0)
	})
	r.emit(Event{Stage: stage, Kind: EventStageDone, Round: round, Message: detail})
}

// ---- ① scope ----

func (r *runner) scope(ctx context.Context) (*Plan, error) {
	var plan Plan
	if ok, err := r.db.Step(ctx, "scope", &plan); err != nil {
		return nil, err
	} else if ok {
		return &plan, nil
	}
	start, t0, c0 := r.stageStart(StageScope, 0)
	sctx, cancel := r.stageCtx(ctx, StageScope)
	defer cancel()
	var got *Plan
	err := r.roleCall(sctx, StageScope, 0, "", "plan", nil, func(ctx context.Context) error {
		p, err := r.cfg.Roles.Planner.Plan(ctx, r.question)
		if err != nil {
			return err
		}
		if p == nil {
			return errors.New("planner returned no plan")
		}
		got = p
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("research: scope: %w", err)
	}
	p, notes := normalizePlan(got, r.question)
	for _, n := range notes {
		r.logf(ctx, StageScope, 0, "", "plan repaired", n, nil)
	}
	if len(p.SubQuestions) == 0 {
		err := errors.New("the planner produced no sub-questions")
		r.logf(ctx, StageScope, 0, "", "error", "plan", err)
		return nil, fmt.Errorf("research: scope: %w", err)
	}
	if err := r.db.MarkStep(ctx, "scope", p); err != nil {
		return nil, err
	}
	_ = r.db.SetMeta(ctx, "language", p.Language)
	var sqs []string
	for _, sq := range p.SubQuestions {
		sqs = append(sqs, sq.ID+": "+sq.Question)
	}
	r.logf(ctx, StageScope, 0, "", "planned", strings.Join(sqs, "\n"), nil)
	r.emit(Event{Stage: StageScope, Kind: EventPlan, Plan: p, Count: len(p.SubQuestions)})
	r.stageDone(ctx, StageScope, 0, start, t0, c0, fmt.Sprintf("%d sub-questions", len(p.SubQuestions)))
	return p, nil
}

// MaxSubQuestions bounds the search fan-out of a plan.
const MaxSubQuestions = 8

// normalizePlan makes a plan usable: ids unique and present, queries present, language set, at most
// MaxSubQuestions. It returns what it changed.
func normalizePlan(in *Plan, question string) (*Plan, []string) {
	p := *in
	var notes []string
	p.Question = question
	if p.Language == "" {
		p.Language = textrank.Language(question)
	}
	seen := map[string]bool{}
	var sqs []SubQuestion
	for i, sq := range in.SubQuestions {
		sq.Question = strings.TrimSpace(sq.Question)
		if sq.Question == "" {
			notes = append(notes, fmt.Sprintf("sub-question %d has no text; dropped", i+1))
			continue
		}
		if sq.ID == "" || seen[sq.ID] {
			id := fmt.Sprintf("q%d", len(sqs)+1)
			for seen[id] {
				id += "x"
			}
			notes = append(notes, fmt.Sprintf("sub-question %q had id %q; now %s", sq.Question, sq.ID, id))
			sq.ID = id
		}
		seen[sq.ID] = true
		var qs []string
		for _, q := range sq.Queries {
			if q = strings.TrimSpace(q); q != "" {
				qs = append(qs, q)
			}
		}
		if len(qs) == 0 {
			qs = []string{sq.Question}
			notes = append(notes, fmt.Sprintf("%s had no queries; searching its text", sq.ID))
		}
		sq.Queries = qs
		sqs = append(sqs, sq)
	}
	if len(sqs) > MaxSubQuestions {
		notes = append(notes, fmt.Sprintf("%d sub-questions trimmed to %d", len(sqs), MaxSubQuestions))
		sqs = sqs[:MaxSubQuestions]
	}
	p.SubQuestions = sqs
	return &p, notes
}

// ---- ② search and ③ read ----

type target struct {
	sq      SubQuestion
	queries []string
}

func (r *runner) searchAndRead(ctx context.Context, round int, targets []target) error {
	// ② Parallel search: one searcher per targeted sub-question.
	start, t0, c0 := r.stageStart(StageSearch, round)
	sctx, cancel := r.stageCtx(ctx, StageSearch)
	found, _ := FanOut(sctx, targets, 0, func(ctx context.Context, t target) ([]Candidate, error) {
		return r.search(ctx, round, t)
	})
	cancel()
	if err := r.stageEnded(ctx, sctx, StageSearch, round); err != nil {
		return err
	}
	picked, err := r.collect(ctx, round, targets, found)
	if err != nil {
		return err
	}
	r.stageDone(ctx, StageSearch, round, start, t0, c0, fmt.Sprintf("%d sub-questions searched, %d candidates picked", len(targets), len(picked)))

	// ③ Fetch & read: one analyst per source, at most BatchSize in flight, inside the fleet bound.
	start, t0, c0 = r.stageStart(StageRead, round)
	rctx, rcancel := r.stageCtx(ctx, StageRead)
	r.update(func(p *Progress) { p.ReadsPending = len(picked) })
	FanOut(rctx, picked, r.rc.BatchSize, func(ctx context.Context, c Candidate) (struct{}, error) {
		defer r.update(func(p *Progress) { p.ReadsPending-- })
		r.read(ctx, round, c)
		return struct{}{}, nil
	})
	rcancel()
	r.update(func(p *Progress) { p.ReadsPending = 0 })
	if err := r.stageEnded(ctx, rctx, StageRead, round); err != nil {
		return err
	}
	r.stageDone(ctx, StageRead, round, start, t0, c0, fmt.Sprintf("%d candidates", len(picked)))
	return nil
}

func searchStep(round int, sq string) string { return fmt.Sprintf("search:r%d:%s", round, sq) }
func readStep(sq, u string) string           { return "read:" + sq + ":" + sources.NormalizeURL(u) }

func (r *runner) search(ctx context.Context, round int, t target) ([]Candidate, error) {
	var cands []Candidate
	name := searchStep(round, t.sq.ID)
	if ok, err := r.db.Step(ctx, name, &cands); err != nil || ok {
		return cands, err
	}
	var got []Candidate
	var partial error
	what := "search: " + strings.Join(t.queries, " | ")
	err := r.roleCall(ctx, StageSearch, round, t.sq.ID, what,
		func() error { return r.checkFuse(StageSearch) },
		func(ctx context.Context) error {
			cs, err := r.cfg.Roles.Searcher.Search(ctx, t.sq, t.queries)
			got, partial = cs, nil
			if err != nil && len(cs) > 0 && ctx.Err() == nil {
				// Some sources answered and some failed: the answers are kept, and not thrown away by a retry
				// that would repeat the searches that worked; the failure is reported below.
				partial = err
				return nil
			}
			return err
		})
	if err != nil {
		if errors.Is(err, errFuse) {
			r.emit(Event{Stage: StageSearch, Kind: EventSkip, Round: round, SubQuestion: t.sq.ID, Message: "not searched: cut short"})
		}
		return nil, err
	}
	if partial != nil {
		r.logf(ctx, StageSearch, round, t.sq.ID, "partial error",
			fmt.Sprintf("%s: kept the %d candidates found; some sources failed", what, len(got)), partial)
		r.emit(Event{Stage: StageSearch, Kind: EventError, Round: round, SubQuestion: t.sq.ID,
			Message: fmt.Sprintf("%s (kept %d candidates)", what, len(got)), Err: partial.Error()})
	}
	for _, c := range got {
		if err := state.CheckSource(c.URL); err != nil {
			r.logf(ctx, StageSearch, round, t.sq.ID, "refused", "search hit", err)
			continue
		}
		c.SubQuestion = t.sq.ID
		cands = append(cands, c)
	}
	if err := r.db.MarkStep(ctx, name, cands); err != nil {
		return nil, err
	}
	r.logf(ctx, StageSearch, round, t.sq.ID, "searched", fmt.Sprintf("%d hits for %s", len(cands), strings.Join(t.queries, " | ")), nil)
	r.update(func(p *Progress) { p.Searches++ })
	r.emit(Event{Stage: StageSearch, Kind: EventSearch, Round: round, SubQuestion: t.sq.ID, Count: len(cands),
		Message: strings.Join(t.queries, " | ")})
	return cands, nil
}

// collect is the search collector. It deduplicates each sub-question's hits by normalised URL, ranks them by
// reciprocal-rank fusion over its queries (a source found by several queries ranks higher), drops the sources
// already read for that sub-question, and picks at most MaxCandidates reads round-robin across sub-questions,
// so every sub-question gets sources. A read is a (sub-question, source) pair: a source several sub-questions
// found is analysed for each of them — the passage that best answers the question is read for the question,
// even when a facet found it too — and fetched once (see document).
func (r *runner) collect(ctx context.Context, round int, targets []target, found [][]Candidate) ([]Candidate, error) {
	name := fmt.Sprintf("pick:r%d", round)
	var picked []Candidate
	if ok, err := r.db.Step(ctx, name, &picked); err != nil {
		return nil, err
	} else if ok {
		r.update(func(p *Progress) { p.Candidates += len(picked) })
		return picked, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	type scored struct {
		c     Candidate
		score float64
	}
	perSQ := make([][]scored, len(targets))
	unique := map[string]bool{}
	for i, cs := range found {
		byURL := map[string]*scored{}
		var order []string
		rank := map[string]int{}
		for _, c := range cs {
			q := c.Query
			rank[q]++
			n := sources.NormalizeURL(c.URL)
			s, ok := byURL[n]
			if !ok {
				s = &scored{c: c}
				byURL[n] = s
				order = append(order, n)
			}
			s.score += 1 / (60 + float64(rank[q]))
		}
		for _, n := range order {
			s := byURL[n]
			if done, _ := r.db.Step(ctx, readStep(targets[i].sq.ID, s.c.URL), nil); done {
				continue
			}
			unique[n] = true
			perSQ[i] = append(perSQ[i], *s)
		}
		sort.SliceStable(perSQ[i], func(a, b int) bool { return perSQ[i][a].score > perSQ[i][b].score })
	}
	sourcesPicked := map[string]bool{}
	for depth := 0; len(picked) < r.rc.MaxCandidates; depth++ {
		any := false
		for i := range perSQ {
			if depth >= len(perSQ[i]) || len(picked) >= r.rc.MaxCandidates {
				continue
			}
			any = true
			picked = append(picked, perSQ[i][depth].c)
			sourcesPicked[sources.NormalizeURL(perSQ[i][depth].c.URL)] = true
		}
		if !any {
			break
		}
	}
	if err := r.db.MarkStep(ctx, name, picked); err != nil {
		return nil, err
	}
	total := 0
	for _, cs := range found {
		total += len(cs)
	}
	r.logf(ctx, StageSearch, round, "", "collected", fmt.Sprintf("%d hits, %d unique sources, %d reads picked of %d sources (max %d reads)",
		total, len(unique), len(picked), len(sourcesPicked), r.rc.MaxCandidates), nil)
	r.update(func(p *Progress) { p.Candidates += len(picked) })
	r.emit(Event{Stage: StageSearch, Kind: EventCandidates, Round: round, Count: len(picked)})
	return picked, nil
}

// document returns the text read for url: from this run's folder if it was fetched before, else from the
// Fetcher, stored in the folder before it is used. Each source is fetched once per run, also when several
// sub-questions read it at the same time; a failed fetch is remembered (the reads that wanted it report it),
// except when it failed because its context ended.
func (r *runner) document(ctx context.Context, rawURL string) (*docEntry, error) {
	n := sources.NormalizeURL(rawURL)
	r.mu.Lock()
	d, ok := r.docs[n]
	if !ok {
		d = &docEntry{ready: make(chan struct{})}
		r.docs[n] = d
	}
	r.mu.Unlock()
	if ok {
		select {
		case <-d.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if d.err != nil && isContextErr(d.err) && ctx.Err() == nil {
			return r.document(ctx, rawURL) // the fetcher's context ended, not ours: fetch it now
		}
		if d.err != nil {
			return nil, d.err
		}
		return d, nil
	}
	doc, err := r.load(ctx, rawURL)
	if err != nil {
		if isContextErr(err) {
			r.mu.Lock()
			delete(r.docs, n)
			r.mu.Unlock()
		}
		d.err = err
		close(d.ready)
		return nil, err
	}
	d.doc, d.norm = doc, NormalizeQuote(doc.Text)
	close(d.ready)
	return d, nil
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// load reads url's text from the run folder, or fetches and stores it.
func (r *runner) load(ctx context.Context, rawURL string) (*sources.Document, error) {
	if meta, err := r.db.Document(ctx, rawURL); err == nil {
		text, err := os.ReadFile(filepath.Join(r.dir, meta.Path))
		if err == nil && sources.HashText(string(text)) == meta.Hash {
			return &sources.Document{URL: meta.URL, FinalURL: meta.FinalURL, Title: meta.Title,
				Text: string(text), ContentType: meta.ContentType, Hash: meta.Hash, FetchedAt: meta.FetchedAt,
				Truncated: meta.Truncated}, nil
		}
	}
	doc, err := r.cfg.Fetcher.Fetch(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(doc.Text) == "" {
		return nil, fmt.Errorf("fetch %s: the document has no text", rawURL)
	}
	doc.Hash = sources.HashText(doc.Text)
	rel := filepath.Join(DocsDir, doc.Hash+".txt")
	if err := writeFileAtomic(filepath.Join(r.dir, rel), []byte(doc.Text)); err != nil {
		return nil, fmt.Errorf("store %s: %w", rawURL, err)
	}
	if err := r.db.PutDocument(ctx, state.Document{URL: rawURL, FinalURL: doc.FinalURL, Title: doc.Title,
		Hash: doc.Hash, Path: rel, ContentType: doc.ContentType, Truncated: doc.Truncated,
		FetchedAt: doc.FetchedAt}); err != nil {
		return nil, err
	}
	return doc, nil
}

// storedDocument returns the stored text an evidence source names — the document fetched under that URL, or,
// for another line anchor into the same file, the text read from that file (see pickDocument) — without ever
// fetching: the integrity check verifies quotes against what the run read.
func (r *runner) storedDocument(ctx context.Context, source string) (*docEntry, error) {
	meta, err := r.db.Document(ctx, source)
	if errors.Is(err, state.ErrNotFound) {
		docs, lerr := r.db.Documents(ctx)
		if lerr != nil {
			return nil, lerr
		}
		if d := pickDocument(docs, source); d != nil {
			meta, err = d, nil
		}
	}
	if err != nil {
		return nil, err
	}
	n := sources.NormalizeURL(meta.URL)
	r.mu.Lock()
	d, ok := r.docs[n]
	r.mu.Unlock()
	if ok {
		select {
		case <-d.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if d.err == nil {
			return d, nil
		}
	}
	text, err := os.ReadFile(filepath.Join(r.dir, meta.Path))
	if err != nil {
		return nil, fmt.Errorf("stored text of %s: %w", meta.URL, err)
	}
	if sources.HashText(string(text)) != meta.Hash {
		return nil, fmt.Errorf("stored text of %s was modified after it was read", meta.URL)
	}
	d = &docEntry{ready: make(chan struct{}), norm: NormalizeQuote(string(text)),
		doc: &sources.Document{URL: meta.URL, FinalURL: meta.FinalURL, Title: meta.Title, Text: string(text),
			ContentType: meta.ContentType, Hash: meta.Hash, FetchedAt: meta.FetchedAt, Truncated: meta.Truncated}}
	close(d.ready)
	r.mu.Lock()
	if old, ok := r.docs[n]; !ok || old.err != nil {
		r.docs[n] = d
	}
	r.mu.Unlock()
	return d, nil
}

func (r *runner) saturated(sq string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	nv := r.novelty[sq]
	return nv != nil && nv.saturated
}

func (r *runner) read(ctx context.Context, round int, c Candidate) {
	name := readStep(c.SubQuestion, c.URL)
	if done, _ := r.db.Step(ctx, name, nil); done {
		return
	}
	if r.saturated(c.SubQuestion) {
		r.emit(Event{Stage: StageRead, Kind: EventSkip, Round: round, SubQuestion: c.SubQuestion, URL: c.URL,
			Message: "not read: early stop"})
		r.logf(ctx, StageRead, round, c.SubQuestion, "skipped", "early stop: "+c.URL, nil)
		return
	}
	if ctx.Err() != nil {
		return
	}
	sq := r.subQuestion(c.SubQuestion)
	var doc *docEntry
	var items []Evidence
	start := time.Now()
	gate := func() error {
		if err := r.checkFuse(StageRead); err != nil {
			return err
		}
		if r.saturated(c.SubQuestion) {
			return errSaturated
		}
		return nil
	}
	err := r.roleCall(ctx, StageRead, round, c.SubQuestion, "read "+c.URL, gate, func(ctx context.Context) error {
		var err error
		if doc == nil {
			if doc, err = r.document(ctx, c.URL); err != nil {
				return &permanentError{err}
			}
		}
		items, err = r.cfg.Roles.Analyst.Analyze(ctx, sq, doc.doc)
		return err
	})
	switch {
	case errors.Is(err, errFuse):
		r.emit(Event{Stage: StageRead, Kind: EventSkip, Round: round, SubQuestion: c.SubQuestion, URL: c.URL,
			Message: "not read: cut short"})
		return
	case errors.Is(err, errSaturated):
		r.emit(Event{Stage: StageRead, Kind: EventSkip, Round: round, SubQuestion: c.SubQuestion, URL: c.URL,
			Message: "not read: early stop"})
		r.logf(ctx, StageRead, round, c.SubQuestion, "skipped", "early stop: "+c.URL, nil)
		return
	case err != nil:
		return // logged and emitted by roleCall, or the context ended
	}
	accepted := r.admit(ctx, round, c, doc, items)
	if err := r.db.MarkStep(ctx, name, map[string]int{"evidence": accepted, "items": len(items)}); err != nil {
		r.log.Error("mark read", "err", err)
	}
	r.logf(ctx, StageRead, round, c.SubQuestion, "read", fmt.Sprintf("%s: %d items, %d accepted", c.URL, len(items), accepted), nil,
		func(e *state.LogEntry) { e.Duration = time.Since(start) })
	r.update(func(p *Progress) { p.SourcesRead++ })
	r.emit(Event{Stage: StageRead, Kind: EventRead, Round: round, SubQuestion: c.SubQuestion, URL: c.URL, Count: accepted})
}

var errSaturated = errors.New("early stop")

func (r *runner) subQuestion(id string) SubQuestion {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sq := range r.plan.SubQuestions {
		if sq.ID == id {
			return sq
		}
	}
	return SubQuestion{ID: id}
}

// admit grounds each item against the text that was read and writes the grounded ones to the pool.
func (r *runner) admit(ctx context.Context, round int, c Candidate, doc *docEntry, items []Evidence) int {
	accepted := 0
	var docs []state.Document // the run's fetched documents, listed once an analyst anchor needs them
	for _, it := range items {
		it.SubQuestion = c.SubQuestion
		// The evidence points at the text that was read and checked: the candidate's URL, or the analyst's own
		// line anchor into the same file when the quote stands on those lines and the anchor resolves to this
		// very text (so the integrity check and LoadSourceText find it).
		if !r.keepAnchor(ctx, c, doc, it, &docs) {
			it.Source = c.URL
		}
		if it.Title == "" {
			it.Title = doc.doc.Title
		}
		if it.Title == "" {
			it.Title = c.Title
		}
		it.Round = round
		it.Status = StatusAccepted
		it.Reason = ""
		if !groundedIn(doc.norm, it.Quote) {
			r.logf(ctx, StageRead, round, c.SubQuestion, "ungrounded",
				fmt.Sprintf("quote not found verbatim in %s: %q", c.URL, clipText(it.Quote, 200)), nil)
			cp := it
			r.emit(Event{Stage: StageRead, Kind: EventUngrounded, Round: round, SubQuestion: c.SubQuestion, URL: c.URL,
				Evidence: &cp, Message: "quote not found in the source text"})
			continue
		}
		id, added, err := r.db.AddEvidence(ctx, toState(it))
		if err != nil {
			r.logf(ctx, StageRead, round, c.SubQuestion, "refused", c.URL, err)
			r.emit(Event{Stage: StageRead, Kind: EventError, Round: round, SubQuestion: c.SubQuestion, URL: c.URL, Err: err.Error()})
			continue
		}
		if !added {
			continue // the same quote from the same source is already in the pool
		}
		it.ID = id
		accepted++
		r.update(func(p *Progress) { p.Evidence++ })
		cp := it
		r.emit(Event{Stage: StageRead, Kind: EventEvidence, Round: round, SubQuestion: c.SubQuestion, URL: c.URL, Evidence: &cp})
		if r.observeClaim(c.SubQuestion, it.Claim) {
			r.logf(ctx, StageRead, round, c.SubQuestion, "early stop",
				fmt.Sprintf("the last %d new items added no new claim", r.rc.EarlyStopWindow), nil)
			_ = r.db.MarkStep(ctx, fmt.Sprintf("earlystop:r%d:%s", round, c.SubQuestion), nil)
			r.emit(Event{Stage: StageRead, Kind: EventEarlyStop, Round: round, SubQuestion: c.SubQuestion,
				Message: fmt.Sprintf("the last %d new items added no new claim", r.rc.EarlyStopWindow)})
		}
	}
	return accepted
}

// keepAnchor reports whether an evidence item's own source may stand: a line anchor into the document that was
// read (same URL without fragment), on whose lines the quote lies, and which resolves among the run's documents
// to a text identical to the one read.
func (r *runner) keepAnchor(ctx context.Context, c Candidate, doc *docEntry, it Evidence, docs *[]state.Document) bool {
	src := strings.TrimSpace(it.Source)
	if src == "" || sources.NormalizeURL(src) == sources.NormalizeURL(c.URL) {
		return false
	}
	if !sameDocument(src, c.URL) || state.CheckSource(src) != nil || !quoteInLines(doc.doc.Text, src, it.Quote) {
		return false
	}
	if *docs == nil {
		list, err := r.db.Documents(ctx)
		if err != nil {
			return false
		}
		*docs = list
	}
	d := pickDocument(*docs, src)
	return d != nil && d.Hash == doc.doc.Hash
}

// nearDuplicateThreshold is the token-set Jaccard similarity above which two claims say the same thing.
const nearDuplicateThreshold = 0.8

func (nv *novelty) isNew(claim string) (bool, []string) {
	key := strings.ToLower(textrank.NormalizeSpace(claim))
	toks := textrank.Tokenize(claim)
	if nv.normed[key] {
		return false, toks
	}
	for _, c := range nv.claims {
		if textrank.Jaccard(c, toks) >= nearDuplicateThreshold {
			return false, toks
		}
	}
	return true, toks
}

func (nv *novelty) add(claim string, toks []string) {
	nv.claims = append(nv.claims, toks)
	nv.normed[strings.ToLower(textrank.NormalizeSpace(claim))] = true
}

// observeClaim updates the sub-question's novelty and reports whether it has just become saturated.
func (r *runner) observeClaim(sq, claim string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	nv := r.novelty[sq]
	if nv == nil {
		nv = &novelty{normed: map[string]bool{}}
		r.novelty[sq] = nv
	}
	isNew, toks := nv.isNew(claim)
	nv.add(claim, toks)
	if isNew {
		nv.stale = 0
		return false
	}
	nv.stale++
	if r.rc.EarlyStopWindow > 0 && nv.stale >= r.rc.EarlyStopWindow && !nv.saturated {
		nv.saturated = true
		return true
	}
	return false
}

// rebuildNovelty recomputes early-stop state at the start of a round from the pool: earlier rounds' claims are
// the baseline, and this round's items (present when resuming mid-round) are replayed in order.
func (r *runner) rebuildNovelty(ctx context.Context, round int) error {
	pool, err := r.db.Evidence(ctx, "")
	if err != nil {
		return err
	}
	fresh := map[string]*novelty{}
	for _, e := range pool {
		nv := fresh[e.SubQuestion]
		if nv == nil {
			nv = &novelty{normed: map[string]bool{}}
			fresh[e.SubQuestion] = nv
		}
		isNew, toks := nv.isNew(e.Claim)
		nv.add(e.Claim, toks)
		if e.Round < round {
			continue
		}
		if isNew {
			nv.stale = 0
		} else {
			nv.stale++
		}
	}
	for sq, nv := range fresh {
		done, _ := r.db.Step(ctx, fmt.Sprintf("earlystop:r%d:%s", round, sq), nil)
		nv.saturated = done || (r.rc.EarlyStopWindow > 0 && nv.stale >= r.rc.EarlyStopWindow)
	}
	r.mu.Lock()
	r.novelty = fresh
	r.mu.Unlock()
	return nil
}

// ---- ④ verify ----

func (r *runner) verify(ctx context.Context, round int) (*Verdict, error) {
	name := fmt.Sprintf("verify:r%d", round)
	var v Verdict
	if ok, err := r.db.Step(ctx, name, &v); err != nil {
		return nil, err
	} else if ok {
		return &v, nil
	}
	start, t0, c0 := r.stageStart(StageVerify, round)
	sctx, cancel := r.stageCtx(ctx, StageVerify)
	defer cancel()
	pool, err := r.pool(ctx, StatusAccepted)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	plan := r.plan
	r.mu.Unlock()
	var got *Verdict
	err = r.roleCall(sctx, StageVerify, round, "", "verify", nil, func(ctx context.Context) error {
		v, err := r.cfg.Roles.Verifier.Verify(ctx, plan, pool)
		if err == nil && v == nil {
			err = errors.New("verifier returned no verdict")
		}
		got = v
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, errFuse) {
			return nil, nil
		}
		reason := fmt.Sprintf("verification failed in round %d: %v", round, err)
		r.noteCutShort(reason)
		_ = r.stageEnded(ctx, sctx, StageVerify, round)
		return nil, nil
	}
	// Apply rejections: only ids in the accepted pool; anything else is logged, not guessed at.
	inPool := map[string]bool{}
	for _, e := range pool {
		inPool[e.ID] = true
	}
	rejected := 0
	for _, rj := range got.Rejected {
		if !inPool[rj.EvidenceID] {
			r.logf(ctx, StageVerify, round, "", "ignored", fmt.Sprintf("rejection of unknown evidence %q: %s", rj.EvidenceID, rj.Reason), nil)
			continue
		}
		reason := strings.TrimSpace(rj.Reason)
		if reason == "" {
			reason = "rejected by the verifier"
		}
		if err := r.db.SetEvidenceStatus(ctx, rj.EvidenceID, StatusRejected, reason); err != nil {
			return nil, err
		}
		inPool[rj.EvidenceID] = false
		rejected++
		r.logf(ctx, StageVerify, round, "", "rejected", rj.EvidenceID+": "+reason, nil)
	}
	r.update(func(p *Progress) { p.Evidence -= rejected; p.Rejected += rejected })
	if err := r.db.MarkStep(ctx, name, got); err != nil {
		return nil, err
	}
	if err := writeJSONAtomic(filepath.Join(r.dir, fmt.Sprintf("verdict.round%d.json", round)), got); err != nil {
		return nil, err
	}
	var gaps []string
	for _, g := range got.Gaps {
		gaps = append(gaps, g.SubQuestion+": "+g.Missing)
	}
	decision := "pass"
	if !got.Pass {
		decision = "gaps"
	}
	r.logf(ctx, StageVerify, round, "", decision, fmt.Sprintf("%d rejected, %d conflicts. %s", rejected, len(got.Conflicts), got.Notes), nil,
		func(e *state.LogEntry) { e.Gaps = gaps })
	r.emit(Event{Stage: StageVerify, Kind: EventVerdict, Round: round, Verdict: got, Count: len(got.Gaps)})
	r.stageDone(ctx, StageVerify, round, start, t0, c0, decision)
	return got, nil
}

// gapTargets routes the verifier's gaps back to search: only the sub-questions named, with the suggested
// queries.
func (r *runner) gapTargets(ctx context.Context, round int, v *Verdict) []target {
	r.mu.Lock()
	plan := r.plan
	r.mu.Unlock()
	byID := map[string]int{}
	for i, sq := range plan.SubQuestions {
		byID[sq.ID] = i
		byID[strings.ToLower(strings.TrimSpace(sq.Question))] = i
	}
	var out []target
	at := map[int]int{}
	for _, g := range v.Gaps {
		i, ok := byID[strings.TrimSpace(g.SubQuestion)]
		if !ok {
			i, ok = byID[strings.ToLower(strings.TrimSpace(g.SubQuestion))]
		}
		if !ok {
			r.logf(ctx, StageVerify, round, "", "ignored", fmt.Sprintf("gap for unknown sub-question %q: %s", g.SubQuestion, g.Missing), nil)
			continue
		}
		var qs []string
		for _, q := range g.Queries {
			if q = strings.TrimSpace(q); q != "" {
				qs = append(qs, q)
			}
		}
		if len(qs) == 0 && strings.TrimSpace(g.Missing) != "" {
			qs = []string{strings.TrimSpace(g.Missing)}
		}
		if len(qs) == 0 {
			qs = plan.SubQuestions[i].Queries
		}
		if j, ok := at[i]; ok {
			out[j].queries = append(out[j].queries, qs...)
			continue
		}
		at[i] = len(out)
		out = append(out, target{sq: plan.SubQuestions[i], queries: qs})
	}
	for _, t := range out {
		r.logf(ctx, StageVerify, round, t.sq.ID, "re-search", strings.Join(t.queries, " | "), nil)
	}
	return out
}

func (r *runner) pool(ctx context.Context, status string) ([]Evidence, error) {
	rows, err := r.db.Evidence(ctx, status)
	if err != nil {
		return nil, err
	}
	out := make([]Evidence, len(rows))
	for i, e := range rows {
		out[i] = fromState(e)
	}
	return out, nil
}

func (r *runner) snapshotEvidence(ctx context.Context, round int) {
	pool, err := r.pool(ctx, "")
	if err != nil {
		r.log.Error("snapshot", "err", err)
		return
	}
	if pool == nil {
		pool = []Evidence{}
	}
	if err := writeJSONAtomic(filepath.Join(r.dir, fmt.Sprintf("evidence.round%d.json", round)), pool); err != nil {
		r.log.Error("snapshot", "err", err)
	}
}

func toState(e Evidence) state.Evidence {
	return state.Evidence{ID: e.ID, SubQuestion: e.SubQuestion, Claim: e.Claim, Quote: e.Quote, Source: e.Source,
		Title: e.Title, Confidence: e.Confidence, Round: e.Round, Status: e.Status, Reason: e.Reason}
}

func fromState(e state.Evidence) Evidence {
	return Evidence{ID: e.ID, SubQuestion: e.SubQuestion, Claim: e.Claim, Quote: e.Quote, Source: e.Source,
		Title: e.Title, Confidence: e.Confidence, Round: e.Round, Status: e.Status, Reason: e.Reason}
}

// ---- files ----

// writeFileAtomic replaces a run file whole, so a reader — or a resume after kill -9 — never sees half of one.
func writeFileAtomic(path string, data []byte) error { return atomicfile.Write(path, data, 0o644) }

func writeJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := writeFileAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}
