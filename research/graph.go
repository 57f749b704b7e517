package research

import (
	"cmp"
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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deepresearch/deepresearch/base/redact"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources"
)

// errFuse is returned by gated calls once the budget fuse has fired.
var errFuse = errors.New("research: budget fuse fired")

// ErrStateStore marks a step that failed because the run's state could not be read or written (a database
// outage, a full disk). Such a step is run again — by the durable engine's retry, or by resuming a local run —
// and never taken for a source that cannot be read or a search that found nothing: what it would have added
// is not lost, and the failure is said (StateStoreRetrying).
var ErrStateStore = errors.New("research: state store unreachable")

// StateStoreRetrying is the progress message of a step that failed on the state store and is tried again.
const StateStoreRetrying = "state store unreachable, retrying"

// storeErr marks err, a failure of the run's state, with ErrStateStore (nil stays nil). A failure while ctx has
// ended is the context's end (a stage timeout, a cancellation), not the store's; a driver's own timeout while
// ctx is live is the store's.
func storeErr(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, ErrStateStore) || ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("%w: %w", ErrStateStore, err)
}

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
	Unjudged        string `json:"unjudged,omitempty"`
	// Depth is the depth asked for (DepthAuto: the planner triages); Length and Instructions steer the planner
	// and the synthesizer.
	Depth        string `json:"depth,omitempty"`
	Length       string `json:"length,omitempty"`
	Instructions string `json:"instructions,omitempty"`
}

