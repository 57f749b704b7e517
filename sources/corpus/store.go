package corpus

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/deepresearch/deepresearch/base/atomicfile"
)

// On-disk layout of an index directory. Every update builds a new
// generation next to the current one and then swaps the pointer file, so a
// reader sees the old index or the new one, never a half-written one:
//
//	corpus.layout        layout version (marks the directory as an index)
//	current              the name of the current generation, e.g. g000000000007
//	write.lock           held (exclusive) by the one process updating the index
//	g000000000007/
//	    bleve/           the Bleve index of chunks, searched (it stores nothing)
//	    texts/           a Bleve index of files, not searched: each file's text and metadata, stored once
//	    files3.gob       what the writer needs to update incrementally: per file mtime, size, hash, chunk lines or outcome
//	    info.json        roots, file and chunk counts
//	    use.lock         held (shared) by every process reading this generation
//
// A generation is never modified after the swap. The next one starts as a
// copy in which Bleve's immutable segment files are hard links, so copying
// costs only the small root.bolt file. Old generations are removed by the
// next writer once no reader holds their use.lock.
const (
	layoutName    = "corpus.layout"
	layoutVersion = 3
	currentName   = "current"
	writeLockName = "write.lock"
	genPrefix     = "g"
	useLockName   = "use.lock"
	filesName     = "files3.gob"
	infoName      = "info.json"
	// files2Name is the manifest of a generation made before files3.gob,
	// without the files that are not documents; it is read, and replaced by
	// the next build.
	files2Name = "files2.gob"
	// legacyFilesName is the manifest of a generation made before
	// files2.gob; it is read, and replaced by the next build.
	legacyFilesName = "files.gob"
	bleveName       = "bleve"
	textsName       = "texts"
	// legacyManifest marks the layout before generations (version 2 and
	// older); such an index is derived data and is rebuilt.
	legacyManifest = "manifest.json"
)

var errLocked = errors.New("locked by another process")

// genInfo is a generation's info.json.
type genInfo struct {
	Roots  []string  `json:"roots"`
	Files  int       `json:"files"`
	Chunks int       `json:"chunks"`
	Built  time.Time `json:"built"`
	// Redundant are the documents whose text other documents hold (redundantDocs): path → why (sources.RedundantCopy,
	// sources.RedundantAggregate). Search ranks their passages below the same passages elsewhere.
	Redundant map[string]string `json:"redundant,omitempty"`
	// Analysis is the analysisVersion the generation's text was indexed with.
	Analysis int `json:"analysis,omitempty"`
	// Scoring are the statistics every search of the generation scores with (see scoring.go), counted when it was
	// written; a generation written before they were kept has them counted by its first search.
	Scoring *search.BM25Stats `json:"scoring,omitempty"`
}

// analysisVersion numbers the ways the index has analysed text into terms; a generation indexed another way is
// not updated in place (its unchanged files would keep the old terms) but rebuilt whole by the next update, while
// searches of it stay consistent meanwhile (a Bleve index keeps the analyser it was built with).
//
//	0 (absent)  Unicode words, CJK bigrams, Porter stems
//	1           and the parts of qualified names (nameparts.go)
const analysisVersion = 1

// readGenInfo reads the info.json of the generation in gdir (at most 1 MiB of it).
func readGenInfo(gdir string) (genInfo, error) {
	var info genInfo
	f, err := os.Open(filepath.Join(gdir, infoName))
	if err != nil {
		return info, err
	}
	defer f.Close()
	if err := json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(&info); err != nil {
		return info, fmt.Errorf("%s: %w", infoName, err)
	}
	return info, nil
}

func genName(seq uint64) string { return fmt.Sprintf("%s%012d", genPrefix, seq) }

func genSeq(name string) (uint64, bool) {
	if !strings.HasPrefix(name, genPrefix) || len(name) != len(genPrefix)+12 {
		return 0, false
	}
	n, err := strconv.ParseUint(name[len(genPrefix):], 10, 64)
	return n, err == nil
}

// readCurrent returns the current generation's name, "" when the index has
// none yet.
func readCurrent(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, currentName))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	name := strings.TrimSpace(string(data))
	if _, ok := genSeq(name); !ok {
		return "", fmt.Errorf("%s names no generation: %q", currentName, name)
	}
	return name, nil
}

