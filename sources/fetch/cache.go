package fetch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/deepresearch/deepresearch/base/atomicfile"
	"github.com/deepresearch/deepresearch/sources"
)

// Cache keeps fetched documents on disk. Texts are stored once per content
// hash (text/ab/abcdef….txt), so the exact text a run read can always be
// recovered from the hash recorded with its evidence; a small JSON record per
// URL (url/<sha256 of URL>.json) points at the latest text for that URL.
// It is safe for concurrent use: every write goes to a temporary file that is
// renamed into place.
type Cache struct {
	dir string
}

type cacheRecord struct {
	URL         string    `json:"url"`
	FinalURL    string    `json:"final_url"`
	Title       string    `json:"title"`
	ContentType string    `json:"content_type"`
	Hash        string    `json:"hash"`
	FetchedAt   time.Time `json:"fetched_at"`
	Published   time.Time `json:"published,omitzero"`
	Truncated   bool      `json:"truncated,omitempty"`
}

// OpenCache opens (creating if needed) a cache rooted at dir.
func OpenCache(dir string) (*Cache, error) {
	for _, sub := range []string{"url", "text"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("open fetch cache: %w", err)
		}
	}
	return &Cache{dir: dir}, nil
}

func (c *Cache) urlPath(u string) string {
	sum := sha256.Sum256([]byte(u))
	return filepath.Join(c.dir, "url", hex.EncodeToString(sum[:])+".json")
}

func (c *Cache) textPath(hash string) string {
	if len(hash) < 3 {
		hash = "xx" + hash
	}
	return filepath.Join(c.dir, "text", hash[:2], hash+".txt")
}

// Store records doc under its URL and its text under its hash.
func (c *Cache) Store(doc *sources.Document) error {
	tp := c.textPath(doc.Hash)
	if _, err := os.Stat(tp); errors.Is(err, os.ErrNotExist) {
		if err := writeAtomic(tp, []byte(doc.Text)); err != nil {
			return err
		}
	}
	rec, err := json.MarshalIndent(cacheRecord{
		URL: doc.URL, FinalURL: doc.FinalURL, Title: doc.Title, ContentType: doc.ContentType,
		Hash: doc.Hash, FetchedAt: doc.FetchedAt, Published: doc.Published, Truncated: doc.Truncated,
	}, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(c.urlPath(doc.URL), rec)
}

// Lookup returns the latest cached document for url.
func (c *Cache) Lookup(url string) (*sources.Document, bool) {
	data, err := os.ReadFile(c.urlPath(url))
	if err != nil {
		return nil, false
	}
	var rec cacheRecord
	if json.Unmarshal(data, &rec) != nil {
		return nil, false
	}
	text, err := c.Text(rec.Hash)
	if err != nil {
		return nil, false
	}
	return &sources.Document{
		URL: rec.URL, FinalURL: rec.FinalURL, Title: rec.Title, Text: text, ContentType: rec.ContentType,
		Hash: rec.Hash, FetchedAt: rec.FetchedAt, Published: rec.Published, Truncated: rec.Truncated,
	}, true
}

// Text returns the stored text with the given sha256 hex hash, verifying it.
func (c *Cache) Text(hash string) (string, error) {
	data, err := os.ReadFile(c.textPath(hash))
	if err != nil {
		return "", fmt.Errorf("fetch cache: text %s: %w", hash, err)
	}
	if got := sources.HashText(string(data)); got != hash {
		return "", fmt.Errorf("fetch cache: text %s is corrupt (hash %s)", hash, got)
	}
	return string(data), nil
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o644)
}
