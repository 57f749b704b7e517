// Package corpus is a local document collection as a search provider: a
// persistent Bleve full-text index over Markdown, plain-text, HTML and PDF
// files, re-indexed incrementally, split into chunks whose ids are file URLs
// with line anchors (file:///abs/path#L12-L40).
//
// Line numbers count lines of the extracted document text — the text Fetch
// returns. For Markdown and plain text that is the file itself (CRLF folded
// to LF); for HTML it is the Markdown rendering and for PDF the extracted
// text, because those are what an agent reads and quotes.
package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/deepresearch/deepresearch/internal/atomicfile"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/extract"
)

const (
	manifestName = "manifest.json"
	// manifestVersion changes when the on-disk layout does; an index with
	// another version is rebuilt (it is derived data).
	manifestVersion = 2
	// batchOps bounds one Bleve batch (index + delete operations); bigger
	// batches index faster but hold more memory.
	batchOps = 1000
	// maxFileSize keeps a stray disk image or video out of memory.
	maxFileSize = 100 << 20
)

// Extensions lists the file types the corpus indexes.
var Extensions = []string{".md", ".markdown", ".txt", ".html", ".htm", ".pdf"}

// Index is a persistent corpus index. Search and Fetch are safe for
// concurrent use with each other and with Add; Add calls are serialised.
type Index struct {
	dir   string
	idx   bleve.Index
	texts *textStore
	log   *slog.Logger

	// PerFile caps how many chunks of one file a search returns, so a long
	// document cannot crowd out every other source. Zero means 2. Set it
	// before the first Search.
	PerFile int

	closeOnce sync.Once
	closeErr  error

	addMu sync.Mutex   // one Add at a time
	mu    sync.RWMutex // guards man
	man   manifest
}

type manifest struct {
	Version int                   `json:"version"`
	Roots   []string              `json:"roots"`
	Files   map[string]*fileEntry `json:"files"`
}

type fileEntry struct {
	ModTime     time.Time `json:"mtime"`
	Size        int64     `json:"size"`
	FileHash    string    `json:"file_sha256"`
	TextHash    string    `json:"text_sha256"`
	Title       string    `json:"title"`
	ContentType string    `json:"content_type"`
	Lines       int       `json:"lines"`
	Chunks      []string  `json:"chunks"`
}

// Stats reports one Add.
type Stats struct {
	Added   int // new files indexed
	Updated int // changed files re-indexed
	Skipped int // unchanged files (same mtime and size, or same content hash)
	Removed int // files gone from disk, dropped from the index
	Chunks  int // chunks written
	Failed  []FileError
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

// IsIndex reports whether dir holds a corpus index.
func IsIndex(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, manifestName))
	return err == nil
}

// Options configures Open; nil means defaults.
type Options struct {
	Logger *slog.Logger
}

// Open opens the index in dir, creating it if dir is empty or missing.
func Open(dir string) (*Index, error) { return OpenWith(dir, nil) }

// OpenWith is Open with options.
func OpenWith(dir string, opts *Options) (*Index, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open corpus %s: %w", dir, err)
	}
	ix := &Index{dir: abs, log: slog.New(slog.DiscardHandler)}
	if opts != nil && opts.Logger != nil {
		ix.log = opts.Logger
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("open corpus %s: %w", dir, err)
	}
	if err := resetIfStale(abs, ix.log); err != nil {
		return nil, fmt.Errorf("open corpus %s: %w", dir, err)
	}
	blevePath := filepath.Join(abs, "bleve")
	if _, err := os.Stat(blevePath); err == nil {
		// bolt_timeout turns "another process has it open" into an error
		// instead of a hang.
		ix.idx, err = bleve.OpenUsing(blevePath, map[string]any{"bolt_timeout": "3s"})
		if err != nil {
			return nil, fmt.Errorf("open corpus %s: %w (is another deepresearch process using it?)", dir, err)
		}
	} else {
		m, err := newMapping()
		if err != nil {
			return nil, fmt.Errorf("open corpus %s: mapping: %w", dir, err)
		}
		ix.idx, err = bleve.New(blevePath, m)
		if err != nil {
			return nil, fmt.Errorf("create corpus %s: %w", dir, err)
		}
	}
	ix.texts, err = openTextStore(filepath.Join(abs, "texts.db"))
	if err != nil {
		ix.idx.Close()
		return nil, fmt.Errorf("open corpus %s: %w", dir, err)
	}
	ix.man = manifest{Version: manifestVersion, Files: map[string]*fileEntry{}}
	data, err := os.ReadFile(filepath.Join(abs, manifestName))
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &ix.man); err != nil {
			ix.idx.Close()
			ix.texts.close()
			return nil, fmt.Errorf("open corpus %s: manifest: %w", dir, err)
		}
		if ix.man.Files == nil {
			ix.man.Files = map[string]*fileEntry{}
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := ix.saveManifest(); err != nil {
			ix.idx.Close()
			ix.texts.close()
			return nil, err
		}
	default:
		ix.idx.Close()
		ix.texts.close()
		return nil, fmt.Errorf("open corpus %s: %w", dir, err)
	}
	return ix, nil
}

