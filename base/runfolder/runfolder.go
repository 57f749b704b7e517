// Package runfolder is the one way to open what a run folder names, for reading and for writing. A run folder
// may come from someone else (a copied or downloaded folder, a folder another local user can write), so every
// name in it is untrusted:
//
//   - every open goes through os.Root, which refuses "..", absolute names and symbolic links that lead out of
//     the folder, in any path element (a docs/ that links elsewhere, an events.jsonl that links to ~/.bashrc);
//   - opens are non-blocking (O_NONBLOCK) and the type is checked on the opened handle, so a FIFO, a device or
//     a socket is refused with ErrNotRegular instead of blocking open(2) or read(2) for good;
//   - reads are bounded (MaxFileBytes, or the caller's limit), and line-oriented files (events.jsonl) are
//     streamed line by line with a per-line cap, never read whole;
//   - writes replace a file whole (a temporary sibling inside the folder, then a rename), so a symbolic link at
//     the name is replaced, never written through.
//
// Files that another library opens by name (the SQLite state) are checked first with Check.
//
// Like every package under base/, it is importable by other modules but carries no compatibility promise.
package runfolder

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// MaxFileBytes bounds one file read whole from a run folder.
const MaxFileBytes = 256 << 20

// MaxLineBytes bounds one line of a line-oriented run file; a longer line is skipped, not kept.
const MaxLineBytes = 16 << 20

// ErrNotRegular refuses a FIFO, a device, a socket or a directory where a run folder should hold a file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge refuses a file over its size limit.
var ErrTooLarge = errors.New("file too large")

// name converts a slash-separated name, as run folders record them, for os.Root.
func name(n string) string { return filepath.FromSlash(n) }

// Kind names what a non-regular file is, for error messages.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.String()
}

func notRegular(op, n string, m fs.FileMode) error {
	return &fs.PathError{Op: op, Path: n, Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(m))}
}

// openChecked opens n inside dir with flag (O_NONBLOCK added) and refuses anything but a regular file.
func openChecked(op, dir, n string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	return OpenIn(root, op, n, flag, perm)
}

// OpenIn is the one checked open, for a caller that holds the folder's os.Root open (a workspace): it opens n
// (relative, slash-separated) through root with flag, O_NONBLOCK added, and returns the file with its
// information, refusing anything but a regular file with ErrNotRegular in a *fs.PathError of op. A FIFO opened
// for writing with no reader is refused too, never waited for.
func OpenIn(root *os.Root, op, n string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name(n), flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			// O_WRONLY|O_NONBLOCK on a FIFO nobody reads.
			return nil, nil, &fs.PathError{Op: op, Path: n, Err: fmt.Errorf("%w (a FIFO)", ErrNotRegular)}
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegular(op, n, fi.Mode())
	}
	return f, fi, nil
}

// Open opens the regular file n (relative, slash-separated) inside dir for reading.
func Open(dir, n string) (*os.File, error) {
	f, _, err := openChecked("open", dir, n, os.O_RDONLY, 0)
	return f, err
}

// ReadFile reads the regular file n inside dir whole, refusing one over limit bytes (0 means MaxFileBytes).
func ReadFile(dir, n string, limit int64) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return ReadFileIn(root, n, limit)
}

// ReadFileIn is ReadFile through a root the caller holds open.
func ReadFileIn(root *os.Root, n string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = MaxFileBytes
	}
	f, fi, err := OpenIn(root, "read", n, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: n, Err: fmt.Errorf("%w: %d bytes is more than the %d-byte limit", ErrTooLarge, fi.Size(), limit)}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit { // grew while being read
		return nil, &fs.PathError{Op: "read", Path: n, Err: fmt.Errorf("%w: more than the %d-byte limit", ErrTooLarge, limit)}
	}
	return b, nil
}

// Lines calls fn with each line of the regular file n inside dir, without its newline, in order, holding one
// line at a time; a line over MaxLineBytes is skipped. A last line without a newline (a writer killed
// mid-write) is passed too: callers that parse lines skip what does not parse. An error from fn stops the
// reading and is returned.
func Lines(dir, n string, fn func([]byte) error) error {
	f, err := Open(dir, n)
	if err != nil {
		return err
	}
	defer f.Close()
	return eachLine(f, MaxLineBytes, fn)
}

func eachLine(r io.Reader, maxLine int, fn func([]byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && !skipping {
			n := len(line) + len(chunk)
			if chunk[len(chunk)-1] == '\n' {
				n--
			}
			if n > maxLine {
				skipping, line = true, line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == nil:
			if !skipping {
				if ferr := fn(trimNewline(line)); ferr != nil {
					return ferr
				}
			}
			line, skipping = line[:0], false
		case errors.Is(err, bufio.ErrBufferFull):
			// the line goes on
		case errors.Is(err, io.EOF):
			if len(line) > 0 && !skipping {
				return fn(trimNewline(line))
			}
			return nil
		default:
			return err
		}
	}
}

func trimNewline(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// OpenAppend opens the regular file n inside dir for appending, creating it if it does not exist. A FIFO, a
// device or a symbolic link out of the folder is refused.
func OpenAppend(dir, n string) (*os.File, error) {
	f, _, err := openChecked("append", dir, n, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	return f, err
}

// WriteFile replaces the file n inside dir with data: a temporary sibling, then a rename, both inside the
// folder, so a reader (or a resume after kill -9) never sees half of it and a symbolic link at n is replaced
// rather than written through. The folders on the way must exist (MkdirAll).
func WriteFile(dir, n string, data []byte) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", n, err)
	}
	defer root.Close()
	if err := WriteFileIn(root, n, data); err != nil {
		return fmt.Errorf("write %s: %w", n, err)
	}
	return nil
}

// WriteFileIn is WriteFile through a root the caller holds open; its errors are the root's operations', for the
// caller to name the file its own way.
func WriteFileIn(root *os.Root, n string, data []byte) error {
	n = name(n)
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(n), "."+filepath.Base(n)+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Rename(tmp, n)
	}
	if werr != nil {
		_ = root.Remove(tmp)
	}
	return werr
}

// MkdirAll creates the folder n inside dir and the folders on the way, refusing a path element that is a
// symbolic link out of the folder or not a folder.
func MkdirAll(dir, n string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(name(n), 0o755); err != nil {
		return err
	}
	fi, err := root.Stat(name(n))
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "mkdir", Path: n, Err: fmt.Errorf("not a folder (%s)", Kind(fi.Mode()))}
	}
	return nil
}

// Check is for a file that another library opens by name (SQLite opens state.db, and its -wal, -shm and
// -journal siblings, itself): n, if it exists, must be a regular file inside dir — not a FIFO or a device,
// which would block that open for good, and not a symbolic link out of the folder. A missing file passes
// (the library creates it). The check cannot stop a swap between it and the library's open; it stops a folder
// that holds such a file from the start.
func Check(dir, n string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	fi, err := root.Lstat(name(n))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		// A link inside the folder is followed by the opener; one out of the folder is refused here.
		if fi, err = root.Stat(name(n)); err != nil {
			return &fs.PathError{Op: "check", Path: n, Err: fmt.Errorf("a symbolic link that leads out of the run folder or nowhere: %w", err)}
		}
	}
	if !fi.Mode().IsRegular() {
		return notRegular("check", n, fi.Mode())
	}
	return nil
}

// Split returns the folder and the name of path, for callers that hold a whole path to a file directly inside
// a run folder.
func Split(path string) (dir, n string) { return filepath.Dir(path), filepath.Base(path) }
