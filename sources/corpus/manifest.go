package corpus

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// manifest is what the writer needs to update an index incrementally. It
// is stored with gob, which decodes 50,000 entries in a few milliseconds;
// readers never load it.
type manifest struct {
	Roots []string
	Files map[string]*fileEntry
}

type fileEntry struct {
	ModTime  int64 // unix nanoseconds
	Size     int64
	FileHash string  // sha256 of the file's bytes
	Chunks   []int32 // start, end line of each chunk: its id is FileURL(path, start, end)
}

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

// loadManifest reads the current generation's manifest (empty when the
// index has none yet).
func (ix *Index) loadManifest() (string, *manifest, error) {
	for range 20 {
		name, err := readCurrent(ix.dir)
		if err != nil {
			return "", nil, fmt.Errorf("corpus %s: %w", ix.dir, err)
		}
		if name == "" {
			return "", &manifest{Files: map[string]*fileEntry{}}, nil
		}
		f, err := os.Open(filepath.Join(ix.dir, name, filesName))
		if errors.Is(err, fs.ErrNotExist) {
			continue // replaced and removed meanwhile
		}
		if err != nil {
			return "", nil, fmt.Errorf("corpus %s: %w", ix.dir, err)
		}
		m := &manifest{}
		err = gob.NewDecoder(f).Decode(m)
		f.Close()
		if err != nil {
			return "", nil, fmt.Errorf("corpus %s: %s: %w", ix.dir, filesName, err)
		}
		if m.Files == nil {
			m.Files = map[string]*fileEntry{}
		}
		return name, m, nil
	}
	return "", nil, fmt.Errorf("corpus %s: the index kept changing while it was read", ix.dir)
}

func writeManifest(path string, m *manifest) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := gob.NewEncoder(f).Encode(m); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