// resetIfStale removes an index written in an older layout so that Open
// builds a fresh one; the next Add re-indexes every file.
func resetIfStale(dir string, log *slog.Logger) error {
	data, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil
	}
	var m struct {
		Version int `json:"version"`
	}
	if json.Unmarshal(data, &m) == nil && m.Version == manifestVersion {
		return nil
	}
	log.Warn("corpus: index layout changed; rebuilding", "dir", dir, "version", m.Version, "want", manifestVersion)
	for _, name := range []string{"bleve", "texts.db", "text", manifestName} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// Dir returns the index directory.
func (ix *Index) Dir() string { return ix.dir }

// Roots returns the folders and files that have been added.
func (ix *Index) Roots() []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return slices.Clone(ix.man.Roots)
}

// DocCount returns the number of indexed files.
func (ix *Index) DocCount() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.man.Files)
}

// Close releases the index. Calling it again does nothing.
func (ix *Index) Close() error {
	ix.closeOnce.Do(func() {
		ix.closeErr = errors.Join(ix.idx.Close(), ix.texts.close())
	})
	return ix.closeErr
}

func (ix *Index) saveManifest() error {
	ix.mu.RLock()
	data, err := json.Marshal(ix.man)
	ix.mu.RUnlock()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(ix.dir, manifestName), data, 0o644); err != nil {
		return fmt.Errorf("save corpus manifest: %w", err)
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

func supported(path string) bool {
	return slices.Contains(Extensions, strings.ToLower(filepath.Ext(path)))
}

type job struct {
	path string
	info fs.FileInfo
	prev *fileEntry
}

type outcome struct {
	path    string
	entry   *fileEntry // nil when failed
	text    string
	chunks  []chunk
	skipped bool // content unchanged; entry carries the new mtime
	err     error
	prev    *fileEntry
}

// Add indexes the given files and folders (recursively; hidden entries and
// the index directory itself are skipped). Files unchanged since the last
// Add — same modification time and size, or failing that the same content
// hash — are skipped; files that disappeared from an added folder are
// removed. A file that cannot be read or parsed is reported in
// Stats.Failed and does not stop the others. On cancellation the work done
// so far is kept.
func (ix *Index) Add(ctx context.Context, paths ...string) (Stats, error) {
	ix.addMu.Lock()
	defer ix.addMu.Unlock()
	start := time.Now()
	var st Stats

	// Resolve every argument before touching the index: a typo must not
	// cost a half-finished update.
	type root struct {
		path string
		dir  bool
	}
	var roots []root
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return st, fmt.Errorf("index %s: %w", p, err)
		}
		info, err := os.Stat(abs)
		if err != nil {
			ix.mu.RLock()
			_, known := ix.man.Files[abs]
			ix.mu.RUnlock()
			if errors.Is(err, fs.ErrNotExist) && known {
				roots = append(roots, root{path: abs}) // removed file
				continue
			}
			return st, fmt.Errorf("index %s: %w", p, err)
		}
		if info.IsDir() {
			if r, err := filepath.EvalSymlinks(abs); err == nil {
				abs = r
			}
		} else if !supported(abs) {
			return st, fmt.Errorf("index %s: unsupported file type (want %s)", p, strings.Join(Extensions, " "))
		}
		roots = append(roots, root{path: abs, dir: info.IsDir()})
	}

	// Walk.
	seen := map[string]bool{}
	var jobs []job
	ix.mu.RLock()
	man := ix.man.Files
	for _, r := range roots {
		if !r.dir {
			if info, err := os.Stat(r.path); err == nil && !seen[r.path] {
				seen[r.path] = true
				jobs = append(jobs, job{path: r.path, info: info, prev: man[r.path]})
			}
			continue
		}
		err := filepath.WalkDir(r.path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				st.Failed = append(st.Failed, FileError{Path: p, Err: err})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if p != r.path && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if p == ix.dir {
					return fs.SkipDir
				}
				return nil
			}
			if !supported(p) || seen[p] {
				return nil
			}
			info, err := os.Stat(p) // follows symlinked files
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
			seen[p] = true
			jobs = append(jobs, job{path: p, info: info, prev: man[p]})
			return nil
		})
		if err != nil {
			ix.mu.RUnlock()
			return st, fmt.Errorf("index %s: %w", r.path, err)
		}
	}
	// Files that were indexed under a walked root (or named directly) and
	// are not there any more.
	var gone []string
	for p := range man {
		if seen[p] {
			continue
		}
		for _, r := range roots {
			if p == r.path || (r.dir && strings.HasPrefix(p, r.path+string(filepath.Separator))) {
				gone = append(gone, p)
				break
			}
		}
	}
	ix.mu.RUnlock()

	batch := ix.idx.NewBatch()
	pending := map[string]string{} // texts of the chunks in batch
	flush := func() error {
		if batch.Size() == 0 {
			return nil
		}
		// Texts first: the index must never point at a text we lack.
		if err := ix.texts.putAll(pending); err != nil {
			return fmt.Errorf("store texts: %w", err)
		}
		clear(pending)
		if err := ix.idx.Batch(batch); err != nil {
			return fmt.Errorf("index batch: %w", err)
		}
		// A fresh batch, not Reset: bleve's scorch may still be ranging over the old batch's map in a goroutine
		// after Batch returns (a data race the race detector reports in bleve v2.6.3).
		batch = ix.idx.NewBatch()
		return nil
	}
	for _, p := range gone {
		ix.mu.Lock()
		e := ix.man.Files[p]
		delete(ix.man.Files, p)
		ix.mu.Unlock()
		for _, id := range e.Chunks {
			batch.Delete(id)
		}
		st.Removed++
	}

	// Read, extract and chunk in parallel; one goroutine writes.
	workers := max(runtime.GOMAXPROCS(0), 1)
	jobCh := make(chan job)
	outCh := make(chan outcome, workers*2)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobCh {
				o := ix.process(j)
				select {
				case outCh <- o:
				case <-wctx.Done():
					return
				}
			}
		})
	}
	go func() {
		defer close(jobCh)
		for _, j := range jobs {
			select {
			case jobCh <- j:
			case <-wctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(outCh) }()

	var werr error
	for o := range outCh {
		if werr != nil {
			continue // drain
		}
		switch {
		case o.err != nil:
			st.Failed = append(st.Failed, FileError{Path: o.path, Err: o.err})
			continue
		case o.skipped:
			st.Skipped++
			if o.entry != o.prev {
				ix.mu.Lock()
				ix.man.Files[o.path] = o.entry
				ix.mu.Unlock()
			}
			continue
		}
		if o.prev != nil {
			for _, id := range o.prev.Chunks {
				batch.Delete(id)
			}
			st.Updated++
		} else {
			st.Added++
		}
		for _, c := range o.chunks {
			id := FileURL(o.path, c.start, c.end)
			if err := batch.Index(id, map[string]any{"_type": chunkType, "path": o.path, "title": o.entry.Title, "text": c.text}); err != nil {
				werr = fmt.Errorf("index %s: %w", o.path, err)
				cancel()
				break
			}
			o.entry.Chunks = append(o.entry.Chunks, id)
		}
		pending[o.entry.TextHash] = o.text
		st.Chunks += len(o.chunks)
		ix.mu.Lock()
		ix.man.Files[o.path] = o.entry
		ix.mu.Unlock()
		if batch.Size() >= batchOps {
			if err := flush(); err != nil {
				werr = err
				cancel()
			}
		}
	}
	if werr == nil {
		werr = flush()
	}
	ix.mu.Lock()
	for _, r := range roots {
		if _, err := os.Stat(r.path); err == nil && !slices.Contains(ix.man.Roots, r.path) {
			ix.man.Roots = append(ix.man.Roots, r.path)
		}
	}
	slices.Sort(ix.man.Roots)
	ix.mu.Unlock()
	if err := ix.saveManifest(); err != nil && werr == nil {
		werr = err
	}
	ix.gcTexts()

	st.Elapsed = time.Since(start)
	if secs := st.Elapsed.Seconds(); secs > 0 {
		n := st.Added + st.Updated
		if n == 0 {
			n = st.Skipped
		}
		st.DocsPerSec = float64(n) / secs
	}
	if werr != nil {
		return st, werr
	}
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("index: %w (progress so far is saved)", err)
	}
	return st, nil
}