// spend is what earlier attempts of a run consumed.
type spend struct {
	Tokens  int     `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	Calls   int     `json:"calls"`
	// Estimated is the part of Tokens counted with a tokenizer (llm.Usage.Estimated), so that a resumed run's
	// report still says its figure was estimated.
	Estimated int `json:"tokens_estimated,omitempty"`
}

// docEntry is one source's text, fetched once however many sub-questions read it: the first reader fetches,
// the others wait for ready.
type docEntry struct {
	ready chan struct{}
	doc   *sources.Document
	norm  string // NormalizeQuote(doc.Text), computed once
	idx   *publish.NormIndex
	err   error
}

type novelty struct {
	claims    []lexical.TokenSet // token sets of the sub-question's claims so far
	normed    map[string]bool
	stale     int
	saturated bool
}

type runner struct {
	cfg      Config
	scrub    *redact.Scrubber // applied to every stored or emitted message
	rc       runConfig
	id       string
	dir      string
	question string
	created  time.Time
	db       *state.DB
	// given is the run's configuration as asked for, before the depth's limits and the defaults fill it: once
	// the scope has settled the depth, rc is recomputed from it (applyDepth).
	given  runConfig
	depth  DepthSettings
	fleet  *Fleet
	ledger *llm.Ledger
	// ceiling bounds the run's limits in this process (SessionConfig.Ceiling); zero for a run of its own.
	ceiling Budget
	log     *slog.Logger
	events  *eventSink
	// stopped is closed when the caller cancels the run: from then on the errors of the steps it interrupts are
	// the cancellation itself, reported once by run_stopped.
	stopped  <-chan struct{}
	started  time.Time
	deadline time.Time
	base     spend
	// spendKey, for one step of a durable run, names this attempt's row in the run's spend ledger; base is then
	// every other attempt's spend.
	spendKey string
	// eventFile, for a step of a SharedRun, is the run's events file, shared by its steps on this process.
	eventFile *eventFile
	// spendSaves coalesces the writes of the running spend.
	spendSaves spendSaves
	// reserved counts the calls this attempt reserved in the run's shared ledger.
	reserved atomic.Int64

	mu       sync.Mutex
	prog     Progress
	cutShort []string
	fuse     bool
	plan     *Plan
	novelty  map[string]*novelty
	docs     map[string]*docEntry
	rounds   int
	synthN   int
	// earlier is the run this one follows up (Config.From), loaded once.
	earlier *earlierRun
}

// Defaults are the values the graph uses for what a Config leaves zero.
type Defaults struct {
	Rounds, MaxCandidates, BatchSize, Concurrency, MaxCalls int
	StageTimeout                                            time.Duration
}

// DefaultSettings returns the graph's defaults, for displays of the effective configuration.
func DefaultSettings() Defaults {
	rc := defaults(runConfig{})
	return Defaults{Rounds: rc.Rounds, MaxCandidates: rc.MaxCandidates, BatchSize: rc.BatchSize,
		Concurrency: rc.Budget.Concurrency, MaxCalls: rc.Budget.MaxCalls, StageTimeout: rc.Budget.StageTimeout}
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
		b.SynthRetries = 1
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
	b.MaxCostUSD = cmp.Or(b.MaxCostUSD, s.MaxCostUSD)
	b.MaxTokens = cmp.Or(b.MaxTokens, s.MaxTokens)
	b.MaxTime = cmp.Or(b.MaxTime, s.MaxTime)
	b.StageTimeout = cmp.Or(b.StageTimeout, s.StageTimeout)
	b.Concurrency = cmp.Or(b.Concurrency, s.Concurrency)
	b.MaxCalls = cmp.Or(b.MaxCalls, s.MaxCalls)
	b.Retries = cmp.Or(b.Retries, s.Retries)
	b.SynthRetries = cmp.Or(b.SynthRetries, s.SynthRetries)
	rc.Rounds = cmp.Or(rc.Rounds, stored.Rounds)
	rc.MaxCandidates = cmp.Or(rc.MaxCandidates, stored.MaxCandidates)
	rc.BatchSize = cmp.Or(rc.BatchSize, stored.BatchSize)
	rc.EarlyStopWindow = cmp.Or(rc.EarlyStopWindow, stored.EarlyStopWindow)
	rc.Unjudged = cmp.Or(rc.Unjudged, stored.Unjudged)
	rc.Depth = cmp.Or(rc.Depth, stored.Depth)
	rc.Length = cmp.Or(rc.Length, stored.Length)
	rc.Instructions = cmp.Or(rc.Instructions, stored.Instructions)
	return rc
}

// runIDTimeLayout is the time at the start of a run id.
const runIDTimeLayout = "20060102-150405"

// NewRunID returns a time-ordered run id such as 20260102-150405-a1b2c3.
func NewRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().Format(runIDTimeLayout) + "-" + hex.EncodeToString(b[:])
}

// RunIDTime is the time a NewRunID id was made at (to the second, local time), and whether id is one.
func RunIDTime(id string) (time.Time, bool) {
	if len(id) < len(runIDTimeLayout)+2 || id[len(runIDTimeLayout)] != '-' {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation(runIDTimeLayout, id[:len(runIDTimeLayout)], time.Local)
	return t, err == nil
}

func run(ctx context.Context, cfg Config, resumeDir string) (rep *Report, err error) {
	if cfg.Roles.Planner == nil || cfg.Roles.Searcher == nil || cfg.Roles.Analyst == nil ||
		cfg.Roles.Verifier == nil || cfg.Roles.Synthesizer == nil {
		return nil, errors.New("research: Config.Roles must set all five roles")
	}
	if cfg.Fetcher == nil {
		return nil, errors.New("research: Config.Fetcher is required")
	}
	if err := cfg.Budget.Validate(); err != nil {
		return nil, fmt.Errorf("research: %w", err)
	}
	if err := CheckUnjudged(cfg.Unjudged); err != nil {
		return nil, fmt.Errorf("research: %w", err)
	}
	r := &runner{cfg: cfg, scrub: redact.New(cfg.Secrets...), started: time.Now(), ledger: cfg.Ledger, log: cfg.Log,
		novelty: map[string]*novelty{}, docs: map[string]*docEntry{}}
	if r.ledger == nil {
		r.ledger = &llm.Ledger{}
	}
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := CheckDepth(cfg.Depth); err != nil {
		return nil, fmt.Errorf("research: %w", err)
	}
	if err := CheckLength(cfg.Length); err != nil {
		return nil, fmt.Errorf("research: %w", err)
	}
	if err := CheckInstructions(cfg.Instructions); err != nil {
		return nil, fmt.Errorf("research: %w", err)
	}
	rc := cfg.runConfig()

	if resumeDir != "" && cfg.From != "" {
		return nil, errFollowResume
	}
	if resumeDir == "" {
		if err := r.followStart(ctx); err != nil {
			return nil, err // nothing created
		}
	}
	if resumeDir != "" {
		r.dir = resumeDir
		if _, err := os.Stat(filepath.Join(r.dir, StateFile)); err != nil {
			return nil, fmt.Errorf("research: resume %s: not a run folder (no %s)", r.dir, StateFile)
		}
	} else if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("research: cancelled before the run began: %w", err) // no folder left behind
	} else if err := r.newRunFolder(); err != nil {
		return nil, err
	}
	// Opening the state and recording what the run is are not cut by a cancellation: a folder cancelled
	// between them would hold a state with no run in it, listed as unreadable. Cancelled just after, the run
	// is stopped and resumable.
	setup := context.WithoutCancel(ctx)
	db, err := state.Open(setup, filepath.Join(r.dir, StateFile))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r.db = db

	if resumeDir != "" {
		var done bool
		if rc, done, err = r.loadResumed(ctx, rc); err != nil {
			return nil, err
		}
		if done {
			rep, _, err := RestoreReport(r.dir)
			return rep, err
		}
	} else {
		r.question = strings.TrimSpace(cfg.Question)
		r.created = r.started
	}
	r.setConfig(rc)
	if err := r.arm(r.started); err != nil {
		return nil, err
	}
	defer r.events.Close()

	if err := r.saveMeta(setup, resumeDir == ""); err != nil {
		return nil, err
	}
	if err := r.saveFollows(setup); err != nil {
		return nil, err
	}
	if resumeDir != "" {
		r.emit(Event{Stage: StageRun, Kind: EventResumed, Message: "resumed from " + r.dir})
	} else {
		r.emit(Event{Stage: StageRun, Kind: EventRunStart, Message: r.question})
	}
	r.stopped = ctx.Done()
	rep, err = r.execute(ctx)
	if err != nil {
		status, kind := RunFailed, EventRunFailed
		if ctx.Err() != nil {
			status, kind = RunStopped, EventRunStopped // cancelled: resumable as it stands
		}
		err = scrubbedError{msg: r.scrub.Scrub(err.Error()), err: err}
		_ = db.SetMeta(context.WithoutCancel(ctx), "status", status)
		_ = db.SetMeta(context.WithoutCancel(ctx), "error", err.Error())
		r.emit(Event{Stage: StageRun, Kind: kind, Err: err.Error()})
		return nil, err
	}
	r.emit(Event{Stage: StageRun, Kind: EventRunDone, Message: filepath.Join(r.dir, ReportMarkdownFile)})
	return rep, nil
}

// newRunFolder sets up a fresh run: it checks the question, names the run and creates its folder, refusing one
// that already holds a run.
func (r *runner) newRunFolder() error {
	cfg := r.cfg
	if err := CheckQuestion(cfg.Question); err != nil {
		return fmt.Errorf("research: %w", err)
	}
	r.id = cfg.RunID
	if r.id == "" && cfg.OutDir != "" {
		r.id = filepath.Base(filepath.Clean(cfg.OutDir)) // so show <id> and the viewer find it by its folder
	}
	if r.id == "" || r.id == "." || r.id == string(filepath.Separator) {
		r.id = NewRunID()
	}
	r.dir = cfg.OutDir
	if r.dir == "" {
		r.dir = filepath.Join("runs", r.id)
	}
	if _, err := os.Stat(filepath.Join(r.dir, StateFile)); err == nil {
		return fmt.Errorf("research: %s already holds a run; resume it or choose another --out", r.dir)
	}
	if err := makeRunFolder(r.dir); err != nil {
		return fmt.Errorf("research: create run folder: %w", err)
	}
	return nil
}

// loadResumed reads what an interrupted run recorded — its id, question, engine, settings and spend so far — and
// returns the caller's settings merged over the stored ones. done reports a run that already finished.
func (r *runner) loadResumed(ctx context.Context, rc runConfig) (_ runConfig, done bool, _ error) {
	info, err := readInfo(ctx, r.db, r.dir)
	if err != nil {
		return rc, false, err
	}
	if info.Status == RunDone {
		return rc, true, nil
	}
	if engine := r.cfg.Roles.Engine; engine != "" && info.Engine != "" && engine != info.Engine {
		return rc, false, fmt.Errorf("research: resume %s: the run was started with the %s engine, not %s",
			r.dir, info.Engine, engine)
	}
	r.id, r.question, r.created = info.ID, info.Question, info.Created
	rc = merge(rc, storedConfig(ctx, r.db))
	if v, ok, _ := r.db.Meta(ctx, "spend"); ok {
		_ = json.Unmarshal([]byte(v), &r.base)
	}
	if err := makeRunFolder(r.dir); err != nil {
		return rc, false, fmt.Errorf("research: run folder: %w", err)
	}
	return rc, false, nil
}

func (r *runner) saveMeta(ctx context.Context, fresh bool) error {
	b := r.db.Batch() // one commit for all of them
	if fresh {
		cfgJSON, _ := json.Marshal(r.rc)
		given, _ := json.Marshal(r.given)
		b.SetMeta("given", string(given))
		settings, _ := json.Marshal(r.cfg.Settings)
		for _, kv := range [][2]string{
			{"run_id", r.id}, {"question", r.question}, {"engine", r.cfg.Roles.Engine},
			{"created", r.created.UTC().Format(time.RFC3339Nano)}, {"config", string(cfgJSON)},
			{"settings", string(settings)},
		} {
			b.SetMeta(kv[0], kv[1])
		}
	}
	b.SetMeta("status", RunRunning)
	b.SetMeta("error", "")
	return b.Commit(ctx)
}

// scrubbedError shows a run's error with its secrets removed while errors.Is and errors.As still see the cause.
type scrubbedError struct {
	msg string
	err error
}

func (e scrubbedError) Error() string { return e.msg }
func (e scrubbedError) Unwrap() error { return e.err }
