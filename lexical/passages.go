package lexical

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Passages splits text like Sentences, then cuts any sentence longer than maxRunes into pieces of at most
// maxRunes runes. Text copied from the web often loses its punctuation (a Chinese article pasted as one run of
// characters has no 。 at all), and a 10,000-character "sentence" is useless as evidence. Cuts prefer, in order,
// clause punctuation (，,；;：:、), white space, and a change between CJK and Latin script, searching back from
// the limit but never below half of it; otherwise the cut falls on a rune boundary. Every Span still points into
// text, so a passage is quoted verbatim. maxRunes <= 0 means 200.
func Passages(text string, maxRunes int) []Span {
	if maxRunes <= 0 {
		maxRunes = 200
	}
	var out []Span
	for _, sent := range Sentences(text) {
		for _, s := range splitRows(text, sent) {
			if utf8.RuneCountInString(s.Text) <= maxRunes {
				out = append(out, s)
				continue
			}
			out = append(out, splitLong(text, s, maxRunes)...)
		}
	}
	return out
}

// splitRows cuts a sentence at the line breaks that end a row rather than wrap prose: a line holding a tab (a
// table row pasted as text) or a line break before a bullet or box-drawing symbol (•, ▼, │, ✅ …). Hard-wrapped
// prose, whose lines start with letters, stays whole.
func splitRows(text string, s Span) []Span {
	if !strings.Contains(s.Text, "\n") {
		return []Span{s}
	}
	var out []Span
	start := s.Start
	for i := s.Start; i < s.End; i++ {
		if text[i] != '\n' {
			continue
		}
		line := text[start:i]
		next, _ := utf8.DecodeRuneInString(text[i+1:])
		if strings.Contains(line, "\t") || strings.Contains(nextLine(text, i+1, s.End), "\t") ||
			unicode.IsSymbol(next) || strings.ContainsRune("•·▪●○◆►▶", next) {
			if p := trimSpan(text, start, i); p.End > p.Start {
				out = append(out, p)
			}
			start = i + 1
		}
	}
	if p := trimSpan(text, start, s.End); p.End > p.Start {
		out = append(out, p)
	}
	return out
}

func nextLine(text string, from, limit int) string {
	if j := strings.IndexByte(text[from:limit], '\n'); j >= 0 {
		return text[from : from+j]
	}
	return text[from:limit]
}

func splitLong(text string, s Span, maxRunes int) []Span {
	var out []Span
	start := s.Start
	for start < s.End {
		// Byte offsets of every rune boundary up to maxRunes runes ahead.
		var bounds []int
		i := start
		for n := 0; i < s.End && n < maxRunes; n++ {
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
			bounds = append(bounds, i)
		}
		cut := i
		if i < s.End {
			cut = bestCut(text, start, bounds)
		}
		if p := trimSpan(text, start, cut); p.End > p.Start {
			out = append(out, p)
		}
		start = cut
	}
	return out
}

// bestCut picks the end of the next piece among the rune boundaries after start (bounds, in order).
func bestCut(text string, start int, bounds []int) int {
	half := len(bounds) / 2
	rank := func(b int) int {
		prev, _ := utf8.DecodeLastRuneInString(text[:b])
		next, _ := utf8.DecodeRuneInString(text[b:])
		switch {
		case strings.ContainsRune("，,；;：:、）)", prev):
			return 3
		case unicode.IsSpace(prev) || unicode.IsSpace(next):
			return 2
		case IsCJK(prev) != IsCJK(next) && (unicode.IsLetter(next) || unicode.IsDigit(next)):
			return 1
		}
		return 0
	}
	best, bestRank := bounds[len(bounds)-1], 0
	for k := len(bounds) - 1; k >= half; k-- {
		if r := rank(bounds[k]); r > bestRank {
			best, bestRank = bounds[k], r
			if r == 3 {
				break
			}
		}
	}
	return best
}

func trimSpan(text string, s, e int) Span {
	for s < e {
		r, n := utf8.DecodeRuneInString(text[s:])
		if !unicode.IsSpace(r) {
			break
		}
		s += n
	}
	for e > s {
		r, n := utf8.DecodeLastRuneInString(text[:e])
		if !unicode.IsSpace(r) {
			break
		}
		e -= n
	}
	return Span{Start: s, End: e, Text: text[s:e]}
}

// LineAt returns the 1-based line number of byte offset off in text.
func LineAt(text string, off int) int {
	if off > len(text) {
		off = len(text)
	}
	return strings.Count(text[:off], "\n") + 1
}
