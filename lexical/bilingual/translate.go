package bilingual

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
)

// Rendering bounds: a word keeps the renderings weighing at least keepShare of its best one, at most maxTerms
// (maxTermsChar for a single character, whose senses are many and loosely related).
const (
	keepShare    = 0.3
	maxTerms     = 4
	maxTermsChar = 2
	// maxHeadwords bounds the Chinese renderings of one English word or phrase; a word with more than
	// maxSynonyms headwords whose sense it is is not rendered at all.
	maxHeadwords = 2
	maxSynonyms  = 30
	// maxGeneral bounds the headwords of such a word that the documents searched may choose from.
	maxGeneral = 48
)

// English returns the candidate English renderings of one Chinese word, best first, and whether the dictionary
// knows the word. A function word is known and has none. Each candidate is a content word of the word's senses,
// weighted by how many of its senses it stands for (the first sense counting most) and by how specific it is in
// the dictionary; the best weighs 1 for a word of two or more characters and 0.5 for a single character, which is
// ambiguous. A single character with a sense that is only English function words is a function word, and so is a
// longer word whose first sense is (see grammatical).
func (d *Dict) English(zh string) ([]Term, bool) { return d.EnglishBy(zh, nil) }

// Usage tells how many passages of the documents searched use a word (analysed as they are: stemmed English, or
// Chinese characters), or, for English words joined by a space, use them one after the other as a phrase; a
// negative count is "unknown".
type Usage func(word string) int

// EnglishBy is English choosing among all of the word's renderings by the documents searched, the way
// dictionary-based query translation uses the target collection: a rendering the documents never use cannot
// match them and is dropped (unless none is used: then the dictionary's choice stands), and one they use often
// gains over one they use rarely, so 列 over a database manual is "column" though the dictionary lists "to
// arrange" first. use nil is English.
func (d *Dict) EnglishBy(zh string, use Usage) ([]Term, bool) {
	c, known := d.candidatesBy(zh, use)
	if c == nil || c.conditional {
		return nil, known
	}
	return c.terms(), true
}

// candidates are one Chinese word's English renderings, best first, before they are cut to the few kept.
type candidates struct {
	order   []string // stems
	surface map[string]string
	score   map[string]float64
	conf    float64 // the best one's weight: 1, or 0.5 for a single character
	limit   int
	// supplied marks the renderings only the computing supplement gives (see SupplementMark): they search, but
	// no synonym is sought for them (pairRelated), a guess built on a guess.
	supplied map[string]bool
	// paired counts, for a rendering the documents searched use in a phrase with a rendering of the next or the
	// previous word, the passages using the phrase (the most of any such phrase).
	paired map[string]int
	// closed is the rendering of this word and the next as one English word ("tablespace" for 表空间); joinedBefore
	// marks a word rendered so with the one before it.
	closed       string
	joinedBefore bool
	// settled marks a word one of whose own renderings the documents use in a phrase with a neighbour's (pair):
	// the phrase has said which sense the question means. A pairing found through a synonym (pairRelated) adds the
	// synonym but settles nothing: a cross reference ("see … limits") pairs as readily as a term does.
	settled bool
	// viaSynonym marks the paired renderings whose only pairing was found through a synonym (pairRelated).
	viaSynonym map[string]bool
	// conditional marks a word of two or more characters that is grammar in a question (grammaticalWord) but has
	// content senses its compounds attest (任意 "any; arbitrary", compoundSenses): it is rendered only when the
	// documents use one of those with the word it modifies as a collocation (collocate: 任意的 Python 语句,
	// "arbitrary Python"), and is otherwise the grammar it mostly is. A word no compound attests a content sense of
	// (可以 "can; possible") is grammar always.
	conditional bool
}

