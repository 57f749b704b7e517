package corpus

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/deepresearch/deepresearch/sources"
)

var (
	_ sources.Vocabulary = (*Index)(nil)
	_ sources.Redundancy = (*Index)(nil)
)

// maxVocabWord bounds the word DocFreq analyses; maxVocabMemo the words a generation remembers.
const (
	maxVocabWord = 200
	maxVocabMemo = 1 << 14
)

// vocabMemo remembers the document frequencies a generation was asked for: the roles ask for the same words
// passage after passage.
type vocabMemo struct {
	mu sync.Mutex
	m  map[string]int
}

// DocFreq implements sources.Vocabulary: how many chunks use word (analysed as the index analyses text; of a
// word of several terms, the rarest) and how many chunks the index has.
func (ix *Index) DocFreq(ctx context.Context, word string) (df, n int, err error) {
	return ix.count(ctx, word, false)
}

// PhraseFreq implements sources.Vocabulary: how many chunks use the words of phrase one after the other, as the
// index analyses them (so "foreign keys" counts the chunks saying "foreign key"), and how many chunks the index
// has. A phrase of one term is counted as DocFreq counts it; one of no term is used nowhere.
func (ix *Index) PhraseFreq(ctx context.Context, phrase string) (df, n int, err error) {
	return ix.count(ctx, phrase, true)
}

// count is DocFreq, or PhraseFreq when phrase is set, over the current generation, remembered in its memo.
func (ix *Index) count(ctx context.Context, text string, phrase bool) (df, n int, err error) {
	if len(text) > maxVocabWord {
		text = text[:maxVocabWord]
	}
	g, release, err := ix.acquire()
	if err != nil {
		return 0, 0, err
	}
	if g == nil {
		return 0, 0, nil
	}
	defer release()
	n = g.info.Chunks
	an := g.idx.Mapping().AnalyzerNamed(g.queryAnalyzer())
	if an == nil {
		return 0, 0, errors.New("corpus vocabulary: analyzer missing")
	}
	tokens := an.Analyze([]byte(text))
	if len(tokens) == 0 {
		return 0, n, nil
	}
	phrase = phrase && len(tokens) > 1
	key := text
	if phrase {
		key = "\x00phrase\x00" + text // apart from a word's count
	}
	if v, ok := g.vocab.recall(key); ok {
		return v, n, nil
	}
	if phrase {
		q := bleve.NewMatchPhraseQuery(text)
		q.SetField("text")
		q.Analyzer = g.queryAnalyzer()
		res, err := g.idx.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, 0, 0, false))
		if err != nil {
			return 0, 0, fmt.Errorf("corpus vocabulary %q: %w", text, err)
		}
		df = int(res.Total)
	} else if df, err = termDocFreq(ctx, g, tokens); err != nil {
		return 0, 0, fmt.Errorf("corpus vocabulary %q: %w", text, err)
	}
	g.vocab.remember(key, df)
	return df, n, nil
}

// termDocFreq counts the chunks using the rarest of tokens.
func termDocFreq(ctx context.Context, g *generation, tokens analysis.TokenStream) (int, error) {
	r, err := openReader(g.idx)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	df := -1
	for _, tk := range tokens {
		c, err := termCount(ctx, r, "text", tk.Term)
		if err != nil {
			return 0, err
		}
		if df < 0 || int(c) < df {
			df = int(c)
		}
	}
	return df, nil
}

// termCount counts the chunks whose field holds term.
func termCount(ctx context.Context, r index.IndexReader, field string, term []byte) (uint64, error) {
	tfr, err := r.TermFieldReader(ctx, term, field, false, false, false)
	if err != nil {
		return 0, err
	}
	defer tfr.Close()
	return tfr.Count(), nil
}

// recall returns the count remembered for key.
func (m *vocabMemo) recall(key string) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[key]
	return v, ok
}

// remember keeps the count of key, starting afresh past maxVocabMemo keys.
func (m *vocabMemo) remember(key string, v int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= maxVocabMemo {
		m.m = map[string]int{}
	}
	m.m[key] = v
}

// Redundant implements sources.Redundancy: why the document at rawURL (a file:// URL, with or without a #L anchor)
// is redundant in the current generation (sources.RedundantCopy, sources.RedundantAggregate; see redundantDocs), "" when it is not
// or the index does not hold it.
func (ix *Index) Redundant(ctx context.Context, rawURL string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "file" {
		return "", nil
	}
	g, release, err := ix.acquire()
	if err != nil {
		return "", err
	}
	if g == nil {
		return "", nil
	}
	defer release()
	return g.info.Redundant[filepath.Clean(filepath.FromSlash(u.Path))], nil
}
