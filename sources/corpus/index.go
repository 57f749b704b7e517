// Package corpus is a local document collection as a search provider: a
// persistent Bleve full-text index over documents (Markdown, plain text,
// reStructuredText, AsciiDoc, Org, HTML, PDF, EPUB, DOCX, PPTX, XLSX, CSV,
// Jupyter notebooks) and source code, re-indexed incrementally, split into
// chunks whose ids are file URLs with line anchors
// (file:///abs/path#L12-L40).
//
// Line numbers count lines of the extracted document text — the text Fetch
// returns. For text, markup and source files that is the file itself (CRLF
// folded to LF); for HTML it is the Markdown rendering and for PDF and
// office files the extracted text, because those are what an agent reads
// and quotes.
//
// Any number of processes may use one index at once: readers open the
// current generation read-only, and an update builds a new generation that
// is swapped in atomically (see store.go).
package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/sources/extract"
)

const (
	// defaultBatchOps bounds one Bleve batch (index + delete operations) when
	// Options.BatchOps is zero; bigger batches index faster but hold more
	// memory and delay cancellation.
	defaultBatchOps = 500
	// maxFileSize keeps a stray disk image or video out of memory.
	maxFileSize = 100 << 20
)

// Index is a persistent corpus index. Search and Fetch are safe for
// concurrent use with each other and with Add, also across processes; Add
// calls are serialised, across processes by a lock file.
type Index struct {
	dir         string
	log         *slog.Logger
	progress    func(Progress)
	followLinks bool
	budget      int64             // bytes; zero: DefaultMemoryBudget
	maxText     int64             // bytes of text from one container; zero: extract.MaxTextSize
	batchOps    int               // operations per Bleve batch
	formats     *extract.Registry // nil: the built-in formats

	// PerFile caps how many chunks of one file a search returns, so a long
	// document cannot crowd out every other source. Zero means 2. Set it
	// before the first Search.
	PerFile int

	addMu sync.Mutex // one Add at a time in this process

	depth                          depth // zero: the defaults
	keepCopies                     bool  // tests of tie order: identical files are not collapsed to one
	postingsSearches, fullSearches atomic.Int64

	mu     sync.Mutex
	cur    *generation // the generation searched; nil until first use
	closed bool
}

// Outcome is what Add did with one file.
type Outcome string

// The outcomes Add reports.
const (
	Added       Outcome = "added"
	Updated     Outcome = "updated"
	Unchanged   Outcome = "unchanged"
	Removed     Outcome = "removed"
	SkippedType Outcome = "unsupported type"
	TooLarge    Outcome = "too large"
	Binary      Outcome = "binary"
	Excluded    Outcome = "excluded" // hidden, vendored, generated or .gitignore'd
	Failed      Outcome = "failed"
	// LinkOutside is a symbolic link whose target is outside the indexed
	// folder, not followed (Options.FollowLinks follows it).
	LinkOutside Outcome = "link outside"
)

// FileOutcome is one file (or excluded folder) Add looked at.
type FileOutcome struct {
	Path    string
	Outcome Outcome
	Detail  string // the reason, the error or the language
}

// Stats reports one Add.
type Stats struct {
	Added       int // new files indexed
	Updated     int // changed files re-indexed
	Unchanged   int // unchanged documents (same mtime and size, or same content hash)
	Removed     int // files gone from disk (or no longer indexable), dropped from the index
	SkippedType int // files of a type the corpus does not index
	TooLarge    int // files over the size limit
	Binary      int // files with binary content under a text extension
	Excluded    int // hidden, vendored, generated or .gitignore'd files and folders
	// LinksOutside counts the symbolic links to files and folders outside
	// the indexed folder, not followed.
	LinksOutside int
	Chunks       int // chunks written
	// Failed, like Binary, TooLarge and Excluded, counts also the unchanged
	// files that an earlier Add read and found to be so: they are not read
	// again until they change, and are reported by that outcome, never as
	// Unchanged.
	Failed []FileError
	// Files lists every file and excluded folder looked at, in walk order,
	// with its outcome.
	Files []FileOutcome
	// Waited is how long Add waited for another process's update.
	Waited  time.Duration
	Elapsed time.Duration
	// DocsPerSec is (Added+Updated) per second of Elapsed; when nothing
	// needed indexing it is the rate at which files were checked.
	DocsPerSec float64
}

