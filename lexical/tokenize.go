// Package lexical is deepresearch's model-free text machinery: tokenising that treats Chinese, Japanese and
// Korean as well as English, sentence splitting, chunking, BM25 scoring, maximal-marginal-relevance selection and
// near-duplicate detection. The relevance gate, tool search and the extractive engine all rank text with it.
package lexical

import (
	"strings"
	"unicode"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

// IsCJK reports whether r is a Han, Hiragana, Katakana or Hangul character.
func IsCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// Tokenize splits text into index terms: Latin words lower-cased, stop words removed and Porter-stemmed; runs of
// CJK characters become their single characters and overlapping bigrams, the standard dictionary-free approach,
// so that 内存模型 matches 模型 and 内存.
func Tokenize(text string) []string {
	var out []string
	var word []rune
	var cjk []rune
	flushWord := func() {
		if len(word) == 0 {
			return
		}
		w := strings.ToLower(string(word))
		word = word[:0]
		if len(w) < 2 && !isDigit(w) {
			return
		}
		if stopWords[w] {
			return
		}
		out = append(out, porterstemmer.StemString(w))
	}
	flushCJK := func() {
		if len(cjk) == 0 {
			return
		}
		for i, r := range cjk {
			if !cjkStop[r] {
				out = append(out, string(r))
			}
			if i+1 < len(cjk) {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range text {
		switch {
		case IsCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			word = append(word, r)
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}

// Keywords are the words of a query as keyword search services take them: Latin-script words lower-cased but not
// stemmed, stop words and one-letter words dropped, each CJK run kept whole, in order and without repeats.
func Keywords(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(w string) {
		if w != "" && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	var word []rune
	cjk := false
	flush := func() {
		if len(word) > 0 {
			w := strings.TrimRight(strings.ToLower(string(word)), "-.")
			if cjk || ((len([]rune(w)) >= 2 || isDigit(w)) && !stopWords[w]) {
				add(w)
			}
		}
		word, cjk = word[:0], false
	}
	for _, r := range text {
		switch isC := IsCJK(r); {
		case isC:
			if !cjk {
				flush()
			}
			cjk = true
			word = append(word, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || (r == '-' || r == '.') && len(word) > 0 && !cjk:
			if cjk {
				flush()
			}
			word = append(word, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

func isDigit(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

// Language guesses the main language of a text from its script: "ja" (any kana), "ko", "zh" (Han characters,
// even among Latin product names), "ru" (mostly Cyrillic), "ar" (mostly Arabic script), else "en" for anything
// Latin. It is the project's one language detector: a Latin-script text's language is not settled by its script.
func Language(text string) string {
	var han, kana, hangul, cyr, arabic, latin int
	for _, r := range text {
		switch {
		case unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
			kana++
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case unicode.Is(unicode.Han, r):
			han++
		case unicode.Is(unicode.Cyrillic, r):
			cyr++
		case unicode.Is(unicode.Arabic, r):
			arabic++
		case unicode.IsLetter(r):
			latin++
		}
	}
	switch {
	case kana > 0 && kana*5 >= han:
		return "ja"
	case hangul > 0 && hangul >= han:
		return "ko"
	case han > 0 && han*3 >= latin/4:
		return "zh"
	case cyr > 0 && cyr >= latin+arabic:
		return "ru"
	case arabic > 0 && arabic >= latin+cyr:
		return "ar"
	}
	return "en"
}

// NegationRemnants are what is left of a negative contraction once its apostrophe splits it ("won" of "won't",
// "doesn" of "doesn’t"), space-separated: function words like the auxiliaries they come from.
const NegationRemnants = `won doesn didn isn aren wasn weren hasn haven hadn wouldn shouldn couldn mustn needn shan`

// stopWords are English function words that carry no topic, NegationRemnants among them. "once" is not one: in
// technical text it names a concept (sync.Once, run-once semantics) more often than it is filler.
var stopWords = map[string]bool{}

// cjkStop are Chinese function characters kept only inside bigrams.
var cjkStop = map[rune]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but if then else of to in on at by for with from into onto over under
		is are was were be been being am do does did done have has had having it its it's this that these those there here
		as not no nor so too very can could should would will shall may might must what which who whom whose when where why how
		i me my we our you your he him his she her they them their than such about above after again against all any both
		each few more most other some own same only just also up down out off s t don now
		mine yours ours theirs hers myself yourself yourselves himself herself itself ourselves themselves ` + NegationRemnants) {
		stopWords[w] = true
	}
	for _, r := range "的了是在和与及或也就都而之其把被对于从以为吗呢吧啊么这那个有" {
		cjkStop[r] = true
	}
}
