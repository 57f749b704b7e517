package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/deepresearch/deepresearch/llm"

	"github.com/deepresearch/deepresearch/research/state"
)

// ---- spend and the fuse ----

func (r *runner) spendNow() (tokens int, cost float64, calls int) {
	u, c, _ := r.ledger.Totals()
	n := 0
	if r.fleet != nil {
		n = r.fleet.Calls()
	}
	return r.base.Tokens + u.InputTokens + u.OutputTokens, r.base.CostUSD + c, r.base.Calls + n
}

// estimatedTokens returns how many of the run's tokens were counted with a tokenizer because the server's
// answers carried no usage (llm.Usage.Estimated): this process's, and those of the spend a resume restored or
// the other attempts of a durable run left (each attempt's row keeps its estimated part).
func (r *runner) estimatedTokens() int {
	n := r.base.Estimated
	for _, e := range r.ledger.Entries() {
		if e.Usage.Estimated {
			n += e.Usage.PromptTokens() + e.Usage.OutputTokens
		}
	}
	return n
}

// spendSaves coalesces the saves of the running spend: a save asked for while another is being written waits
// for that write and at most one more, which covers every save asked for meanwhile, instead of writing its own.
// Wide fan-out asks for one after every role call; the state needs only the latest figures.
type spendSaves struct {
	mu     sync.Mutex
	asked  uint64        // saves asked for
	saved  uint64        // saves covered by the last finished write
	active chan struct{} // closed when the write in progress ends; nil when none is
}

