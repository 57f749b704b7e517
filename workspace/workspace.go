// Package workspace gives each run a rooted file area on the real filesystem. Every path is resolved inside the
// root: `..`, absolute paths elsewhere and symlinks that point out are refused, and a quota bounds what can be
// written.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/deepresearch/deepresearch/base/runfolder"
)

// ErrEscape is returned for a path that would leave the workspace.
var ErrEscape = errors.New("path escapes the workspace")

// ErrQuota is returned when a write would exceed the workspace quota.
var ErrQuota = errors.New("workspace quota exceeded")

// Config tunes a workspace. The zero value means the defaults.
type Config struct {
	// Quota bounds the bytes stored under the root; default 1 GiB, negative means unlimited.
	Quota int64
}

// Workspace is a rooted file area. It is safe for concurrent use.
type Workspace struct {
	root string
	// fs performs every read and write: os.Root refuses to leave the directory even when a symbolic link is
	// swapped in between Resolve's check and the operation.
	fs    *os.Root
	quota int64
	mu    sync.Mutex // serialises writes so that quota checks are exact
}

// New opens (creating if needed) a workspace rooted at dir.
func New(dir string, cfg Config) (*Workspace, error) {
	if cfg.Quota == 0 {
		cfg.Quota = 1 << 30
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("workspace: create %s: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: %s: %w", dir, err)
	}
	fsys, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace: %s: %w", dir, err)
	}
	return &Workspace{root: real, fs: fsys, quota: cfg.Quota}, nil
}

// Root is the workspace's absolute, symlink-free root directory.
func (w *Workspace) Root() string { return w.root }

// Resolve maps a workspace path to an absolute filesystem path inside the root. Relative paths are taken from the
// root; an absolute path is accepted only when it already lies inside the root.
func (w *Workspace) Resolve(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%q: %w: NUL byte", p, ErrEscape)
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
		if !Within(w.root, abs) {
			return "", fmt.Errorf("%q: %w: absolute paths must lie inside %s; use a path relative to the workspace", p, ErrEscape, w.root)
		}
	} else {
		abs = filepath.Join(w.root, p)
		if !Within(w.root, abs) {
			return "", fmt.Errorf("%q: %w", p, ErrEscape)
		}
	}
	rel, err := filepath.Rel(w.root, abs)
	if err != nil {
		return "", fmt.Errorf("%q: %w", p, err)
	}
	real, err := w.follow(w.root, rel, 0)
	if err != nil {
		return "", fmt.Errorf("%q: %w", p, err)
	}
	return real, nil
}

// follow walks rel from cur one component at a time, resolving every symbolic link (dangling ones included) and
// refusing any that leads outside the root.
func (w *Workspace) follow(cur, rel string, hops int) (string, error) {
	if rel == "." || rel == "" {
		return cur, nil
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			// Nothing exists from here on, so no link can redirect the rest.
			return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops > 40 {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		target = filepath.Clean(target)
		if !Within(w.root, target) {
			return "", fmt.Errorf("%w through a symbolic link", ErrEscape)
		}
		tr, _ := filepath.Rel(w.root, target)
		if cur, err = w.follow(w.root, tr, hops+1); err != nil {
			return "", err
		}
	}
	return cur, nil
}

// Rel returns the workspace-relative form of an absolute path inside the root.
func (w *Workspace) Rel(abs string) string {
	r, err := filepath.Rel(w.root, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(r)
}

// Within reports whether the clean absolute path p is root or lies below it.
func Within(root, p string) bool {
	if p == root {
		return true
	}
	// A root that ends in a separator (the filesystem root) must not get a second one.
	return strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// Close releases the workspace's handle on its root directory.
func (w *Workspace) Close() error { return w.fs.Close() }

// rel maps a resolved absolute path to the name os.Root operations take.
func (w *Workspace) rel(abs string) string {
	r, err := filepath.Rel(w.root, abs)
	if err != nil {
		return abs // not inside the root: os.Root will refuse it
	}
	return r
}

// ReadFile reads a workspace file.
func (w *Workspace) ReadFile(p string) ([]byte, error) {
	abs, err := w.Resolve(p)
	if err != nil {
		return nil, err
	}
	// The *PathError names the workspace path; returned unwrapped so os.IsNotExist keeps working for callers.
	return runfolder.ReadFileIn(w.fs, w.rel(abs), MaxReadBytes)
}

// MaxReadBytes bounds one file read whole from the workspace.
const MaxReadBytes = 64 << 20

// ErrNotRegular refuses reading a FIFO, a device, a socket or a directory as a file, or appending to one; it is
// runfolder's, whose checked open the workspace's opens go through.
var ErrNotRegular = runfolder.ErrNotRegular

// openRegular opens name (relative to the root) for reading through os.Root, refusing anything but a regular
// file without ever blocking (runfolder.OpenIn): O_NONBLOCK keeps the open of a FIFO from waiting for a writer,
// and the type is checked on the opened handle, so a file swapped for a FIFO or a device after a check is still
// refused.
func (w *Workspace) openRegular(name string) (*os.File, fs.FileInfo, error) {
	return runfolder.OpenIn(w.fs, "read", name, os.O_RDONLY, 0)
}

// WriteFile writes a workspace file, creating parent directories, within the quota.
func (w *Workspace) WriteFile(p string, data []byte) error {
	abs, err := w.Resolve(p)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkQuota(abs, int64(len(data)), true); err != nil {
		return fmt.Errorf("write %s (%d bytes): %w", p, len(data), err)
	}
	name := w.rel(abs)
	if err := w.fs.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	// Whole-file replacement inside the root: a temporary sibling, then a rename.
	if err := runfolder.WriteFileIn(w.fs, name, data); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// AppendFile appends to a workspace file (history logs), within the quota.
func (w *Workspace) AppendFile(p string, data []byte) error {
	abs, err := w.Resolve(p)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkQuota(abs, int64(len(data)), false); err != nil {
		return fmt.Errorf("append %s (%d bytes): %w", p, len(data), err)
	}
	name := w.rel(abs)
	if err := w.fs.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("append %s: %w", p, err)
	}
	f, _, err := runfolder.OpenIn(w.fs, "append", name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("append %s: %w", p, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("append %s: %w", p, err)
	}
	return f.Close()
}

// checkQuota refuses adding n bytes to the file at abs when that would take the workspace over its quota; replace
// says the write replaces the file's current content, which then no longer counts. The caller holds w.mu.
func (w *Workspace) checkQuota(abs string, n int64, replace bool) error {
	if w.quota <= 0 {
		return nil
	}
	used, err := w.usage()
	if err != nil {
		return err
	}
	var old int64
	if fi, err := w.fs.Stat(w.rel(abs)); replace && err == nil {
		old = fi.Size()
	}
	if used-old+n > w.quota {
		return fmt.Errorf("%w (%d of %d bytes used)", ErrQuota, used, w.quota)
	}
	return nil
}

// Remove deletes a workspace file.
func (w *Workspace) Remove(p string) error {
	abs, err := w.Resolve(p)
	if err != nil {
		return err
	}
	return w.fs.Remove(w.rel(abs))
}

// Usage returns the bytes stored under the root.
func (w *Workspace) Usage() (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.usage()
}

func (w *Workspace) usage() (int64, error) {
	var n int64
	err := fs.WalkDir(w.fs.FS(), ".", func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n, err
}
