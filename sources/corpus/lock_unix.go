//go:build unix

package corpus

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an advisory lock on f: shared (readers of a generation) or
// exclusive (the writer, or the cleaner removing a generation). With wait
// false it fails with errLocked instead of blocking.
func lockFile(f *os.File, exclusive, wait bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		}
		return err
	}
}

// openNoBlock opens path for reading without blocking on a FIFO or device:
// a regular file opens as usual, and the caller checks the mode with Stat
// before reading.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// openNoLink is openNoBlock refusing a symbolic link: a file the scan found
// regular, replaced by a link since, is not read through it.
func openNoLink(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
}