// process decides whether j needs indexing and, if so, extracts and chunks
// it. It runs on worker goroutines and touches no shared state.
func (ix *Index) process(j job) outcome {
	o := outcome{path: j.path, prev: j.prev}
	if p := j.prev; p != nil && p.ModTime.Equal(j.info.ModTime()) && p.Size == j.info.Size() {
		o.skipped, o.entry = true, p
		return o
	}
	if j.info.Size() > maxFileSize {
		o.err = fmt.Errorf("file is larger than %d MiB", maxFileSize>>20)
		return o
	}
	data, err := os.ReadFile(j.path)
	if err != nil {
		o.err = err
		return o
	}
	sum := sha256.Sum256(data)
	fileHash := hex.EncodeToString(sum[:])
	if p := j.prev; p != nil && p.FileHash == fileHash {
		e := *p
		e.ModTime, e.Size = j.info.ModTime(), j.info.Size()
		o.skipped, o.entry = true, &e
		return o
	}
	title, text, ctype, err := extractFile(j.path, data)
	if err != nil {
		o.err = err
		return o
	}
	textHash := sources.HashText(text)
	o.text = text
	o.chunks = chunkText(text)
	o.entry = &fileEntry{
		ModTime: j.info.ModTime(), Size: j.info.Size(), FileHash: fileHash, TextHash: textHash,
		Title: title, ContentType: ctype, Lines: len(splitLines(text)),
	}
	return o
}

