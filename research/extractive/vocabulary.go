package extractive

import (
	"context"
	"sync"

	"github.com/deepresearch/deepresearch/sources"
)

// minCorpusUses is how many passages of the sources must use a word for it to count as the sources' vocabulary:
// one use may be a stray mention.
const minCorpusUses = 2

// maxVocabulary bounds the words a vocabulary remembers; past it the memo starts afresh.
const maxVocabulary = 1 << 14

// vocabulary knows which words the configured sources use, from every searcher that is a sources.Vocabulary (a
// local corpus index). With none it knows nothing, and every answer is "unknown".
type vocabulary struct {
	srcs []sources.Vocabulary

	mu   sync.Mutex
	memo map[string]int // word → passages using it, summed over the sources
}

func newVocabulary(searchers []sources.Searcher) *vocabulary {
	v := &vocabulary{}
	for _, s := range searchers {
		if sv, ok := s.(sources.Vocabulary); ok {
			v.srcs = append(v.srcs, sv)
		}
	}
	return v
}

// uses reports whether the sources use word (known is false when no source can tell, or none answered).
func (v *vocabulary) uses(ctx context.Context, word string) (used, known bool) {
	if v == nil || len(v.srcs) == 0 || word == "" {
		return false, false
	}
	v.mu.Lock()
	df, ok := v.memo[word]
	v.mu.Unlock()
	if !ok {
		df, ok = 0, false
		for _, s := range v.srcs {
			d, _, err := s.DocFreq(ctx, word)
			if err != nil {
				continue
			}
			df += d
			ok = true
		}
		if !ok {
			return false, false
		}
		v.mu.Lock()
		if v.memo == nil || len(v.memo) >= maxVocabulary {
			v.memo = map[string]int{}
		}
		v.memo[word] = df
		v.mu.Unlock()
	}
	return df >= minCorpusUses, true
}
