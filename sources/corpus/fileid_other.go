//go:build !unix

package corpus

import "os"

// fileID returns 0 (unknown) where files have no inode number in
// os.FileInfo.
func fileID(os.FileInfo) uint64 { return 0 }
