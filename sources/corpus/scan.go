package corpus

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	gitignore "github.com/sabhiram/go-gitignore"
)

// scan walks the roots and returns the indexable files in walk order (each
// folder's entries sorted by name, a folder's contents right after it),
// recording every other file (and excluded folder) in st with its outcome.
// It never opens a file except ignore files (.gitignore, .git/info/exclude
// and a .git file naming the repository), and those only when they are
// regular. A folder root starts with the rules from above it (aboveRoot).
//
// A no-op re-index is mostly this scan, and mostly its one stat call per
// file, so folders are read in parallel and each folder's files are looked
// at relative to the folder, which spares the kernel resolving the whole
// path again for every file.
func (ix *Index) scan(ctx context.Context, roots []root, st *Stats) ([]found, error) {
	var tops []*scanDir // one per root, in order
	var queue []scanTask
	for _, r := range roots {
		d := &scanDir{path: r.path}
		tops = append(tops, d)
		if !r.dir {
			if _, err := os.Lstat(r.path); err == nil {
				it := scanItem{path: r.path, file: true}
				info, err := os.Stat(r.path)
				it.look(info, err)
				d.items = []scanItem{it}
			}
			continue
		}
		d.ign = aboveRoot(r.path)
		queue = append(queue, scanTask{d: d, list: true})
	}
	if err := ix.runScan(ctx, queue); err != nil {
		return nil, err
	}

	// Record the outcomes in walk order.
	var seen map[string]bool // a walk meets each path once; only overlapping roots meet one twice
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
	n := 0
	var count func(d *scanDir)
	count = func(d *scanDir) {
		for i := range d.items {
			if d.items[i].sub != nil {
				count(d.items[i].sub)
			} else if d.items[i].outcome == "" {
				n++
			}
		}
	}
	for _, d := range tops {
		count(d)
	}
	out := make([]found, 0, n)
	var emit func(d *scanDir)
	emit = func(d *scanDir) {
		for i := range d.items {
			it := &d.items[i]
			if it.sub != nil {
				emit(it.sub)
				continue
			}
			if it.file && seen != nil {
				if seen[it.path] {
					continue
				}
				seen[it.path] = true
			}
			switch it.outcome {
			case "":
				out = append(out, found{path: it.path, size: it.size, mod: it.mod, ino: it.ino, f: it.f})
			case notFollowed:
			case Failed:
				st.Failed = append(st.Failed, FileError{Path: it.path, Err: it.err})
				st.Files = append(st.Files, FileOutcome{Path: it.path, Outcome: Failed, Detail: it.err.Error()})
			default:
				note(it.path, it.outcome, it.detail)
			}
		}
	}
	for _, d := range tops {
		emit(d)
	}
	return out, nil
}

// notFollowed marks a symbolic link to a folder: neither walked nor reported.
const notFollowed Outcome = "-"

// scanDir is one folder of a scan and, once read, its entries in walk order.
type scanDir struct {
	path  string
	ign   *ignorer // the .gitignore files that apply to its entries
	items []scanItem
}

// scanItem is one entry of a folder: a walked subfolder, or a path with its
// outcome ("" for an indexable file).
type scanItem struct {
	path    string
	sub     *scanDir // a walked subfolder, whose items take this place in walk order
	file    bool     // a file to look at (stat, following a symbolic link)
	outcome Outcome
	detail  string
	err     error // when Failed
	f       format
	size    int64
	mod     int64 // unix nanoseconds
	ino     uint64
}

// scanTask is reading one folder (list), or looking at the files
// d.items[lo:hi].
type scanTask struct {
	d      *scanDir
	list   bool
	lo, hi int
}

// statBatch is how many files of one folder one task looks at: a folder
// with more is looked at by several workers.
const statBatch = 512

