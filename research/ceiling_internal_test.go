package research

import (
	"testing"
	"time"
)

// An operator's ceiling bounds each limit of a run: the smaller wins, and a limit the run leaves unset (no fuse)
// takes the ceiling's; what the ceiling leaves unset is the run's.
func TestCeilingBoundsARunsLimits(t *testing.T) {
	for _, tc := range []struct {
		name               string
		run, ceiling, want Budget
	}{
		{"no ceiling", Budget{MaxCostUSD: 2, MaxCalls: 50}, Budget{}, Budget{MaxCostUSD: 2, MaxCalls: 50}},
		{"the run's smaller", Budget{MaxCostUSD: 1, MaxTokens: 1000, MaxTime: time.Minute, MaxCalls: 10, Concurrency: 2},
			Budget{MaxCostUSD: 5, MaxTokens: 9000, MaxTime: time.Hour, MaxCalls: 100, Concurrency: 8},
			Budget{MaxCostUSD: 1, MaxTokens: 1000, MaxTime: time.Minute, MaxCalls: 10, Concurrency: 2}},
		{"the ceiling's smaller", Budget{MaxCostUSD: 9, MaxTokens: 90000, MaxTime: time.Hour, MaxCalls: 900, Concurrency: 32},
			Budget{MaxCostUSD: 0.5, MaxTokens: 500, MaxTime: time.Second, MaxCalls: 5, Concurrency: 4},
			Budget{MaxCostUSD: 0.5, MaxTokens: 500, MaxTime: time.Second, MaxCalls: 5, Concurrency: 4}},
		{"unset in the run", Budget{}, Budget{MaxCostUSD: 0.5, MaxCalls: 5},
			Budget{MaxCostUSD: 0.5, MaxCalls: 5}},
		{"the stage timeout and retries are the run's", Budget{StageTimeout: time.Hour, Retries: 3, SynthRetries: -1},
			Budget{StageTimeout: time.Second, Retries: 1, SynthRetries: 1}, Budget{StageTimeout: time.Hour, Retries: 3, SynthRetries: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := capped(tc.run, tc.ceiling); got != tc.want {
				t.Errorf("capped(%+v, %+v) = %+v, want %+v", tc.run, tc.ceiling, got, tc.want)
			}
		})
	}
}
