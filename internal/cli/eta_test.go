package cli

import (
	"testing"
	"time"
)

func TestProgressETA(t *testing.T) {
	for _, tc := range []struct {
		elapsed     time.Duration
		done, total int
		want        string
	}{
		{1500 * time.Millisecond, 10, 100, "2s"},                   // too early to estimate
		{10 * time.Second, 0, 100, "10s"},                          // nothing done yet
		{10 * time.Second, 1, 100, "10s"},                          // under 2% done
		{10 * time.Second, 25, 100, "10s, about 30s left"},         // a quarter in 10 s: 30 s more
		{12 * time.Minute, 924, 8444, "12m0s, about 1h38m0s left"}, // minutes past ten minutes
		{10 * time.Second, 100, 100, "10s"},                        // finished
		{10 * time.Second, 120, 100, "10s"},                        // more than the total (a folder that grew)
	} {
		if got := progressETA(tc.elapsed, tc.done, tc.total); got != tc.want {
			t.Errorf("progressETA(%v, %d, %d) = %q, want %q", tc.elapsed, tc.done, tc.total, got, tc.want)
		}
	}
}
