package request

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/deepresearch/deepresearch/workspace"
)

// ErrOutsideRoots marks a corpus folder a server refused because it lies outside the folders it may read.
var ErrOutsideRoots = errors.New("outside the folders this server may read")

// Roots are the folders a server reachable by other local processes (the web viewer, `mcp --http`) may read
// corpora from. A corpus a request names must be one of them or lie below one once every link in its path is
// resolved, so a process that can reach the server's port reads only what the user chose to share — not /etc,
// not /proc/self, not a link in a shared folder that points out of it. The zero value refuses every folder.
type Roots struct {
	dirs []string // absolute and link-free
}

// NewRoots returns the roots dirs name (relative names are taken from the working folder). A folder that does not
// exist (yet) is kept by its absolute name, so that nothing below it is refused once it appears.
func NewRoots(dirs ...string) Roots {
	var r Roots
	for _, d := range dirs {
		if strings.TrimSpace(d) == "" {
			continue
		}
		c, err := canonicalPath(d)
		if err != nil {
			if c, err = filepath.Abs(d); err != nil {
				continue
			}
		}
		dup := false
		for _, have := range r.dirs {
			dup = dup || have == c
		}
		if !dup {
			r.dirs = append(r.dirs, c)
		}
	}
	return r
}

// Dirs lists the roots, absolute and link-free, in the order given.
func (r Roots) Dirs() []string { return append([]string(nil), r.dirs...) }

// Resolve returns the absolute, link-free form of path when it is a root or lies below one; a path that does not
// exist is refused with its os error, one outside every root with ErrOutsideRoots, naming the roots. Callers use
// the returned path, so that a link swapped in after the check cannot lead the run elsewhere.
func (r Roots) Resolve(path string) (string, error) {
	if strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("%q: the name holds a NUL byte", path)
	}
	c, err := canonicalPath(path)
	if err != nil {
		return "", err
	}
	for _, root := range r.dirs {
		if workspace.Within(root, c) {
			return c, nil
		}
	}
	shared := "none"
	if len(r.dirs) > 0 {
		shared = strings.Join(r.dirs, ", ")
	}
	where := ""
	if c != filepath.Clean(path) {
		where = " (" + c + ")"
	}
	return "", fmt.Errorf("%s%s is %w (%s); start the server with --root DIR, or list the folder under sources.roots in the configuration, to share it",
		path, where, ErrOutsideRoots, shared)
}

func canonicalPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}
