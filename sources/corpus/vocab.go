package corpus

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"

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
	g.vocab.mu.Lock()
	if v, ok := g.vocab.m[word]; ok {
		g.vocab.mu.Unlock()
		return v, n, nil
	}
	g.vocab.mu.Unlock()
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
	g.vocab.mu.Lock()
	if g.vocab.m == nil || len(g.vocab.m) >= maxVocabMemo {
		g.vocab.m = map[string]int{}
	}
	g.vocab.m[word] = df
	g.vocab.mu.Unlock()
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
