package llmroles

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research/publish"
)

// normText is a normalised copy of a text that remembers where each of its runes came from, so a match found
// in the normalised form can be cut verbatim out of the original.
type normText struct {
	s      string
	starts []int // byte offset in the original of each normalised rune
	ends   []int // byte offset just past it
}

// foldRune maps typographic variants models substitute when they copy text onto one form.
func foldRune(r rune) (string, bool) {
	switch r {
	case '“', '”', '„', '‟', '«', '»', '「', '」', '『', '』':
		return `"`, true
	case '‘', '’', '‚', '‛':
		return "'", true
	case '–', '—', '‒', '―', '−':
		return "-", true
	case '…':
		return "...", true
	}
	return "", false
}

// normalizeLight collapses whitespace runs to one space and folds quotes, dashes and ellipses.
func normalizeLight(s string) normText {
	var n normText
	var b strings.Builder
	space := false
	for i, r := range s {
		end := i + utf8.RuneLen(r)
		if unicode.IsSpace(r) {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
				n.starts = append(n.starts, i)
				n.ends = append(n.ends, end)
			}
			space = true
			continue
		}
		space = false
		out := string(r)
		if f, ok := foldRune(r); ok {
			out = f
		}
		for range utf8.RuneCountInString(out) {
			n.starts = append(n.starts, i)
			n.ends = append(n.ends, end)
		}
		b.WriteString(out)
	}
	n.s = strings.TrimRight(b.String(), " ")
	n.starts = n.starts[:utf8.RuneCountInString(n.s)]
	n.ends = n.ends[:len(n.starts)]
	return n
}

// normalizeStrong keeps only letters and digits, lower-cased: punctuation, spacing and quote styles no longer
// matter (CJK text included, where models often swap full-width punctuation).
func normalizeStrong(s string) normText {
	var n normText
	var b strings.Builder
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
		n.starts = append(n.starts, i)
		n.ends = append(n.ends, i+utf8.RuneLen(r))
	}
	n.s = b.String()
	return n
}

// find returns the rune index of needle in n, or -1.
func (n normText) find(needle string, fromRune int) int {
	off := runeToByte(n.s, fromRune)
	if off < 0 {
		return -1
	}
	i := strings.Index(n.s[off:], needle)
	if i < 0 {
		return -1
	}
	return fromRune + utf8.RuneCountInString(n.s[off:off+i])
}

// span returns the original text behind normalised runes [i, j), widened to whole words: a quote never starts
// or ends inside a word ("has length and c" is not something the source says).
func (n normText) span(orig string, i, j int) string {
	if i < 0 || j > len(n.starts) || i >= j {
		return ""
	}
	lo, hi := wholeWords(orig, n.starts[i], n.ends[j-1])
	return strings.TrimSpace(orig[lo:hi])
}

