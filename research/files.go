package research

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/deepresearch/deepresearch/internal/atomicfile"
)

// ---- files ----

// writeFileAtomic replaces a run file whole, so a reader — or a resume after kill -9 — never sees half of one.
func writeFileAtomic(path string, data []byte) error { return atomicfile.Write(path, data, 0o644) }

func writeJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := writeFileAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// MaxRunFileBytes bounds one file read from a run folder.
const MaxRunFileBytes = 256 << 20

// ReadRunFile reads the file name (relative, as a run folder records it) inside runDir. A run folder may come
// from someone else, so what it names is untrusted: the read goes through os.Root, which refuses "..", absolute
// names and symbolic links that lead out of the folder, and it refuses anything but a regular file (a FIFO
// never blocks the reader) and files over MaxRunFileBytes.
func ReadRunFile(runDir, name string) ([]byte, error) {
	root, err := os.OpenRoot(runDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(filepath.FromSlash(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("not a regular file")}
	}
	if fi.Size() > MaxRunFileBytes {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%d bytes is more than the %d-byte limit", fi.Size(), MaxRunFileBytes)}
	}
	return io.ReadAll(io.LimitReader(f, MaxRunFileBytes))
}
