package corpus

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	gitignore "github.com/sabhiram/go-gitignore"
)

// scan walks the roots and returns the indexable files, recording every
// other file (and excluded folder) in st with its outcome. It never opens
// a file except .gitignore files, and those only when they are regular.
func (ix *Index) scan(ctx context.Context, roots []root, st *Stats) ([]found, error) {
	var out []found
	seen := map[string]bool{}
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
	// consider checks one file (following a symlink) and adds it to out.
	consider := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		info, err := os.Stat(p)
		if err != nil {
			st.Failed = append(st.Failed, FileError{Path: p, Err: err})
			st.Files = append(st.Files, FileOutcome{Path: p, Outcome: Failed, Detail: err.Error()})
			return
		}
		if info.IsDir() {
			return // a symlinked folder: not followed
		}
		if !info.Mode().IsRegular() {
			note(p, Excluded, "not a regular file ("+info.Mode().Type().String()+")")
			return
		}
		f, ok := formatOf(p)
		if !ok {
			ext := filepath.Ext(p)
			if ext == "" {
				ext = "no extension"
			}
			note(p, SkippedType, ext)
			return
		}
		if info.Size() > maxFileSize {
			note(p, TooLarge, fmt.Sprintf("%d MiB", info.Size()>>20))
			return
		}
		out = append(out, found{path: p, size: info.Size(), mod: info.ModTime(), f: f})
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
				st.Failed = append(st.Failed, FileError{Path: p, Err: err})
				st.Files = append(st.Files, FileOutcome{Path: p, Outcome: Failed, Detail: err.Error()})
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
				note(p, Excluded, why)
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
