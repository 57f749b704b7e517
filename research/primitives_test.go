package research_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/research"
)

func TestFanOutFailureNeverCancelsSiblings(t *testing.T) {
	items := []int{0, 1, 2, 3, 4, 5, 6, 7}
	var running, peak atomic.Int32
	res, errs := research.FanOut(t.Context(), items, 3, func(ctx context.Context, i int) (int, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(5 * time.Millisecond)
		switch i {
		case 2:
			return 0, errors.New("boom")
		case 5:
			panic("kaboom")
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return i * 10, nil
	})
	for i := range items {
		switch i {
		case 2:
			if errs[i] == nil || errs[i].Error() != "boom" {
				t.Fatalf("item 2 error = %v", errs[i])
			}
		case 5:
			if errs[i] == nil || !strings.Contains(errs[i].Error(), "kaboom") {
				t.Fatalf("item 5 panic not reported: %v", errs[i])
			}
		default:
			if errs[i] != nil || res[i] != i*10 {
				t.Fatalf("item %d = %d, %v", i, res[i], errs[i])
			}
		}
	}
	if p := peak.Load(); p > 3 || p < 2 {
		t.Fatalf("peak = %d, limit 3", p)
	}
}

func TestFleetBoundAndCap(t *testing.T) {
	f := research.NewFleet(4, 10)
	var running, peak atomic.Int32
	items := make([]int, 12)
	_, errs := research.FanOut(t.Context(), items, 0, func(ctx context.Context, _ int) (struct{}, error) {
		return struct{}{}, f.Do(ctx, func(context.Context) error {
			n := running.Add(1)
			defer running.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(10 * time.Millisecond)
			return nil
		})
	})
	capped := 0
	for _, err := range errs {
		if errors.Is(err, research.ErrCallCap) {
			capped++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if capped != 2 || f.Calls() != 10 {
		t.Fatalf("capped %d, calls %d; want 2 refused of 12 with cap 10", capped, f.Calls())
	}
	if peak.Load() > 4 || f.Peak() > 4 || f.Peak() < 2 {
		t.Fatalf("peak %d / fleet peak %d, bound 4", peak.Load(), f.Peak())
	}
	// Over the cap: refused at once, no hang.
	start := time.Now()
	if err := f.Do(t.Context(), func(context.Context) error { return nil }); !errors.Is(err, research.ErrCallCap) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > time.Second {
		t.Fatal("a call over the cap waited")
	}
	// A refused gate does not count as a call.
	g := research.NewFleet(1, 1)
	gateErr := errors.New("fuse")
	if err := g.DoGated(t.Context(), func() error { return gateErr }, func(context.Context) error { return nil }); !errors.Is(err, gateErr) {
		t.Fatalf("gate err = %v", err)
	}
	if err := g.Do(t.Context(), func(context.Context) error { return nil }); err != nil {
		t.Fatalf("the gated call used up the cap: %v", err)
	}
}

func TestLoopUntilVerdict(t *testing.T) {
	done, rounds, err := research.Loop(t.Context(), 3, func(_ context.Context, round int) (bool, error) {
		return round == 1, nil
	})
	if !done || rounds != 2 || err != nil {
		t.Fatalf("done %v rounds %d err %v", done, rounds, err)
	}
	done, rounds, err = research.Loop(t.Context(), 3, func(context.Context, int) (bool, error) { return false, nil })
	if done || rounds != 3 || err != nil {
		t.Fatalf("capped loop: done %v rounds %d err %v", done, rounds, err)
	}
	boom := errors.New("boom")
	if _, rounds, err = research.Loop(t.Context(), 3, func(context.Context, int) (bool, error) { return false, boom }); !errors.Is(err, boom) || rounds != 1 {
		t.Fatalf("err %v rounds %d", err, rounds)
	}
}