// candidatesBy returns the renderings of zh chosen by use, as EnglishBy describes; nil for a function word or a
// word the dictionary lacks (known tells which).
func (d *Dict) candidatesBy(zh string, use Usage) (*candidates, bool) {
	w, ok := d.words[zh]
	if !ok {
		return nil, false
	}
	// A grammar word of two or more characters may be rendered where the documents say so (conditional): with
	// none to ask, it is grammar.
	if w.function || w.grammar && (use == nil || utf8.RuneCountInString(zh) < 2) {
		return nil, true
	}
	score := map[string]float64{}
	surface := map[string]string{}
	own := map[string]bool{}
	var order []string
	add := func(c [2]string, weight float64) { // c is (surface, stem)
		if _, seen := surface[c[1]]; !seen {
			surface[c[1]] = c[0]
			order = append(order, c[1])
		}
		score[c[1]] += weight
	}
	for i, content := range d.senseStems(w) {
		// A sense of computing counts as the main one: the documents searched are mostly technical.
		rank := i
		if strings.HasPrefix(w.senses[i], ComputingMark) {
			rank = 0
		}
		for _, c := range content {
			add(c, decay(rank)/float64(len(content)))
			own[c[1]] = own[c[1]] || !supplementary(w.senses[i])
		}
	}
	// A compound of two characters that share a sense (检 "to check, to examine" and 查 "to check, to
	// investigate" in 检查) has that sense, though the dictionary may list only others for it (检查 "inspection, to
	// examine"): the synonymous compound, a common way Chinese forms words. The shared senses come after the word's
	// own and add nothing to a sense the word has already.
	shared := d.sharedSenses(zh)
	for _, c := range shared {
		if _, has := surface[c[1]]; !has {
			add(c, decay(len(w.senses))/float64(len(shared)))
			own[c[1]] = true
		}
	}
	if w.grammar {
		// Grammar in a question, unless a neighbour asks for a content sense (candidates.conditional): only
		// the senses its compounds attest are candidates.
		att := d.compoundSenses()[w]
		order = slices.DeleteFunc(order, func(st string) bool { return !att[st] })
	}
	if len(order) == 0 {
		return nil, true
	}
	for st := range score {
		score[st] *= d.specificity(surface[st])
	}
	c := &candidates{surface: surface, score: score, conf: 1, limit: maxTerms, supplied: map[string]bool{}, conditional: w.grammar}
	for st := range surface {
		c.supplied[st] = !own[st]
	}
	if len([]rune(zh)) == 1 {
		c.conf, c.limit = 0.5, maxTermsChar
	}
	byScore := func() {
		sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
	}
	byScore()
	if use != nil {
		switch kept, known := attested(order, surface, score, use, d.commonness, maxAttested); {
		case kept != nil:
			order = kept
			byScore()
		case known:
			// The documents use none of them: the best stays, so the word still searches.
			order = order[:1]
		}
	}
	c.order = order
	return c, true
}

// terms cuts the candidates to the renderings kept: those paired in a phrase the documents use come first, the
// most used phrase first (a phrase settles a single character's sense: 外 before 键 is "foreign" in "foreign key",
// though its first sense is "outside"); then the best by score, each weighing at least keepShare of the best one,
// to at most limit renderings in all. A word one of whose own renderings is paired (settled) keeps only the best
// by score beside it: the phrase has said which sense the question means (规则 in 孤儿规则 over a book of "the
// orphan rule" is "rule", not also "regular" and "fixed", which the book uses for other things).
func (c *candidates) terms() []Term {
	var out []Term
	// The pairings of the word's own renderings first, then those found through a synonym (pairRelated), each
	// group by how much the documents use its phrases, all cut against the first: a synonym's phrase is a guess
	// and does not outrank one the dictionary's own renderings make (里执行任意 is "execute arbitrary" first, though
	// "unit test", from 里 "unit" and a synonym of "run", is used more).
	var paired []string
	for _, st := range c.order {
		if c.paired[st] > 0 {
			paired = append(paired, st)
		}
	}
	sort.SliceStable(paired, func(a, b int) bool {
		if x, y := c.viaSynonym[paired[a]], c.viaSynonym[paired[b]]; x != y {
			return y
		}
		return c.paired[paired[a]] > c.paired[paired[b]]
	})
	for _, st := range paired {
		n, top := float64(c.paired[st]), float64(c.paired[paired[0]])
		if len(out) == c.limit || n < keepShare*top {
			break
		}
		out = append(out, Term{Text: c.surface[st], Weight: min(1, n/top)})
	}
	pairedOnly := len(out) > 0 && c.settled
	top := c.score[c.order[0]]
	for k, st := range c.order {
		if len(out) == c.limit || c.score[st] < keepShare*top || pairedOnly && k > 0 {
			break
		}
		if !slices.ContainsFunc(out, func(t Term) bool { return t.Text == c.surface[st] }) {
			out = append(out, Term{Text: c.surface[st], Weight: c.conf * c.score[st] / top})
		}
	}
	return out
}

// maxPaired bounds the renderings of each of two adjacent words tried together as a phrase.
const maxPaired = 6