// runScan runs the tasks, and those they make, on a few workers. The walk
// order does not depend on which worker did what: every folder's entries
// are kept in its own scanDir.
func (ix *Index) runScan(ctx context.Context, queue []scanTask) error {
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		pending = len(queue)
	)
	worker := func() {
		mu.Lock()
		for {
			for len(queue) == 0 && pending > 0 {
				cond.Wait()
			}
			if pending == 0 {
				mu.Unlock()
				return
			}
			t := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			mu.Unlock()
			var more []scanTask
			if ctx.Err() == nil {
				if t.list {
					more = ix.readDir(t.d)
				} else {
					statFiles(t.d, t.lo, t.hi)
				}
			}
			mu.Lock()
			queue = append(queue, more...)
			pending += len(more) - 1
			if len(more) > 0 || pending == 0 {
				cond.Broadcast()
			}
		}
	}
	// Stat calls wait for the disk when the metadata is not cached: more
	// workers than cores then help.
	workers := min(max(2*runtime.GOMAXPROCS(0), 4), 16)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(worker)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// readDir lists d, sorted by name, decides what to do with each entry, and
// returns the tasks that remain: its subfolders, and its files to look at
// when there are many. It looks at a few files itself.
func (ix *Index) readDir(d *scanDir) []scanTask {
	var entries []fs.DirEntry
	f, err := os.Open(d.path)
	if err == nil {
		entries, err = f.ReadDir(-1)
		f.Close()
	}
	if err != nil {
		d.items = append(d.items, scanItem{path: d.path, outcome: Failed, err: err})
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	ign := d.ign
	for _, e := range entries {
		if e.Name() == ".git" {
			// The top of a work tree (a nested repository, a submodule):
			// as in git, the rules of the folders above stop here.
			ign = nil
			if gitDir := gitDirOf(d.path); gitDir != "" {
				ign = ign.with(d.path, filepath.Join(gitDir, "info", "exclude"))
			}
			break
		}
	}
	for _, e := range entries {
		if e.Name() == ".gitignore" {
			ign = ign.enter(d.path)
			break
		}
	}
	prefix := d.path
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	items := slices.Grow(d.items, len(entries))
	var more []scanTask
	files := 0
	for _, e := range entries {
		name := e.Name()
		p := prefix + name
		isDir := e.IsDir()
		var why string
		switch {
		case strings.HasPrefix(name, "."):
			why = "hidden"
		case isDir && p == ix.dir:
			continue
		case isDir && slices.Contains(excludedDirs, name):
			why = "vendored or installed dependencies"
		case ign.match(p, isDir):
			why = ".gitignore"
		case isDir:
			sub := &scanDir{path: p, ign: ign}
			items = append(items, scanItem{path: p, sub: sub})
			more = append(more, scanTask{d: sub, list: true})
			continue
		default:
			why = excludedName(name)
		}
		if why != "" {
			items = append(items, scanItem{path: p, outcome: Excluded, detail: why})
			continue
		}
		items = append(items, scanItem{path: p, file: true})
		files++
	}
	d.items = items
	if files <= statBatch {
		statFiles(d, 0, len(items))
		return more
	}
	for lo := 0; lo < len(items); lo += statBatch {
		more = append(more, scanTask{d: d, lo: lo, hi: min(lo+statBatch, len(items))})
	}
	return more
}

// statFiles looks at the files among d.items[lo:hi] (following symbolic
// links) and sets their outcomes.
func statFiles(d *scanDir, lo, hi int) {
	var dir *dirStat
	opened := false
	for i := lo; i < hi; i++ {
		it := &d.items[i]
		if !it.file {
			continue
		}
		if !opened {
			opened = true
			dir, _ = openDirStat(d.path) // nil: by whole paths
		}
		if dir != nil {
			if size, mod, ino, ok := dir.regular(filepath.Base(it.path)); ok {
				it.regular(size, mod, ino)
				continue
			}
		}
		it.look(os.Stat(it.path))
	}
	if dir != nil {
		dir.close()
	}
}

// look sets the outcome of a file from what os.Stat returned for it: ""
// when it is to be indexed.
func (it *scanItem) look(info os.FileInfo, err error) {
	switch {
	case err != nil:
		it.outcome, it.err = Failed, err
		return
	case info.IsDir():
		it.outcome = notFollowed
		return
	case !info.Mode().IsRegular():
		it.outcome, it.detail = Excluded, "not a regular file ("+info.Mode().Type().String()+")"
		return
	}
	it.regular(info.Size(), info.ModTime().UnixNano(), fileID(info))
}

// regular sets the outcome of a regular file.
func (it *scanItem) regular(size, mod int64, ino uint64) {
	f, ok := formatOf(it.path)
	if !ok {
		ext := filepath.Ext(it.path)
		if ext == "" {
			ext = "no extension"
		}
		it.outcome, it.detail = SkippedType, ext
		return
	}
	if size > maxFileSize {
		it.outcome, it.detail = TooLarge, fmt.Sprintf("%d MiB", size>>20)
		return
	}
	it.f, it.size, it.mod, it.ino = f, size, mod, ino
}

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
}

