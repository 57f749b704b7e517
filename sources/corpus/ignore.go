package corpus

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ignorer is the ignore rules that apply below a folder of a walked tree:
// that folder's .gitignore and those of the folders above it up to the top
// of the git work tree, then the repository's .git/info/exclude, nearest
// first. As in git, the nearest file with a matching pattern decides, and
// within a file the last matching pattern; a folder that is excluded is not
// walked, so nothing under it can be brought back by a deeper "!pattern".
type ignorer struct {
	dir    string // the folder the patterns are relative to
	rules  []*ignoreRule
	parent *ignorer
	// rulesIn and bytesIn count the patterns, and their bytes, of this
	// level and every level above: what each entry below is tried on.
	rulesIn, bytesIn int
}

// ignoreRule is one pattern of an ignore file.
type ignoreRule struct {
	pat     *globPattern // the pattern without its leading "!" and trailing "/"
	negate  bool
	dirOnly bool // ends with "/": matches folders only
	// literal is the longest run of plain characters of the pattern: a
	// path without it cannot match, which spares most patterns (a scan
	// tries every pattern on every entry).
	literal string
}

// matches reports whether the pattern matches rel, a slash-separated path
// relative to the folder of its file (a folder when dir). As in git, a
// pattern matches the path itself: what is below an excluded folder is
// excluded by not walking it, so "!*/" re-includes folders, not every file
// in them.
func (r *ignoreRule) matches(rel string, dir bool) bool {
	if r.dirOnly && !dir || !strings.Contains(rel, r.literal) {
		return false
	}
	return r.pat.match(rel)
}

// Bounds on the ignore rules an entry is tried on: those of its folder's
// .gitignore and of every level above it, together. Matching costs each
// pattern a few machine words per character of the name, so these bound
// the cost of every entry of a scan. An ignore file that would go past
// them is not applied in part: the folder it is in is not indexed, and is
// reported as failed with the file's name and counts, since a pattern left
// out could be the one that keeps a secret out of the index.
const (
	maxIgnoreBytes = 256 << 10
	maxIgnoreRules = 10000
	// maxIgnoreUp is how many folders above an indexed folder are looked
	// at for the .git that marks the top of its work tree.
	maxIgnoreUp = 64
)

// enter returns the ignorer for the entries of dir, whose parent's is g.
func (g *ignorer) enter(dir string) (*ignorer, error) {
	return g.with(dir, filepath.Join(dir, ".gitignore"))
}

// with returns g with the patterns of the ignore file p, relative to dir,
// in front; g itself when p is missing, unreadable, empty or not a regular
// file (git does not follow a symbolic link to a .gitignore either). It
// fails when the patterns would take the rules in effect past the bounds.
func (g *ignorer) with(dir, p string) (*ignorer, error) {
	info, err := os.Lstat(p)
	if err != nil || !info.Mode().IsRegular() {
		return g, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return g, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreBytes+1))
	f.Close()
	if err != nil {
		return g, nil
	}
	rulesIn, bytesIn := 0, 0
	if g != nil {
		rulesIn, bytesIn = g.rulesIn, g.bytesIn
	}
	if len(data) > maxIgnoreBytes || bytesIn+len(data) > maxIgnoreBytes {
		return nil, fmt.Errorf("ignore file %s: %d bytes (with the ignore files above it: %d), more than the %d KiB of patterns applied at once; nothing under %s is indexed",
			p, info.Size(), int64(bytesIn)+info.Size(), maxIgnoreBytes>>10, dir)
	}
	rules := compileIgnore(string(data))
	if len(rules) == 0 {
		return g, nil
	}
	if rulesIn+len(rules) > maxIgnoreRules {
		return nil, fmt.Errorf("ignore file %s: %d patterns (with the ignore files above it: %d), more than the %d applied at once; nothing under %s is indexed",
			p, len(rules), rulesIn+len(rules), maxIgnoreRules, dir)
	}
	return &ignorer{dir: dir, rules: rules, parent: g, rulesIn: rulesIn + len(rules), bytesIn: bytesIn + len(data)}, nil
}