// pair chooses the renderings of two adjacent words together, the co-occurrence method of dictionary-based query
// translation: each pairing of their best renderings, in the Chinese order (a modifier before its head in both
// languages: 外键 "foreign key", 物化视图 "materialized view"), is counted as a phrase in the documents searched,
// and a pairing they use marks both renderings (see candidates.terms). A pairing the documents write as one word
// more often than as two (表空间: "tablespace", not "table space"; 命名空间: "namespace") renders both words as
// that word.
func pair(a, b *candidates, use Usage) (found bool) {
	bestOpen, bestClosed := 0, 0
	for _, x := range a.order[:min(maxPaired, len(a.order))] {
		for _, y := range b.order[:min(maxPaired, len(b.order))] {
			ax, by := a.surface[x], b.surface[y]
			if n := use(ax + " " + by); n > 0 {
				mark(a, x, n, false)
				mark(b, y, n, false)
				a.settled, b.settled = true, true
				bestOpen = max(bestOpen, n)
			}
			if a.joinedBefore || !closable(ax) || !closable(by) {
				continue
			}
			if n := use(ax + by); n > bestClosed {
				a.closed, bestClosed = ax+by, n
			}
		}
	}
	if bestClosed <= bestOpen {
		a.closed = ""
		return bestOpen > 0
	}
	b.joinedBefore = true
	return true
}

// minCollocation is the share of a rendering's uses that a phrase with the word after it must have for the
// phrase to say that a conditional word means it (collocate).
const minCollocation = 0.02

// heads returns the renderings of the word a conditional word at i-1 modifies: the next word past the words not
// rendered (任意的 Python 语句: "Python", past 的), a Latin word as written; nil when none follows.
func heads(segs []Segment, cands []*candidates, i int) []string {
	for ; i < len(segs) && segs[i].CJK && cands[i] == nil; i++ {
	}
	switch {
	case i == len(segs):
		return nil
	case !segs[i].CJK:
		if f := strings.Fields(strings.ToLower(segs[i].Text)); len(f) > 0 && closable(f[0]) {
			return []string{f[0]}
		}
		return nil
	case cands[i].conditional:
		return nil
	}
	return cands[i].best()
}

// best returns the renderings pair tries, best first.
func (c *candidates) best() []string {
	var out []string
	for _, y := range c.order[:min(maxPaired, len(c.order))] {
		out = append(out, c.surface[y])
	}
	return out
}

// collocate settles a conditional word (see candidates.conditional) by a rendering of it the documents use before
// one of the renderings of the word it modifies, the way a modifier goes before its head in both languages, as a
// collocation, not by chance: in at least minCollocation of the rendering's own uses ("arbitrary Python" in a FAQ
// that writes "arbitrary" seldom). The other word's renderings are left as they are: a word the question uses as
// grammar says nothing of its neighbour's sense. With no word after it (a text cut before its head), the word
// before it stands in, before it in the phrase ("execute arbitrary"): after reports which. It reports whether the
// word was settled.
func collocate(c *candidates, other []string, after bool, use Usage) bool {
	for _, x := range c.order[:min(maxPaired, len(c.order))] {
		uses := use(c.surface[x])
		if uses <= 0 {
			continue
		}
		for _, y := range other {
			phrase := c.surface[x] + " " + y
			if !after {
				phrase = y + " " + c.surface[x]
			}
			if n := use(phrase); n > 0 && float64(n) >= minCollocation*float64(uses) {
				mark(c, x, n, false)
				c.settled = true
			}
		}
	}
	return c.settled
}

// minCompounds is how many compounds must attest a content sense of a grammar word (compoundSenses).
const minCompounds = 2

// compoundSenses returns, for each grammar word of two or more characters (grammaticalWord), the content renderings
// of its own senses that at least minCompounds longer headwords beginning or ending with it have in their senses:
// the dictionary's compounds show the word used for that sense (任意 "any; arbitrary" begins 任意常数 "arbitrary
// constant", 任意存取 "arbitrary access" …), where a sense no compound uses (可以 "can; possible", 如果 "if; in case")
// is the word's grammar glossed.
func (d *Dict) compoundSenses() map[*word]map[string]bool {
	d.compoundOnce.Do(func() {
		own := map[*word]map[string]bool{}
		for zh, w := range d.words {
			if zh != w.text || !w.grammar || utf8.RuneCountInString(zh) < 2 {
				continue
			}
			stems := map[string]bool{}
			for _, content := range d.senseStems(w) {
				for _, c := range content {
					stems[c[1]] = true
				}
			}
			if len(stems) > 0 {
				own[w] = stems
			}
		}
		type sense struct {
			w  *word
			st string
		}
		count := map[sense]int{}
		for zh, hw := range d.words {
			rs := []rune(zh)
			if zh != hw.text || len(rs) < 3 {
				continue
			}
			var parts []*word
			for k := 2; k < len(rs); k++ {
				for _, part := range []string{string(rs[:k]), string(rs[len(rs)-k:])} {
					if w := d.words[part]; w != nil && own[w] != nil {
						parts = append(parts, w)
					}
				}
			}
			if len(parts) == 0 {
				continue
			}
			// The compound's content words, not kept as senseStems keeps them: most headwords are never asked about.
			for _, content := range contentWords(hw) {
				for _, c := range content {
					for _, w := range parts {
						if own[w][c[1]] {
							count[sense{w, c[1]}]++
						}
					}
				}
			}
		}
		d.compound = map[*word]map[string]bool{}
		for k, n := range count {
			if n < minCompounds {
				continue
			}
			if d.compound[k.w] == nil {
				d.compound[k.w] = map[string]bool{}
			}
			d.compound[k.w][k.st] = true
		}
	})
	return d.compound
}

