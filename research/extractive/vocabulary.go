package extractive

import (
	"context"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
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
	reds []sources.Redundancy // the sources that know their copies and aggregates

	mu   sync.Mutex
	memo map[string][2]int // word → passages using it and passages in all, summed over the sources
}

func newVocabulary(searchers []sources.Searcher) *vocabulary {
	v := &vocabulary{}
	for _, s := range searchers {
		if sv, ok := s.(sources.Vocabulary); ok {
			v.srcs = append(v.srcs, sv)
		}
		if sr, ok := s.(sources.Redundancy); ok {
			v.reds = append(v.reds, sr)
		}
	}
	return v
}

// specific reports whether the sources use word in at least minCorpusUses passages but fewer than the square root
// of their number: a word of a topic ("sort" in a language's documentation), not of the whole corpus ("object",
// "start" in its source code), whose absence from a passage says nothing.
func (v *vocabulary) specific(ctx context.Context, word string) bool {
	df, n, known := v.docFreq(ctx, word)
	return known && df >= minCorpusUses && df*df < n
}

// settingShare is the share of the sources' passages past which a word is their setting, not a topic: a name in
// more than a tenth of all passages ("PostgreSQL" in PostgreSQL's manual) is what the whole corpus is about.
const settingShare = 0.1

// setting reports a word the sources use in more than settingShare of their passages: the product or domain
// every document is about, which names no particular subject of a question about it.
func (v *vocabulary) setting(ctx context.Context, word string) bool {
	df, n, known := v.docFreq(ctx, word)
	return known && n > 0 && float64(df) > settingShare*float64(n)
}

// settingWords reports whether every word of phrase is a setting word of the sources (see setting), each
// capitalised too when capitalised is set.
func (v *vocabulary) settingWords(ctx context.Context, phrase string, capitalised bool) bool {
	for _, f := range strings.Fields(phrase) {
		if r, _ := utf8.DecodeRuneInString(f); capitalised && !unicode.IsUpper(r) || !v.setting(ctx, f) {
			return false
		}
	}
	return true
}

// domain reports whether a possessive first word of a question ("X 的 …", "X's …") names the domain it is asked
// in rather than part of its subject: a word the sources are all about (their setting) or never use, which no
// passage is told apart by. A word they use in some passages only is part of what is asked ("Unicode 的码位" over a
// language's manual, where the code points of Unicode are one topic among many). When no source can tell, a word of
// common Latin letters ("Go", "Rust") is taken for the domain and a name (sync.Map, WaitGroup) for the subject.
func (v *vocabulary) domain(ctx context.Context, w string) bool {
	df, _, known := v.docFreq(ctx, w)
	if !known {
		return !nameLike(w)
	}
	return df == 0 || v.setting(ctx, w)
}

// idf returns a term's IDF over all the sources' passages scaled to [0, 2] (twice its share of the IDF of a term
// no passage uses, a range like the pool's 1 + IDF it is added to), 0 for a term they cannot tell about; nil when
// no source can tell.
func (v *vocabulary) idf(ctx context.Context) func(term string) float64 {
	if v == nil || len(v.srcs) == 0 {
		return nil
	}
	return func(t string) float64 {
		df, n, known := v.docFreq(ctx, t)
		if !known || n == 0 {
			return 0
		}
		return 2 * lexical.IDF(float64(df), float64(n)) / lexical.IDF(0, float64(n))
	}
}

// docFreq is the sources' passages using word and their number, remembered; known is false when no source can
// tell, or none answered.
func (v *vocabulary) docFreq(ctx context.Context, word string) (df, n int, known bool) {
	return v.count(ctx, word, false)
}

// phraseFreq is docFreq for the words of phrase used one after the other (see sources.Vocabulary.PhraseFreq).
func (v *vocabulary) phraseFreq(ctx context.Context, phrase string) (df, n int, known bool) {
	return v.count(ctx, phrase, true)
}

// count sums the sources' counts of a word, or of a phrase, remembered.
func (v *vocabulary) count(ctx context.Context, text string, phrase bool) (df, n int, known bool) {
	if v == nil || len(v.srcs) == 0 || text == "" {
		return 0, 0, false
	}
	key := text
	if phrase {
		key = "\x00phrase\x00" + text // apart from a word's count
	}
	v.mu.Lock()
	got, ok := v.memo[key]
	v.mu.Unlock()
	if ok {
		return got[0], got[1], true
	}
	for _, s := range v.srcs {
		ask := s.DocFreq
		if phrase {
			ask = s.PhraseFreq
		}
		d, m, err := ask(ctx, text)
		if err != nil {
			continue
		}
		df, n, known = df+d, n+m, true
	}
	if !known {
		return 0, 0, false
	}
	v.mu.Lock()
	if v.memo == nil || len(v.memo) >= maxVocabulary {
		v.memo = map[string][2]int{}
	}
	v.memo[key] = [2]int{df, n}
	v.mu.Unlock()
	return df, n, true
}

// boilerplateUses is how many passages of the sources must hold a sentence word for word for it to be the site's
// boilerplate. A page and the print-all page repeating it hold a sentence twice; API documentation repeats a rule
// for each of a few related functions ("Zero-length path segments are ignored." under path.join, path.posix.join,
// path.win32.join); a banner of a folder of retired pages ("The 2018 edition of the book is no longer distributed
// …") is on every page of the folder, a hundred of them.
const boilerplateUses = 20

// boilerplate reports a sentence of at least four index terms that the sources hold, those terms in that order, in
// boilerplateUses passages or more; false when no source can tell.
func (v *vocabulary) boilerplate(ctx context.Context, sentence string) bool {
	if len(lexical.Tokenize(sentence)) < 4 {
		return false
	}
	df, _, known := v.phraseFreq(ctx, sentence)
	return known && df >= boilerplateUses
}

// redundant returns why a source names a document a copy or an aggregate of others (sources.RedundantCopy,
// sources.RedundantAggregate), "" when none does (a failing source names none).
func (v *vocabulary) redundant(ctx context.Context, url string) string {
	if v == nil {
		return ""
	}
	for _, s := range v.reds {
		if why, err := s.Redundant(ctx, url); err == nil && why != "" {
			return why
		}
	}
	return ""
}
