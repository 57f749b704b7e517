package publish

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Evidence from a long document is cited by the lines its quote occupies (file:///x#L120-L122), while the text
// that was read may have been fetched under another anchor into the same file (the search hit's chunk,
// file:///x#L100-L180). These helpers tie such an anchor to the stored text it quotes.

var lineAnchorRe = regexp.MustCompile(`^L(\d+)(?:-L(\d+))?$`)

// LineAnchor returns the line range a URL's #Lx or #Lx-Ly fragment names.
func LineAnchor(raw string) (first, last int, ok bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return 0, 0, false
	}
	m := lineAnchorRe.FindStringSubmatch(u.Fragment)
	if m == nil {
		return 0, 0, false
	}
	first, _ = strconv.Atoi(m[1])
	last = first
	if m[2] != "" {
		last, _ = strconv.Atoi(m[2])
	}
	if first < 1 || last < first {
		return 0, 0, false
	}
	return first, last, true
}

// lineSpan returns the byte offsets of lines first..last (1-based, inclusive) of text.
func lineSpan(text string, first, last int) (lo, hi int, ok bool) {
	line, off := 1, 0
	lo = -1
	for {
		if line == first {
			lo = off
		}
		nl := strings.IndexByte(text[off:], '\n')
		if line == last {
			if lo < 0 {
				return 0, 0, false
			}
			if nl < 0 {
				return lo, len(text), true
			}
			return lo, off + nl, true
		}
		if nl < 0 {
			return 0, 0, false // the text ends before the last line
		}
		off += nl + 1
		line++
	}
}

// QuoteInLines reports whether quote is grounded within the lines source's anchor names in text. A source with
// no line anchor is not an anchor into text, and the answer is false.
func QuoteInLines(text, source, quote string) bool {
	first, last, ok := LineAnchor(source)
	if !ok {
		return false
	}
	lo, hi, ok := lineSpan(text, first, last)
	if !ok {
		return false
	}
	return GroundedIn(NormalizeQuote(text[lo:hi]), quote)
}

// NormIndex is NormalizeQuote(text) together with, for every byte of it, the byte offset in text it came from,
// so that a quote found in the normalised text can be placed on the lines where it stands.
type NormIndex struct {
	// Norm is NormalizeQuote(text).
	Norm string
	offs []int32
}

// NewNormIndex normalises text exactly as NormalizeQuote does, remembering where each byte came from.
func NewNormIndex(text string) *NormIndex {
	norm, offs := normalize(text, true)
	return &NormIndex{Norm: norm, offs: offs}
}

// QuoteLines returns the 1-based lines of text on which the first occurrence of quote (compared normalised, as
// grounding compares it; of its fragments, from the first one's start to the last one's end) begins and ends. ok
// is false when the quote is too short or not in the text.
func (ix *NormIndex) QuoteLines(text, quote string) (first, last int, ok bool) {
	i, j, found := findQuote(ix.Norm, quote)
	if !found {
		return 0, 0, false
	}
	lo, hi := int(ix.offs[i]), int(ix.offs[j-1])
	first = 1 + strings.Count(text[:lo], "\n")
	last = first + strings.Count(text[lo:hi], "\n")
	return first, last, true
}

// WithLines returns the URL of the document at u with a line anchor naming first..last.
func WithLines(u string, first, last int) string {
	return fmt.Sprintf("%s#L%d-L%d", StripFragment(u), first, last)
}

// IsFileURL reports whether u is a file:// URL, whose line anchors name lines of the file (and of its text).
func IsFileURL(u string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(u)), "file:")
}

// StripFragment returns u without its #fragment.
func StripFragment(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		return u[:i]
	}
	return u
}
