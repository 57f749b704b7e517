//go:build windows

package corpus

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockFile takes a lock on the first byte of f with LockFileEx: shared or
// exclusive; with wait false it fails with errLocked instead of blocking.
func lockFile(f *os.File, exclusive, wait bool) error {
	var flags uint32
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, new(windows.Overlapped))
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errLocked
	}
	return err
}

// openNoBlock opens path for reading; Windows has no FIFOs that block an
// open, and the caller checks the mode before reading.
func openNoBlock(path string) (*os.File, error) { return os.Open(path) }

func openNoLink(path string) (*os.File, error) { return os.Open(path) }