// saveSpend writes the run's spend so far (and this attempt's own, for a step of a durable run) and returns once
// a write that started after the call has finished.
func (r *runner) saveSpend(ctx context.Context) {
	w := &r.spendSaves
	w.mu.Lock()
	w.asked++
	mine := w.asked
	for w.saved < mine && w.active != nil {
		ch := w.active
		w.mu.Unlock()
		<-ch
		w.mu.Lock()
	}
	if w.saved >= mine {
		w.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	w.active = ch
	upto := w.asked
	w.mu.Unlock()
	r.writeSpend(ctx)
	w.mu.Lock()
	w.saved, w.active = upto, nil
	close(ch)
	w.mu.Unlock()
}

func (r *runner) writeSpend(ctx context.Context) {
	t, c, n := r.spendNow()
	b, _ := json.Marshal(spend{Tokens: t, CostUSD: c, Calls: n, Estimated: r.estimatedTokens()})
	if err := r.db.SetMeta(context.WithoutCancel(ctx), "spend", string(b)); err != nil {
		r.log.Error("save spend", "err", err)
	}
	if r.spendKey != "" {
		// A step of a durable run: this attempt's own spend, under its own key, beside every other attempt's.
		// Its calls are the ones it reserved (reserveGate), counted in the ledger as they were reserved.
		own := state.Spend{Tokens: max(t-r.base.Tokens, 0), CostUSD: max(c-r.base.CostUSD, 0), Calls: int(r.reserved.Load())}
		own.Estimated = min(max(r.estimatedTokens()-r.base.Estimated, 0), own.Tokens)
		if err := r.db.SetSpend(context.WithoutCancel(ctx), r.spendKey, own); err != nil {
			r.log.Error("save spend", "err", err)
		}
	}
}

// arm sets up what bounds the run from here on: the fleet, its call cap net of what earlier attempts spent (the
// call-cap fuse trips at once when nothing is left), the time fuse counted from since, and the event sink.
func (r *runner) arm(since time.Time) error {
	r.fleet = NewFleet(r.rc.Budget.Concurrency, max(r.rc.Budget.MaxCalls-r.base.Calls, 1))
	if r.rc.Budget.MaxCalls-r.base.Calls <= 0 {
		r.tripFuse("", fmt.Sprintf("fleet call cap of %d calls reached", r.rc.Budget.MaxCalls))
	}
	if r.rc.Budget.MaxTime > 0 {
		r.deadline = since.Add(r.rc.Budget.MaxTime)
	}
	if r.eventFile != nil { // a step of a SharedRun: the run's events file, numbered across its steps
		r.events = &eventSink{file: r.eventFile, runID: r.id, on: r.cfg.OnEvent, progress: r.progress}
		return nil
	}
	var err error
	r.events, err = openEventSink(r.dir, r.id, r.cfg.OnEvent, r.progress)
	return err
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

// reserveGate runs gate, then reserves the call in the run's shared ledger; a refusal is the call cap.
func (r *runner) reserveGate(ctx context.Context, gate func() error) func() error {
	return func() error {
		if gate != nil {
			if err := gate(); err != nil {
				return err
			}
		}
		ok, err := r.db.ReserveCall(context.WithoutCancel(ctx), r.spendKey, r.rc.Budget.MaxCalls)
		if err != nil {
			return storeErr(ctx, err)
		}
		if !ok {
			return fmt.Errorf("%w (%d calls)", ErrCallCap, r.rc.Budget.MaxCalls)
		}
		r.reserved.Add(1)
		return nil
	}
}

// roleFailure is a role call that failed for good, after its retries; it has been logged and emitted.
type roleFailure struct{ err error }

func (e *roleFailure) Error() string { return e.err.Error() }
func (e *roleFailure) Unwrap() error { return e.err }

// roleCall runs one role call as a fleet call, with the retry cap. Searches and reads pass a gate that checks
// the fuse inside their fleet slot, right before they start, so spend passes the fuse by at most the calls
// already in flight. A failure after the last retry is logged and emitted — never a silent skip.
func (r *runner) roleCall(ctx context.Context, stage string, round int, sq, what string, gate func() error, fn func(context.Context) error) error {
	retries := max(r.rc.Budget.Retries, 0)
	if r.spendKey != "" {
		// A step of a durable run: other steps of the run call at the same time on other workers, so each call
		// reserves its place under the run's cap in the shared ledger.
		gate = r.reserveGate(ctx, gate)
	}
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
		if errors.Is(err, ErrStateStore) {
			// Not the role's failure and not for this loop to retry: the step fails, is run again once the
			// store answers, and says so (the log is in the store, so only the event carries it).
			r.emit(Event{Stage: stage, Kind: EventOutage, Round: round, SubQuestion: sq, Message: StateStoreRetrying + " (" + what + ")", Err: r.scrub.Scrub(err.Error())})
			return err
		}
		var perm *permanentError
		// A context-length error is not retried here: the same call would overflow the same way, and the roles
		// shrink their material themselves before they give up.
		// Refused credentials are not retried either: the same key is refused again.
		if attempt >= retries || errors.As(err, &perm) || llm.IsContextLength(err) || llm.IsAuth(err) {
			decision := "error"
			if perm != nil {
				decision = "fetch failed"
			}
			r.logf(ctx, stage, round, sq, decision, what, err, func(e *state.LogEntry) {
				e.Retries, e.Duration = attempt, time.Since(start)
			})
			r.emit(Event{Stage: stage, Kind: EventError, Round: round, SubQuestion: sq, Message: what, Err: err.Error()})
			return &roleFailure{err}
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

// stageCtx bounds one stage: the stage timeout and the run's time limit, which every call in flight sees — a
// search or fetch that hangs, a planner that probes the sources, a model that never answers. Synthesis, which
// still has to write the report when the limit is reached, gets synthGrace past the limit (or past its own
// start, when it starts later).
func (r *runner) stageCtx(ctx context.Context, stage string) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithTimeoutCause(ctx, r.rc.Budget.StageTimeout, errStageTimeout)
	if r.deadline.IsZero() {
		return sctx, cancel
	}
	deadline := r.deadline
	if stage == StageSynth {
		if now := time.Now(); now.After(deadline) {
			deadline = now
		}
		deadline = deadline.Add(synthGrace(r.rc.Budget.MaxTime))
	}
	dctx, dcancel := context.WithDeadlineCause(sctx, deadline, errTimeLimit)
	return dctx, func() { dcancel(); cancel() }
}

// synthGrace is how long synthesis may run past the time limit: a tenth of the limit, at least 5 s and at most
// 2 minutes.
func synthGrace(limit time.Duration) time.Duration {
	return min(max(limit/10, 5*time.Second), 2*time.Minute)
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