// closable reports a rendering that may be half of an English compound written as one word: letters only, at
// least three of them.
func closable(w string) bool {
	if len(w) < 3 {
		return false
	}
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// mark records that the documents use a phrase of rendering st n times; viaSynonym for a phrase pairRelated found,
// which a phrase of the word's own renderings (pair) overrides.
func mark(c *candidates, st string, n int, viaSynonym bool) {
	if c.paired == nil {
		c.paired, c.viaSynonym = map[string]int{}, map[string]bool{}
	}
	switch {
	case !viaSynonym:
		delete(c.viaSynonym, st)
	case c.paired[st] == 0:
		c.viaSynonym[st] = true
	}
	c.paired[st] = max(c.paired[st], n)
}

// maxAttested bounds the candidates asked about in the documents searched.
const maxAttested = 12

// attested keeps the candidates (best first) the documents use, scaling each score by how much more than the
// language at large they use it, relative to the candidate they favour most (0.25 at the least, 1 for that one):
// "column" in a database manual, against "arrange", which any text uses. common is how many headwords of the
// dictionary use a rendering in their senses (nil: all alike). kept is nil when the documents use none of the
// candidates (known) or cannot tell (!known).
func attested(order []string, surface map[string]string, score map[string]float64, use Usage, common func(string) int, limit int) (kept []string, known bool) {
	if len(order) > limit {
		order = order[:limit]
	}
	df := make([]int, len(order))
	lift := make([]float64, len(order))
	most := 0.0
	for i, st := range order {
		df[i] = use(surface[st])
		known = known || df[i] >= 0
		if df[i] > 0 {
			c := 1
			if common != nil {
				c = max(1, common(surface[st]))
			}
			lift[i] = math.Log1p(float64(df[i]) / float64(c))
			most = max(most, lift[i])
		}
	}
	if most <= 0 {
		return nil, known
	}
	for i, st := range order {
		if df[i] <= 0 {
			continue
		}
		score[st] *= 0.25 + 0.75*lift[i]/most
		kept = append(kept, st)
	}
	return kept, true
}

// grammatical reports a word one of whose senses is only English function words ("in", "after", "can", "at"): a
// single character with such a sense (中 "in", 后 "after", 会 "can", 对 "for") is, in a question, mostly the
// grammar around the content words ("约束中" is "in the constraint"), and its other senses ("Chinese", "empress")
// would search for something the question does not ask about.
func grammatical(w *word) bool {
	return len(w.senses) > 0 && slices.ContainsFunc(w.senses, onlyFunctionWords)
}

// onlyFunctionWords reports a sense of English function words only ("how", "which ones", "can").
func onlyFunctionWords(s string) bool {
	return len(senseWords(s)) > 0 && len(lexical.Tokenize(s)) == 0
}

// grammaticalWord reports a word that is grammar in a question: a single character with a sense of only function
// words (see grammatical), or a longer word whose first sense is one (什么 "what", 如何 "how", 可以 "can"):
// its later senses ("something", "possible") are not what a question using it asks about.
func grammaticalWord(zh string, w *word) bool {
	if utf8.RuneCountInString(zh) == 1 {
		return grammatical(w)
	}
	return len(w.senses) > 0 && onlyFunctionWords(w.senses[0])
}

// Related returns an English word's synonyms (single words, the common senses first), for a pairing the
// dictionary's own renderings miss: 主 is "owner", "master", "main" … in the dictionary, and only the synonym
// "primary" of "main" makes with 键 "key" the phrase a database manual uses.
type Related func(word string) []string

// Bounds on pairing through synonyms: the renderings of each word tried, and the synonyms of each.
const (
	maxRelatedRenderings = 6
	maxRelated           = 6
)

// pairRelated is pair for two adjacent words none of whose pairings the documents use: each of the best renderings
// of one word is replaced by its synonyms and paired with the other's renderings, and the synonym in the phrase the
// documents use most becomes a rendering of its word, weighing what the rendering it stands for weighs (the
// dictionary says 主 is "main", the documents say "primary key").
func pairRelated(a, b *candidates, use Usage, related Related) {
	type found struct {
		c       *candidates
		from    string // the stem of the rendering the synonym stands for
		syn     string
		stem    string // the synonym's
		partner string // the other word's rendering, as a stem
		n       int
	}
	var best found
	try := func(c, other *candidates, synFirst bool) {
		for _, x := range c.order[:min(maxRelatedRenderings, len(c.order))] {
			if c.supplied[x] {
				continue
			}
			syns := related(c.surface[x])
			for _, s := range syns[:min(maxRelated, len(syns))] {
				st := lexical.Tokenize(s)
				if len(st) != 1 || st[0] == x || !closable(s) {
					continue
				}
				for _, y := range other.order[:min(maxRelatedRenderings, len(other.order))] {
					phrase := other.surface[y] + " " + s
					if synFirst {
						phrase = s + " " + other.surface[y]
					}
					if n := use(phrase); n > best.n {
						best = found{c: c, from: x, syn: s, stem: st[0], partner: y, n: n}
					}
				}
			}
		}
	}
	try(a, b, true)
	try(b, a, false)
	if best.n == 0 {
		return
	}
	c, other := best.c, a
	if c == a {
		other = b
	}
	if _, ok := c.surface[best.stem]; !ok {
		c.surface[best.stem] = best.syn
		c.score[best.stem] = c.score[best.from]
		c.order = append(c.order, best.stem)
	}
	mark(c, best.stem, best.n, true)
	mark(other, best.partner, best.n, true)
}

// Alternatives joins the renderings of one word in ToEnglish's and ToChinese's output ("propagate|spread"): a
// search engine that splits words at punctuation searches all of them; a scorer that knows the mark counts one
// word found when any of them is.
const Alternatives = "|"

// ToEnglish renders a text for an English search: each Chinese word by its English renderings (joined by
// Alternatives), a Chinese word
// the dictionary lacks as written (so the rest of a partly known question still searches), function words
// dropped, and words of other scripts ("Go", "sync.Map") as written. It returns the rendering and how many
// Chinese words were rendered; with none rendered the rendering is "".
func (d *Dict) ToEnglish(s string) (string, int) { return d.ToEnglishBy(s, nil, nil) }

// ToEnglishUsing is ToEnglish choosing each word's renderings by the vocabulary of the documents searched: a
// rendering that used reports the documents never use cannot match them and is dropped, unless none of the
// word's renderings is used (then the best stays, so the word still searches). used nil keeps every rendering.
func (d *Dict) ToEnglishUsing(s string, used func(word string) bool) (string, int) {
	if used == nil {
		return d.ToEnglishBy(s, nil, nil)
	}
	return d.ToEnglishBy(s, func(w string) int {
		if used(w) {
			return 1
		}
		return 0
	}, nil)
}

// Localizers are the single characters that follow a noun to make a place of it: 中 "in", 里 "in", 内 "within"
// (标准库里, 约束中, 模块内).
const Localizers = "中里内"

// ToEnglishBy is ToEnglish choosing each word's renderings among all its senses by how much the documents
// searched use them (see EnglishBy), and adjacent words' together by the phrases the documents use, through the
// renderings' synonyms where related is not nil and their own renderings make none (see pairRelated). use nil is
// ToEnglish.
func (d *Dict) ToEnglishBy(s string, use Usage, related Related) (string, int) {
	segs := d.Segment(s)
	cands := make([]*candidates, len(segs))
	known := make([]bool, len(segs))
	for i, seg := range segs {
		if seg.CJK {
			cands[i], known[i] = d.candidatesBy(seg.Text, use)
		}
	}
	// A localizer right after a Latin word ("Rust 里", "Node.js 中": in Rust, in Node.js) is the postposition of a
	// place, not its noun senses ("lining", "middle").
	for i := 1; i < len(segs); i++ {
		prev := segs[i-1]
		if segs[i].CJK && utf8.RuneCountInString(segs[i].Text) == 1 && strings.Contains(Localizers, segs[i].Text) && !prev.CJK && strings.TrimSpace(s[prev.Start+len(prev.Text):segs[i].Start]) == "" {
			cands[i] = nil
		}
	}
	// touching: words k-1 and k are written one after the other, in the same run of Chinese characters.
	// ownRenderings: word k has renderings of its own, not only conditional ones.
	touching := func(k int) bool { return segs[k-1].Start+len(segs[k-1].Text) == segs[k].Start }
	ownRenderings := func(k int) bool { return cands[k] != nil && !cands[k].conditional }
	if use != nil {
		for i := 1; i < len(segs); i++ {
			if ownRenderings(i-1) && ownRenderings(i) && touching(i) && !pair(cands[i-1], cands[i], use) && related != nil {
				pairRelated(cands[i-1], cands[i], use, related)
			}
		}
		for i, c := range cands {
			if c == nil || !c.conditional {
				continue
			}
			other, after := heads(segs, cands, i+1), true
			if other == nil && i > 0 && ownRenderings(i-1) && touching(i) {
				other, after = cands[i-1].best(), false
			}
			if !collocate(c, other, after, use) {
				continue
			}
			// Settled, the word pairs with its neighbours as any word does (执行任意: "execute arbitrary").
			if i > 0 && ownRenderings(i-1) && touching(i) {
				pair(cands[i-1], c, use)
			}
			if i+1 < len(segs) && ownRenderings(i+1) && touching(i+1) {
				pair(c, cands[i+1], use)
			}
		}
	}
	for i, c := range cands {
		if c != nil && c.conditional && !c.settled {
			cands[i] = nil // grammar here: no phrase asked for its content senses
		}
	}
	var parts []string
	rendered := 0
	for i, seg := range segs {
		switch {
		case !seg.CJK || !known[i]:
			parts = append(parts, seg.Text)
		case cands[i] == nil:
		case cands[i].joinedBefore:
			rendered++ // rendered with the word before it, as one English word
		case cands[i].closed != "":
			parts = append(parts, cands[i].closed)
			rendered++
		default:
			parts = append(parts, joinTerms(cands[i].terms()))
			rendered++
		}
	}
	if rendered == 0 {
		return "", 0
	}
	return strings.Join(parts, " "), rendered
}

// reverse builds the English → Chinese index on first use: every sense of one to three content words, as its
// stemmed words, points to the headwords that have it, scored by the sense's rank, the word's length (a single
// character is ambiguous) and how few senses the word has (a word that means mostly this is the better
// rendering).
func (d *Dict) reverse() map[string][]revEntry {
	d.revOnce.Do(func() {
		rev, general := map[string][]revEntry{}, map[string][]revEntry{}
		prod := d.productivity()
		seen := map[*word]bool{}
		for _, w := range d.words {
			if seen[w] || w.function || w.supplement {
				continue
			}
			seen[w] = true
			han := true
			for _, r := range w.text {
				if !unicode.Is(unicode.Han, r) {
					han = false
					break
				}
			}
			if !han {
				continue
			}
			length := 1.0
			if len([]rune(w.text)) == 1 {
				length = 0.3
			}
			// How many headwords contain this one stands in for its frequency, which the dictionary does not
			// give: 记忆 (memory) is part of many compounds, a rare literary word of none.
			common := 1 + 0.15*math.Log1p(float64(prod[w.text]))
			got := map[string]bool{}
			for i, s := range w.senses {
				st := lexical.Tokenize(s)
				if supplementary(s) || len(st) == 0 || len(st) > 3 {
					continue
				}
				key := strings.Join(st, " ")
				if got[key] {
					continue
				}
				got[key] = true
				// The sense's rank counts more here than in English(): a headword whose main sense is the
				// English word renders it; one that reaches it in a later sense only approaches it.
				rev[key] = append(rev[key], revEntry{zh: w.text, score: length * common / (1 + float64(i))})
			}
		}
		for k, es := range rev {
			sort.Slice(es, func(a, b int) bool {
				if es[a].score != es[b].score {
					return es[a].score > es[b].score
				}
				return es[a].zh < es[b].zh
			})
			// An English word that many headwords render ("light": 光, 轻, 灯, 亮 …) is too general to render
			// as any one of them: it stays in English.
			if !strings.Contains(k, " ") && len(es) > maxSynonyms {
				delete(rev, k)
				var multi []revEntry
				for _, e := range es {
					if utf8.RuneCountInString(e.zh) > 1 && len(multi) < maxGeneral {
						multi = append(multi, e)
					}
				}
				general[k] = multi
				continue
			}
			if len(es) > maxAttested {
				es = es[:maxAttested]
			}
			rev[k] = es
		}
		d.rev, d.general = rev, general
	})
	return d.rev
}

// productivity counts, for each headword, the other headwords that contain it.
func (d *Dict) productivity() map[string]int {
	prod := map[string]int{}
	seen := map[*word]bool{}
	for _, w := range d.words {
		if seen[w] {
			continue
		}
		seen[w] = true
		rs := []rune(w.text)
		if w.supplement || len(rs) < 2 || len(rs) > MaxWordRunes {
			continue
		}
		for i := 0; i < len(rs); i++ {
			for j := i + 1; j <= len(rs); j++ {
				if j-i == len(rs) {
					continue
				}
				sub := string(rs[i:j])
				if _, ok := d.words[sub]; ok {
					prod[sub]++
				}
			}
		}
	}
	return prod
}

// maxPhraseWords is the longest English phrase looked up as one sense ("garbage collection", "random access
// memory").
const maxPhraseWords = 3

// Chinese returns the candidate Chinese renderings of an English word or phrase (its stemmed content words must
// form one sense of the headword), best first, weighted relative to the best.
func (d *Dict) Chinese(en string) []Term { return d.ChineseBy(en, nil) }

// ChineseBy is Chinese choosing among the headwords by how much the documents searched use them, as EnglishBy
// does: "interrupt" over documents that write 中断 is 中断, though 打断 has it as its first sense. With use nil
// it is Chinese; when the documents use none of the headwords, the best one stays.
func (d *Dict) ChineseBy(en string, use Usage) []Term {
	key := strings.Join(lexical.Tokenize(en), " ")
	out, _ := d.lookup(key, use)
	return out
}

// lookup renders a stemmed sense by its headwords (pickHeadwords); a sense too general for the dictionary alone
// is rendered only by the documents searched, by the headwords they favour, and not at all when they use none.
func (d *Dict) lookup(key string, use Usage) ([]Term, bool) {
	if es := d.reverse()[key]; len(es) > 0 {
		return pickHeadwords(es, use, maxAttested)
	}
	if use == nil {
		return nil, false
	}
	out, used := pickHeadwords(d.general[key], use, maxGeneral)
	if !used {
		return nil, false
	}
	return out, true
}

// pickHeadwords chooses the renderings among a sense's headwords (best first): the documents' use rescores
// them as in EnglishBy; used is false when the documents can tell and use none of them (then the best stays).
func pickHeadwords(es []revEntry, use Usage, limit int) (out []Term, used bool) {
	if len(es) == 0 {
		return nil, false
	}
	used = true
	if use != nil {
		order := make([]string, len(es))
		surface := map[string]string{}
		score := map[string]float64{}
		for i, e := range es {
			order[i], surface[e.zh], score[e.zh] = e.zh, e.zh, e.score
		}
		switch kept, known := attested(order, surface, score, use, nil, limit); {
		case kept != nil:
			sort.SliceStable(kept, func(a, b int) bool { return score[kept[a]] > score[kept[b]] })
			es = make([]revEntry, len(kept))
			for i, k := range kept {
				es[i] = revEntry{zh: k, score: score[k]}
			}
		case known:
			es, used = es[:1], false
		}
	}
	for _, e := range es {
		if len(out) == maxHeadwords || e.score < keepShare*es[0].score {
			break
		}
		out = append(out, Term{Text: e.zh, Weight: e.score / es[0].score})
	}
	return out, used
}

// ToChinese renders an English text for a Chinese search: the longest runs of its content words that are one
// sense of a headword become that headword (its best renderings), other words stay as written (names, code).
// It returns the rendering and how many English words were rendered; with none, "".
func (d *Dict) ToChinese(s string) (string, int) { return d.ToChineseBy(s, nil) }

// ToChineseBy is ToChinese choosing the headwords by how much the documents searched use them (see ChineseBy):
// a run of words whose headwords the documents never use is looked up in shorter runs before it is kept as the
// best headword nonetheless.
func (d *Dict) ToChineseBy(s string, use Usage) (string, int) {
	type tok struct{ surface, stem string }
	var toks []tok
	for _, seg := range d.Segment(s) {
		if seg.CJK {
			toks = append(toks, tok{surface: seg.Text})
			continue
		}
		if strings.ContainsAny(seg.Text, "._/#+") {
			toks = append(toks, tok{surface: seg.Text}) // a name of code: never translated
			continue
		}
		// A hyphenated compound ("signal-to-noise") is looked up by its words.
		for _, part := range strings.Split(seg.Text, "-") {
			st := lexical.Tokenize(part)
			switch {
			case len(st) == 1:
				toks = append(toks, tok{surface: part, stem: st[0]})
			case len(st) > 1:
				toks = append(toks, tok{surface: part})
			}
		}
	}
	var parts []string
	rendered := 0
	for i := 0; i < len(toks); {
		matched := 0
		var fallback []Term // the best headwords of the longest run, used by none of the documents
		fallbackN := 0
		for n := min(maxPhraseWords, len(toks)-i); n >= 1; n-- {
			stems := make([]string, 0, n)
			for _, t := range toks[i : i+n] {
				if t.stem == "" {
					break
				}
				stems = append(stems, t.stem)
			}
			if len(stems) < n {
				continue
			}
			terms, used := d.lookup(strings.Join(stems, " "), use)
			if len(terms) == 0 {
				continue
			}
			if !used {
				if fallback == nil {
					fallback, fallbackN = terms, n
				}
				continue
			}
			parts = append(parts, joinTerms(terms))
			matched = n
			rendered += n
			break
		}
		if matched == 0 && fallback != nil {
			parts = append(parts, joinTerms(fallback))
			matched = fallbackN
			rendered += fallbackN
		}
		if matched == 0 {
			parts = append(parts, toks[i].surface)
			matched = 1
		}
		i += matched
	}
	if rendered == 0 {
		return "", 0
	}
	return strings.Join(parts, " "), rendered
}

func joinTerms(ts []Term) string {
	alts := make([]string, len(ts))
	for i, t := range ts {
		alts[i] = t.Text
	}
	return strings.Join(alts, Alternatives)
}

// interrogatives are the English question words; a headword whose first sense is made of them and other function
// words is a question word itself.
var interrogatives = map[string]bool{"what": true, "how": true, "why": true, "which": true, "when": true, "where": true,
	"who": true, "whom": true, "whose": true, "whether": true}

// Interrogative reports a question word (什么 "what", 如何 "how", 为什么 "why", 是否 "whether", 哪些 "which
// ones"): a headword whose first sense has an English question word and no content word but "ones", "way" or
// "kind" (what a question word is about in English too: "which ones", "what way", "what kind").
func (d *Dict) Interrogative(zh string) bool {
	w, ok := d.words[zh]
	if !ok || len(w.senses) == 0 {
		return false
	}
	ws := senseWords(w.senses[0])
	q := false
	for _, x := range ws {
		switch {
		case interrogatives[x]:
			q = true
		case x == "ones" || x == "way" || x == "kind" || x == "many" || x == "much" || x == "time" || x == "or" || x == "not":
		case len(lexical.Tokenize(x)) > 0:
			return false
		}
	}
	return q
}

// Grammatical reports a headword whose first sense is only English function words: 是 "to be", 它 "it", 能 "can",
// 一个 "a", 可以 "can" — in a question, the grammar around its content words.
func (d *Dict) Grammatical(zh string) bool {
	w, ok := d.words[zh]
	return ok && len(w.senses) > 0 && onlyFunctionWords(w.senses[0])
}

// sharedSenses are the sense words (surface, stem) both characters of a two-character word have, in the first
// character's order; none for a word of another length or with a character the dictionary lacks.
func (d *Dict) sharedSenses(zh string) [][2]string {
	rs := []rune(zh)
	if len(rs) != 2 {
		return nil
	}
	a, okA := d.words[string(rs[0])]
	b, okB := d.words[string(rs[1])]
	if !okA || !okB {
		return nil
	}
	inB := map[string]bool{}
	for _, sense := range d.senseStems(b) {
		for _, x := range sense {
			inB[x[1]] = true
		}
	}
	var out [][2]string
	seen := map[string]bool{}
	for _, sense := range d.senseStems(a) {
		for _, x := range sense {
			if inB[x[1]] && !seen[x[1]] {
				seen[x[1]] = true
				out = append(out, x)
			}
		}
	}
	return out
}

// senseStems are the content words of each of w's senses as (surface, stem), in order, remembered.
func (d *Dict) senseStems(w *word) [][][2]string {
	if v, ok := d.stems.Load(w); ok {
		return v.([][][2]string)
	}
	out := contentWords(w)
	d.stems.Store(w, out)
	return out
}

// contentWords is senseStems computed afresh.
func contentWords(w *word) [][][2]string {
	out := make([][][2]string, len(w.senses))
	for i, s := range w.senses {
		for _, sw := range senseWords(s) {
			if st := lexical.Tokenize(sw); len(st) == 1 {
				out[i] = append(out[i], [2]string{sw, st[0]})
			}
		}
	}
	return out
}
