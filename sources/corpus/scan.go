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

	"github.com/deepresearch/deepresearch/sources/extract"
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
		d := &scanDir{path: r.path, root: r.path, real: r.path, formats: ix.formats}
		tops = append(tops, d)
		if !r.dir {
			if _, err := os.Lstat(r.path); err == nil {
				it := scanItem{path: r.path, file: true}
				info, err := os.Stat(r.path)
				it.look(d.formats, info, err)
				d.items = []scanItem{it}
			}
			continue
		}
		ign, err := aboveRoot(r.path)
		if err != nil {
			d.items = []scanItem{{path: r.path, outcome: Failed, err: err}}
			continue
		}
		d.ign = ign
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
		case LinkOutside:
			st.LinksOutside++
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
				out = append(out, found{path: it.path, size: it.size, mod: it.mod, ino: it.ino, f: it.f, link: it.link})
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

// notFollowed marks a symbolic link to a folder inside the indexed folder
// (walked by its own path): neither walked nor reported.
const notFollowed Outcome = "-"

// scanDir is one folder of a scan and, once read, its entries in walk order.
type scanDir struct {
	path string
	// root is the indexed folder it is in (resolved); real is where the
	// folder is once its links are resolved, which differs from path only
	// below a followed link.
	root, real string
	parent     *scanDir
	ign        *ignorer // the .gitignore files that apply to its entries
	items      []scanItem
	formats    *extract.Registry // what its files are read as
}

// scanItem is one entry of a folder: a walked subfolder, or a path with its
// outcome ("" for an indexable file).
type scanItem struct {
	path    string
	sub     *scanDir // a walked subfolder, whose items take this place in walk order
	file    bool     // a file to look at (stat, following a symbolic link)
	link    bool     // a symbolic link to a file, to be followed
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
					more = ix.readDir(ctx, t.d)
				} else {
					statFiles(ctx, t.d, t.lo, t.hi)
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
// when there are many. It looks at a few files itself. A folder whose
// ignore file cannot be applied whole is not walked, and is reported as
// failed. On cancellation it stops within a few entries.
func (ix *Index) readDir(ctx context.Context, d *scanDir) []scanTask {
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
	var ignErr error
	for _, e := range entries {
		if e.Name() == ".git" {
			// The top of a work tree (a nested repository, a submodule):
			// as in git, the rules of the folders above stop here.
			ign = nil
			if gitDir := gitDirOf(d.path); gitDir != "" {
				ign, ignErr = ign.with(d.path, filepath.Join(gitDir, "info", "exclude"))
			}
			break
		}
	}
	for _, e := range entries {
		if e.Name() == ".gitignore" && ignErr == nil {
			ign, ignErr = ign.enter(d.path)
			break
		}
	}
	if ignErr != nil {
		d.items = append(d.items, scanItem{path: d.path, outcome: Failed, err: ignErr})
		return nil
	}
	prefix := d.path
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	items := slices.Grow(d.items, len(entries))
	var more []scanTask
	files := 0
	for i, e := range entries {
		if i%256 == 255 && ctx.Err() != nil {
			return nil
		}
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
			sub := &scanDir{path: p, ign: ign, root: d.root, real: filepath.Join(d.real, name), parent: d, formats: d.formats}
			items = append(items, scanItem{path: p, sub: sub})
			more = append(more, scanTask{d: sub, list: true})
			continue
		case e.Type()&fs.ModeSymlink != 0 && excludedName(name) == "":
			it, sub := ix.link(d, p, ign)
			items = append(items, it)
			if sub != nil {
				more = append(more, scanTask{d: sub, list: true})
			}
			if it.file {
				files++
			}
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
		statFiles(ctx, d, 0, len(items))
		return more
	}
	for lo := 0; lo < len(items); lo += statBatch {
		more = append(more, scanTask{d: d, lo: lo, hi: min(lo+statBatch, len(items))})
	}
	return more
}

// link decides what to do with the symbolic link p of folder d. A link
// whose target is outside the indexed folder is not followed but counted
// (LinkOutside), unless links are to be followed: a cloned repository must
// not bring /etc/passwd into reports and prompts by holding a link to it.
// A link to a file inside the folder is indexed; a link to a folder inside
// it is not walked, the folder being walked by its own path. A followed
// link to a folder is walked unless it leads to a folder being walked
// above it (a loop). It returns the item, and the folder to walk if any.
func (ix *Index) link(d *scanDir, p string, ign *ignorer) (scanItem, *scanDir) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return scanItem{path: p, outcome: Failed, err: err}, nil
	}
	info, err := os.Stat(target)
	if err != nil {
		return scanItem{path: p, outcome: Failed, err: err}, nil
	}
	inside := within(d.root, target)
	switch {
	case !inside && !ix.followLinks:
		return scanItem{path: p, outcome: LinkOutside, detail: "-> " + target}, nil
	case !info.IsDir():
		return scanItem{path: p, file: true, link: true}, nil
	case inside:
		return scanItem{path: p, outcome: notFollowed}, nil
	}
	for a := d; a != nil; a = a.parent {
		if within(target, a.real) {
			return scanItem{path: p, outcome: Excluded, detail: "symbolic link to a folder above it (" + target + ")"}, nil
		}
	}
	sub := &scanDir{path: p, ign: ign, root: d.root, real: target, parent: d, formats: d.formats}
	return scanItem{path: p, sub: sub}, sub
}

// within reports whether p is dir or below it (both clean and absolute).
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir) && (strings.HasSuffix(dir, string(filepath.Separator)) || p[len(dir)] == filepath.Separator)
}

// statFiles looks at the files among d.items[lo:hi] (following symbolic
// links) and sets their outcomes.
func statFiles(ctx context.Context, d *scanDir, lo, hi int) {
	var dir *dirStat
	opened := false
	for i := lo; i < hi; i++ {
		if i%256 == 255 && ctx.Err() != nil {
			break
		}
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
				it.regular(d.formats, size, mod, ino)
				continue
			}
		}
		info, err := os.Stat(it.path)
		it.look(d.formats, info, err)
	}
	if dir != nil {
		dir.close()
	}
}

// look sets the outcome of a file from what os.Stat returned for it: ""
// when it is to be indexed.
func (it *scanItem) look(formats *extract.Registry, info os.FileInfo, err error) {
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
	it.regular(formats, info.Size(), info.ModTime().UnixNano(), fileID(info))
}

// regular sets the outcome of a regular file.
func (it *scanItem) regular(formats *extract.Registry, size, mod int64, ino uint64) {
	f, ok := formats.ByPath(it.path)
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