// FileError is one file that could not be indexed; the rest still are.
type FileError struct {
	Path string
	Err  error
}

func (e FileError) Error() string { return e.Path + ": " + e.Err.Error() }

// Progress is reported while Add works.
type Progress struct {
	// Phase is "waiting" (for another process's update), "scanning",
	// "indexing" or "done".
	Phase string
	Root  string // the first path given to Add
	Done  int    // files processed so far (indexing); while waiting, the other process's (0 if unknown)
	Total int    // files to process (indexing); while waiting, the other process's (0 if unknown)
	Path  string // the file just processed
}

// DefaultDir is where the index for root lives when none is given:
// <user cache dir>/deepresearch/corpus/<hash of the absolute root>, so a
// folder passed to --corpus is indexed once and kept.
func DefaultDir(root string) string {
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = root
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	sum := sha256.Sum256([]byte(abs))
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "deepresearch", "corpus", hex.EncodeToString(sum[:8]))
}

// IsIndex reports whether dir holds a corpus index (in this layout or an
// older one).
func IsIndex(dir string) bool {
	for _, name := range []string{layoutName, legacyManifest} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// Options configures Open; nil means defaults.
type Options struct {
	Logger *slog.Logger
	// Progress, when set, receives Add's progress: at the start and end of
	// each phase and at most every 100 ms in between, from Add's goroutine.
	Progress func(Progress)
	// FollowLinks follows symbolic links to files and folders outside an
	// indexed folder; by default they are skipped and counted
	// (Stats.LinksOutside), as ripgrep and git skip them.
	FollowLinks bool
	// Formats are the document formats files are read as; nil means extract.Builtin().
	Formats *extract.Registry
	// MemoryBudget bounds the memory that the files being indexed at once
	// may take while they are decoded, whatever the number of workers; zero
	// means DefaultMemoryBudget.
	MemoryBudget int64
	// MaxText bounds the text extracted from one container file (an office
	// document, an EPUB, a notebook): past it the file is TooLarge. Zero
	// means extract.MaxTextSize.
	MaxText int64
	// BatchOps bounds the index operations written in one batch, which
	// bounds the memory a file of thousands of chunks takes; zero means 500.
	BatchOps int
}

// Open opens the index in dir, creating it if dir is empty or missing.
func Open(dir string) (*Index, error) { return OpenWith(dir, nil) }

// OpenWith is Open with options. Opening reads nothing but the layout
// marker: the index itself is opened, read-only, by the first Search or
// Fetch.
func OpenWith(dir string, opts *Options) (*Index, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open corpus %s: %w", dir, err)
	}
	ix := &Index{dir: abs, log: slog.New(slog.DiscardHandler), batchOps: defaultBatchOps}
	if opts != nil {
		if opts.Logger != nil {
			ix.log = opts.Logger
		}
		ix.progress = opts.Progress
		ix.followLinks = opts.FollowLinks
		ix.budget = opts.MemoryBudget
		ix.maxText = opts.MaxText
		if opts.BatchOps > 0 {
			ix.batchOps = opts.BatchOps
		}
		ix.formats = opts.Formats
	}
	if err := prepareDir(abs); err != nil {
		return nil, fmt.Errorf("open corpus %s: %w", dir, err)
	}
	return ix, nil
}

// Dir returns the index directory.
func (ix *Index) Dir() string { return ix.dir }

