package corpus

import (
	"cmp"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// manifest is what the writer needs to update an index incrementally: per
// file its modification time, size, content hash and chunk lines. Readers
// never load it. It also records the files that were read and found not to
// be documents (binary, generated, too much text, failing to extract), with
// their outcome, so that the next update does not read them again while
// they stay as they are.
//
// It is stored in columns — one long string of paths, one slice per field —
// in walk order (see comparePaths), so that decoding 100,000 entries takes
// a few allocations rather than a few per file, and a re-index compares it
// with the scan, which lists files in the same order, by merging the two
// lists rather than building a map.
type manifest struct {
	cols     manifestCols
	paths    []string       // cols.Paths cut at cols.PathLens
	chunkEnd []int          // file i's chunks are cols.Chunks[chunkEnd[i-1]:chunkEnd[i]]
	markEnd  []int          // file i's marks are cols.Marks[markEnd[i-1]:markEnd[i]]; nil when there are none
	notes    map[int]string // the detail of each file that is not a document
	// reanalyse marks the manifest of a generation indexed another way (analysisVersion), stripped of its files:
	// the next generation is built anew, not as a copy of it.
	reanalyse bool
	// unscored marks the manifest of a generation written without its scoring statistics (genInfo.Scoring): an
	// update writes the next generation even when no file changed, so that searches stop counting them.
	unscored bool
}

// manifestCols is the stored form of a manifest (gob).
type manifestCols struct {
	Roots    []string
	Paths    string   // every path, concatenated
	PathLens []uint32 // the length of each path
	ModTimes []int64  // unix nanoseconds
	Sizes    []int64
	Inos     []uint64 // inode numbers, 0 when unknown
	Hashes   []byte   // the sha256 of each file's bytes, 32 bytes each
	Racy     []byte   // 1 for a file modified so shortly before it was read that its mtime and size do not vouch for its content
	NLines   []uint32 // how many chunk lines each file has in Chunks (two a chunk)
	Chunks   []int32  // start, end line of every chunk, file after file
	// Outcomes is 0 for an indexed file, else the outcomeCodes code of a
	// file read and found not to be a document; empty in files2.gob, whose
	// files are all indexed.
	Outcomes []byte
	Notes    []string // the detail of each file whose outcome is not 0, in order
	// NMarks is how many line marks (lexical.LineMarks, for finding copies: see redundantDocs) each file has in
	// Marks; empty in a manifest written before marks, whose files then have none until they change.
	NMarks []uint32
	Marks  []uint32
}

// outcomeCodes are the outcomes a manifest records besides indexed (0).
var outcomeCodes = []Outcome{1: Binary, 2: Excluded, 3: TooLarge, 4: Failed}

func outcomeCode(o Outcome) byte {
	for c, oc := range outcomeCodes {
		if c > 0 && oc == o {
			return byte(c)
		}
	}
	return 0
}

// fileEntry is one file of a manifest, as a build uses and changes it.
type fileEntry struct {
	ModTime int64 // unix nanoseconds
	Size    int64
	Ino     uint64   // inode number, 0 when unknown
	Hash    [32]byte // sha256 of the file's bytes
	// Racy is set when the file was modified less than racyWindow before it
	// was read: a change made in the same tick of the file system's clock,
	// keeping the size, would leave mtime and size as they are, so the next
	// scan hashes the file instead of trusting them.
	Racy   bool
	Chunks []int32 // start, end line of each chunk: its id is FileURL(path, start, end)
	// Marks are the line marks of the file's text (lexical.LineMarks), by which a copy of another document or a
	// page repeating many others is recognised (redundantDocs).
	Marks []uint32
	// Outcome is "" for an indexed file; for a file read and found not to
	// be a document, why (Binary, Excluded, TooLarge or Failed), with
	// Detail (for Failed, the error).
	Outcome Outcome
	Detail  string
}

// doc reports whether the entry is an indexed document.
func (e *fileEntry) doc() bool { return e.Outcome == "" }

// same reports whether e and o record the same file the same way.
func (e *fileEntry) same(o *fileEntry) bool {
	return e.ModTime == o.ModTime && e.Size == o.Size && e.Ino == o.Ino && e.Hash == o.Hash && e.Racy == o.Racy &&
		e.Outcome == o.Outcome && e.Detail == o.Detail && slices.Equal(e.Chunks, o.Chunks) && slices.Equal(e.Marks, o.Marks)
}

// racyWindow bounds the granularity of file modification times (2 s on
// FAT, 1 s on some network file systems, a clock tick elsewhere) with room
// for the file system's coarser clock.
const racyWindow = 3 * time.Second

// fileMeta is stored, as JSON, on a file's document in Bleve: what Search
// and Fetch need without loading the manifest.
type fileMeta struct {
	Path        string    `json:"path"`
	Title       string    `json:"title"`
	ContentType string    `json:"content_type"`
	Lang        string    `json:"lang,omitempty"`
	TextHash    string    `json:"text_sha256"`
	Lines       int       `json:"lines"`
	ModTime     time.Time `json:"mtime"`
}

// comparePaths orders paths as a walk meets them: each folder's entries by
// name, a folder's contents right after it. That is byte order with the
// separator before every other byte.
func comparePaths(a, b string) int {
	if a == b {
		return 0
	}
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return cmp.Compare(len(a), len(b))
	}
	switch {
	case a[i] == filepath.Separator:
		return -1
	case b[i] == filepath.Separator:
		return 1
	}
	return cmp.Compare(a[i], b[i])
}

