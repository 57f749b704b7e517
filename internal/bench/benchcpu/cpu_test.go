package benchcpu

import (
	"runtime"
	"testing"
	"time"
)

func TestProcessCountsWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		if Process() != 0 {
			t.Fatal("CPU time reported where it is not measured")
		}
		return
	}
	before := Process()
	deadline := time.Now().Add(30 * time.Millisecond)
	n := 0
	for time.Now().Before(deadline) {
		n++
	}
	if got := Process() - before; got <= 0 {
		t.Fatalf("30 ms of busy work (%d loops) counted %v of CPU", n, got)
	}
}
