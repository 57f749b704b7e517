package cli

import (
	"fmt"
	"time"
)

// progressETA says how long a task has run and, once a part of it is done, about how long the rest takes at the
// pace so far: "12s", "1m5s, about 40s left". The estimate waits for 2% of the work (at least one item) and 3 s,
// and is rounded so that it does not flicker.
func progressETA(elapsed time.Duration, done, total int) string {
	out := roundDuration(elapsed).String()
	if done <= 0 || total <= done || elapsed < 3*time.Second || done*50 < total {
		return out
	}
	left := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
	return fmt.Sprintf("%s, about %s left", out, roundDuration(left))
}

// roundDuration keeps two significant units: seconds under ten minutes, then minutes, then hours.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < 10*time.Minute:
		return d.Round(time.Second)
	case d < 10*time.Hour:
		return d.Round(time.Minute)
	}
	return d.Round(time.Hour)
}
