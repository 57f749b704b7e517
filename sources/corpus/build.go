package corpus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/deepresearch/deepresearch/base/atomicfile"
	"github.com/deepresearch/deepresearch/sources"
)

// build makes the next generation from base and p and swaps it in. It runs
// under the write lock. On cancellation it stops reading files, writes what
// it has and swaps that in; on any error the new generation is discarded
// and the current one stays.
func (ix *Index) build(ctx context.Context, baseName string, base *manifest, p plan, st *Stats, rep *reporter) (err error) {
	var seq uint64
	if baseName != "" {
		seq, _ = genSeq(baseName)
	}
	name := genName(seq + 1)
	gdir := filepath.Join(ix.dir, name)
	if err := os.RemoveAll(gdir); err != nil { // an interrupted build's leftovers
		return fmt.Errorf("index %s: %w", ix.dir, err)
	}
	if err := os.MkdirAll(gdir, 0o755); err != nil {
		return fmt.Errorf("index %s: %w", ix.dir, err)
	}
	committed := false
	defer func() {
		if !committed {
			os.RemoveAll(gdir)
		}
	}()
	if err := os.WriteFile(filepath.Join(gdir, useLockName), nil, 0o644); err != nil {
		return fmt.Errorf("index %s: %w", ix.dir, err)
	}
	copyOf := baseName
	if base.reanalyse {
		copyOf = ""
	}
	idx, err := openForBuild(ix.dir, copyOf, gdir, bleveName, newMapping)
	if err != nil {
		return fmt.Errorf("index %s: %w", ix.dir, err)
	}
	texts, err := openForBuild(ix.dir, copyOf, gdir, textsName, func() (mapping.IndexMapping, error) { return newTextsMapping(), nil })
	if err != nil {
		idx.Close()
		return fmt.Errorf("index %s: %w", ix.dir, err)
	}
	idxOpen := true
	defer func() {
		if idxOpen {
			idx.Close()
			texts.Close()
		}
	}()

	files := base.files()
	for _, v := range p.verified {
		if e := files[v.path]; e != nil {
			e.Ino = v.ino
			e.Racy = e.Racy && !v.settle
		}
	}
	batch, tbatch := idx.NewBatch(), texts.NewBatch()
	flush := func() error {
		if tbatch.Size() > 0 {
			if err := texts.Batch(tbatch); err != nil {
				return fmt.Errorf("texts batch: %w", err)
			}
		}
		if batch.Size() > 0 {
			if err := idx.Batch(batch); err != nil {
				return fmt.Errorf("index batch: %w", err)
			}
		}
		// Fresh batches, not Reset: bleve's scorch may still be ranging over the old batch's map in a goroutine
		// after Batch returns (a data race the race detector reports in bleve v2.6.3).
		batch, tbatch = idx.NewBatch(), texts.NewBatch()
		return nil
	}
	drop := func(path string, e *fileEntry) {
		for i := 0; i+1 < len(e.Chunks); i += 2 {
			batch.Delete(FileURL(path, int(e.Chunks[i]), int(e.Chunks[i+1])))
		}
		tbatch.Delete(FileURL(path, 0, 0))
	}
	docsChanged := false // a document added, updated or removed: without one, and with the manifest as it was, nothing is committed
	for _, path := range p.gone {
		e := files[path]
		delete(files, path)
		if !e.doc() { // a file that was not a document is only forgotten
			continue
		}
		drop(path, e)
		docsChanged = true
		st.Removed++
		st.Files = append(st.Files, FileOutcome{Path: path, Outcome: Removed})
	}
	st.Unchanged += len(p.unchanged)
	listUnchanged(st, p)

	// Read, extract and chunk in parallel; this goroutine writes. Each
	// file holds its share of the memory budget from before it is read
	// until its outcome is written.
	workers := max(runtime.GOMAXPROCS(0), 1)
	jobCh := make(chan job)
	outCh := make(chan outcome, workers*2)
	mem := newMemBudget(ix.budget)
	mem.text = ix.maxText
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobCh {
				o, ok := mem.process(ctx, j)
				if ok {
					outCh <- o
				}
			}
		})
	}
	go func() {
		defer close(jobCh)
		for _, j := range p.jobs {
			select {
			case jobCh <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(outCh) }()

	total, done := len(p.jobs), 0
	rep.report(Progress{Phase: "indexing", Total: total}, true)
	var werr error
	for o := range outCh {
		// Its share comes back as it is taken off the channel, not once it
		// is written: a worker waiting for a share must not wait on the
		// writer that waits on the workers.
		mem.release(o.share)
		if werr != nil {
			continue // drain
		}
		done++
		fo := FileOutcome{Path: o.path, Outcome: o.result, Detail: o.detail}
		switch o.result {
		case Unchanged:
			files[o.path] = o.entry
			st.Unchanged++
		case Added, Updated:
			if ctx.Err() != nil {
				// Stopped: a file read meanwhile is not written (a big one takes seconds); it stays as the
				// index had it, absent or in its previous version, for the next update.
				continue
			}
			if o.prev != nil && o.prev.doc() {
				drop(o.path, o.prev)
			}
			docsChanged = true
			err := indexFile(ctx, func() (*bleve.Batch, *bleve.Batch) { return batch, tbatch }, func() error {
				if batch.Size() >= ix.batchOps {
					return flush()
				}
				return nil
			}, o)
			if errors.Is(err, errStopped) {
				delete(files, o.path) // its previous version was dropped above: the next update adds it anew
				continue
			}
			werr = err
			if o.result == Updated {
				st.Updated++
			} else {
				st.Added++
			}
			files[o.path] = o.entry
			st.Chunks += len(o.ex.chunks)
		default: // binary, too large, generated, failed: not (or no longer) a document
			if o.result == Failed {
				st.Failed = append(st.Failed, FileError{Path: o.path, Err: o.err})
				fo.Detail = o.err.Error()
			} else {
				switch o.result {
				case Binary:
					st.Binary++
				case TooLarge:
					st.TooLarge++
				default:
					st.Excluded++
				}
			}
			// Recorded with its outcome, it is not read again until it changes; no longer a regular file or
			// grown too large, it is forgotten; unreadable, it stays as it was and is read again next time.
			if o.entry != nil || o.result != Failed {
				if o.prev != nil && o.prev.doc() {
					drop(o.path, o.prev)
					docsChanged = true
					st.Removed++
				}
				if o.entry != nil {
					files[o.path] = o.entry
				} else {
					delete(files, o.path)
				}
			}
		}
		st.Files = append(st.Files, fo)
		// Reported once written: a stop asked for on seeing a file done keeps that file.
		rep.report(Progress{Phase: "indexing", Done: done, Total: total, Path: o.path}, done == total)
		if werr == nil && batch.Size() >= ix.batchOps {
			werr = flush()
		}
	}
	if werr == nil {
		werr = flush()
	}
	if werr != nil {
		return fmt.Errorf("index %s: %w", ix.dir, werr)
	}
	roots := slices.Clone(base.cols.Roots)
	for _, r := range p.roots {
		if !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	slices.Sort(roots)
	if !docsChanged && base.sameAs(roots, files) && !base.unscored {
		return nil // after all, nothing changed: the current generation stays (the deferred cleanup removes this one)
	}
	scoring, err := indexScoringStats(ctx, idx)
	if err != nil {
		return fmt.Errorf("index %s: %w", ix.dir, err)
	}
	info := genInfo{Roots: roots, Built: time.Now().UTC(), Redundant: redundantDocs(files), Analysis: analysisVersion, Scoring: scoring}
	for _, e := range files {
		if e.doc() {
			info.Files++
			info.Chunks += len(e.Chunks) / 2
		}
	}
	idxOpen = false
	if err := errors.Join(idx.Close(), texts.Close()); err != nil {
		return fmt.Errorf("index %s: close: %w", ix.dir, err)
	}
	if err := writeManifest(filepath.Join(gdir, filesName), newManifest(roots, files)); err != nil {
		return fmt.Errorf("index %s: %w", ix.dir, err)
	}
	data, _ := json.Marshal(info)
	if err := atomicfile.Write(filepath.Join(gdir, infoName), data, 0o644); err != nil {
		return fmt.Errorf("index %s: %w", ix.dir, err)
	}
	if err := atomicfile.Write(filepath.Join(ix.dir, currentName), []byte(name+"\n"), 0o644); err != nil {
		return fmt.Errorf("index %s: %w", ix.dir, err)
	}
	committed = true
	if err := removeStale(ix.dir, name); err != nil {
		ix.log.Warn("corpus: removing old generations", "dir", ix.dir, "err", err)
	}
	return nil
}

// errStopped: indexFile was cancelled part way through a file and took back the chunks it had added.
var errStopped = errors.New("stopped part way through the file")

// indexFile adds one file's chunks and its file document to the batches cur returns. It calls full after each
// chunk, so that a file of thousands of chunks (a 30 MB log) is written in bounded batches instead of one batch
// whose analysis takes gigabytes. Cancelled part way, it deletes the chunks it added (some may have been written
// already) and returns errStopped, so that a stop is not held up by a big file nor leaves half of one.
func indexFile(ctx context.Context, cur func() (batch, tbatch *bleve.Batch), full func() error, o outcome) error {
	for k, c := range o.ex.chunks {
		batch, _ := cur()
		if ctx.Err() != nil {
			for _, c := range o.ex.chunks[:k] {
				batch.Delete(FileURL(o.path, c.start, c.end))
			}
			return errStopped
		}
		if err := batch.Index(FileURL(o.path, c.start, c.end), map[string]any{
			"_type": chunkType, "title": o.ex.title, "text": c.text,
		}); err != nil {
			return fmt.Errorf("index %s: %w", o.path, err)
		}
		if err := full(); err != nil {
			return err
		}
	}
	_, tbatch := cur()
	meta, err := json.Marshal(fileMeta{
		Path: o.path, Title: o.ex.title, ContentType: o.f.ContentType(), Lang: o.f.Lang,
		TextHash: sources.HashText(o.ex.text), Lines: len(splitLines(o.ex.text)),
		ModTime: time.Unix(0, o.entry.ModTime).UTC(),
	})
	if err != nil {
		return err
	}
	if err := tbatch.Index(FileURL(o.path, 0, 0), map[string]any{
		"_type": fileType, "meta": string(meta), "body": o.ex.text,
	}); err != nil {
		return fmt.Errorf("index %s: %w", o.path, err)
	}
	return nil
}

// openForBuild opens the index name of the generation being built in gdir:
// a copy of the base generation's, or a new one.
func openForBuild(dir, baseName, gdir, name string, newMap func() (mapping.IndexMapping, error)) (bleve.Index, error) {
	path := filepath.Join(gdir, name)
	if baseName != "" {
		if err := cloneBleve(filepath.Join(dir, baseName, name), path); err != nil {
			return nil, fmt.Errorf("copy generation %s: %w", baseName, err)
		}
		return bleve.Open(path)
	}
	m, err := newMap()
	if err != nil {
		return nil, fmt.Errorf("mapping: %w", err)
	}
	return bleve.New(path, m)
}