// acquire returns the current generation, opening it if another process
// (or Add) has swapped in a newer one since the last use; release it after
// use. It returns nil when nothing has been indexed yet.
func (ix *Index) acquire() (*generation, func(), error) {
	name, err := readCurrent(ix.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("corpus %s: %w", ix.dir, err)
	}
	ix.mu.Lock()
	if ix.closed {
		ix.mu.Unlock()
		return nil, nil, fmt.Errorf("corpus %s: index is closed", ix.dir)
	}
	if name == "" || (ix.cur != nil && ix.cur.name == name) {
		g := ix.cur
		if g != nil {
			g.refs++
		}
		ix.mu.Unlock()
		return g, ix.releaser(g), nil
	}
	ix.mu.Unlock()
	g, err := openGeneration(ix.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("corpus %s: %w", ix.dir, err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		g.close()
		return nil, nil, fmt.Errorf("corpus %s: index is closed", ix.dir)
	}
	switch {
	case g == nil:
	case ix.cur != nil && ix.cur.name == g.name: // another goroutine opened it meanwhile
		g.close()
		g = ix.cur
	default:
		old := ix.cur
		ix.cur = g
		g.refs = 1 // the Index's own reference
		if old != nil {
			ix.unref(old)
		}
	}
	if g != nil {
		g.refs++
	}
	return g, ix.releaser(g), nil
}

func (ix *Index) releaser(g *generation) func() {
	return func() {
		if g == nil {
			return
		}
		ix.mu.Lock()
		ix.unref(g)
		ix.mu.Unlock()
	}
}

// unref drops one reference; ix.mu is held.
func (ix *Index) unref(g *generation) {
	g.refs--
	if g.refs == 0 {
		if err := g.close(); err != nil {
			ix.log.Warn("corpus: closing an old generation", "dir", g.dir, "err", err)
		}
	}
}

// Roots returns the folders and files that have been added.
func (ix *Index) Roots() []string { return slices.Clone(ix.info().Roots) }

// DocCount returns the number of indexed files.
func (ix *Index) DocCount() int { return ix.info().Files }

// ChunkCount returns the number of searchable chunks: zero when every indexed file is empty of text.
func (ix *Index) ChunkCount() int { return ix.info().Chunks }

// info is what the current generation records about itself; zero when there is none or it cannot be read.
func (ix *Index) info() genInfo {
	g, release, err := ix.acquire()
	if err != nil || g == nil {
		return genInfo{}
	}
	defer release()
	return g.info
}

// Close releases the index. Calling it again does nothing.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	if ix.cur != nil {
		ix.unref(ix.cur)
		ix.cur = nil
	}
	return nil
}

// FileURL returns the file:// URL for an absolute path, with a line anchor
// when start > 0.
func FileURL(path string, start, end int) string {
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
	if !strings.HasPrefix(u, "file:///") { // url.URL drops the empty host
		u = "file://" + strings.TrimPrefix(u, "file:")
	}
	if start > 0 {
		u += fmt.Sprintf("#L%d-L%d", start, end)
	}
	return u
}

// report calls the progress callback, at most every 100 ms for the same
// phase unless force is set.
type reporter struct {
	fn    func(Progress)
	root  string
	last  time.Time
	phase string
	// share, once the update holds the write lock, tells processes waiting for it how far it is.
	share func(done, total int)
}

func (r *reporter) report(p Progress, force bool) {
	if r.fn == nil && r.share == nil {
		return
	}
	if !force && p.Phase == r.phase && time.Since(r.last) < 100*time.Millisecond {
		return
	}
	r.phase, r.last = p.Phase, time.Now()
	p.Root = r.root
	if r.share != nil && p.Phase == "indexing" {
		r.share(p.Done, p.Total)
	}
	if r.fn != nil {
		r.fn(p)
	}
}

