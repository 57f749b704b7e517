package corpus

import "testing"

// Options whose BatchOps is zero keep the default batch size (every caller that sets other options and not this
// one); a positive value replaces it.
func TestZeroBatchOpsKeepsTheDefault(t *testing.T) {
	for _, c := range []struct {
		opts *Options
		want int
	}{{nil, defaultBatchOps}, {&Options{}, defaultBatchOps}, {&Options{FollowLinks: true}, defaultBatchOps}, {&Options{BatchOps: 7}, 7}} {
		ix, err := OpenWith(t.TempDir(), c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if ix.batchOps != c.want {
			t.Errorf("%+v: %d operations a batch, want %d", c.opts, ix.batchOps, c.want)
		}
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
