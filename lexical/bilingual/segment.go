package bilingual

import (
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
)

// Segment is one word of a text: a dictionary headword, a run of characters the dictionary lacks (one character
// each), or a word of another script as written ("Go", "sync.Map", "HTTP/2").
type Segment struct {
	Text string
	// Start is the byte offset of Text in the segmented string.
	Start int
	// CJK is set for Chinese (Han, kana, Hangul) segments.
	CJK bool
	// Known is set for a dictionary headword; Function for a headword that is a grammatical word (a particle, a
	// classifier, a preposition whose senses are all descriptions of use); Supplied for a headword only the
	// computing supplement has (see SupplementMark): its renderings are ECDICT's alone.
	Known, Function, Supplied bool
}

// Segment cuts s into words. Runs of Chinese characters are cut into the fewest headwords (a character the
// dictionary lacks is a word of its own), ties going to the cut whose words are longest (the sum of squared
// lengths), then to the one whose single characters are grammar (中元组 is 中 元组, "in" and "tuple", not 中元
// 组); a headword of grammar characters ending in a particle (中的 "to hit the target") is read as those
// characters, which is what it is in a question ("约束中的值"). Other letters and digits form words with their inner dots, dashes, slashes and underscores;
// white space and punctuation separate. Linear in len(s).
func (d *Dict) Segment(s string) []Segment {
	var out []Segment
	var run []rune
	runStart := 0
	flush := func() {
		if len(run) > 0 {
			out = d.cutRun(run, runStart, out)
			run = run[:0]
		}
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case lexical.IsCJK(r):
			if len(run) == 0 {
				runStart = i
			}
			run = append(run, r)
			i += n
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flush()
			j := i + n
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if lexical.IsCJK(r2) {
					break
				}
				if unicode.IsLetter(r2) || unicode.IsDigit(r2) {
					j += n2
					continue
				}
				// Inner joiners stay when a letter or digit follows: "sync.Map", "HTTP/2", "go_line".
				if r2 == '.' || r2 == '-' || r2 == '_' || r2 == '/' || r2 == '+' || r2 == '#' {
					if r3, _ := utf8.DecodeRuneInString(s[j+n2:]); j+n2 < len(s) && (unicode.IsLetter(r3) || unicode.IsDigit(r3)) && !lexical.IsCJK(r3) {
						j += n2
						continue
					}
				}
				break
			}
			out = append(out, Segment{Text: s[i:j], Start: i})
			i = j
		default:
			flush()
			i += n
		}
	}
	flush()
	return out
}

// cutRun segments one run of CJK characters, starting at byte offset at, by dynamic programming over the
// dictionary's headwords.
func (d *Dict) cutRun(run []rune, at int, out []Segment) []Segment {
	n := len(run)
	type cell struct {
		words, sq int // words on the best path to here, sum of squared word lengths
		lone      int // single characters on it that are not grammar (中 "in" is; 组 "group" is not)
		from      int
	}
	best := make([]cell, n+1)
	for i := 1; i <= n; i++ {
		best[i] = cell{words: 1 << 30}
		for l := 1; l <= MaxWordRunes && l <= i; l++ {
			j := i - l
			lone := 0
			if l > 1 {
				if w, ok := d.words[string(run[j:i])]; !ok || d.particleCompound(run[j:i], w) {
					continue
				}
			} else if w, ok := d.words[string(run[j:i])]; !ok || !w.function && !w.grammar {
				lone = 1
			}
			c := cell{words: best[j].words + 1, sq: best[j].sq + l*l, lone: best[j].lone + lone, from: j}
			b := best[i]
			if c.words < b.words || c.words == b.words && (c.sq > b.sq || c.sq == b.sq && c.lone < b.lone) {
				best[i] = c
			}
		}
	}
	var cuts []int
	for i := n; i > 0; i = best[i].from {
		cuts = append(cuts, i)
	}
	start := 0
	for k := len(cuts) - 1; k >= 0; k-- {
		text := string(run[start:cuts[k]])
		w, ok := d.words[text]
		out = append(out, Segment{Text: text, Start: at, CJK: true, Known: ok, Function: ok && (w.function || w.grammar), Supplied: ok && w.supplement})
		at += len(text)
		start = cuts[k]
	}
	return out
}

// particleCompound reports a headword of two or more characters whose last is a particle (的, 了, 吗) and whose
// others are grammar characters (中, 有, 是), itself not grammar (什么 "what" is): in running text it is those words (中 的 "in … 's"), and its own
// senses (中的 "to hit the target") are what a question almost never means.
func (d *Dict) particleCompound(rs []rune, w *word) bool {
	last, ok := d.words[string(rs[len(rs)-1])]
	if !ok || !last.function || w.function || w.grammar {
		return false
	}
	for _, r := range rs[:len(rs)-1] {
		c, ok := d.words[string(r)]
		if !ok || !c.grammar && !c.function {
			return false
		}
	}
	return true
}