// Add indexes the given files and folders (recursively; hidden, vendored
// and generated entries, what .gitignore files exclude and the index
// directory itself are skipped). Files unchanged since the last Add — same
// modification time, size and inode number, or failing that the same
// content hash — are skipped (a file modified shortly before it was indexed
// is hashed again: a change within the file system's timestamp resolution
// keeps its mtime); files that disappeared from an added folder are removed. A file
// that cannot be read or parsed is reported in Stats.Failed and does not
// stop the others. A file read and found not to be a document (binary,
// generated, too much text, failing to extract) is remembered with that
// outcome and read again only once it changes; an update that, after
// reading its files, changes nothing commits nothing.
//
// When another process is updating the same index, Add waits for it
// (reporting the "waiting" phase) and then does only what is left. On
// cancellation the files done so far are kept and the index stays
// consistent.
func (ix *Index) Add(ctx context.Context, paths ...string) (Stats, error) {
	ix.addMu.Lock()
	defer ix.addMu.Unlock()
	start := time.Now()
	var st Stats
	rep := &reporter{fn: ix.progress}
	if len(paths) > 0 {
		rep.root = paths[0]
	}
	finish := func(err error) (Stats, error) {
		st.Elapsed = time.Since(start)
		if secs := st.Elapsed.Seconds(); secs > 0 {
			n := st.Added + st.Updated
			if n == 0 {
				n = st.Unchanged
			}
			st.DocsPerSec = float64(n) / secs
		}
		if err == nil { // a stopped or failed update is not "done": surfaces would say the folder was indexed
			rep.report(Progress{Phase: "done", Done: st.Added + st.Updated, Total: st.Added + st.Updated}, true)
		}
		return st, err
	}

	// The manifest is decoded while the folders are scanned.
	type loaded struct {
		name string
		m    *manifest
		err  error
	}
	manCh := make(chan loaded, 1)
	go func() {
		name, m, err := ix.loadManifest()
		manCh <- loaded{name, m, err}
	}()
	var man *loaded
	loadBase := func() (*manifest, error) {
		if man == nil {
			l := <-manCh
			man = &l
		}
		return man.m, man.err
	}
	defer func() { _, _ = loadBase() }() // never leave the loader behind
	roots, err := resolveRoots(paths, ix.formats, loadBase)
	if err != nil {
		return finish(err)
	}
	rep.report(Progress{Phase: "scanning"}, true)
	found, err := ix.scan(ctx, roots, &st)
	if err != nil {
		return finish(err)
	}
	base, err := loadBase()
	if err != nil {
		return finish(err)
	}
	baseName := man.name
	if base.reanalyse {
		ix.log.Info("corpus: the index was built by an earlier version of deepresearch; every file is indexed again", "dir", ix.dir)
	}
	p := makePlan(base, roots, found)
	if err := p.checkContent(ctx); err != nil {
		return finish(fmt.Errorf("index: %w", err))
	}
	if p.empty() && !base.unscored { // a base without its scoring statistics is written again (see manifest.unscored)
		st.Unchanged = len(p.unchanged)
		listUnchanged(&st, p)
		return finish(ctx.Err())
	}

	// Something to do: take the write lock, and look again at the index
	// another process may just have updated.
	waitStart := time.Now()
	logged := false
	unlock, publish, err := lockWriterShared(ix.dir, ctx.Done(), func(done, total int) {
		if !logged {
			ix.log.Info("corpus: waiting for another process to finish indexing", "dir", ix.dir)
		}
		// The other process's files done of its total, as it publishes them.
		rep.report(Progress{Phase: "waiting", Done: done, Total: total}, !logged)
		logged = true
	})
	if err != nil {
		return finish(fmt.Errorf("index %s: %w", ix.dir, err))
	}
	defer unlock()
	rep.share = publish
	st.Waited = time.Since(waitStart)
	if name, err := readCurrent(ix.dir); err != nil {
		return finish(err)
	} else if name != baseName {
		baseName, base, err = ix.loadManifest()
		if err != nil {
			return finish(err)
		}
		p = makePlan(base, roots, found)
		if err := p.checkContent(ctx); err != nil {
			return finish(fmt.Errorf("index: %w", err))
		}
		if p.empty() && !base.unscored {
			st.Unchanged = len(p.unchanged)
			listUnchanged(&st, p)
			return finish(ctx.Err())
		}
	}
	err = ix.build(ctx, baseName, base, p, &st, rep)
	if err != nil {
		return finish(err)
	}
	if err := ctx.Err(); err != nil {
		return finish(fmt.Errorf("index: %w (the files done so far are kept)", err))
	}
	return finish(nil)
}

