//go:build !unix && !windows

package corpus

import (
	"os"
)

// lockFile is a no-op where file locks are not implemented (Plan 9,
// WebAssembly): there, only one process at a time may update an index.
func lockFile(*os.File, bool, bool) error { return nil }

func openNoBlock(path string) (*os.File, error) { return os.Open(path) }

func openNoLink(path string) (*os.File, error) { return os.Open(path) }
