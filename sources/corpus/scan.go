package corpus

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	gitignore "github.com/sabhiram/go-gitignore"
)

// scan walks the roots and returns the indexable files, recording every
// other file (and excluded folder) in st with its outcome. It never opens
// a file except .gitignore files, and those only when they are regular.
func (ix *Index) scan(ctx context.Context, roots []root, st *Stats) ([]found, error) {
	var out []found
	// A walk meets each path once; only overlapping roots meet one twice.
	var seen map[string]bool
	if len(roots) > 1 {
		seen = map[string]bool{}
	}
	note := func(path string, o Outcome, detail string) {
		switch o {
		case SkippedType:
			st.SkippedType++
		case TooLarge:
			st.TooLarge++
		case Excluded:
			st.Excluded++
		}
		st.Files = append(st.Files, FileOutcome{Path: path, Outcome: o, Detail: detail})
	}
	// The walk only lists: files to look at (stat, following a symlink) and
	// excluded entries, in walk order. The files are then looked at in
	// parallel (a no-op re-index is mostly these stat calls) and the
	// outcomes recorded in walk order.
	type item struct {
		path     string
		consider bool   // else excluded (for detail) or failed (err)
		detail   string // why excluded
		info     os.FileInfo
		err      error // the walk's or the stat's
	}
	var items []item
	consider := func(p string) {
		if seen != nil {
			if seen[p] {
				return
			}
			seen[p] = true
		}
		items = append(items, item{path: p, consider: true})
	}
	for _, r := range roots {
		if !r.dir {
			if _, err := os.Lstat(r.path); err == nil {
				consider(r.path)
			}
			continue
		}
		ign := ignorer{root: r.path, files: map[string]*gitignore.GitIgnore{}}
		err := filepath.WalkDir(r.path, func(p string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil {
				items = append(items, item{path: p, err: err})
				if d != nil && d.IsDir() && p != r.path {
					return fs.SkipDir
				}
				return nil
			}
			if p == r.path {
				ign.enter(p)
				return nil
			}
			name := d.Name()
			exclude := func(why string) error {
				items = append(items, item{path: p, detail: why})
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if strings.HasPrefix(name, ".") {
				return exclude("hidden")
			}
			if d.IsDir() {
				switch {
				case p == ix.dir:
					return fs.SkipDir
				case slices.Contains(excludedDirs, name):
					return exclude("vendored or installed dependencies")
				case ign.match(p, true):
					return exclude(".gitignore")
				}
				ign.enter(p)
				return nil
			}
			if ign.match(p, false) {
				return exclude(".gitignore")
			}
			if why := excludedName(name); why != "" {
				return exclude(why)
			}
			consider(p)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", r.path, err)
		}
	}

	var todo []int
	for i, it := range items {
		if it.consider {
			todo = append(todo, i)
		}
	}
	workers := min(max(2*runtime.GOMAXPROCS(0), 4), 16)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(todo)) {
		wg.Go(func() {
			for {
				k := int(next.Add(64)) - 64
				if k >= len(todo) || ctx.Err() != nil {
					return
				}
				for _, i := range todo[k:min(k+64, len(todo))] {
					items[i].info, items[i].err = os.Stat(items[i].path)
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}

	for _, it := range items {
		p := it.path
		if !it.consider && it.err == nil {
			note(p, Excluded, it.detail)
			continue
		}
		info, err := it.info, it.err
		if err != nil {
			st.Failed = append(st.Failed, FileError{Path: p, Err: err})
			st.Files = append(st.Files, FileOutcome{Path: p, Outcome: Failed, Detail: err.Error()})
			continue
		}
		if info.IsDir() {
			continue // a symlinked folder: not followed
		}
		if !info.Mode().IsRegular() {
			note(p, Excluded, "not a regular file ("+info.Mode().Type().String()+")")
			continue
		}
		f, ok := formatOf(p)
		if !ok {
			ext := filepath.Ext(p)
			if ext == "" {
				ext = "no extension"
			}
			note(p, SkippedType, ext)
			continue
		}
		if info.Size() > maxFileSize {
			note(p, TooLarge, fmt.Sprintf("%d MiB", info.Size()>>20))
			continue
		}
		out = append(out, found{path: p, size: info.Size(), mod: info.ModTime(), f: f})
	}
	return out, nil
}

// ignorer applies the .gitignore files found in a walked tree: each one to
// the paths below its folder.
type ignorer struct {
	root  string
	files map[string]*gitignore.GitIgnore // folder → its .gitignore
}

func (g *ignorer) enter(dir string) {
	p := filepath.Join(dir, ".gitignore")
	info, err := os.Lstat(p)
	if err != nil || !info.Mode().IsRegular() || info.Size() > 1<<20 {
		return
	}
	gi, err := gitignore.CompileIgnoreFile(p)
	if err == nil {
		g.files[dir] = gi
	}
}

func (g *ignorer) match(p string, dir bool) bool {
	if len(g.files) == 0 {
		return false
	}
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if gi := g.files[d]; gi != nil {
			rel, err := filepath.Rel(d, p)
			if err == nil {
				rel = filepath.ToSlash(rel)
				if dir {
					rel += "/"
				}
				if gi.MatchesPath(rel) {
					return true
				}
			}
		}
		if d == g.root || len(d) <= len(g.root) {
			return false
		}
	}
}