// listUnchanged reports the plan's unchanged files: documents as
// Unchanged, the files found not to be documents when they were last read
// by that outcome, as the manifest records it.
func listUnchanged(st *Stats, p plan) {
	st.Files = slices.Grow(st.Files, len(p.unchanged)+len(p.nondocs))
	for _, c := range p.unchanged {
		st.Files = append(st.Files, FileOutcome{Path: c, Outcome: Unchanged})
	}
	for _, n := range p.nondocs {
		st.nonDocument(n.path, n.outcome, n.detail)
	}
}

// nonDocument counts a file read and found not to be a document.
func (st *Stats) nonDocument(path string, o Outcome, detail string) {
	switch o {
	case Binary:
		st.Binary++
	case TooLarge:
		st.TooLarge++
	case Failed:
		st.Failed = append(st.Failed, FileError{Path: path, Err: errors.New(detail)})
	default:
		st.Excluded++
	}
	st.Files = append(st.Files, FileOutcome{Path: path, Outcome: o, Detail: detail})
}

type root struct {
	path string
	dir  bool
}

// resolveRoots checks every argument before touching the index: a typo
// must not cost a half-finished update. loadBase returns the current
// manifest, which is needed only for paths that no longer exist.
func resolveRoots(paths []string, formats *extract.Registry, loadBase func() (*manifest, error)) ([]root, error) {
	var roots []root
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", p, err)
		}
		info, err := os.Stat(abs)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				base, lerr := loadBase()
				if lerr != nil {
					return nil, lerr
				}
				if base.find(abs) >= 0 {
					roots = append(roots, root{path: abs}) // removed file
					continue
				}
			}
			return nil, fmt.Errorf("index %s: %w", p, err)
		}
		if info.IsDir() {
			if r, err := filepath.EvalSymlinks(abs); err == nil {
				abs = r
			}
		} else if _, ok := formats.ByPath(abs); !ok {
			return nil, fmt.Errorf("index %s: unsupported file type; supported: %s", p, formats.Describe())
		}
		roots = append(roots, root{path: abs, dir: info.IsDir()})
	}
	return roots, nil
}

// found is one indexable file the scan found.
type found struct {
	path string
	size int64
	mod  int64  // unix nanoseconds
	ino  uint64 // 0 when unknown
	f    format
	link bool // found through a symbolic link (to a file inside the folder, or followed)
}

// plan is what an update has to do.
type plan struct {
	jobs      []job    // new or changed files
	gone      []string // recorded files no longer there
	unchanged []string // unchanged documents
	// nondocs are unchanged files that were found not to be documents when
	// they were read: they are not read again.
	nondocs []nondoc
	roots   []string // roots to record that are not recorded yet
	// check are files with the mtime and size they were indexed with whose
	// content these do not vouch for: read too soon after that mtime
	// (racy), or with another inode number (a file renamed over the one
	// indexed). checkContent hashes them.
	check []job
	// verified are the files of check found unchanged: the next build
	// records their inode number, and trusts their mtime and size if it is
	// old enough.
	verified []verified
}

type nondoc struct {
	path    string
	outcome Outcome
	detail  string
}

type verified struct {
	path   string
	ino    uint64
	settle bool // no longer racy
}

