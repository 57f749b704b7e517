//go:build linux || darwin || freebsd || netbsd || openbsd

package corpus

import "golang.org/x/sys/unix"

// dirStat looks at the files of one folder by name, relative to the open
// folder: the kernel resolves one name instead of the whole path, and
// nothing is allocated per file.
type dirStat struct{ fd int }

func openDirStat(dir string) (*dirStat, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &dirStat{fd: fd}, nil
}

func (d *dirStat) close() { unix.Close(d.fd) }

// regular returns the size, modification time (unix nanoseconds) and inode
// number of the file name in the folder, following a symbolic link, when
// it is a regular file; ok is false otherwise and on any error, which
// os.Stat then reports.
func (d *dirStat) regular(name string) (size, mod int64, ino uint64, ok bool) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, 0); err != nil || uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		return 0, 0, 0, false
	}
	return st.Size, st.Mtim.Nano(), uint64(st.Ino), true
}