// compileIgnore compiles the patterns of an ignore file. A pattern with a
// slash in it (other than at its end) is anchored to the folder of its
// file; one without matches a name at any depth below it.
func compileIgnore(text string) []*ignoreRule {
	var rules []*ignoreRule
	for line := range strings.SplitSeq(text, "\n") {
		// Spaces are trimmed at both ends (git keeps leading ones and an
		// escaped trailing one); file names like that are rare.
		line = strings.Trim(strings.TrimRight(line, "\r"), " ")
		if line == "" || line[0] == '#' {
			continue
		}
		r := &ignoreRule{}
		if line[0] == '!' {
			r.negate, line = true, line[1:]
		}
		body := strings.TrimSuffix(line, "/")
		r.dirOnly = len(body) < len(line)
		if body == "" || body == "/" {
			continue
		}
		anchored := strings.Contains(body, "/")
		r.pat = compileGlob(strings.TrimPrefix(body, "/"), anchored)
		if r.pat.never {
			continue
		}
		r.literal = r.pat.literal()
		rules = append(rules, r)
	}
	return rules
}

// match reports whether the entry p (a folder when dir) is ignored.
func (g *ignorer) match(p string, dir bool) bool {
	for ; g != nil; g = g.parent {
		rel, ok := relSlash(g.dir, p)
		if !ok {
			continue
		}
		for i := len(g.rules) - 1; i >= 0; i-- {
			if g.rules[i].matches(rel, dir) {
				return !g.rules[i].negate
			}
		}
	}
	return false
}

// relSlash returns p relative to dir, slash-separated; ok is false when p
// is not below dir.
func relSlash(dir, p string) (string, bool) {
	if rest, ok := strings.CutPrefix(p, dir); ok && len(rest) > 1 && rest[0] == filepath.Separator {
		return filepath.ToSlash(rest[1:]), true
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// aboveRoot returns the ignore rules that apply to the entries of the
// indexed folder root from above it: git applies every .gitignore from the
// top of the work tree down, and the repository's .git/info/exclude. The
// top is the nearest folder at or above root holding a .git folder, or a
// .git file as in linked work trees and submodules. The search goes at most
// maxIgnoreUp folders up and stops below the user's home folder, so that a
// home folder kept in git (whose .gitignore often says "*") does not hide
// every folder under it. Without a top, no rules apply from above. It fails
// when the ignore files above root go past the bounds.
//
// The folder named for indexing is indexed even when a pattern above it
// excludes it or a folder above it: git would ignore all of it, but the
// user asked for it by name, and an index of nothing helps no one. So the
// patterns above that exclude root or a folder above it are left out; the
// others apply to its entries as git applies them (a "*.txt" in the top
// folder still excludes root's text files, and after "*" and "!*/" only
// what another pattern re-includes is indexed).
func aboveRoot(root string) (*ignorer, error) {
	home, _ := os.UserHomeDir()
	var up []string // the folders above root, nearest first, up to the top
	top := ""
	for d, n := root, 0; n <= maxIgnoreUp; n++ {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			top = d
			break
		}
		parent := filepath.Dir(d)
		if parent == d || parent == home {
			break
		}
		up = append(up, parent)
		d = parent
	}
	if top == "" {
		return nil, nil
	}
	var g *ignorer
	var err error
	if gitDir := gitDirOf(top); gitDir != "" {
		if g, err = g.with(top, filepath.Join(gitDir, "info", "exclude")); err != nil {
			return nil, err
		}
	}
	for i := len(up) - 1; i >= 0; i-- {
		if g, err = g.enter(up[i]); err != nil {
			return nil, err
		}
	}
	// Leave out the patterns that exclude root or a folder above it, one
	// at a time, until none is excluded: root is then indexed as if it
	// were not, and a pattern that, say, re-includes folders after "*"
	// still counts.
	for d := top; d != root; {
		rel, err := filepath.Rel(d, root)
		next, _, _ := strings.Cut(rel, string(filepath.Separator))
		if err != nil || next == ".." || next == "." {
			break
		}
		d = filepath.Join(d, next)
		dropped := true
		for dropped {
			dropped = g.drop(d)
		}
	}
	return g, nil
}

// drop removes the pattern that excludes the folder p, if any, from the
// levels of g above p, and reports whether it did.
func (g *ignorer) drop(p string) bool {
	for ; g != nil; g = g.parent {
		rel, ok := relSlash(g.dir, p)
		if !ok {
			continue
		}
		for i := len(g.rules) - 1; i >= 0; i-- {
			if g.rules[i].matches(rel, true) {
				if g.rules[i].negate {
					return false
				}
				g.rules = slices.Delete(g.rules, i, i+1)
				return true
			}
		}
	}
	return false
}