func (p plan) empty() bool { return len(p.jobs) == 0 && len(p.gone) == 0 && len(p.roots) == 0 }

type job struct {
	found
	prev *fileEntry
}

// makePlan compares the files found with the manifest. Both are in walk
// order (the scan's files unless overlapping roots were given), so a merge
// pairs them.
func makePlan(base *manifest, roots []root, files []found) plan {
	var p plan
	// ord visits files in walk order: nil when they are in it already.
	var ord []int
	for i := 1; i < len(files); i++ {
		if comparePaths(files[i-1].path, files[i].path) >= 0 {
			ord = make([]int, len(files))
			for k := range ord {
				ord[k] = k
			}
			slices.SortStableFunc(ord, func(a, b int) int { return comparePaths(files[a].path, files[b].path) })
			break
		}
	}
	at := func(k int) int {
		if ord == nil {
			return k
		}
		return ord[k]
	}
	match := make([]int32, len(files)) // the manifest's index of each file, -1 when new
	var missing []int                  // the manifest's files that were not found
	for i, k, n := 0, 0, base.len(); i < len(files) || k < n; {
		c := -1
		switch {
		case i == len(files):
			c = 1
		case k < n:
			c = comparePaths(files[at(i)].path, base.paths[k])
		}
		switch {
		case c < 0:
			match[at(i)] = -1
			i++
		case c > 0:
			missing = append(missing, k)
			k++
		default:
			match[at(i)] = int32(k)
			i++
			k++
		}
	}
	p.unchanged = make([]string, 0, len(files))
	for i, f := range files {
		k := int(match[i])
		switch {
		case k < 0:
			p.jobs = append(p.jobs, job{found: f})
		case base.cols.ModTimes[k] != f.mod || base.cols.Sizes[k] != f.size:
			p.jobs = append(p.jobs, job{found: f, prev: base.entry(k)})
		case base.racy(k) || (f.ino != 0 && base.cols.Inos[k] != 0 && f.ino != base.cols.Inos[k]):
			p.check = append(p.check, job{found: f, prev: base.entry(k)})
		case base.cols.Outcomes[k] != 0:
			p.nondocs = append(p.nondocs, nondoc{path: f.path, outcome: outcomeCodes[base.cols.Outcomes[k]], detail: base.notes[k]})
		default:
			p.unchanged = append(p.unchanged, f.path)
		}
	}
	// Files that were indexed under a walked root (or named directly) and
	// are not there any more (or are no longer indexable).
	for _, k := range missing {
		path := base.paths[k]
		for _, r := range roots {
			if path == r.path || (r.dir && strings.HasPrefix(path, r.path+string(filepath.Separator))) {
				p.gone = append(p.gone, path)
				break
			}
		}
	}
	for _, r := range roots {
		if _, err := os.Stat(r.path); err == nil && !slices.Contains(base.cols.Roots, r.path) {
			p.roots = append(p.roots, r.path)
		}
	}
	return p
}

// checkContent hashes the files to check: those whose content is what was
// indexed are unchanged, the others become jobs.
func (p *plan) checkContent(ctx context.Context) error {
	if len(p.check) == 0 {
		return nil
	}
	// A file whose mtime is this old when it is read cannot change without
	// its mtime changing.
	trusted := time.Now().Add(-racyWindow).UnixNano()
	same := make([]bool, len(p.check))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(runtime.GOMAXPROCS(0), 1), len(p.check)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(p.check) || ctx.Err() != nil {
					return
				}
				sum, err := hashFile(p.check[i].path)
				same[i] = err == nil && sum == p.check[i].prev.Hash
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, j := range p.check {
		if !same[i] {
			p.jobs = append(p.jobs, j)
			continue
		}
		if j.prev.doc() {
			p.unchanged = append(p.unchanged, j.path)
		} else {
			p.nondocs = append(p.nondocs, nondoc{path: j.path, outcome: j.prev.Outcome, detail: j.prev.Detail})
		}
		p.verified = append(p.verified, verified{path: j.path, ino: j.ino, settle: j.mod < trusted})
	}
	p.check = nil
	return nil
}