func (m *manifest) len() int { return len(m.paths) }

// find returns the index of path, or -1.
func (m *manifest) find(path string) int {
	i, ok := slices.BinarySearchFunc(m.paths, path, comparePaths)
	if !ok {
		return -1
	}
	return i
}

func (m *manifest) racy(i int) bool { return m.cols.Racy[i] != 0 }

// entry returns file i.
func (m *manifest) entry(i int) *fileEntry {
	e := &fileEntry{ModTime: m.cols.ModTimes[i], Size: m.cols.Sizes[i], Ino: m.cols.Inos[i], Racy: m.racy(i)}
	copy(e.Hash[:], m.cols.Hashes[32*i:])
	lo := 0
	if i > 0 {
		lo = m.chunkEnd[i-1]
	}
	hi := m.chunkEnd[i]
	e.Chunks = m.cols.Chunks[lo:hi:hi]
	if m.markEnd != nil {
		lo = 0
		if i > 0 {
			lo = m.markEnd[i-1]
		}
		hi = m.markEnd[i]
		e.Marks = m.cols.Marks[lo:hi:hi]
	}
	if c := m.cols.Outcomes[i]; c != 0 {
		e.Outcome, e.Detail = outcomeCodes[c], m.notes[i]
	}
	return e
}

// sameAs reports whether a build of roots and files would write m again.
func (m *manifest) sameAs(roots []string, files map[string]*fileEntry) bool {
	if len(files) != m.len() || !slices.Equal(roots, m.cols.Roots) {
		return false
	}
	for i, p := range m.paths {
		e := files[p]
		if e == nil || !e.same(m.entry(i)) {
			return false
		}
	}
	return true
}

// files returns every file by path, for a build to change.
func (m *manifest) files() map[string]*fileEntry {
	out := make(map[string]*fileEntry, m.len())
	for i, p := range m.paths {
		out[p] = m.entry(i)
	}
	return out
}

// newManifest makes a manifest of roots and files.
func newManifest(roots []string, files map[string]*fileEntry) *manifest {
	paths := make([]string, 0, len(files))
	size, chunks, marks := 0, 0, 0
	for p, e := range files {
		paths = append(paths, p)
		size += len(p)
		chunks += len(e.Chunks)
		marks += len(e.Marks)
	}
	slices.SortFunc(paths, comparePaths)
	n := len(paths)
	c := manifestCols{
		Roots:    roots,
		PathLens: make([]uint32, n),
		ModTimes: make([]int64, n),
		Sizes:    make([]int64, n),
		Inos:     make([]uint64, n),
		Hashes:   make([]byte, 32*n),
		Racy:     make([]byte, n),
		NLines:   make([]uint32, n),
		Chunks:   make([]int32, 0, chunks),
		Outcomes: make([]byte, n),
		NMarks:   make([]uint32, n),
		Marks:    make([]uint32, 0, marks),
	}
	var sb strings.Builder
	sb.Grow(size)
	for i, p := range paths {
		e := files[p]
		sb.WriteString(p)
		c.PathLens[i] = uint32(len(p))
		c.ModTimes[i], c.Sizes[i], c.Inos[i] = e.ModTime, e.Size, e.Ino
		copy(c.Hashes[32*i:], e.Hash[:])
		if e.Racy {
			c.Racy[i] = 1
		}
		c.NLines[i] = uint32(len(e.Chunks))
		c.Chunks = append(c.Chunks, e.Chunks...)
		c.NMarks[i] = uint32(len(e.Marks))
		c.Marks = append(c.Marks, e.Marks...)
		if !e.doc() {
			c.Outcomes[i] = outcomeCode(e.Outcome)
			c.Notes = append(c.Notes, e.Detail)
		}
	}
	c.Paths = sb.String()
	m, err := fromCols(c)
	if err != nil {
		panic(err) // unreachable: the columns were just made consistent
	}
	return m
}

