package durable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeRun counts its closes.
type fakeRun struct {
	name   string
	closed atomic.Int32
}

func (r *fakeRun) Close() error { r.closed.Add(1); return nil }

// opener opens fake runs and counts the opens.
type opener struct {
	mu    sync.Mutex
	opens map[string]int
	runs  []*fakeRun
	// gate, when set, holds every open until it is closed.
	gate chan struct{}
	fail error
}

func (o *opener) open(name string) func(context.Context) (*fakeRun, error) {
	return func(ctx context.Context) (*fakeRun, error) {
		if o.gate != nil {
			select {
			case <-o.gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.opens == nil {
			o.opens = map[string]int{}
		}
		o.opens[name]++
		if o.fail != nil {
			return nil, o.fail
		}
		r := &fakeRun{name: name}
		o.runs = append(o.runs, r)
		return r, nil
	}
}

func (o *opener) count(name string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.opens[name]
}

func key(id string) runKey { return runKey{state: "postgres://db/research?namespace=t", runID: id} }

func TestRunCacheReusesARunAcrossSteps(t *testing.T) {
	c := newRunCache[*fakeRun](4, time.Minute)
	defer c.closeAll()
	var o opener
	first, release, err := c.acquire(t.Context(), key("a"), o.open("a"))
	if err != nil {
		t.Fatal(err)
	}
	release(false)
	release(false) // a second release of one acquire changes nothing
	second, release2, err := c.acquire(t.Context(), key("a"), o.open("a"))
	if err != nil {
		t.Fatal(err)
	}
	defer release2(false)
	if first != second || o.count("a") != 1 || first.closed.Load() != 0 {
		t.Fatalf("two steps of one run: same run %v, %d opens, %d closes; want one open run", first == second, o.count("a"), first.closed.Load())
	}
	// Another state holding a run of the same id is another run.
	other, release3, err := c.acquire(t.Context(), runKey{state: "postgres://db/research?namespace=u", runID: "a"}, o.open("a"))
	if err != nil {
		t.Fatal(err)
	}
	release3(false)
	if other == first || o.count("a") != 2 {
		t.Fatalf("a run of the same id in another namespace shares the first one's hold")
	}
}

func TestRunCacheBoundsTheRunsKeptUnused(t *testing.T) {
	const bound = 3
	c := newRunCache[*fakeRun](bound, time.Minute)
	defer c.closeAll()
	var o opener
	// Five runs in use at once are all open; once their steps end, only the bound stays open, the ones used
	// longest ago closed.
	var releases []func(bool)
	for i := range 5 {
		_, release, err := c.acquire(t.Context(), key(fmt.Sprint(i)), o.open(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	if c.held() != 5 {
		t.Fatalf("%d runs held with 5 steps running, want 5", c.held())
	}
	for _, release := range releases {
		time.Sleep(time.Millisecond) // distinct release times
		release(false)
	}
	if c.held() != bound {
		t.Fatalf("%d runs held unused, want the bound %d", c.held(), bound)
	}
	for i, r := range o.runs {
		want := int32(0)
		if i < 5-bound {
			want = 1
		}
		if r.closed.Load() != want {
			t.Errorf("run %d (released %d of 5) closed %d times, want %d", i, i+1, r.closed.Load(), want)
		}
	}
}

func TestRunCacheClosesAnIdleRun(t *testing.T) {
	c := newRunCache[*fakeRun](4, 50*time.Millisecond)
	defer c.closeAll()
	var o opener
	r, release, err := c.acquire(t.Context(), key("a"), o.open("a"))
	if err != nil {
		t.Fatal(err)
	}
	// In use for longer than the idle time: not closed.
	time.Sleep(120 * time.Millisecond)
	if r.closed.Load() != 0 {
		t.Fatal("a run in use was closed as idle")
	}
	release(false)
	deadline := time.Now().Add(10 * time.Second)
	for r.closed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r.closed.Load() != 1 || c.held() != 0 {
		t.Fatalf("an idle run: closed %d times, %d held; want closed once, none held", r.closed.Load(), c.held())
	}
	// The run's next step opens it again.
	again, release, err := c.acquire(t.Context(), key("a"), o.open("a"))
	if err != nil {
		t.Fatal(err)
	}
	release(false)
	if again == r || o.count("a") != 2 {
		t.Fatal("the step after an idle close did not open the run again")
	}
}

// Steps of one run arriving together open it once and share it; it is closed once, after the last of them.
func TestRunCacheConcurrentStepsOpenOnce(t *testing.T) {
	c := newRunCache[*fakeRun](4, time.Minute)
	o := opener{gate: make(chan struct{})}
	const n = 16
	got := make([]*fakeRun, n)
	releases := make([]func(bool), n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			r, release, err := c.acquire(t.Context(), key("a"), o.open("a"))
			if err != nil {
				errs <- err
				return
			}
			got[i], releases[i] = r, release
		})
	}
	waitUsers(t, c, key("a"), n) // all of them wait on the one open
	close(o.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if o.count("a") != 1 {
		t.Fatalf("%d concurrent steps opened the run %d times, want once", n, o.count("a"))
	}
	for i := range got {
		if got[i] != got[0] {
			t.Fatalf("step %d got another run", i)
		}
	}
	// The workflow ends while steps still run: the run is closed by the last of them, not before.
	c.forget(key("a"))
	for i, release := range releases {
		if got[0].closed.Load() != 0 {
			t.Fatalf("closed with %d steps still using it", n-i)
		}
		release(false)
	}
	if got[0].closed.Load() != 1 || c.held() != 0 {
		t.Fatalf("after the last step: closed %d times, %d held; want 1, 0", got[0].closed.Load(), c.held())
	}
}

func TestRunCacheOnErrors(t *testing.T) {
	c := newRunCache[*fakeRun](4, time.Minute)
	defer c.closeAll()
	// A run that does not open: every step waiting on it gets the error, nothing is kept, the next step tries again.
	o := opener{fail: errors.New("database down"), gate: make(chan struct{})}
	var wg sync.WaitGroup
	var failed atomic.Int32
	for range 4 {
		wg.Go(func() {
			if _, _, err := c.acquire(t.Context(), key("a"), o.open("a")); err != nil && err.Error() == "database down" {
				failed.Add(1)
			}
		})
	}
	waitUsers(t, c, key("a"), 4)
	close(o.gate)
	wg.Wait()
	if failed.Load() != 4 || c.held() != 0 || o.count("a") != 1 {
		t.Fatalf("a failed open: %d of 4 steps got its error, %d held, %d opens", failed.Load(), c.held(), o.count("a"))
	}
	o.mu.Lock()
	o.fail, o.gate = nil, nil
	o.mu.Unlock()
	r, release, err := c.acquire(t.Context(), key("a"), o.open("a"))
	if err != nil {
		t.Fatal(err)
	}
	// A step that failed on the state: the run is closed (its hold may be broken) and the next step opens a new one.
	release(true)
	if r.closed.Load() != 1 || c.held() != 0 {
		t.Fatalf("after a state failure: closed %d times, %d held", r.closed.Load(), c.held())
	}
	r2, release, err := c.acquire(t.Context(), key("a"), o.open("a"))
	if err != nil {
		t.Fatal(err)
	}
	release(false)
	if r2 == r {
		t.Fatal("the step after a state failure reused the broken run")
	}
	// A step whose context ends while it waits for the run's open returns at once.
	o.mu.Lock()
	o.gate = make(chan struct{})
	o.mu.Unlock()
	go func() {
		_, release, err := c.acquire(context.Background(), key("b"), o.open("b"))
		if err == nil {
			release(false)
		}
	}()
	waitUsers(t, c, key("b"), 1) // the other step is opening run b
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := c.acquire(ctx, key("b"), o.open("b")); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled step waiting on the open: %v", err)
	}
	close(o.gate)
}

func TestRunCacheCloseAllAtWorkerStop(t *testing.T) {
	c := newRunCache[*fakeRun](4, time.Minute)
	var o opener
	idle, release, err := c.acquire(t.Context(), key("a"), o.open("a"))
	if err != nil {
		t.Fatal(err)
	}
	release(false)
	busy, releaseBusy, err := c.acquire(t.Context(), key("b"), o.open("b"))
	if err != nil {
		t.Fatal(err)
	}
	c.closeAll()
	if idle.closed.Load() != 1 || busy.closed.Load() != 0 {
		t.Fatalf("at stop: idle run closed %d times, busy one %d; want 1, 0", idle.closed.Load(), busy.closed.Load())
	}
	releaseBusy(false)
	if busy.closed.Load() != 1 {
		t.Fatal("the run in use at stop was not closed by its step")
	}
	if _, _, err := c.acquire(t.Context(), key("c"), o.open("c")); !errors.Is(err, errCacheClosed) {
		t.Fatalf("a step after stop: %v", err)
	}
}

// waitUsers waits until n steps have acquired key's entry (the opener and those waiting on its open), so a test
// releases the open only once they all wait, however loaded the machine.
func waitUsers[T io.Closer](t *testing.T, c *runCache[T], k runKey, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		users := 0
		if e, ok := c.open[k]; ok {
			users = e.users
		}
		c.mu.Unlock()
		if users == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d steps acquired the run in a minute", users, n)
		}
	}
}