// hashFile returns the sha256 of the file at path.
func hashFile(path string) ([32]byte, error) {
	var sum [32]byte
	f, err := openNoBlock(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxFileSize+1)); err != nil {
		return sum, err
	}
	h.Sum(sum[:0])
	return sum, nil
}

// outcome is one processed job.
type outcome struct {
	job
	entry  *fileEntry // nil unless indexed, unchanged or read and found not to be a document
	ex     extracted
	result Outcome
	detail string
	err    error
	share  int64 // of the memory budget, held until the outcome is written
}

// process reads, extracts and chunks one file. It runs on worker
// goroutines and touches no shared state. containerBudget bounds what a zip
// container may expand to (extractWithin).
func process(ctx context.Context, j job, lim extract.Limits) outcome {
	o := outcome{job: j}
	read := time.Now() // a change after this has an mtime after read-racyWindow
	open := openNoLink
	if j.link {
		open = openNoBlock
	}
	f, err := open(j.path)
	if err != nil {
		o.result, o.err = Failed, err
		return o
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		o.result, o.err = Failed, err
		return o
	}
	if !info.Mode().IsRegular() { // replaced by a pipe or device since the scan
		o.result, o.detail = Excluded, "not a regular file"
		return o
	}
	if info.Size() > maxFileSize {
		o.result, o.detail = TooLarge, fmt.Sprintf("%d MiB", info.Size()>>20)
		return o
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		o.result, o.err = Failed, err
		return o
	}
	entry := &fileEntry{
		ModTime: info.ModTime().UnixNano(), Size: info.Size(), Ino: fileID(info), Hash: sha256.Sum256(data),
		Racy: !info.ModTime().Before(read.Add(-racyWindow)),
	}
	if j.prev != nil && j.prev.Hash == entry.Hash {
		entry.Chunks, entry.Marks, entry.Outcome, entry.Detail = j.prev.Chunks, j.prev.Marks, j.prev.Outcome, j.prev.Detail
		o.result, o.entry = Unchanged, entry
		if !entry.doc() { // the same bytes are the same non-document
			o.result, o.detail = entry.Outcome, entry.Detail
			if o.result == Failed {
				o.err = errors.New(entry.Detail)
			}
		}
		return o
	}
	// A file read and found not to be a document is recorded with its
	// outcome, so that the next update reads it again only once it changed.
	notDoc := func(r Outcome, detail string) outcome {
		o.result, o.detail = r, detail
		entry.Outcome, entry.Detail = r, detail
		o.entry = entry
		return o
	}
	ex, err := extractWithin(ctx, j.path, j.f, data, lim)
	switch {
	case errors.Is(err, errBinary):
		return notDoc(Binary, "")
	case errors.Is(err, errGenerated):
		return notDoc(Excluded, "generated")
	case errors.Is(err, extract.ErrContainerShare): // not a property of the file: not recorded
		o.result, o.err = Failed, err
		return o
	case errors.Is(err, extract.ErrTooMuchText):
		return notDoc(TooLarge, err.Error())
	case err != nil && ctx.Err() != nil: // stopped, not a property of the file: not recorded
		o.result, o.err = Failed, err
		return o
	case err != nil:
		o = notDoc(Failed, err.Error())
		o.detail, o.err = "", err
		return o
	}
	o.ex, o.entry = ex, entry
	o.result = Added
	if j.prev != nil && j.prev.doc() {
		o.result = Updated
	}
	o.detail = j.f.Lang
	for _, c := range ex.chunks {
		entry.Chunks = append(entry.Chunks, int32(c.start), int32(c.end))
	}
	entry.Marks = lexical.LineMarks(ex.text)
	return o
}