// ignoreRule is one pattern of an ignore file, compiled on its own so that
// its order and negation are ours to apply.
type ignoreRule struct {
	gi      *gitignore.GitIgnore // the pattern without its leading "!"
	negate  bool
	dirOnly bool // ends with "/": matches folders only
	// below: ends with "/**": matches what is below the folder, not the folder
	below bool
	// exact is the library's regular expression without its "or anything
	// below" ending, made the first time the pattern matches: git matches
	// a pattern against the path itself (what is below an excluded folder
	// is excluded by not walking it), so that "!*/" re-includes folders,
	// not every file in them.
	exact atomic.Pointer[regexp.Regexp]
}

// matches reports whether the pattern matches rel, a slash-separated path
// relative to the folder of its file (a folder when dir).
func (r *ignoreRule) matches(rel string, dir bool) bool {
	if r.dirOnly {
		if !dir {
			return false
		}
		rel += "/"
	}
	ok, ip := r.gi.MatchesPathHow(rel)
	if !ok || ip == nil {
		return ok
	}
	re := r.exact.Load()
	if re == nil {
		expr := ip.Pattern.String()
		for _, end := range []string{"/(|.*)$", "(|/.*)$"} {
			if e, cut := strings.CutSuffix(expr, end); cut {
				if end[0] == '/' {
					e += "/"
				}
				expr = e + "$"
				if r.below {
					expr = strings.TrimSuffix(e, "(|/.*)") + "/.+$"
				}
				break
			}
		}
		var err error
		if re, err = regexp.Compile(expr); err != nil {
			return true // as the library matched it
		}
		r.exact.Store(re)
	}
	return re.MatchString(rel)
}

// Bounds on one ignore file: every pattern is a few compiled regular
// expressions and is tried on every entry below its folder, so a huge or
// hostile file must not stall the scan. Patterns past them are not applied.
const (
	maxIgnoreBytes = 256 << 10
	maxIgnoreRules = 1000
	// maxIgnoreUp is how many folders above an indexed folder are looked
	// at for the .git that marks the top of its work tree.
	maxIgnoreUp = 64
)

// enter returns the ignorer for the entries of dir, whose parent's is g.
func (g *ignorer) enter(dir string) *ignorer {
	return g.with(dir, filepath.Join(dir, ".gitignore"))
}

// with returns g with the patterns of the ignore file p, relative to dir,
// in front; g itself when p is missing, unreadable, empty or not a regular
// file (git does not follow a symbolic link to a .gitignore either).
func (g *ignorer) with(dir, p string) *ignorer {
	info, err := os.Lstat(p)
	if err != nil || !info.Mode().IsRegular() {
		return g
	}
	f, err := os.Open(p)
	if err != nil {
		return g
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreBytes))
	f.Close()
	if err != nil {
		return g
	}
	if len(data) == maxIgnoreBytes {
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			data = data[:i] // not a pattern cut in two
		}
	}
	rules := compileIgnore(string(data))
	if len(rules) == 0 {
		return g
	}
	return &ignorer{dir: dir, rules: rules, parent: g}
}

// compileIgnore compiles the patterns of an ignore file, at most
// maxIgnoreRules of them. The library matches a pattern with a slash in it
// anywhere below the folder; git anchors such a pattern to the folder of
// its file, which a leading "/" tells the library.
func compileIgnore(text string) []*ignoreRule {
	var rules []*ignoreRule
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if !strings.HasSuffix(line, `\ `) {
			line = strings.TrimRight(line, " ")
		}
		if line == "" || line[0] == '#' {
			continue
		}
		r := &ignoreRule{}
		if line[0] == '!' {
			r.negate, line = true, line[1:]
		}
		body := strings.TrimSuffix(line, "/")
		r.dirOnly = len(body) < len(line)
		r.below = strings.HasSuffix(body, "/**")
		if body == "" || body == "/" {
			continue
		}
		if strings.Contains(body, "/") && line[0] != '/' {
			line = "/" + line
		}
		line, ok := globToLib(line)
		if !ok {
			continue
		}
		r.gi = gitignore.CompileIgnoreLines(line)
		rules = append(rules, r)
		if len(rules) == maxIgnoreRules {
			break
		}
	}
	return rules
}