func extractFile(path string, data []byte) (title, text, ctype string, err error) {
	base := filepath.Base(path)
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm":
		res, err := extract.Whole(extract.DecodeText(data, "text/html"), nil)
		if err != nil {
			return "", "", "", err
		}
		title, text, ctype = res.Title, res.Text, "text/html"
	case ".pdf":
		text, err = extract.PDF(context.Background(), data)
		if err != nil {
			return "", "", "", err
		}
		ctype = "application/pdf"
	case ".md", ".markdown":
		text = extract.NormalizeNewlines(extract.DecodeText(data, "text/plain"))
		title, ctype = extract.FirstHeading(text), "text/markdown"
	default:
		text = extract.NormalizeNewlines(extract.DecodeText(data, "text/plain"))
		ctype = "text/plain"
	}
	if title == "" {
		title = base
	}
	return title, text, ctype, nil
}

// gcTexts deletes stored texts no file refers to any more.
func (ix *Index) gcTexts() {
	ix.mu.RLock()
	live := make(map[string]bool, len(ix.man.Files))
	for _, e := range ix.man.Files {
		live[e.TextHash] = true
	}
	ix.mu.RUnlock()
	if err := ix.texts.keepOnly(live); err != nil {
		ix.log.Warn("corpus: text store cleanup failed", "err", err)
	}
}
