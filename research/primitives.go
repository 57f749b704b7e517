package research

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// ErrCallCap is returned (wrapped) by a Fleet when a call would pass its MaxCalls cap. The call is refused at
// once; nothing waits.
var ErrCallCap = errors.New("research: fleet call cap reached")

// Fleet is the fleet bound: at most Concurrency role calls in flight and at most MaxCalls in total. Zero fields
// mean the defaults (16 and 1,000). A Fleet is safe for concurrent use; do not copy it after first use.
type Fleet struct {
	Concurrency int
	MaxCalls    int

	once     sync.Once
	sem      chan struct{}
	started  atomic.Int64
	inFlight atomic.Int64
	peak     atomic.Int64
}

// NewFleet returns a Fleet with the given bounds (0 means the default).
func NewFleet(concurrency, maxCalls int) *Fleet {
	return &Fleet{Concurrency: concurrency, MaxCalls: maxCalls}
}

func (f *Fleet) init() {
	f.once.Do(func() {
		if f.Concurrency <= 0 {
			f.Concurrency = 16
		}
		if f.MaxCalls <= 0 {
			f.MaxCalls = 1000
		}
		f.sem = make(chan struct{}, f.Concurrency)
	})
}

// Do runs fn as one call of the fleet: it waits for a free slot (or ctx), refuses with ErrCallCap once MaxCalls
// calls have started, and releases the slot when fn returns.
func (f *Fleet) Do(ctx context.Context, fn func(context.Context) error) error {
	return f.DoGated(ctx, nil, fn)
}

// DoGated is Do with a gate checked once the slot is held, right before fn would start: if gate returns an
// error, fn does not run, the call is not counted, and the gate's error is returned. Budget fuses use it so
// that spend can pass a fuse by at most the calls already in flight.
func (f *Fleet) DoGated(ctx context.Context, gate func() error, fn func(context.Context) error) error {
	f.init()
	if n := f.started.Add(1); n > int64(f.MaxCalls) {
		f.started.Add(-1)
		return fmt.Errorf("%w (%d calls)", ErrCallCap, f.MaxCalls)
	}
	select {
	case f.sem <- struct{}{}:
	case <-ctx.Done():
		f.started.Add(-1)
		return ctx.Err()
	}
	if gate != nil {
		if err := gate(); err != nil {
			<-f.sem
			f.started.Add(-1)
			return err
		}
	}
	n := f.inFlight.Add(1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	defer func() {
		f.inFlight.Add(-1)
		<-f.sem
	}()
	return fn(ctx)
}

// Calls is the number of calls started (or waiting for a slot) so far.
func (f *Fleet) Calls() int { return int(f.started.Load()) }

// InFlight is the number of calls running now.
func (f *Fleet) InFlight() int { return int(f.inFlight.Load()) }

// Peak is the largest number of calls that ran at once.
func (f *Fleet) Peak() int { return int(f.peak.Load()) }

// Call runs fn as one fleet call and returns its result; a nil fleet runs fn directly.
func Call[R any](ctx context.Context, f *Fleet, fn func(context.Context) (R, error)) (R, error) {
	var r R
	if f == nil {
		return fn(ctx)
	}
	err := f.Do(ctx, func(ctx context.Context) error {
		var err error
		r, err = fn(ctx)
		return err
	})
	return r, err
}

// FanOut runs fn for every item with at most limit running at once (limit ≤ 0 means all at once) and returns
// the results and errors aligned with items. One failure never cancels its siblings — a failed item has its
// error at its index and a zero result. A panic in fn becomes that item's error. Items not started because ctx
// ended get ctx's error.
func FanOut[T, R any](ctx context.Context, items []T, limit int, fn func(context.Context, T) (R, error)) ([]R, []error) {
	results := make([]R, len(items))
	errs := make([]error, len(items))
	if limit <= 0 || limit > len(items) {
		limit = len(items)
	}
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i, it := range items {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			for j := i; j < len(items); j++ {
				errs[j] = ctx.Err()
			}
			wg.Wait()
			return results, errs
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
				}
			}()
			results[i], errs[i] = fn(ctx, it)
		}()
	}
	wg.Wait()
	return results, errs
}

// Loop is a convergent loop: it calls step for round 0, 1, … until step reports done, returns an error, ctx
// ends, or maxRounds rounds have run (maxRounds ≤ 0 means one round). It returns whether a round reported done
// and how many rounds ran.
func Loop(ctx context.Context, maxRounds int, step func(ctx context.Context, round int) (done bool, err error)) (bool, int, error) {
	maxRounds = max(maxRounds, 1)
	for round := 0; round < maxRounds; round++ {
		if err := ctx.Err(); err != nil {
			return false, round, err
		}
		done, err := step(ctx, round)
		if err != nil {
			return false, round + 1, err
		}
		if done {
			return true, round + 1, nil
		}
	}
	return false, maxRounds, nil
}