// globToLib rewrites the glob syntax of a pattern that the library would
// take for regular expression syntax (it turns only "*", "**" and "." into
// their regular expressions and keeps the rest): "?" is any one character
// but "/", "[!…]" is a negated class, "+", "(", "|" and the like are
// themselves, and a backslash makes the next character itself. ok is false
// for a pattern git matches nothing with (a trailing backslash).
func globToLib(p string) (string, bool) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			if i+1 == len(p) {
				return "", false
			}
			i++
			switch n := p[i]; {
			case n == '*':
				b.WriteString(`\*`) // kept literal by the library
			case n == '.':
				b.WriteByte('.') // escaped by the library
			case n == '?':
				b.WriteString("[?]")
			case n < 0x80 && (n >= 'a' && n <= 'z' || n >= 'A' && n <= 'Z' || n >= '0' && n <= '9' || n == ' ' || n == '/'):
				b.WriteByte(n)
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
		case inClass:
			switch c {
			case ']':
				inClass = false
				b.WriteByte(c)
			case '*', '[':
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		case c == '[' && strings.IndexByte(p[i+1:], ']') >= 0:
			inClass = true
			b.WriteByte('[')
			if i+1 < len(p) && (p[i+1] == '!' || p[i+1] == '^') {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' { // a "]" first is itself
				b.WriteString(`\]`)
				i++
			}
		case c == '?':
			b.WriteString("[^/]")
		case strings.IndexByte("+(){}|^$[]", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// match reports whether the entry p (a folder when dir) is ignored.
func (g *ignorer) match(p string, dir bool) bool {
	for ; g != nil; g = g.parent {
		rel, err := filepath.Rel(g.dir, p)
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		for i := len(g.rules) - 1; i >= 0; i-- {
			if g.rules[i].matches(rel, dir) {
				return !g.rules[i].negate
			}
		}
	}
	return false
}

// aboveRoot returns the ignore rules that apply to the entries of the
// indexed folder root from above it: git applies every .gitignore from the
// top of the work tree down, and the repository's .git/info/exclude. The
// top is the nearest folder at or above root holding a .git folder, or a
// .git file as in linked work trees and submodules. The search goes at most
// maxIgnoreUp folders up and stops below the user's home folder, so that a
// home folder kept in git (whose .gitignore often says "*") does not hide
// every folder under it. Without a top, no rules apply from above.
//
// The folder named for indexing is indexed even when a pattern above it
// excludes it or a folder above it: git would ignore all of it, but the
// user asked for it by name, and an index of nothing helps no one. So the
// patterns above that exclude root or a folder above it are left out; the
// others apply to its entries as git applies them (a "*.txt" in the top
// folder still excludes root's text files, and after "*" and "!*/" only
// what another pattern re-includes is indexed).
func aboveRoot(root string) *ignorer {
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
		return nil
	}
	var g *ignorer
	if gitDir := gitDirOf(top); gitDir != "" {
		g = g.with(top, filepath.Join(gitDir, "info", "exclude"))
	}
	for i := len(up) - 1; i >= 0; i-- {
		g = g.enter(up[i])
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
	return g
}

// drop removes the pattern that excludes the folder p, if any, from the
// levels of g above p, and reports whether it did.
func (g *ignorer) drop(p string) bool {
	for ; g != nil; g = g.parent {
		rel, err := filepath.Rel(g.dir, p)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		rel = filepath.ToSlash(rel)
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

// gitDirOf returns the repository folder of the work tree whose top is
// top: top/.git, or the folder a .git file points to ("gitdir: path"), or
// for a linked work tree the common folder its commondir file names, which
// holds info/exclude. "" when there is none.
func gitDirOf(top string) string {
	p := filepath.Join(top, ".git")
	info, err := os.Lstat(p)
	switch {
	case err != nil:
		return ""
	case info.IsDir():
		return p
	case !info.Mode().IsRegular() || info.Size() > 4<<10:
		return ""
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(top, dir)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil && len(data) < 4<<10 {
		common := strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		return common
	}
	return dir
}
