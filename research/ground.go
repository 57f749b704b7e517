package research

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
)

// MinQuoteRunes is the shortest quote (after normalisation) that can ground a claim: a shorter string would be
// found in almost any text and proves nothing.
const MinQuoteRunes = 8

// NormalizeQuote is the form in which quotes are compared with source text: white space collapsed to single
// spaces, and removed entirely where it touches a CJK character (Chinese and Japanese text has no spaces, so a
// line break inside a sentence must not break grounding).
func NormalizeQuote(s string) string {
	s = lexical.NormalizeSpace(s)
	if !strings.ContainsFunc(s, lexical.IsCJK) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	runes := []rune(s)
	for i, r := range runes {
		if r == ' ' && i > 0 && i+1 < len(runes) && (isCJKish(runes[i-1]) || isCJKish(runes[i+1])) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isCJKish(r rune) bool {
	return lexical.IsCJK(r) || unicode.In(r, unicode.Han) || (r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}

// Grounded reports whether quote occurs verbatim in text after white-space normalisation, and is long enough to
// mean something.
func Grounded(text, quote string) bool {
	q := NormalizeQuote(quote)
	if utf8.RuneCountInString(q) < MinQuoteRunes {
		return false
	}
	return strings.Contains(NormalizeQuote(text), q)
}

// groundedIn is Grounded against an already normalised text.
func groundedIn(normText, quote string) bool {
	q := NormalizeQuote(quote)
	return utf8.RuneCountInString(q) >= MinQuoteRunes && strings.Contains(normText, q)
}