// fromCols checks decoded columns and indexes them.
func fromCols(c manifestCols) (*manifest, error) {
	n := len(c.PathLens)
	if len(c.ModTimes) != n || len(c.Sizes) != n || len(c.Inos) != n || len(c.Hashes) != 32*n || len(c.Racy) != n || len(c.NLines) != n {
		return nil, errors.New("columns of different lengths")
	}
	if len(c.Outcomes) == 0 && len(c.Notes) == 0 { // files2.gob: every file indexed
		c.Outcomes = make([]byte, n)
	}
	if len(c.Outcomes) != n {
		return nil, errors.New("columns of different lengths")
	}
	m := &manifest{cols: c, paths: make([]string, n), chunkEnd: make([]int, n)}
	for i, o := range c.Outcomes {
		if o == 0 {
			continue
		}
		if int(o) >= len(outcomeCodes) {
			return nil, fmt.Errorf("unknown outcome %d", o)
		}
		if len(m.notes) == len(c.Notes) {
			return nil, errors.New("fewer notes than files that are not documents")
		}
		if m.notes == nil {
			m.notes = map[int]string{}
		}
		m.notes[i] = c.Notes[len(m.notes)]
	}
	if len(m.notes) != len(c.Notes) {
		return nil, errors.New("more notes than files that are not documents")
	}
	off, chunks := 0, 0
	for i, l := range c.PathLens {
		if int(l) > len(c.Paths)-off {
			return nil, errors.New("paths shorter than their lengths")
		}
		m.paths[i] = c.Paths[off : off+int(l)]
		off += int(l)
		if i > 0 && comparePaths(m.paths[i-1], m.paths[i]) >= 0 {
			return nil, fmt.Errorf("paths out of order at %q", m.paths[i])
		}
		chunks += int(c.NLines[i])
		if chunks > len(c.Chunks) {
			return nil, errors.New("fewer chunks than counted")
		}
		m.chunkEnd[i] = chunks
	}
	if off != len(c.Paths) || chunks != len(c.Chunks) {
		return nil, errors.New("trailing paths or chunks")
	}
	switch {
	case len(c.NMarks) == 0 && len(c.Marks) == 0: // written before marks
	case len(c.NMarks) != n:
		return nil, errors.New("columns of different lengths")
	default:
		m.markEnd = make([]int, n)
		marks := 0
		for i, k := range c.NMarks {
			marks += int(k)
			if marks > len(c.Marks) {
				return nil, errors.New("fewer marks than counted")
			}
			m.markEnd[i] = marks
		}
		if marks != len(c.Marks) {
			return nil, errors.New("trailing marks")
		}
	}
	return m, nil
}

// loadManifest reads the current generation's manifest (empty when the
// index has none yet).
func (ix *Index) loadManifest() (string, *manifest, error) {
	for range 20 {
		name, err := readCurrent(ix.dir)
		if err != nil {
			return "", nil, fmt.Errorf("corpus %s: %w", ix.dir, err)
		}
		if name == "" {
			return "", newManifest(nil, nil), nil
		}
		m, err := readManifest(filepath.Join(ix.dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // replaced and removed meanwhile
		}
		if err != nil {
			return "", nil, fmt.Errorf("corpus %s: %w", ix.dir, err)
		}
		info, err := readGenInfo(filepath.Join(ix.dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", nil, fmt.Errorf("corpus %s: %w", ix.dir, err)
		}
		if info.Analysis != analysisVersion {
			// Indexed another way: the update rebuilds every file of the same roots into the next generation.
			m = newManifest(m.cols.Roots, nil)
			m.reanalyse = true
		}
		m.unscored = info.Scoring == nil
		return name, m, nil
	}
	return "", nil, fmt.Errorf("corpus %s: the index kept changing while it was read", ix.dir)
}

// readManifest reads the manifest of the generation in gdir, in this
// format or one before it.
func readManifest(gdir string) (*manifest, error) {
	name := filesName
	f, err := os.Open(filepath.Join(gdir, name))
	if errors.Is(err, fs.ErrNotExist) {
		// files2.gob: the same columns without outcomes.
		name = files2Name
		f, err = os.Open(filepath.Join(gdir, name))
	}
	if errors.Is(err, fs.ErrNotExist) {
		if lf, lerr := os.Open(filepath.Join(gdir, legacyFilesName)); lerr == nil {
			m, err := decodeLegacyManifest(lf)
			lf.Close()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", legacyFilesName, err)
			}
			return m, nil
		}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var c manifestCols
	if err := gob.NewDecoder(f).Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if name == files2Name && (len(c.Outcomes) > 0 || len(c.Notes) > 0) {
		return nil, fmt.Errorf("%s: outcomes in a manifest that has none", name)
	}
	m, err := fromCols(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// decodeLegacyManifest reads the manifest format before columns: a map.
// Its files carry no racy mark nor inode number, so their mtime and size
// are trusted as they were then.
func decodeLegacyManifest(r io.Reader) (*manifest, error) {
	var old struct {
		Roots []string
		Files map[string]*struct {
			ModTime  int64
			Size     int64
			FileHash string
			Chunks   []int32
		}
	}
	if err := gob.NewDecoder(r).Decode(&old); err != nil {
		return nil, err
	}
	files := make(map[string]*fileEntry, len(old.Files))
	for p, o := range old.Files {
		if o == nil {
			continue
		}
		e := &fileEntry{ModTime: o.ModTime, Size: o.Size, Chunks: o.Chunks}
		if n, err := hex.Decode(e.Hash[:], []byte(o.FileHash)); err != nil || n != len(e.Hash) {
			return nil, fmt.Errorf("%s: bad file hash %q", p, o.FileHash)
		}
		files[p] = e
	}
	return newManifest(old.Roots, files), nil
}

func writeManifest(path string, m *manifest) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := gob.NewEncoder(f).Encode(&m.cols); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