// wholeWords widens the byte range [lo, hi) of s so that it does not cut a word of a spaced script in two.
// Scripts written without spaces (Chinese, Japanese) have no word boundary to respect.
func wholeWords(s string, lo, hi int) (int, int) {
	inWord := func(r rune) bool {
		return (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') && !unicode.Is(unicode.Han, r) &&
			!unicode.Is(unicode.Hiragana, r) && !unicode.Is(unicode.Katakana, r)
	}
	for lo > 0 {
		prev, n := utf8.DecodeLastRuneInString(s[:lo])
		cur, _ := utf8.DecodeRuneInString(s[lo:])
		if !inWord(prev) || !inWord(cur) {
			break
		}
		lo -= n
	}
	for hi < len(s) && hi > 0 {
		prev, _ := utf8.DecodeLastRuneInString(s[:hi])
		next, n := utf8.DecodeRuneInString(s[hi:])
		if !inWord(prev) || !inWord(next) {
			break
		}
		hi += n
	}
	return lo, hi
}

func runeToByte(s string, r int) int {
	if r == 0 {
		return 0
	}
	c := 0
	for i := range s {
		if c == r {
			return i
		}
		c++
	}
	if c == r {
		return len(s)
	}
	return -1
}

// minStrongRunes is the shortest quote accepted after punctuation is ignored: shorter strings match by chance.
const minStrongRunes = 4

// fuzzyThreshold is the similarity a near-verbatim quote must reach to be snapped to the source's wording.
const fuzzyThreshold = 0.85

// maxFuzzyRunes bounds the quadratic edit-distance work per candidate.
const maxFuzzyRunes = 600

// snapQuote returns the verbatim text of doc that quote stands for: the exact span when the quote occurs after
// whitespace normalisation, else the span matching it with quotes, dashes, punctuation or case changed, or a
// near-verbatim span. A quote that elides text ("A … B") is never widened to the span between its fragments:
// each fragment is snapped on its own, and the result is the fragments joined by publish.FragmentSeparator, so
// that nothing the model left out becomes part of the quote. ok is false when nothing in doc is close enough,
// and the quote must be dropped.
func snapQuote(doc, quote string) (string, bool) {
	q := strings.TrimSpace(quote)
	q = strings.Trim(q, "\"'“”‘’「」『』")
	q = strings.TrimSpace(q)
	if q == "" {
		return "", false
	}
	light := normalizeLight(doc)
	lq := normalizeLight(q).s
	if i := light.find(lq, 0); i >= 0 {
		return light.span(doc, i, i+utf8.RuneCountInString(lq)), true
	}
	strong := normalizeStrong(doc)
	if frags := splitEllipsis(q); len(frags) > 1 {
		return snapFragments(doc, light, strong, frags, utf8.RuneCountInString(q))
	}
	sq := normalizeStrong(q).s
	n := utf8.RuneCountInString(sq)
	if n < minStrongRunes {
		return "", false
	}
	if i := strong.find(sq, 0); i >= 0 {
		return strong.span(doc, i, i+n), true
	}
	return fuzzy(doc, strong, sq)
}

// splitEllipsis cuts a quote at the ellipses a model used to elide text, keeping the fragments long enough to
// be found.
func splitEllipsis(q string) []string {
	q = strings.NewReplacer("[...]", "\x00", "[…]", "\x00", "(...)", "\x00", "...", "\x00", "…", "\x00").Replace(q)
	var out []string
	for _, p := range strings.Split(q, "\x00") {
		if utf8.RuneCountInString(normalizeStrong(p).s) >= minStrongRunes {
			out = append(out, strings.TrimSpace(p))
		}
	}
	return out
}

// snapFragments finds each fragment of an elided quote in doc, in order, each as exactly or as nearly verbatim
// as a whole quote is found, and joins their verbatim text with publish.FragmentSeparator. Fragments too short to
// ground anything are left out; the fragments must stand within one passage (not much longer than the quote).
func snapFragments(doc string, light, strong normText, frags []string, quoteRunes int) (string, bool) {
	var out []string
	from, first := 0, -1
	for _, f := range frags {
		lo, hi := -1, -1
		lf := normalizeLight(f).s
		if i := light.find(lf, runeAt(light, from)); i >= 0 {
			lo, hi = light.starts[i], light.ends[i+utf8.RuneCountInString(lf)-1]
		} else {
			sf := normalizeStrong(f).s
			i := strong.find(sf, runeAt(strong, from))
			if i < 0 {
				return "", false
			}
			lo, hi = strong.starts[i], strong.ends[i+utf8.RuneCountInString(sf)-1]
		}
		lo, hi = wholeWords(doc, lo, hi)
		from = hi
		text := strings.TrimSpace(doc[lo:hi])
		if utf8.RuneCountInString(publish.NormalizeQuote(text)) < publish.MinQuoteRunes {
			continue
		}
		if first < 0 {
			first = lo
		}
		out = append(out, text)
	}
	if len(out) == 0 || utf8.RuneCountInString(doc[first:from]) > 3*quoteRunes+200 {
		return "", false
	}
	return strings.Join(out, publish.FragmentSeparator), true
}

// runeAt returns the index of the first rune of n that comes from byte offset off of the original or later.
func runeAt(n normText, off int) int {
	return sort.Search(len(n.starts), func(i int) bool { return n.starts[i] >= off })
}

// fuzzy anchors on the quote's first and last few characters and accepts the candidate span most similar to it.
func fuzzy(doc string, strong normText, sq string) (string, bool) {
	q := []rune(sq)
	m := len(q)
	if m < 12 || m > maxFuzzyRunes {
		return "", false
	}
	d := []rune(strong.s)
	k := min(8, m/3)
	head, tail := string(q[:k]), string(q[m-k:])
	type span struct{ i, j int }
	var cands []span
	add := func(i, j int) {
		if i >= 0 && j <= len(d) && j-i >= m*3/4 && j-i <= m*5/4 {
			cands = append(cands, span{i, j})
		}
	}
	for n, i := 0, strong.find(head, 0); i >= 0 && n < 50; n, i = n+1, strong.find(head, i+1) {
		add(i, i+m)
		from := i + m*3/4 - k
		if t := strong.find(tail, max(from, i)); t >= 0 {
			add(i, t+k)
		}
	}
	for n, t := 0, strong.find(tail, 0); t >= 0 && n < 50; n, t = n+1, strong.find(tail, t+1) {
		add(t+k-m, t+k)
	}
	best, bestSim := span{}, 0.0
	for _, c := range cands {
		sim := 1 - float64(lexical.EditDistance(q, d[c.i:c.j]))/float64(max(m, c.j-c.i))
		if sim > bestSim {
			best, bestSim = c, sim
		}
	}
	if bestSim < fuzzyThreshold {
		return "", false
	}
	// Widened to whole words, the span must still be as close to the quote.
	out := strong.span(doc, best.i, best.j)
	w := []rune(normalizeStrong(out).s)
	if 1-float64(lexical.EditDistance(q, w))/float64(max(m, len(w))) < fuzzyThreshold {
		return "", false
	}
	return out, true
}

// grounded reports whether quote occurs in doc — the graph's own rule, fragment by fragment for an elided quote.
func grounded(doc, quote string) bool { return publish.Grounded(doc, quote) }
