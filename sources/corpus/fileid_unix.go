//go:build unix

package corpus

import (
	"os"
	"syscall"
)

// fileID returns the file's inode number, 0 when unknown. A file replaced
// by another (renamed over it) has a new one even when its modification
// time and size are the same.
func fileID(info os.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
