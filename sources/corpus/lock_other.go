//go:build !unix

package corpus

import (
	"os"
)

// lockFile is a no-op where advisory file locks are not implemented: the
// index then relies on its atomic generation swap alone, and two writers at
// once may each build a generation (the last one wins; both are complete).
func lockFile(*os.File, bool, bool) error { return nil }

func openNoBlock(path string) (*os.File, error) { return os.Open(path) }
