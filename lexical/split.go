package lexical

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Span is a piece of a text with its byte offsets, so that a selected sentence can be quoted verbatim.
type Span struct {
	Start, End int // byte offsets into the original text
	Text       string
}

// Sentences splits text into sentences: after . ! ? followed by white space (not after common abbreviations or
// inside numbers), after 。！？ and their full-width forms, and at blank lines. No sentence ends inside a `code
// span` or inside a Markdown link's destination and title — `[bloom](bloom.html "F.7. bloom")` is one word of its
// sentence. Spans are trimmed of white space and point into the original text.
func Sentences(text string) []Span {
	var out []Span
	start := 0
	emit := func(end int) {
		if sp := trimSpan(text, start, end); sp.End > sp.Start {
			out = append(out, sp)
		}
		start = end
	}
	inCode := false // inside a `code span`: "Call `f.Close()` first." has no sentence end inside the backticks
	linkDepth := 0  // parentheses open inside a link's "](…)" part
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		next := i + n
		switch {
		case r == '`' && linkDepth == 0:
			inCode = !inCode
		case inCode && r != '\n':
			// no sentence ends inside a code span
		case r == '(' && (linkDepth > 0 || i > 0 && text[i-1] == ']'):
			linkDepth++
		case linkDepth > 0 && r == ')':
			linkDepth--
		case linkDepth > 0 && r != '\n':
			// no sentence ends inside a link's destination or title
		case r == '。' || r == '！' || r == '？' || r == '；':
			for next < len(text) {
				r2, n2 := utf8.DecodeRuneInString(text[next:])
				if r2 != '”' && r2 != '」' && r2 != '）' && r2 != '』' {
					break
				}
				next += n2
			}
			emit(next)
		case r == '.' || r == '!' || r == '?':
			// Swallow closing quotes/brackets, then require white space or the end.
			j := next
			for j < len(text) && strings.ContainsRune(`"')]”’`, rune(text[j])) {
				j++
			}
			if j >= len(text) {
				emit(len(text))
				next = len(text)
				break
			}
			r2, _ := utf8.DecodeRuneInString(text[j:])
			if unicode.IsSpace(r2) && (r != '.' || !abbreviationBefore(text, i)) {
				emit(j)
				next = j
			}
		case r == '\n':
			linkDepth = 0 // a link's destination never crosses a line
			if next < len(text) && text[next] == '\n' {
				inCode = false // a code span never crosses a paragraph
			}
			// A blank line, a Markdown heading or list item ends the sentence before it.
			if next < len(text) && (text[next] == '\n' || text[next] == '#' || text[next] == '-' || text[next] == '*' || text[next] == '|') {
				emit(next)
			}
		}
		i = next
	}
	emit(len(text))
	return out
}

var abbreviations = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`e.g i.e etc vs mr mrs ms dr prof fig figs no nos cf al approx resp ca jr sr st inc ltd
		a.k.a vol eq eqs sec ch pp p ed eds op cit viz esp`) {
		m[w] = true
	}
	return m
}()

// abbreviationBefore reports whether the period at i ends a known abbreviation or an initial: a single capital
// letter, alone or after a hyphen or another initial ("J. Smith", "Hans-J. Boehm", "J.R.R. Tolkien").
func abbreviationBefore(text string, i int) bool {
	j := i
	for j > 0 {
		r, n := utf8.DecodeLastRuneInString(text[:j])
		if unicode.IsSpace(r) || r == '(' {
			break
		}
		j -= n
	}
	w := strings.ToLower(text[j:i])
	if abbreviations[w] {
		return true
	}
	last := text[j:i]
	if k := strings.LastIndexAny(last, "-."); k >= 0 {
		last = last[k+1:]
	}
	return utf8.RuneCountInString(last) == 1 && unicode.IsUpper([]rune(last)[0])
}

// Chunk is a run of whole lines of a text.
type Chunk struct {
	Start, End          int // byte offsets
	FirstLine, LastLine int // 1-based line numbers, inclusive
	Text                string
}

// Chunks splits text into pieces of about maxChars characters, cutting at paragraph breaks where possible and at
// line ends otherwise; a single line longer than maxChars is cut on rune boundaries so no chunk is unbounded.
func Chunks(text string, maxChars int) []Chunk {
	if maxChars <= 0 {
		maxChars = 2000
	}
	var out []Chunk
	lineStarts := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' && i+1 < len(text) {
			lineStarts = append(lineStarts, i+1)
		}
	}
	lineOf := func(off int) int {
		lo, hi := 0, len(lineStarts)-1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if lineStarts[mid] <= off {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		return lo + 1
	}
	add := func(s, e int) {
		if e <= s || strings.TrimSpace(text[s:e]) == "" {
			return
		}
		out = append(out, Chunk{Start: s, End: e, FirstLine: lineOf(s), LastLine: lineOf(max(s, e-1)), Text: text[s:e]})
	}
	start := 0
	for start < len(text) {
		end := start + maxChars
		if end >= len(text) {
			add(start, len(text))
			break
		}
		cut := -1
		if p := strings.LastIndex(text[start:end], "\n\n"); p > maxChars/3 {
			cut = start + p + 2
		} else if p := strings.LastIndexByte(text[start:end], '\n'); p > maxChars/3 {
			cut = start + p + 1
		} else {
			cut = end
			for cut > start && !utf8.RuneStart(text[cut]) {
				cut--
			}
		}
		add(start, cut)
		start = cut
	}
	return out
}
