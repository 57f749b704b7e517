package corpus

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/deepresearch/deepresearch/sources"
)

// textStore keeps the extracted text of every indexed file, keyed by its
// sha256, in one bbolt file. One database instead of one file per document
// matters at scale: creating 10,000 small files costs more than indexing
// them.
type textStore struct {
	db *bolt.DB
}

var textBucket = []byte("text")

func openTextStore(path string) (*textStore, error) {
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: 3 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open text store %s: %w (is another deepresearch process using it?)", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(textBucket)
		return err
	}); err != nil {
		db.Close()
		return nil, err
	}
	return &textStore{db: db}, nil
}

// putAll stores texts (hash → text) in one transaction.
func (s *textStore) putAll(texts map[string]string) error {
	if len(texts) == 0 {
		return nil
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(textBucket)
		for h, t := range texts {
			if b.Get([]byte(h)) != nil {
				continue
			}
			if err := b.Put([]byte(h), []byte(t)); err != nil {
				return err
			}
		}
		return nil
	})
}

// get returns the text with the given hash, verifying it.
func (s *textStore) get(hash string) (string, error) {
	var text string
	found := false
	err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(textBucket).Get([]byte(hash)); v != nil {
			text, found = string(v), true // string() copies out of the mmap
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if !found {
		return "", fmt.Errorf("text %s is missing from the store", hash)
	}
	if sources.HashText(text) != hash {
		return "", fmt.Errorf("text %s is corrupt", hash)
	}
	return text, nil
}

// keepOnly deletes every text whose hash is not in live.
func (s *textStore) keepOnly(live map[string]bool) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(textBucket)
		var dead [][]byte
		if err := b.ForEach(func(k, _ []byte) error {
			if !live[string(k)] {
				dead = append(dead, append([]byte(nil), k...))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range dead {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *textStore) close() error { return s.db.Close() }
