package publish

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
// line break inside a sentence must not break grounding); comment markers dropped (lexical.CommentWord), so a
// sentence of a code comment spread over several "// " lines is grounded by the sentence alone. Every rule looks
// at one word and its neighbours, never at where they stand, so the normal form of any run of whole lines is a
// substring of the normal form of the whole text.
func NormalizeQuote(s string) string {
	norm, _ := normalize(s, false)
	return norm
}

// normalize is NormalizeQuote, the one implementation of it; with offsets it also returns, for every byte of the
// normal form, the byte offset in s it came from (a space: the first white-space byte it replaces).
func normalize(s string, offsets bool) (string, []int32) {
	var b strings.Builder
	b.Grow(len(s))
	var offs []int32
	if offsets {
		offs = make([]int32, 0, len(s))
	}
	pending, pendingAt := false, 0
	var prev rune
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			if !pending {
				pending, pendingAt = true, i
			}
			i += n
			continue
		}
		j := i + n
		for j < len(s) {
			r2, n2 := utf8.DecodeRuneInString(s[j:])
			if unicode.IsSpace(r2) {
				break
			}
			j += n2
		}
		word := s[i:j]
		pre, end := lexical.CommentWord(word)
		if pre == end {
			i = j // a comment marker is layout: it separates words as white space does
			if !pending {
				pending, pendingAt = true, i
			}
			continue
		}
		for k, r := range word[pre:end] {
			if pending && b.Len() > 0 && !isCJKish(prev) && !isCJKish(r) {
				b.WriteByte(' ')
				if offsets {
					offs = append(offs, int32(pendingAt))
				}
			}
			pending = false
			at := b.Len()
			b.WriteRune(r)
			if offsets {
				for range b.Len() - at {
					offs = append(offs, int32(i+pre+k))
				}
			}
			prev = r
		}
		// A marker glued to the end ("done.*/") separates the word from the next one.
		if end < len(word) && !pending {
			pending, pendingAt = true, i+end
		}
		i = j
	}
	return b.String(), offs
}

func isCJKish(r rune) bool {
	return lexical.IsCJK(r) || unicode.In(r, unicode.Han) || (r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}

// FragmentSeparator joins the fragments of an elided quote ("A … B"): the analyst keeps each fragment as the
// source wrote it and never the text it left out between them. Every fragment is grounded on its own, and the
// support check sees the fragments as they stand (see QuoteFragments).
const FragmentSeparator = " … "

// QuoteFragments returns the fragments of a quote, cut at each ellipsis ("…"): one fragment for a quote without
// one. Nothing between two fragments is part of the quote.
func QuoteFragments(quote string) []string {
	if !strings.Contains(quote, "…") {
		return []string{quote}
	}
	var out []string
	for _, p := range strings.Split(quote, "…") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return []string{quote}
	}
	return out
}

// Grounded reports whether quote occurs verbatim in text after white-space normalisation, and is long enough to
// mean something. A quote of fragments is grounded when each fragment is, in order; the text between them counts
// for nothing.
func Grounded(text, quote string) bool {
	return GroundedIn(NormalizeQuote(text), quote)
}

// GroundedIn is Grounded against an already normalised text.
func GroundedIn(normText, quote string) bool {
	_, _, ok := findQuote(normText, quote)
	return ok
}

// findQuote returns the byte range of normText, an already normalised text, from the start of quote's first
// occurrence to its end: the whole quote verbatim, else its fragments one after the other, each at least
// MinQuoteRunes long.
func findQuote(normText, quote string) (lo, hi int, ok bool) {
	q := NormalizeQuote(quote)
	if utf8.RuneCountInString(q) >= MinQuoteRunes {
		if i := strings.Index(normText, q); i >= 0 {
			return i, i + len(q), true
		}
	}
	frags := QuoteFragments(quote)
	if len(frags) < 2 {
		return 0, 0, false
	}
	pos := 0
	for k, f := range frags {
		nf := NormalizeQuote(f)
		if utf8.RuneCountInString(nf) < MinQuoteRunes {
			return 0, 0, false
		}
		i := strings.Index(normText[pos:], nf)
		if i < 0 {
			return 0, 0, false
		}
		if k == 0 {
			lo = pos + i
		}
		pos += i + len(nf)
	}
	return lo, pos, true
}
