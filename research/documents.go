package research

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources"
)

func (r *runner) document(ctx context.Context, rawURL string) (*docEntry, error) {
	n := documentKey(rawURL)
	r.mu.Lock()
	d, ok := r.docs[n]
	if !ok {
		d = &docEntry{ready: make(chan struct{})}
		r.docs[n] = d
	}
	r.mu.Unlock()
	if ok {
		select {
		case <-d.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if d.err != nil && isContextErr(d.err) && ctx.Err() == nil {
			return r.document(ctx, rawURL) // the fetcher's context ended, not ours: fetch it now
		}
		if d.err != nil {
			return nil, d.err
		}
		return d, nil
	}
	doc, err := r.load(ctx, rawURL)
	if err != nil {
		if isContextErr(err) || errors.Is(err, ErrStateStore) {
			// Not the document's failure: the next caller tries again.
			r.mu.Lock()
			delete(r.docs, n)
			r.mu.Unlock()
		}
		d.err = err
		close(d.ready)
		return nil, err
	}
	d.idx = publish.NewNormIndex(doc.Text)
	d.doc, d.norm = doc, d.idx.Norm
	close(d.ready)
	return d, nil
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// load reads url's text from the run folder, or fetches and stores it.
func (r *runner) load(ctx context.Context, rawURL string) (*sources.Document, error) {
	meta, err := r.db.Document(ctx, rawURL)
	switch {
	case err == nil:
		text, err := r.storedText(ctx, meta)
		if err == nil {
			return &sources.Document{URL: meta.URL, FinalURL: meta.FinalURL, Title: meta.Title,
				Text: string(text), ContentType: meta.ContentType, Hash: meta.Hash, FetchedAt: meta.FetchedAt,
				Truncated: meta.Truncated}, nil
		}
	case !errors.Is(err, state.ErrNotFound):
		return nil, storeErr(ctx, err) // the state cannot say whether the document was fetched: fetch nothing
	}
	doc, err := r.cfg.Fetcher.Fetch(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(doc.Text) == "" {
		return nil, fmt.Errorf("fetch %s: the document has no text", rawURL)
	}
	doc.Hash = sources.HashText(doc.Text)
	rel := filepath.Join(DocsDir, doc.Hash+".txt")
	if err := writeRunFile(r.dir, rel, []byte(doc.Text)); err != nil {
		return nil, storeErr(ctx, fmt.Errorf("store %s: %w", rawURL, err))
	}
	if err := r.db.PutDocument(ctx, state.Document{URL: rawURL, FinalURL: doc.FinalURL, Title: doc.Title,
		Hash: doc.Hash, Path: rel, ContentType: doc.ContentType, Truncated: doc.Truncated,
		FetchedAt: doc.FetchedAt}); err != nil {
		return nil, storeErr(ctx, err)
	}
	if r.db.Backend() == state.Postgres {
		// Shared state: the text goes there too, so a step on another machine reads it without fetching again.
		if err := r.db.PutText(ctx, doc.Hash, doc.Text); err != nil {
			return nil, storeErr(ctx, err)
		}
	}
	return doc, nil
}

// storedText returns the text stored for a fetched document: the run folder's copy or, when the state is
// shared, the state's (cached in the run folder); its hash must be the one recorded when it was read.
func (r *runner) storedText(ctx context.Context, meta *state.Document) ([]byte, error) {
	text, err := ReadRunFile(r.dir, meta.Path)
	if err == nil && sources.HashText(string(text)) != meta.Hash {
		err = fmt.Errorf("stored text of %s was modified after it was read", meta.URL)
	}
	if err == nil || r.db.Backend() != state.Postgres {
		return text, err
	}
	shared, serr := r.db.Text(ctx, meta.Hash)
	if serr != nil {
		return nil, fmt.Errorf("stored text of %s: %w", meta.URL, errors.Join(err, serr))
	}
	if sources.HashText(shared) != meta.Hash {
		return nil, fmt.Errorf("stored text of %s was modified after it was read", meta.URL)
	}
	if rel := filepath.Join(DocsDir, meta.Hash+".txt"); meta.Path == rel {
		if werr := writeRunFile(r.dir, rel, []byte(shared)); werr != nil {
			r.log.Warn("cache stored text", "url", meta.URL, "err", werr)
		}
	}
	return []byte(shared), nil
}

// storedDocument returns the stored text an evidence source names — the document fetched under that URL, or,
// for another line anchor into the same file, the text read from that file (see pickDocument) — without ever
// fetching: the integrity check verifies quotes against what the run read.
func (r *runner) storedDocument(ctx context.Context, source string) (*docEntry, error) {
	meta, err := r.db.Document(ctx, source)
	if errors.Is(err, state.ErrNotFound) {
		docs, lerr := r.db.Documents(ctx)
		if lerr != nil {
			return nil, lerr
		}
		if d := pickDocument(docs, source); d != nil {
			meta, err = d, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return r.storedEntry(ctx, meta)
}

// storedEntry returns the text stored for the fetched document meta describes, indexed for quote lookups.
func (r *runner) storedEntry(ctx context.Context, meta *state.Document) (*docEntry, error) {
	n := documentKey(meta.URL)
	r.mu.Lock()
	d, ok := r.docs[n]
	r.mu.Unlock()
	if ok {
		select {
		case <-d.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if d.err == nil {
			return d, nil
		}
	}
	text, err := r.storedText(ctx, meta)
	if err != nil {
		return nil, err
	}
	idx := publish.NewNormIndex(string(text))
	d = &docEntry{ready: make(chan struct{}), norm: idx.Norm, idx: idx,
		doc: &sources.Document{URL: meta.URL, FinalURL: meta.FinalURL, Title: meta.Title, Text: string(text),
			ContentType: meta.ContentType, Hash: meta.Hash, FetchedAt: meta.FetchedAt, Truncated: meta.Truncated}}
	close(d.ready)
	r.mu.Lock()
	if old, ok := r.docs[n]; !ok || old.err != nil {
		r.docs[n] = d
	}
	r.mu.Unlock()
	return d, nil
}
