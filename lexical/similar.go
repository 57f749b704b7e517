package lexical

import "strings"

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