// prepareDir creates dir as an index directory, or checks that it is one;
// an index in an older layout is removed (it is derived data and the next
// Add rebuilds it).
func prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(dir, layoutName))
	if err == nil {
		v, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		if v == layoutVersion {
			return nil
		}
		if v > layoutVersion {
			return fmt.Errorf("index layout %d is newer than this deepresearch understands (%d)", v, layoutVersion)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// Rebuilding an older layout happens under the write lock so that two
	// processes do not remove each other's fresh files.
	unlock, err := lockWriter(dir, nil, nil)
	if err != nil {
		return err
	}
	defer unlock()
	if data, err := os.ReadFile(filepath.Join(dir, layoutName)); err == nil && strings.TrimSpace(string(data)) == strconv.Itoa(layoutVersion) {
		return nil
	}
	for _, name := range []string{"bleve", "texts.db", "text", legacyManifest} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return atomicfile.Write(filepath.Join(dir, layoutName), []byte(strconv.Itoa(layoutVersion)+"\n"), 0o644)
}

// lockWriter takes the index's write lock, waiting for another process that
// holds it. While it waits it calls waiting (once) and checks done every
// 50 ms, so a cancelled caller stops waiting at once.
func lockWriter(dir string, done <-chan struct{}, waiting func()) (unlock func(), err error) {
	var onWait func(int, int)
	if waiting != nil {
		told := false
		onWait = func(int, int) {
			if !told {
				told = true
				waiting()
			}
		}
	}
	unlock, _, err = lockWriterShared(dir, done, onWait)
	return unlock, err
}

// progressAt is where in the write lock file its holder keeps the files it has done of its total; the lock
// itself may cover the first byte (Windows locks byte ranges, and a locked range cannot be read).
const progressAt = 8

// lockWriterShared is lockWriter for an update that shares its progress with those waiting for it: publish
// records the holder's files done of its total in the lock file, and a waiter's waiting is called when it starts
// to wait and again whenever the holder's figures change (0, 0 when the holder publishes none).
func lockWriterShared(dir string, done <-chan struct{}, waiting func(done, total int)) (unlock func(), publish func(done, total int), err error) {
	f, err := os.OpenFile(filepath.Join(dir, writeLockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, err
	}
	told, last := false, ""
	for {
		err := lockFile(f, true, false)
		if err == nil {
			publish := func(done, total int) {
				// One fixed-width write, so that a reader sees the old figures or the new ones.
				_, _ = f.WriteAt(fmt.Appendf(nil, "%20d %20d\n", done, total), progressAt)
			}
			// Not the figures of the previous holder; closing the file releases the lock.
			publish(0, 0)
			return func() { f.Close() }, publish, nil
		}
		if !errors.Is(err, errLocked) {
			f.Close()
			return nil, nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if waiting != nil {
			buf := make([]byte, 64)
			n, _ := f.ReadAt(buf, progressAt)
			var d, t int
			if _, err := fmt.Sscanf(string(buf[:n]), "%d %d", &d, &t); err != nil || d < 0 || t < 0 || d > t {
				d, t = 0, 0
			}
			if now := fmt.Sprint(d, t); !told || now != last {
				told, last = true, now
				waiting(d, t)
			}
		}
		select {
		case <-done:
			f.Close()
			return nil, nil, errors.New("stopped while waiting for another process to finish indexing")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// generation is one opened generation, read-only, with its use.lock held
// shared so that no writer removes it while it is open.
type generation struct {
	name   string
	dir    string
	lock   *os.File
	idx    bleve.Index // chunks
	texts  bleve.Index // file documents
	info   genInfo
	refs   int // guarded by Index.mu
	vocab  vocabMemo
	scores scoringMemo
}

// openReader opens a snapshot reader of a Bleve index, to be closed by the caller.
func openReader(idx bleve.Index) (index.IndexReader, error) {
	adv, err := idx.Advanced()
	if err != nil {
		return nil, err
	}
	return adv.Reader()
}

// openGeneration opens the current generation of the index in dir. It
// retries when the generation it read the name of is removed before it
// could lock it (another process swapped in a newer one meanwhile).
func openGeneration(dir string) (*generation, error) {
	var lastErr error
	for range 20 {
		name, err := readCurrent(dir)
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, nil
		}
		g, err := openGenerationNamed(dir, name)
		if err == nil {
			return g, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		lastErr = err
	}
	return nil, fmt.Errorf("the index kept changing while it was opened: %w", lastErr)
}

func openGenerationNamed(dir, name string) (*generation, error) {
	gdir := filepath.Join(dir, name)
	lf, err := os.Open(filepath.Join(gdir, useLockName))
	if err != nil {
		return nil, err
	}
	if err := lockFile(lf, false, true); err != nil {
		lf.Close()
		return nil, fmt.Errorf("lock %s: %w", lf.Name(), err)
	}
	// The cleaner may have removed the generation between our open and
	// our lock; it removes use.lock last.
	if _, err := os.Stat(lf.Name()); err != nil {
		lf.Close()
		return nil, err
	}
	g := &generation{name: name, dir: gdir, lock: lf}
	g.info, err = readGenInfo(gdir)
	if err != nil {
		lf.Close()
		return nil, err
	}
	g.idx, err = bleve.OpenUsing(filepath.Join(gdir, bleveName), map[string]any{"read_only": true})
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	g.texts, err = bleve.OpenUsing(filepath.Join(gdir, textsName), map[string]any{"read_only": true})
	if err != nil {
		g.idx.Close()
		lf.Close()
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	return g, nil
}

func (g *generation) close() error {
	err := errors.Join(g.idx.Close(), g.texts.Close())
	g.lock.Close()
	return err
}

// cloneBleve copies the Bleve index in src to dst: segment files, which
// Bleve never modifies, as hard links (a copy where links are not possible),
// everything else as copies.
func cloneBleve(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if strings.HasSuffix(p, ".zap") {
			if err := os.Link(p, target); err == nil {
				return nil
			}
		}
		return copyFile(p, target)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// removeStale removes every generation other than keep that no process is
// reading. It runs under the write lock, so a generation that was never
// made current (an interrupted build) is also removed.
func removeStale(dir, keep string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if _, ok := genSeq(e.Name()); !ok || e.Name() == keep || !e.IsDir() {
			continue
		}
		gdir := filepath.Join(dir, e.Name())
		lf, err := os.Open(filepath.Join(gdir, useLockName))
		if errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, os.RemoveAll(gdir))
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if lockFile(lf, true, false) != nil {
			lf.Close() // still being read
			continue
		}
		// use.lock goes last: a reader that opened it before we locked
		// checks after locking that it still exists.
		for _, sub := range []string{bleveName, textsName, filesName, files2Name, legacyFilesName, infoName} {
			errs = append(errs, os.RemoveAll(filepath.Join(gdir, sub)))
		}
		errs = append(errs, os.RemoveAll(gdir))
		lf.Close()
	}
	return errors.Join(errs...)
}
