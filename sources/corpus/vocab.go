package corpus

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"

	"github.com/blevesearch/bleve/v2"

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
	if len(word) > maxVocabWord {
		word = word[:maxVocabWord]
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
	if v, ok := g.vocab.recall(word); ok {
		return v, n, nil
	}
	an := g.idx.Mapping().AnalyzerNamed(analyzerName)
	if an == nil {
		return 0, 0, errors.New("corpus vocabulary: analyzer missing")
	}
	tokens := an.Analyze([]byte(word))
	if len(tokens) == 0 {
		return 0, n, nil
	}
	adv, err := g.idx.Advanced()
	if err != nil {
		return 0, 0, fmt.Errorf("corpus vocabulary: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return 0, 0, fmt.Errorf("corpus vocabulary: %w", err)
	}
	defer r.Close()
	df = -1
	for _, tk := range tokens {
		tfr, err := r.TermFieldReader(ctx, tk.Term, "text", false, false, false)
		if err != nil {
			return 0, 0, fmt.Errorf("corpus vocabulary %q: %w", word, err)
		}
		c := int(tfr.Count())
		tfr.Close()
		if df < 0 || c < df {
			df = c
		}
	}
	g.vocab.remember(word, df)
	return df, n, nil
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

// phraseKey marks a phrase's count in the memo apart from a word's.
const phraseKey = "\x00phrase\x00"

// PhraseFreq implements sources.Vocabulary: how many chunks use the words of phrase one after the other, as the
// index analyses them (so "foreign keys" counts the chunks saying "foreign key"), and how many chunks the index
// has. A phrase of one term is DocFreq; one of no term is used nowhere.
func (ix *Index) PhraseFreq(ctx context.Context, phrase string) (df, n int, err error) {
	if len(phrase) > maxVocabWord {
		phrase = phrase[:maxVocabWord]
	}
	g, release, err := ix.acquire()
	if err != nil {
		return 0, 0, err
	}
	if g == nil {
		return 0, 0, nil
	}
	an := g.idx.Mapping().AnalyzerNamed(analyzerName)
	if an == nil {
		release()
		return 0, 0, errors.New("corpus vocabulary: analyzer missing")
	}
	n = g.info.Chunks
	switch tokens := an.Analyze([]byte(phrase)); len(tokens) {
	case 0:
		release()
		return 0, n, nil
	case 1:
		release()
		return ix.DocFreq(ctx, phrase)
	}
	defer release()
	if v, ok := g.vocab.recall(phraseKey + phrase); ok {
		return v, n, nil
	}
	q := bleve.NewMatchPhraseQuery(phrase)
	q.SetField("text")
	q.Analyzer = analyzerName
	res, err := g.idx.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, 0, 0, false))
	if err != nil {
		return 0, 0, fmt.Errorf("corpus vocabulary %q: %w", phrase, err)
	}
	df = int(res.Total)
	g.vocab.remember(phraseKey+phrase, df)
	return df, n, nil
}

// Redundant implements sources.Redundancy: why the document at rawURL (a file:// URL, with or without a #L anchor)
// is redundant in the current generation (redundantCopy, redundantAggregate; see redundantDocs), "" when it is not
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
