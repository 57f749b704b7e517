package lexical

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ShingleJaccard is the Jaccard similarity of two token sequences' sets of adjacent token pairs (shingles of
// two). Unlike Jaccard over single tokens it sees word order, so parallel statements that share their wording
// but swap their roles — "a send … before … the corresponding receive" and "a receive … before … the
// corresponding send" — are told apart, while a sentence quoted twice, or with a word changed, still scores high.
// A sequence of one token is compared as that token.
func ShingleJaccard(a, b []string) float64 {
	sa, sb := shingles(a), shingles(b)
	if len(sa) == 0 && len(sb) == 0 {
		return 1
	}
	inter := 0
	for s := range sb {
		if sa[s] {
			inter++
		}
	}
	union := len(sa) + len(sb) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

func shingles(ts []string) map[string]bool {
	m := map[string]bool{}
	if len(ts) == 1 {
		m[ts[0]] = true
	}
	for i := 0; i+1 < len(ts); i++ {
		m[ts[i]+"\x00"+ts[i+1]] = true
	}
	return m
}

// SameClaim reports whether two texts make the same statement: identical after normalisation, or ShingleJaccard
// of their terms at or above threshold (0.6 is a good default). It is NearDuplicate for texts that share their
// vocabulary without saying the same thing, such as the parallel rules of one section.
func SameClaim(a, b string, threshold float64) bool {
	na, nb := strings.ToLower(NormalizeSpace(a)), strings.ToLower(NormalizeSpace(b))
	if na == nb {
		return true
	}
	return ShingleJaccard(Tokenize(a), Tokenize(b)) >= threshold
}

// ShingleContainment is the share of the smaller sequence's shingles (adjacent token pairs) that the other holds:
// 1 when one passage is contained in the other, as a page's paragraph is in a print-all page that repeats it, even
// where the two were cut into chunks at other places. Empty sequences contain nothing.
func ShingleContainment(a, b []string) float64 {
	sa, sb := shingles(a), shingles(b)
	if len(sa) == 0 || len(sb) == 0 {
		return 0
	}
	if len(sa) > len(sb) {
		sa, sb = sb, sa
	}
	inter := 0
	for s := range sa {
		if sb[s] {
			inter++
		}
	}
	return float64(inter) / float64(len(sa))
}

// Line marks: the fingerprint by which a document's copies are found among many documents without comparing their
// texts. Each line of at least MarkWords words is hashed as its words (lower-cased, punctuation and spacing
// ignored; a CJK character counts as a word), so a paragraph repeated in another document — a page and the
// print-all page that repeats it — has the same mark in both. A long document keeps the marks divisible by
// MarkSample, the same subset in every document, so that the share of a document's marks another one holds
// estimates the share of its lines it holds; at most MaxMarks are kept, the smallest values, again the same subset
// everywhere.
const (
	MarkWords   = 6    // fewer words are a heading, a link or a label, which many pages share without copying
	MaxMarks    = 4096 // marks kept of one document
	MarkSample  = 4    // a long document keeps the marks divisible by MarkSample
	MarkSampled = 32   // documents with more marked lines than this are sampled
)

// LineMarks returns the distinct line marks of text, in increasing order.
func LineMarks(text string) []uint32 {
	var all []uint32
	for line := range strings.SplitSeq(text, "\n") {
		if h, ok := lineMark(line); ok {
			all = append(all, h)
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	if len(all) > MarkSampled {
		all = slices.DeleteFunc(all, func(h uint32) bool { return h%MarkSample != 0 })
	}
	if len(all) > MaxMarks {
		all = all[:MaxMarks]
	}
	return slices.Clip(all)
}

// lineMark hashes a line's words with 32-bit FNV-1a, one separator between words; ok is false for a line of fewer
// than MarkWords words.
func lineMark(line string) (uint32, bool) {
	const offset, prime = 2166136261, 16777619
	h := uint32(offset)
	words, inWord := 0, false
	mix := func(b byte) { h = (h ^ uint32(b)) * prime }
	var buf [utf8.UTFMax]byte
	for _, r := range line {
		switch {
		case IsCJK(r):
			if words > 0 {
				mix(' ')
			}
			n := utf8.EncodeRune(buf[:], r)
			for _, b := range buf[:n] {
				mix(b)
			}
			words++
			inWord = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				if words > 0 {
					mix(' ')
				}
				words++
				inWord = true
			}
			n := utf8.EncodeRune(buf[:], unicode.ToLower(r))
			for _, b := range buf[:n] {
				mix(b)
			}
		default:
			inWord = false
		}
	}
	return h, words >= MarkWords
}
