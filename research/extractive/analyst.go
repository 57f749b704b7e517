package extractive

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/lexical/bilingual"
	"github.com/deepresearch/deepresearch/lexical/synonyms"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

// Analyst picks evidence sentences from one fetched source by relevance to the sub-question and quotes them
// verbatim.
type Analyst struct {
	cfg      Config
	sections *sectionMemo
	vocab    *vocabulary         // the words the sources use; nil or empty: unknown
	syn      *synonyms.Thesaurus // English synonyms of query words, a weaker match (synonymShare); nil: none

	mu    sync.Mutex
	cache map[string]*docIndex // by document hash: one long file is read for many sub-questions and chunks
}

// Passage and quote bounds, in runes.
const (
	maxPassage   = 600
	minPassage   = 20
	shortPassage = 90
	maxQuote     = 700
	cacheDocs    = 64
	// maxSection is the longest section (in bytes) read whole when a search hit falls inside it: the hit is often
	// one paragraph of a section whose rules are spread over the paragraphs around it.
	maxSection = 6000
	// backSteps is how many sentences a quote may reach back for the antecedent of "This …" / "It …".
	backSteps = 2
)

// docIndex is a document split into passages with a BM25 model over them; IDF over the whole document makes a
// term that is everywhere in it (the document's own topic) count less than the words that set a passage apart.
type docIndex struct {
	text   string
	view   *codeView // source code read as prose (text is then the view's); nil for other documents
	spans  []lexical.Span
	tokens [][]string // passage terms plus its section heading's
	own    [][]string // the passage's own terms
	claims []string   // the claim of a table row, spelled out with its column headers; "" for prose
	from   []int      // where a described name's quote starts (its signature heading); -1 for other passages
	head   [][]string // the terms of the passage's own section heading
	within []string   // the passage's section headings as text: the one above its own, and its own
	lead   []int      // the passage's position in its section (0 for the first)
	leadOf []int      // the lead sentence the passage stands under (leadSentence), -1 for none
	heads  []lexical.Span
	usable []bool
	bm25   *lexical.BM25
	dfs    map[string]int
	// symbols are the symbols the passage and its section heading name on their own (lexical.Symbols): terms of
	// coverage, as a question may name one (askedSymbols), but not of BM25, whose ranking stays the words'.
	symbols [][]string
}

var anchorRE = regexp.MustCompile(`^L(\d+)(?:-L(\d+))?$`)

// Analyze implements research.Analyst. For a corpus result (a file:// URL with a #Lx-Ly anchor) it reads the
// anchored lines — the passage the search found — and cites each quote by the lines it occupies. For any other
// document it reads the whole text. Each evidence item quotes one passage, with the passage before it when the
// passage is short or refers back ("This …", "这…"), always as one verbatim substring of doc.Text — or, for source
// code, of its comments read as prose (see codeView).
func (a *Analyst) Analyze(ctx context.Context, sq research.SubQuestion, doc *sources.Document) ([]research.Evidence, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, fmt.Errorf("extractive analyze %s: no document", sq.ID)
	}
	if strings.TrimSpace(doc.Text) == "" {
		return nil, nil
	}
	raw := doc.URL
	if raw == "" {
		raw = doc.FinalURL
	}
	ix := a.index(doc)
	lo, hi, base, isFile := region(raw, doc.Text)
	if ix.view != nil {
		lo, hi = ix.view.viewRange(lo, hi)
	}
	lo, hi = ix.section(lo, hi)
	hi = ix.withFollowers(lo, hi)

	queries := dedupe(append([]string{sq.Question}, sq.Queries...))
	var variants []variant
	var union []string
	// A common noun after a name that the sources seldom put there ("command" of "the CREATE SEQUENCE command",
	// see kindNouns) says what kind of thing the name is: a passage covers the question without it, as the focus
	// reads it, and it ranks no passage. On the name's own page it is the rare word of the passages that happen to
	// use it ("… owned by the user issuing the command"), while the name is in every one, the passage that says
	// what the command does among them.
	kindWords := map[string]bool{}
	for _, q := range queries {
		vs := []variant{queryVariant(q)}
		if k := kindNouns(ctx, q, a.vocab); len(k) > 0 {
			vs = append(vs, queryVariant(withoutWords(q, k)))
			for w := range k {
				for _, t := range lexical.Tokenize(w) { // every rendering of a translated word ("command|order")
					kindWords[t] = true
				}
			}
		}
		for _, v := range vs {
			if len(v) == 0 {
				continue
			}
			variants = append(variants, v)
			for _, u := range v {
				if isAlt(u) {
					u = u[1:]
				}
				union = append(union, u...)
			}
		}
	}
	union = uniq(union)
	ranking := union
	if len(kindWords) > 0 {
		if r := slices.DeleteFunc(slices.Clone(union), func(t string) bool { return kindWords[t] }); len(r) > 0 {
			ranking = r
		}
	}
	syns := querySynonyms(a.syn, queries)
	// A one-term variant ("Go", "context") would make every passage that names it fully relevant; it counts
	// for coverage only when the whole sub-question has nothing more specific.
	if len(union) > 1 {
		var specific []variant
		for _, v := range variants {
			if v.terms() > 1 {
				specific = append(specific, v)
			}
		}
		if len(specific) > 0 {
			variants = specific
		}
	}
	if len(union) == 0 {
		return nil, nil
	}
	if !hasCJK(ix.text) { // Chinese words left as written can never occur here (see latinUnits)
		for k, v := range variants {
			variants[k] = latinUnits(v)
		}
	}

	// Heading match ignores the terms of the document's title: in "Package strings", a heading "func (Builder)
	// String" is no closer to strings.Builder than "type Builder" is. The best-matching section is the primary
	// one; its first passages get the lead bonus.
	titleTerms := map[string]bool{}
	for _, t := range lexical.Tokenize(doc.Title) {
		titleTerms[t] = true
	}
	var hmQuery []string
	for _, t := range union {
		if !titleTerms[t] {
			hmQuery = append(hmQuery, t)
		}
	}
	// Beyond the search's region, the analyst reads the places where the page itself says what the question asks,
	// each with where a quote there may begin (see beyond):
	outside := func(sp lexical.Span) bool { return sp.Start < lo || sp.End > hi }
	var more []beyond
	// - the reference section of an API the question names: its sentences describe the name under its heading
	//   without repeating it ("Schedules repeated execution of `callback` every `delay` milliseconds." under
	//   "setInterval(callback[, delay])");
	for _, r := range ix.namedSections(nameTerms(sq.Question), askedSymbols(sq.Question)) {
		more = append(more, beyond{r[0], r[1], r[0]})
	}
	// - the opening of the section the region's subsection stands in, when its heading names what the question
	//   asks in one of the reader's own words, not a rendering of them nor a word of the page's title (a title
	//   repeated as the first heading names the whole page): it says what its subsections detail ("urlopen
	//   raises URLError when it cannot handle a response" under "Handling Exceptions", above "URLError" and
	//   "HTTPError");
	asked := slices.DeleteFunc(lexical.Tokenize(sq.Question), func(t string) bool { return titleTerms[t] })
	if plo, phi := ix.parentOpening(lo, asked); plo >= 0 {
		more = append(more, beyond{plo, phi, plo})
	}
	// - a sentence of the page's opening (before its first section) that states all the question asks in its own
	//   words (every unit of a variant as asked, no rendering): the search returns a few chunks a page, and those
	//   it found may be the page's examples while its opening says it in so many words ("In Rust, iterators are
	//   lazy, …");
	var plain []variant
	for _, v := range variants {
		if len(v) > 1 && !slices.ContainsFunc(v, isAlt) {
			plain = append(plain, v)
		}
	}
	if ix.view == nil && len(plain) > 0 {
		end := min(len(ix.text), maxSection)
		if len(ix.heads) > 1 {
			end = min(end, ix.heads[1].Start)
		}
		for i, sp := range ix.spans {
			if sp.End > end {
				break
			}
			if outside(sp) && ix.usable[i] && a.coverageOf(ix, plain, nil, ix.own[i]) >= 1 {
				more = append(more, beyond{sp.Start, sp.End, 0})
			}
		}
	}
	// - a table row whose first cell is a name in code that the question writes ("`smallint`	2 bytes	small-range
	//   integer	-32768 to +32767" for the smallint type): the row is what the table says of it, however far from
	//   the search's region the table stands;
	if ix.view == nil {
		written := map[string]bool{} // the question's words as written, not as terms: a name in code is one word
		for _, w := range wordRE.FindAllString(sq.Question, -1) {
			written[strings.ToLower(strings.TrimRight(w, "."))] = true
		}
		for i, sp := range ix.spans {
			cell, _, isRow := strings.Cut(sp.Text, "\t")
			name, opens := strings.CutPrefix(cell, "`")
			name, closes := strings.CutSuffix(name, "`")
			if isRow && opens && closes && ix.claims[i] != "" && ix.usable[i] && outside(sp) && written[strings.ToLower(name)] {
				more = append(more, beyond{sp.Start, sp.End, sp.Start})
			}
		}
	}
	// - the page's lead, when its title is what the question asks about ("Tablespaces" for what tablespaces are
	//   for): it says what it is in its first paragraph, however far below the search found the question's words.
	if ix.view == nil && titleNamed(doc.Title, union) {
		if leadLo, leadHi := ix.firstParagraph(); leadLo >= 0 {
			more = append(more, beyond{leadLo, leadHi, leadLo})
		}
	}
	floor := func(i int) int { // where a quote of passage i may begin
		if sp := ix.spans[i]; outside(sp) {
			for _, r := range more {
				if r.holds(sp) {
					return r.floor
				}
			}
		}
		return lo
	}
	var cand []int
	var conf, rel []float64
	maxScore := 0.0
	scores := map[int]float64{}
	antecedents := map[int]int{} // passage → the passage it refers back to (see antecedent)
	for i, sp := range ix.spans {
		if outside(sp) && !slices.ContainsFunc(more, func(r beyond) bool { return r.holds(sp) }) || !ix.usable[i] {
			continue
		}
		s := ix.bm25.Score(ranking, i)
		if l := ix.leadOf[i]; l >= 0 {
			// A paragraph or list item under a lead sentence shares its relevance (see leadShare).
			s = math.Max(s, leadShare*ix.bm25.Score(ranking, l))
		}
		b := a.antecedent(ix, i, floor(i))
		if b < 0 {
			b = ix.restated(i)
		}
		antecedents[i] = b
		if b >= 0 {
			s = math.Max(s, leadShare*ix.bm25.Score(ranking, b))
		}
		if s <= 0 {
			continue
		}
		scores[i] = s
		maxScore = math.Max(maxScore, s)
	}
	declMemo := map[int]float64{}
	for i := range scores {
		c := a.coverage(ix, variants, syns, i)
		if l := ix.leadOf[i]; l >= 0 {
			c = math.Max(c, leadShare*a.coverage(ix, variants, syns, l))
		}
		if b := antecedents[i]; b >= 0 {
			c = math.Max(c, leadShare*a.coverage(ix, variants, syns, b))
		}
		// A section heading made of the question's terms ("### Once" for sync.Once) states the topic of every
		// sentence under it, which need not repeat the question's other words: it covers half of what is missing.
		c += (1 - c) * 0.5 * headingMatch(ix.head[i], hmQuery)
		c += (1 - c) * 0.5 * ix.declCoverage(a, variants, i, declMemo)
		if c < a.cfg.MinConfidence {
			continue
		}
		// A quote ending in a colon promises what follows; without the list it introduces it is a fragment, and a
		// question without its answer states nothing. A short passage quoted with the label before it ("**Table
		// 8.23.** JSON Primitive Types …") is a caption.
		if qs, qe := a.quoteBounds(ix, i, floor(i)); endsInColon(ix.text[qs:qe]) || asks(ix.text[qs:qe]) || lexical.IsCaption(plainText(ix.text[qs:qe])) {
			continue
		}
		if refersBack(ix.spans[i].Text) && !ix.opensComment(i) && !namesSectionSubject(ix.text, ix.spans[i]) {
			// "This rule generalizes the previous rule …" is evidence only with the sentence it points back to,
			// and "It allows …" after it only with both.
			if qs, _ := a.quoteBounds(ix, i, floor(i)); qs >= ix.spans[i].Start || refersBack(ix.text[qs:]) {
				continue
			}
		}
		cand = append(cand, i)
		conf = append(conf, c)
	}
	if len(cand) == 0 {
		return nil, nil
	}
	// Stable order (map iteration is random): by position in the text.
	sortTogether(cand, conf)
	// Relevance blends coverage, BM25 and centrality — how much a passage shares with the rest of its region, the
	// LexRank idea: the rule a section states is echoed by its other sentences, an aside is not.
	cues := facetCues[facetOf(sq.Question)]
	cent := make([]float64, len(cand))
	maxCent := 0.0
	for k, i := range cand {
		n, sum := 0, 0.0
		for j := range ix.spans {
			if j == i || ix.spans[j].Start < lo || ix.spans[j].End > hi || !ix.usable[j] {
				continue
			}
			sum += lexical.Jaccard(ix.own[i], ix.own[j])
			n++
		}
		if n > 0 {
			cent[k] = sum / float64(n)
		}
		maxCent = math.Max(maxCent, cent[k])
	}
	hms := make([]float64, len(cand))
	maxHM := 0.0
	for k, i := range cand {
		hms[k] = headingMatch(ix.head[i], hmQuery)
		maxHM = math.Max(maxHM, hms[k])
	}
	facet := facetOf(sq.Question)
	kinds := make([]kind, len(cand))
	for k, i := range cand {
		// The passage's own kind: sentences quoted before it for its back reference are context ("For example,
		// … . This restriction is … the orphan rule …" states a rule, not an example); the list after it counts.
		_, qe := a.quoteBounds(ix, i, floor(i))
		kinds[k] = passageKind(ix.text[ix.spans[i].Start:qe])
	}
	for k, i := range cand {
		r := 0.5 + 0.35*scores[i]/maxScore
		if maxCent > 0 {
			r += 0.15 * cent[k] / maxCent
		}
		r *= conf[k]
		if hasCue(ix.spans[i].Text, cues) {
			r *= 1.25
		}
		// A section whose heading is the subject ("type Builder" for strings.Builder) states its essentials
		// first.
		if hm := hms[k]; hm > 0 {
			r *= 1 + 0.3*hm
			if hm == maxHM && ix.lead[i] < sectionLead {
				r *= 1.15
			}
		}
		// Rules and definitions answer; an example's walk-through or a remark about the document does not.
		r *= kinds[k].weight(facet)
		rel = append(rel, r)
	}
	// A passage dense with answers (a section stating four rules) may give more than EvidencePerSource items:
	// up to twice as many, as long as each is nearly as relevant as the best.
	ranked := lexical.MMR(rel, func(x, y int) float64 {
		return redundancy(ix.own[cand[x]], ix.own[cand[y]])
	}, 2*a.cfg.EvidencePerSource+maxFollowers, 0.7)
	maxRel := 0.0
	for _, r := range rel {
		maxRel = math.Max(maxRel, r)
	}
	var picked []int
	leads := map[int]bool{}
	// Items under a lead sentence come as one enumeration (below), so they take no place of their own among the
	// EvidencePerSource best: a rule stated elsewhere in the section is not crowded out by the lead's list.
	n := 0
	for _, k := range ranked {
		if n < a.cfg.EvidencePerSource || rel[k] >= 0.7*maxRel {
			picked = append(picked, k)
			leads[ix.leadOf[cand[k]]] = true
			if ix.leadOf[cand[k]] < 0 {
				n++
			}
		}
	}
	// An enumeration is taken whole: the other items under the lead sentence of a picked item ("these rules:")
	// are what it announces, so they come along, in document order (at most maxFollowers of them).
	delete(leads, -1)
	if len(leads) > 0 {
		in := map[int]bool{}
		for _, k := range picked {
			in[k] = true
		}
		for k, i := range cand {
			if !in[k] && leads[ix.leadOf[i]] {
				picked = append(picked, k)
			}
		}
	}

	title := doc.Title
	var out []research.Evidence
	for _, k := range picked {
		i := cand[k]
		// Confidence is graded, so that items compare across documents and sub-questions: how much of the
		// sub-question the passage covers beyond the floor, scaled by its kind and by how well its section heading
		// matches. A passage that passed the floor stays above it: the kind orders evidence, it does not veto it.
		w := kinds[k].weight(facet) * (0.85 + 0.15*hms[k])
		confidence := a.cfg.MinConfidence + (conf[k]-a.cfg.MinConfidence)*w
		qs, qe := a.quoteBounds(ix, i, floor(i))
		claim := plainText(ix.spans[i].Text)
		if ix.claims[i] != "" {
			claim = ix.claims[i]
		} else if endsInColon(ix.spans[i].Text) && (qe < ix.spans[i].End || codeEnd(doc.Text, ix.spans[i].End) == qe) {
			// The code is in the quote for the reader to see, or too long for it and left for the reader to open
			// (the quote ends before the colon: see illustrated); the claim is the sentence it illustrates.
			claim = strings.TrimRight(claim, ":： ")
			claim += fullStop(claim)
		} else if qe > ix.spans[i].End && endsInColon(ix.spans[i].Text) {
			claim = listClaim(ix.text[qs:qe])
		} else if qs < ix.spans[i].Start && (refersBack(ix.spans[i].Text) || !commentLineRE.MatchString(ix.text[qs:qe])) || qe > ix.spans[i].End && !endsInColon(ix.spans[i].Text) {
			// "This rule generalizes the previous rule …" says nothing without the sentence it points back to, and a
			// short sentence quoted with its neighbour for context ("For the hardware register, use R13.") is
			// stated with it: the report's sentence must make sense where it stands.
			claim = plainText(ix.text[qs:qe])
		}
		source := raw
		if isFile {
			first, last := ix.lines(doc.Text, qs, qe)
			source = fmt.Sprintf("%s#L%d-L%d", base, first, last)
		}
		a.sections.put(source, ix.text[qs:qe], ix.within[i], ix.lead[i])
		out = append(out, research.Evidence{
			SubQuestion: sq.ID,
			Claim:       claim,
			Quote:       ix.text[qs:qe],
			Source:      source,
			Title:       title,
			Confidence:  math.Round(confidence*1000) / 1000,
			Status:      research.StatusAccepted,
		})
	}
	return out, nil
}

// variant is one query variant as units — its words, and its Chinese phrases — each a list of index terms.
type variant [][]string

func (v variant) terms() int {
	n := 0
	for _, u := range v {
		n += len(u)
	}
	return n
}

// altMark joins the renderings of one translated word in a query ("propagate|spread") and opens the unit of
// alternatives queryVariant makes of them.
const altMark = bilingual.Alternatives

// isAlt reports a unit of alternatives.
func isAlt(unit []string) bool { return len(unit) > 1 && unit[0] == altMark }

// altUnit weighs a unit of alternatives: the IDF of its rarest alternative that the text uses (of any, times 0.3,
// when it uses none: a difference of wording), and whether the passage has one of them.
func altUnit(unit []string, used func(string) bool, idf func(string) float64, have map[string]bool) (float64, bool) {
	uw, inText, hit := 0.0, false, false
	for _, t := range unit[1:] {
		if used(t) {
			inText = true
			uw = math.Max(uw, idf(t))
		}
		hit = hit || have[t]
	}
	if !inText {
		for _, t := range unit[1:] {
			uw = math.Max(uw, idf(t))
		}
		uw *= 0.3
	}
	return uw, hit
}

// queryVariant splits a query into units at white space. A Latin word is one term; a Chinese phrase is many
// (characters and bigrams), and counting them one by one would let one long phrase outweigh the rest of the
// query, so the phrase is one unit.
//
// The words of the planner's facet wording ("What rules or examples illustrate …?", "… 限制 问题") say what kind of
// passage is wanted, not what it is about, and are left out (facetTerms); the words in its slots are the reader's
// and all count, so "LIMIT" is the subject of "What rules or examples illustrate LIMIT?". In the reader's own
// question a facet word written as a name (LIMIT, `except`) is the subject too; written as a common word ("what
// are the rules of …") it asks for a kind of passage.
func queryVariant(q string) variant {
	slots, templated := facetSlots(q)
	if templated {
		q = strings.Join(slots, " ")
	}
	var v variant
	fields := strings.Fields(q)
	for k, f := range fields {
		if k > 0 && lexical.Preposition(fields[k-1], f) {
			continue // "inheritance like object-oriented languages": a comparison, not a word of the topic
		}
		facetWord := func(t string) bool {
			return !templated && facetTerms[t] && !strings.Contains(f, "`") && !nameLike(lexical.TrimWord(f))
		}
		if strings.Contains(f, altMark) {
			// The renderings of one translated word ("propagate|spread"): one of them suffices.
			unit := []string{altMark}
			for _, alt := range strings.Split(f, altMark) {
				for _, t := range lexical.Tokenize(alt) {
					if !facetWord(t) && !slices.Contains(unit, t) {
						unit = append(unit, t)
					}
				}
			}
			if len(unit) > 1 {
				v = append(v, unit)
			}
			continue
		}
		var ts []string
		for _, t := range uniq(lexical.Tokenize(f)) {
			if !facetWord(t) {
				ts = append(ts, t)
			}
		}
		if len(ts) == 0 {
			continue
		}
		if hasCJK(f) {
			v = append(v, ts)
			continue
		}
		for _, t := range ts {
			v = append(v, []string{t})
		}
	}
	for _, s := range askedSymbols(q) {
		v = append(v, []string{s})
	}
	return v
}

// corpusUses reports whether the sources use a term of unit elsewhere as a word of a topic (vocabulary.specific);
// false when they cannot tell.
func (a *Analyst) corpusUses(unit []string) bool {
	for _, t := range unit {
		if a.vocab.specific(context.Background(), t) {
			return true
		}
	}
	return false
}

// coverage is how much of the best query variant passage i covers: each unit weighs its rarest term's IDF and
// counts the IDF-weighted share of its terms the passage contains. 1 when the passage mentions everything a
// variant asks for, lower as rarer units are missing. Taking the best variant lets a translated variant match an
// English document without the Chinese terms counting against it.
func (a *Analyst) coverage(ix *docIndex, variants []variant, syns synonymMap, i int) float64 {
	if len(ix.symbols[i]) > 0 {
		return a.coverageOf(ix, variants, syns, append(slices.Clip(ix.tokens[i]), ix.symbols[i]...))
	}
	return a.coverageOf(ix, variants, syns, ix.tokens[i])
}

// coverageOf is coverage for any set of terms of the document. A term the passage lacks counts at synonymShare
// when the passage has one of its synonyms (syns, nil: none). A term's IDF is the document's, which says little of
// the page's own subject (in every passage) or of a word the page never uses: where the sources can tell, a term
// keeps topicShare of its IDF over all their passages, and a term the page lacks weighs that IDF alone ("PostgreSQL"
// beside "window function" on the page about window functions). Both are scaled to the document's range.
func (a *Analyst) coverageOf(ix *docIndex, variants []variant, syns synonymMap, tokens []string) float64 {
	have := map[string]bool{}
	for _, t := range tokens {
		have[t] = true
	}
	n := float64(ix.bm25.Len())
	sources := a.vocab.idf(context.Background())
	idf := func(t string) float64 {
		df := ix.df(t)
		w := lexical.IDF(float64(df), n)
		if sources != nil {
			all := sources(t) / 2 * lexical.IDF(0, n)
			w = math.Max(w, topicShare*all)
			if df == 0 && all > 0 {
				return all
			}
		}
		return w
	}
	best := 0.0
	for _, v := range variants {
		var got, all float64
		var weights []float64
		for _, unit := range v {
			if isAlt(unit) {
				uw, hit := altUnit(unit, func(t string) bool { return ix.df(t) > 0 }, idf, have)
				all += uw
				weights = append(weights, uw)
				if hit {
					got += uw
				}
				continue
			}
			var uw, ugot, uall float64
			for _, t := range unit {
				w := idf(t)
				uw = math.Max(uw, w)
				uall += w
				if have[t] {
					ugot += w
				} else if slices.ContainsFunc(syns[t], func(s string) bool { return have[s] }) {
					ugot += synonymShare * w
				}
			}
			if uall == 0 {
				continue
			}
			// A unit the document never uses ("contract" in "the io.Reader contract") is a difference of
			// wording more than of relevance: it counts, but less — unless the sources use it elsewhere as the word of
			// a topic: then the document lacks what the question asks about ("sort" in a FAQ that mentions "stable
			// releases").
			absent := true
			for _, t := range unit {
				if ix.df(t) > 0 {
					absent = false
					break
				}
			}
			if absent && !a.corpusUses(unit) {
				uw *= 0.3
			}
			all += uw
			weights = append(weights, uw)
			got += uw * ugot / uall
		}
		// A question of many words — a situation told before the question — is answered by a sentence that has a
		// few of them: what it must cover is at most the weight of its saturateUnits heaviest units.
		if len(weights) > saturateUnits {
			slices.SortFunc(weights, func(a, b float64) int { return cmp.Compare(b, a) })
			all = 0
			for _, w := range weights[:saturateUnits] {
				all += w
			}
		}
		if all > 0 {
			best = math.Max(best, math.Min(1, got/all))
		}
	}
	return best
}

// topicShare is the least share of its weight over all the sources that a term keeps in one document's passages.
const topicShare = 0.3

// saturateUnits is how many of a question's units (the heaviest) a passage must cover to cover it whole.
const saturateUnits = 6

// latinUnits is a variant without its Chinese units, for a document with no Chinese in it: a Chinese word the
// dictionary left as written ("中" in "Rust 中的 trait", a term it lacks) can never occur there, so its absence says
// nothing of a passage's relevance, only of the document's language. A unit with a Latin term ("中的切片 slice")
// stays.
func latinUnits(v variant) variant {
	var out variant
	for _, unit := range v {
		if isAlt(unit) || slices.ContainsFunc(unit, func(t string) bool { return !hasCJK(t) }) {
			out = append(out, unit)
		}
	}
	return out
}

// quoteBounds returns the verbatim quote for passage i: the passage, preceded by its neighbour when it needs
// context, never reaching before lo nor across a paragraph break or heading.
func (a *Analyst) quoteBounds(ix *docIndex, i, lo int) (int, int) {
	sp := ix.spans[i]
	s, e := sp.Start, sp.End
	if f := ix.from[i]; f >= 0 && f >= lo && utf8.RuneCountInString(ix.text[f:e]) <= maxQuote {
		return trimQuote(ix.text, f, e)
	}
	// A table row's context is its header, which the claim spells out; the row above is another row.
	table := strings.Contains(sp.Text, "\t")
	short := utf8.RuneCountInString(sp.Text) < shortPassage && !table
	// A back reference may chain ("… rule. This rule generalizes … It allows …"): the quote reaches back, one
	// sentence at a time, while its first sentence still refers back. A short sentence takes its neighbour for
	// context only when the neighbour stands on its own.
	steps := 0
	if refersBack(sp.Text) && !table {
		steps = backSteps
	} else if short && i > 0 && !refersBack(ix.spans[i-1].Text) && !listItemRE.MatchString(ix.text[lineStart(ix.text, sp.Start):sp.End]) {
		// A list item's neighbour is a sibling item, not its context.
		steps = 1
	}
	for j := i; j > 0 && steps > 0; steps-- {
		cur, prev := ix.spans[j], ix.spans[j-1]
		gap := ix.text[prev.End:cur.Start]
		// A back reference may reach across one paragraph break ("… rule.\n\nThis rule generalizes …"), never
		// into a heading or a code block.
		sameParagraph := !strings.Contains(gap, "\n\n") || (refersBack(cur.Text) && strings.Count(gap, "\n") <= 2 && ix.usable[j-1])
		if prev.Start < lo || !sameParagraph || ix.view != nil && strings.Contains(gap, "\n") || strings.HasPrefix(prev.Text, "#") || !ix.usable[j-1] && startsLower(prev.Text) ||
			utf8.RuneCountInString(ix.text[prev.Start:e]) > maxQuote {
			break
		}
		s = prev.Start
		if !refersBack(prev.Text) {
			break
		}
		j--
	}
	// A sentence the next one explains ("Sorts are guaranteed to be stable. That means that … their original
	// order is preserved.") is quoted with it, within its paragraph: the explanation rarely repeats the words
	// asked about, so it would never be found on its own.
	// The explanation may go on ("It has the same effect … . Furthermore, it reclaims …"): up to backSteps
	// sentences of the paragraph, each referring back, are taken along.
	for j := i + 1; !endsInColon(sp.Text) && !table && j < len(ix.spans) && j <= i+backSteps && ix.view == nil; j++ {
		prev, next := ix.spans[j-1], ix.spans[j]
		if next.Start < prev.End || strings.Contains(ix.text[prev.End:next.Start], "\n") || !ix.usable[j] || !refersBack(next.Text) ||
			endsInColon(next.Text) || utf8.RuneCountInString(ix.text[s:next.End]) > maxQuote {
			break
		}
		e = next.End
	}
	// A question the text asks is quoted with its answer, the next sentence of its paragraph.
	if asks(ix.text[s:e]) && i+1 < len(ix.spans) && ix.view == nil {
		if next := ix.spans[i+1]; e <= next.Start && !strings.Contains(ix.text[e:next.Start], "\n") && ix.usable[i+1] &&
			!asks(next.Text) && utf8.RuneCountInString(ix.text[s:next.End]) <= maxQuote {
			e = next.End
		}
	}
	if endsInColon(sp.Text) {
		if l := listEnd(ix.text, s, e); l > e && ix.view == nil {
			e = l
		} else if c := codeEnd(ix.text, e); c > e && !announcesCount(sp.Text) && utf8.RuneCountInString(ix.text[s:c]) <= maxQuote {
			e = c
		} else if illustrated(ix.text, s, e) {
			// The code is too long to quote: the sentence it illustrates is quoted up to its colon, which promises
			// what the quote does not hold.
			e = len(strings.TrimRight(strings.TrimRight(ix.text[:e], " \t\n"), ":："))
		} else if i+1 < len(ix.spans) {
			next := ix.spans[i+1]
			if !strings.Contains(ix.text[e:next.Start], "\n") && !endsInColon(next.Text) && utf8.RuneCountInString(ix.text[s:next.End]) <= maxQuote {
				e = next.End
			}
		}
	}
	return trimQuote(ix.text, s, e)
}

// antecedent is the sentence a lead sentence refers back to, when its quote takes that sentence along ("You can
// take five actions in unsafe Rust … . Those superpowers include the ability to:" and the list): the lead and its
// list are about what the antecedent says, which they need not repeat, so they share its relevance (leadShare).
// It is -1 for any other passage: a plain "This …" sentence is no more relevant than its own words.
func (a *Analyst) antecedent(ix *docIndex, i, lo int) int {
	sp := ix.spans[i]
	if i == 0 || !refersBack(sp.Text) || !leadSentence(ix.text, sp) || listEnd(ix.text, sp.Start, sp.End) <= sp.End {
		return -1
	}
	if qs, _ := a.quoteBounds(ix, i, lo); qs > ix.spans[i-1].Start || !ix.usable[i-1] {
		return -1
	}
	return i - 1
}

// restated is the sentence before passage i in its paragraph when i opens with a definite noun phrase that
// sentence names ("The money type stores a currency amount with a fixed fractional precision. The fractional
// precision is determined by …"): a definite description that repeats its antecedent continues what was said of
// it, so the passage shares that sentence's relevance (leadShare) without needing it in its quote, as a pronoun
// would. -1 for any other passage. The phrase is the two words after "The"; one word may be a new subject, unless
// the sentence before has it with "the" too ("Once the callable returns, … The callable is called inside a
// try…except …"): the same definite description twice is the same thing.
func (ix *docIndex) restated(i int) int {
	if i == 0 || !ix.usable[i-1] {
		return -1
	}
	sp, prev := ix.spans[i], ix.spans[i-1]
	rest, ok := strings.CutPrefix(sp.Text, "The ")
	if !ok || strings.Contains(ix.text[prev.End:sp.Start], "\n") {
		return -1
	}
	words := strings.Fields(plainText(rest))
	if len(words) < 3 {
		return -1
	}
	before := strings.ToLower(plainText(prev.Text))
	if !lexical.Auxiliary(words[1]) && strings.Contains(before, strings.ToLower(words[0]+" "+words[1])) {
		return i - 1
	}
	noun := strings.ToLower(strings.TrimFunc(words[0], func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
	if noun != "" && noun == strings.ToLower(words[0]) && lexical.HasWord(before, "the "+noun) {
		return i - 1
	}
	return -1
}

// namesSectionSubject reports a sentence that opens its section with a demonstrative and a noun ("This command
// displays the execution plan …" right under "## Description" on the EXPLAIN page): with no sentence before it in
// the section, "this command" is the subject the page and its headings name, not something said before, so the
// sentence stands on its own. A pronoun or a connective ("It …", "However, …") still needs what it refers to, and
// so does "This is …", whose "this" may be anything, and a sentence that points back in so many words ("This rule
// generalizes the previous rule …": the rule is in the section before). The noun may be a name's modifier
// ("These CommonJS variables are not available in ES modules." under "No __filename or __dirname").
func namesSectionSubject(text string, sp lexical.Span) bool {
	if pointsBackRE.MatchString(sp.Text) {
		return false
	}
	if sp.Start != lineStart(text, sp.Start) {
		return false
	}
	// What may stand between the heading and the sentence is the section's record, no sentence: a label alone on
	// its line and the rows of a table ("History", then "v16.4.0	AsyncLocalStorage is now Stable." under
	// "### Class: `AsyncLocalStorage`" in Node's API docs), and a paragraph of one line that is no sentence.
	before := strings.TrimRight(text[:sp.Start], " \t\n")
	blankBelow := strings.Count(text[len(before):sp.Start], "\n") >= 2
	for before != "" {
		at := lineStart(before, len(before))
		line := before[at:]
		above := strings.TrimRight(before[:at], " \t\n")
		// A line wrapped in the middle of a sentence is not its own paragraph: both sides of a record are blank.
		blankAbove := strings.Count(before[len(above):at], "\n") >= 2
		alone := blankBelow && blankAbove
		blankBelow = blankAbove
		if atxHeadingRE.MatchString(line) {
			break
		}
		if strings.HasSuffix(line, "-->") {
			// A comment is the page's metadata (Node's "<!-- YAML … -->" history), no sentence said before.
			if open := strings.LastIndex(before, "<!--"); open >= 0 {
				above = strings.TrimRight(before[:open], " \t\n")
				blankBelow = strings.Count(before[len(above):open], "\n") >= 2
				before = above
				continue
			}
		}
		if strings.HasPrefix(line, "```") || !strings.Contains(line, "\t") && len(strings.Fields(line)) != 1 && !(alone && recordLine(line)) {
			return false
		}
		before = above
	}
	opening := strings.TrimLeft(sp.Text, "*_") // "**This module is pending deprecation.**"
	rest, ok := strings.CutPrefix(opening, "This ")
	if !ok {
		if rest, ok = strings.CutPrefix(opening, "These "); !ok {
			return false
		}
	}
	noun, _, _ := strings.Cut(rest, " ")
	return noun != "" && unicode.IsLetter(rune(noun[0])) && !lexical.Auxiliary(strings.ToLower(noun))
}

// recordLine reports a line of a section's record that is no sentence: a label and its value with no sentence end
// ("[Stability: 0](documentation.html#stability-index) - Deprecated", "**Source Code:** [lib/domain.js](…)").
// A list item is no record: it says something of the section, sentence or not.
func recordLine(line string) bool {
	if listItemRE.MatchString(line) {
		return false
	}
	body := strings.TrimRight(line, " *_)]\"'”’")
	r, _ := utf8.DecodeLastRuneInString(body)
	return r != utf8.RuneError && !strings.ContainsRune(".!?:;,。！？：；，", r)
}

// codeSubject reports a sentence whose subject is the code block after it, which is too long to be quoted with
// it: a demonstrative standing alone as the subject, after at most a short opener, in a sentence ending in a colon
// ("For example, this is not a good idea:", "This prints:", "These are equivalent:"). Without its code it says
// nothing. "This function returns:" names its subject.
func codeSubject(text string, sp lexical.Span) bool {
	if !endsInColon(sp.Text) || !codeSubjectRE.MatchString(sp.Text) {
		return false
	}
	last, n := codeBlock(text, sp.End)
	return n > 0 && (codeEnd(text, sp.End) == 0 || utf8.RuneCountInString(text[sp.Start:last]) > maxQuote)
}

var codeSubjectRE = regexp.MustCompile(`^(?:` + shortOpener + `)?(?:[Tt]his (?:[a-z]*[a-rt-z]s|is|was|will|would|can|could|may|might|should|must)|` +
	`[Tt]hese (?:are|were|will|would|can|could|may|might|should|must|do|have))\b`)

// pointsBackRE matches the words by which a sentence refers to what was said before it.
var pointsBackRE = regexp.MustCompile(`(?i)\b(previous|preceding|above|earlier|aforementioned|former|latter)\b`)

var backRefs = []string{"This ", "These ", "That ", "Those ", "It ", "Its ", "They ", "Such ", "However", "Otherwise",
	"Thus", "Therefore", "In that case", "In this case", "Similarly", "Likewise",
	// additive and consequential connectives, as a grammar lists them
	"Furthermore", "Moreover", "In addition", "Additionally", "Also,", "Hence", "Consequently", "As a result",
	"Nevertheless", "Nonetheless", "Instead",
	"这", "该", "此", "它", "因此", "所以", "但", "然而", "否则", "同样", "此外", "而且", "另外", "并且"}

// Facets of the planner's standard sub-questions, and the cue words that mark a passage answering one.
const (
	facetDefinition = "definition"
	facetExamples   = "examples"
	facetCaveats    = "caveats"
)

var facetCues = map[string][]string{
	facetDefinition: {" is ", " are ", " means ", " refers to ", " defined ", " specifies ", " describes ", "是", "指", "定义", "称为"},
	facetExamples:   {"for example", "e.g.", "such as", "for instance", " rule", " must ", "example", "例如", "比如", "规则", "必须", "示例"},
	facetCaveats: {" not ", " never ", " unless ", " except", " only ", "however", " cannot ", " undefined", " may ", "n't ",
		"不", "但", "除非", "只", "无法", "例外", "限制", "缺陷", "代价", "⚠", "❌"},
}

// facetOf recognises the planner's facet sub-questions by their fixed wording; other questions have no facet.
func facetOf(q string) string {
	for _, w := range wordings {
		for facet, pattern := range map[string]string{facetDefinition: w.definition, facetExamples: w.examples, facetCaveats: w.caveats} {
			pre, post, _ := strings.Cut(strings.NewReplacer("%[1]s", "%s", "%[2]s", "%s").Replace(pattern), "%s")
			if (pre != "" && strings.HasPrefix(q, pre)) || (pre == "" && post != "" && strings.HasSuffix(q, post)) {
				return facet
			}
		}
	}
	return ""
}

func hasCue(s string, cues []string) bool {
	s = " " + strings.ToLower(s) + " "
	for _, c := range cues {
		if strings.Contains(s, c) {
			return true
		}
	}
	return false
}

func refersBack(s string) bool {
	s = strings.TrimLeft(s, "-*> ")
	if selfRE.MatchString(s) || anticipatoryItRE.MatchString(s) {
		return false
	}
	if shellNounRE.MatchString(s) || anaphoricPhraseRE.MatchString(s) {
		return true
	}
	for _, p := range backRefs {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	// A short opener set off by a comma ("For example, this is not a good idea.", "In practice, they …") leaves
	// the subject pointing back as if it opened the sentence; before a colon it points ahead, at what follows
	// ("For example, this is not a good idea:").
	if m := openerRE.FindStringSubmatchIndex(s); m != nil && !endsInColon(s) {
		rest := s[m[2]:]
		return refersBack(strings.ToUpper(rest[:1]) + rest[1:])
	}
	return endsInDemonstrative(s)
}

// openerRE is a sentence opening with a short opener before a pronoun subject; the submatch is where the subject
// begins.
var openerRE = regexp.MustCompile(`^` + shortOpener + `((?:this|these|that|those|it|they) )`)

// shortOpener is one or two words set off by a comma at a sentence's start ("For example, ", "In practice, ").
const shortOpener = `[A-Z][a-z]*(?: [a-z]+)?, `

// endRefRE is a sentence that ends in a demonstrative pronoun as its object ("… an optional RETURNING clause that
// supports this.", "… there is no way to do that."): what it stands for is in the sentence before.
var endRefRE = regexp.MustCompile(`(?i)\s(this|that|these|those)[\s)"'”’]*[.!?]?[\s)"'”’]*$`)

// endsInDemonstrative reports a sentence whose last word is a demonstrative standing for what was said before it.
// A colon's "this:" points ahead, to what follows, and is no back reference.
func endsInDemonstrative(s string) bool {
	return !endsInColon(s) && endRefRE.MatchString(s)
}

// region maps a URL's #Lx-Ly anchor to byte offsets of text; without an anchor it is the whole text. base is the
// URL without its fragment; isFile reports a file:// URL, whose quotes are cited by line anchors.
func region(raw, text string) (lo, hi int, base string, isFile bool) {
	lo, hi, base = 0, len(text), raw
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	isFile = strings.EqualFold(u.Scheme, "file")
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		base = raw[:i]
	}
	m := anchorRE.FindStringSubmatch(u.Fragment)
	if m == nil {
		return
	}
	first, _ := strconv.Atoi(m[1])
	last := first
	if m[2] != "" {
		last, _ = strconv.Atoi(m[2])
	}
	line, off := 1, 0
	start, end := -1, len(text)
	for off <= len(text) {
		if line == first {
			start = off
		}
		nl := strings.IndexByte(text[off:], '\n')
		if nl < 0 {
			break
		}
		if line == last {
			end = off + nl
			break
		}
		off += nl + 1
		line++
	}
	if start < 0 || end < start {
		return // the anchor is outside the text: read all of it rather than nothing
	}
	return start, end, base, isFile
}

func (a *Analyst) index(doc *sources.Document) *docIndex {
	key := doc.Hash
	if key == "" {
		key = sources.HashText(doc.Text)
	}
	key += "\x00" + doc.ContentType // a code file is read through its comments
	a.mu.Lock()
	if ix, ok := a.cache[key]; ok {
		a.mu.Unlock()
		return ix
	}
	a.mu.Unlock()

	text := doc.Text
	var view *codeView
	if syn, ok := codeSyntax(doc); ok {
		view = buildCodeView(doc.Text, syn)
		text = view.text
	}
	ix := &docIndex{text: text, view: view, spans: lexical.Passages(text, maxPassage)}
	ix.tokens = make([][]string, len(ix.spans))
	ix.symbols = make([][]string, len(ix.spans))
	ix.own = make([][]string, len(ix.spans))
	ix.claims = make([]string, len(ix.spans))
	ix.from = make([]int, len(ix.spans))
	ix.head = make([][]string, len(ix.spans))
	ix.within = make([]string, len(ix.spans))
	var prevHeadText, curHeadText string
	ix.lead = make([]int, len(ix.spans))
	pos := 0
	ix.usable = make([]bool, len(ix.spans))
	heads := headings(text)
	if view != nil {
		heads = view.headings(heads)
	}
	ix.heads = heads
	// In a text with Markdown headings a word standing alone on its line is a label within its section ("History"
	// over an API's changelog, "Example", "Output"): a title line, no evidence, but no section of its own either —
	// taken for one, it would stand for the section's heading, the signature every sentence under it describes,
	// in all that follows. A caption of several words ("Listing 16-10: Sending multiple messages …", "Filename:
	// src/main.rs") names what follows it, as a heading does.
	markdown := slices.ContainsFunc(heads, func(h lexical.Span) bool { return strings.HasPrefix(h.Text, "#") })
	label := func(h lexical.Span) bool {
		return markdown && !strings.HasPrefix(h.Text, "#") && len(strings.Fields(plainText(h.Text))) == 1
	}
	var fenced, hidden [][2]int
	if view == nil {
		fenced = fencedRanges(text)
		hidden = htmlComments(text, fenced)
	}
	h := 0
	var headTokens, prevHead, curHead, curName, headSymbols []string
	ix.leadOf = make([]int, len(ix.spans))
	leadAt, followers, leadList := -1, 0, 0
	ordinal := false // the lead announces a count that paragraphs "The first …", "The second …" spell out
	var examples exampleContext
	// The document's title is the context of every passage, as its section heading is.
	titleTokens := lexical.Tokenize(doc.Title)
	for i, sp := range ix.spans {
		// A passage is about its section: the nearest heading above it counts among its terms, so "A send on a
		// channel is synchronized before …" under "### Channel communication" matches "channel communication".
		for h < len(heads) && heads[h].Start <= sp.Start {
			if label(heads[h]) {
				h++
				continue
			}
			// The heading and the one above it: a crude hierarchy that keeps "2.6 优化建议" over "选项一：…".
			prevHead = curHead
			curHead = lexical.Tokenize(plainText(heads[h].Text))
			curName = curHead
			if name := signatureName(heads[h].Text); name != "" {
				curName = lexical.Tokenize(name)
			}
			prevHeadText, curHeadText = curHeadText, plainText(heads[h].Text)
			headSymbols = lexical.Symbols(curHeadText)
			headTokens = append(append([]string(nil), prevHead...), curHead...)
			h++
			pos = 0
			leadAt, ordinal = -1, false // a lead sentence speaks for its own section only
		}
		ix.leadOf[i] = -1
		if ordinal && i > 0 && strings.Contains(text[ix.spans[i-1].End:sp.Start], "\n") && !ordinalRE.MatchString(plainText(sp.Text)) {
			leadAt, ordinal = -1, false // the sequence "The first rule … The second rule …" ended
		}
		if leadAt >= 0 && followers < maxFollowers && sp.Start-ix.spans[leadAt].End <= maxSection {
			ix.leadOf[i] = leadAt
		}
		ix.head[i] = curName
		ix.within[i] = strings.TrimSpace(prevHeadText + " " + curHeadText)
		ix.lead[i] = pos
		pos++
		plain := plainText(sp.Text)
		own := lexical.Tokenize(plain)
		ix.from[i] = -1
		// The name's heading is the nearest above that is no annotation ("* {string}" stands alone, as a heading).
		sig := h - 1
		for sig >= 0 && (annotationRE.MatchString(heads[sig].Text) || inRanges(hidden, heads[sig].Start)) {
			sig--
		}
		described := view == nil && sig >= 0 && describes(text, heads[sig], sp, hidden)
		ix.usable[i] = usable(sp.Text, plain, own, described) && !cutSpan(text, ix.spans, i) && !onHeadingLine(text, sp) && !brokenByCode(text, sp) &&
			!titleLine(heads, text, sp) && !codeSubject(text, sp)
		if described && ix.usable[i] && !lexical.HasVerb(plain) {
			// "The operating system-specific end-of-line marker." under "## `os.EOL`" says what os.EOL is: quoted
			// from its heading, it is stated of the name.
			ix.from[i] = heads[sig].Start
			ix.claims[i] = "`" + signatureName(heads[sig].Text) + "`: " + plain
		}
		all := append([]string(nil), own...)
		if view != nil {
			ix.usable[i] = view.usable(sp, plain, own) && !cutSpan(text, ix.spans, i)
			if claim := view.claim(sp); claim != "" {
				ix.claims[i] = claim
			}
			if ex := examples.of(view, text, sp, plain); ex != "" {
				all = append(all, lexical.Tokenize(ex)...)
				ix.within[i] = strings.TrimSpace(ix.within[i] + "\n" + ex)
			}
		} else if inRanges(fenced, sp.Start) {
			// A line of a code block in a document — a comment, a string — is code, not a finding on its own;
			// a lead sentence's quote takes the block along whole (codeEnd).
			ix.usable[i] = false
		} else if inRanges(hidden, sp.Start) || inRanges(hidden, sp.End-1) {
			// An HTML comment in Markdown ("<!-- YAML added: v0.7.8 -->" in Node's API sources) is never shown.
			ix.usable[i] = false
		} else if strings.Contains(sp.Text, "\t") {
			claim, isHeader := tableRowClaim(text, sp)
			ix.claims[i] = claim
			ix.usable[i] = ix.usable[i] && !isHeader
			if claim != "" {
				all = lexical.Tokenize(claim) // the row with its column headers
			}
		}
		ix.own[i] = own
		if !isHeading(text, sp) {
			all = append(all, headTokens...)
		}
		ix.tokens[i] = append(all, titleTokens...)
		ix.symbols[i] = lexical.Symbols(plain)
		if !isHeading(text, sp) {
			ix.symbols[i] = uniq(append(ix.symbols[i], headSymbols...))
		}
		inList := ix.leadOf[i] >= 0 && sp.Start < leadList
		if ix.leadOf[i] >= 0 && completesLead(ix.spans[ix.leadOf[i]].Text) && listItemRE.MatchString(text[lineStart(text, sp.Start):sp.End]) {
			// "- Give an error if unable to represent …" under "every implementation must:" is the end of the lead's
			// sentence, not a sentence: only the lead's quote with its list states it.
			ix.usable[i] = false
		}
		if inList {
			// A list the lead's own quote takes along (listEnd) is quoted with it, not item by item.
			ix.leadOf[i] = -1
		}
		if ix.leadOf[i] >= 0 && ix.usable[i] {
			followers++
			// After a line break: the lead is context for the item's terms, not part of its section's identity.
			ix.within[i] = ix.within[i] + "\n" + plainText(ix.spans[ix.leadOf[i]].Text)
		}
		if leadSentence(text, sp) {
			// A list the lead's own quote takes along (listEnd) is quoted with it, not item by item.
			leadAt, followers, leadList, ordinal = i, 0, listEnd(text, sp.Start, sp.End), false
		} else if ordinalLead(text, ix.spans, i) {
			leadAt, followers, leadList, ordinal = i, 0, 0, true
		}
	}
	ix.bm25 = lexical.NewBM25(ix.tokens)
	// BM25 keeps its document frequencies private; coverage needs them too.
	ix.dfs = map[string]int{}
	for i, ts := range ix.tokens {
		for _, t := range uniq(append(slices.Clip(ts), ix.symbols[i]...)) {
			ix.dfs[t]++
		}
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cache == nil || len(a.cache) >= cacheDocs {
		a.cache = map[string]*docIndex{}
	}
	a.cache[key] = ix
	return ix
}

// tableRowClaim spells out a tab-separated table row with its column headers — "触发时机：DeepAgent：上下文达 85%；
// Claude Code：上下文达 95-98%" — since a bare row means nothing without them. The header is the first row of the
// block of tab-separated lines the row belongs to; isHeader reports the row is that header.
func tableRowClaim(text string, sp lexical.Span) (claim string, isHeader bool) {
	lineStart := strings.LastIndexByte(text[:sp.Start], '\n') + 1
	head := lineStart
	for head > 0 {
		prevStart := strings.LastIndexByte(text[:head-1], '\n') + 1
		if !strings.Contains(text[prevStart:head-1], "\t") {
			break
		}
		head = prevStart
	}
	if head == lineStart {
		return "", true
	}
	headerLine := text[head : head+strings.IndexByte(text[head:], '\n')]
	header := strings.Split(headerLine, "\t")
	cells := strings.Split(sp.Text, "\t")
	zh := lexical.Language(sp.Text) == "zh"
	// No sentence end (；) inside: the claim must stay one sentence for its citation.
	colon, sep := ": ", "; "
	if zh {
		colon, sep = "：", "，"
	}
	var parts []string
	for k := 1; k < len(cells); k++ {
		c := plainText(cells[k])
		if c == "" {
			continue
		}
		if k < len(header) && plainText(header[k]) != "" {
			c = plainText(header[k]) + colon + c
		}
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return "", false
	}
	return plainText(cells[0]) + colon + strings.Join(parts, sep), false
}

// headings returns the section headings of a text: Markdown "#" lines, and short lines standing alone between
// blank lines without a sentence end (the headings of plain-text documents). A "#" line is a heading only as
// CommonMark writes one, one to six "#" and then a space or the line's end: "#![allow(unused)]" atop a Rust listing
// is code, and taken for a heading it cut the section "… the `?` Operator" short at its first listing.
func headings(text string) []lexical.Span {
	var out []lexical.Span
	off := 0
	lines := strings.SplitAfter(text, "\n")
	for k, l := range lines {
		sp := lexical.Span{Start: off, End: off + len(strings.TrimRight(l, "\r\n")), Text: strings.TrimSpace(l)}
		off += len(l)
		t := sp.Text
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "#") {
			if atxHeadingRE.MatchString(t) {
				out = append(out, sp)
			}
			continue
		}
		blankBefore := k == 0 || strings.TrimSpace(lines[k-1]) == ""
		blankAfter := k+1 >= len(lines) || strings.TrimSpace(lines[k+1]) == ""
		last, _ := utf8.DecodeLastRuneInString(t)
		if blankBefore && blankAfter && utf8.RuneCountInString(t) <= 40 && !strings.ContainsRune(t, '\t') &&
			!strings.ContainsRune(".。!！?？:：;；,，", last) {
			out = append(out, sp)
		}
	}
	return out
}

// atxHeadingRE is a Markdown heading line: one to six "#", then a space or the end of the line.
var atxHeadingRE = regexp.MustCompile(`^#{1,6}(?:[ \t]|$)`)

func isHeading(text string, sp lexical.Span) bool {
	return atxHeadingRE.MatchString(sp.Text)
}

// headingMatch is the share of a heading's terms that the query asks for: 1/2 for "type Builder" and a query
// about strings.Builder, 1/3 for "func (Builder) Cap", 1 for "setInterval(callback[, delay])" and a query about
// setInterval (a signature heading's terms are its name's; see signatureName).
func headingMatch(head, query []string) float64 {
	if len(head) == 0 {
		return 0
	}
	n := 0
	for _, t := range uniq(head) {
		for _, q := range query {
			if t == q {
				n++
				break
			}
		}
	}
	return float64(n) / float64(len(uniq(head)))
}

func (ix *docIndex) df(term string) int { return ix.dfs[term] }

// signatureRE is a heading that is a call signature — a name, dotted or not, and its parameter list right after
// it ("`setInterval(callback[, delay[, ...args]])`", "fs.readFile(path[, options], callback)") — or a name alone
// as code ("`os.EOL`").
var signatureRE = regexp.MustCompile("^[#\\s*]*(?:`?(?:new )?(" + apiName + ")\\(|`(" + apiName + ")`\\s*$)")

// apiName is a name of an API, dotted or not.
const apiName = `[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*`

// signatureName is the name a signature heading documents ("setInterval" of "#### `setInterval(callback[,
// delay])`", "os.EOL" of "## `os.EOL`"): a signature's parameters are placeholders the section uses, not what it
// is about. "" for any other heading.
func signatureName(heading string) string {
	m := signatureRE.FindStringSubmatch(heading)
	if m == nil {
		return ""
	}
	return m[1] + m[2]
}

// describes reports a passage that describes the name its signature heading documents, as API references put it
// ("## `os.EOL`", then "The operating system-specific end-of-line marker."): a paragraph of one sentence of its
// own, starting in upper case, with nothing between the heading and it but blank lines, HTML comments (Node's
// "<!-- YAML added: v0.7.8 -->") and annotation lines ("* {string}", "Added in: v0.7.8").
func describes(text string, head, sp lexical.Span, hidden [][2]int) bool {
	if signatureName(head.Text) == "" || sp.Start < head.End || sp.Start-head.End > maxDescriptionGap || sp.Start != lineStart(text, sp.Start) {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(sp.Text); !unicode.IsUpper(r) {
		return false
	}
	if rest := text[sp.End:]; strings.TrimSpace(rest[:lineEnd(rest, 0)]) != "" || !strings.HasPrefix(rest, "\n\n") && strings.TrimSpace(rest) != "" {
		return false
	}
	gap := []byte(text[head.End:sp.Start])
	for _, r := range hidden {
		for k := max(r[0], head.End); k < min(r[1], sp.Start); k++ {
			gap[k-head.End] = ' '
		}
	}
	for _, line := range strings.Split(string(gap), "\n") {
		if strings.TrimSpace(line) != "" && !annotationRE.MatchString(line) {
			return false
		}
	}
	return true
}

// maxDescriptionGap bounds, in bytes, what may stand between a signature heading and the description under it.
const maxDescriptionGap = 400

// annotationRE is a line of an API reference that annotates a name rather than describing it: a list item that
// gives its type and nothing else ("* {string}", "* Returns: {boolean|undefined}"), or a label and a version or
// level ("Added in: v0.7.8", "> Stability: 2 - Stable").
var annotationRE = regexp.MustCompile(`^\s*(?:[-*+]\s+(?:[A-Za-z]+:\s*)?\{[^{}\n]+\}\s*$|>?\s*[A-Z][A-Za-z ]{1,30}:\s*v?\d)`)

// headingLevel is the level of a Markdown heading line, its count of leading "#": 0 for a heading marked otherwise.
func headingLevel(heading string) int { return len(heading) - len(strings.TrimLeft(heading, "#")) }

// headingCodeRE is a name in code in a heading, its type parameters aside: "`Weak<T>`" → Weak.
var headingCodeRE = regexp.MustCompile("`([\\p{L}_][\\p{L}\\p{N}_.:]*)(?:<[^`>]*>)?`")

// beyond is a part of a document the analyst reads beyond the search's region: the passages within [lo, hi), whose
// quotes may begin no earlier than floor.
type beyond struct{ lo, hi, floor int }

// holds reports a passage within the part.
func (b beyond) holds(sp lexical.Span) bool { return sp.Start >= b.lo && sp.End <= b.hi }

// namedSections are the byte ranges of the sections whose signature heading documents one of the question's names
// (nameTerms), or whose heading writes one in code, or names one of its symbols (askedSymbols): the reference
// section of setInterval() wherever on the page the search found the question's words, "Turning an `Rc<T>` into a
// `Weak<T>`" for Weak<T>, and "A Shortcut for Propagating Errors: the `?` Operator" for the ? operator, which no
// search can find by its symbol.
func (ix *docIndex) namedSections(names, symbols []string) [][2]int {
	if len(names) == 0 && len(symbols) == 0 || ix.view != nil {
		return nil
	}
	named := func(code string) bool {
		ts := lexical.Tokenize(code)
		return len(ts) > 0 && slices.Contains(names, ts[len(ts)-1])
	}
	inCode := func(m []string) bool { return named(m[1]) }
	asked := func(s string) bool { return slices.Contains(symbols, s) }
	var out [][2]int
	for _, h := range ix.heads {
		if !named(signatureName(h.Text)) && !slices.ContainsFunc(headingCodeRE.FindAllStringSubmatch(h.Text, -1), inCode) &&
			!slices.ContainsFunc(lexical.Symbols(plainText(h.Text)), asked) {
			continue
		}
		// The section runs to the next heading of its level or above: "History" and other lines standing alone
		// under it are its parts.
		level := headingLevel(h.Text)
		hi := len(ix.text)
		for _, g := range ix.heads {
			if l := headingLevel(g.Text); g.Start > h.Start && l > 0 && l <= level {
				hi = g.Start
				break
			}
		}
		out = append(out, [2]int{h.Start, min(hi, h.Start+maxSection)})
	}
	return out
}

// parentOpening is the byte range of the text between the heading of the section that holds the subsection at lo
// and the heading after it — the section's opening, before its first subsection — when the section's heading
// shares a term with query and the opening names what the subsection's heading names beyond the section's (it
// introduces it: "*urlopen* raises `URLError` …" above "### URLError"); -1, -1 when lo stands in no subsection,
// the opening is empty, longer than maxSection or does not introduce the subsection, or the heading names nothing
// asked.
func (ix *docIndex) parentOpening(lo int, query []string) (int, int) {
	if ix.view != nil {
		return -1, -1
	}
	k := -1 // the heading of the subsection at lo
	for i, h := range ix.heads {
		if h.Start <= lo {
			k = i
		}
	}
	if k < 1 {
		return -1, -1
	}
	level := headingLevel(ix.heads[k].Text)
	for j := k - 1; j >= 0; j-- {
		l := headingLevel(ix.heads[j].Text)
		if l <= 0 || l >= level {
			continue
		}
		start, end := ix.heads[j].End, ix.heads[j+1].Start
		parent := lexical.Tokenize(plainText(ix.heads[j].Text)) // as the index reads a heading's terms
		if end <= start || end-start > maxSection || strings.TrimSpace(ix.text[start:end]) == "" || headingMatch(parent, query) == 0 {
			return -1, -1
		}
		// The opening introduces the subsection: it names what the subsection's heading names beyond the section's
		// ("URLError" under "Handling Exceptions"; not "statements" of "Select statements" under "Statements").
		opening := lexical.Tokenize(ix.text[start:end])
		if !slices.ContainsFunc(lexical.Tokenize(plainText(ix.heads[k].Text)), func(t string) bool {
			return !slices.Contains(parent, t) && slices.Contains(opening, t)
		}) {
			return -1, -1
		}
		return start, end
	}
	return -1, -1
}

// section widens the byte range [lo, hi) of a search hit to the sections it lies in — from the heading above lo
// to the next heading after hi — when they are at most maxSection bytes together. Otherwise each end is widened on
// its own to the boundary of the section it falls in, when that section is at most maxSection bytes: a hit that
// ends just inside "type Map" reads the rest of it. A search engine's chunk is a cut by size, a section the
// author's unit: reading it whole finds the rule stated one paragraph before or after the hit.
func (ix *docIndex) section(lo, hi int) (int, int) {
	s, e := 0, len(ix.text)
	loNext, hiPrev := len(ix.text), 0 // the first heading after lo, the last heading before hi
	for _, h := range ix.heads {
		if h.Start <= lo {
			s = h.Start
		}
		if h.Start > lo && h.Start < loNext {
			loNext = h.Start
		}
		if h.Start < hi {
			hiPrev = max(hiPrev, h.Start)
		}
		if h.Start >= hi && e == len(ix.text) {
			e = h.Start
		}
	}
	if e-s <= maxSection {
		return s, e
	}
	newLo, newHi := lo, hi
	if loNext-s <= maxSection {
		newLo = s
	}
	if hiPrev > lo && e-hiPrev <= maxSection {
		newHi = e
	}
	// In a section too long to read whole, the whole paragraphs around the hit are read, about maxSection in all,
	// half before and half after it: a chunk of three lines cut from a long section ("Other types of constraints
	// are not inherited" one paragraph above the hit) is read with its neighbours.
	if spare := maxSection - (newHi - newLo); spare > 0 {
		if from := max(s, newLo-spare/2); from < newLo {
			// From the start of the paragraph the half reaches into.
			if p := strings.LastIndex(ix.text[s:from], "\n\n"); p >= 0 {
				newLo = s + p + 2
			} else {
				newLo = s
			}
		}
		if to := min(e, newHi+spare/2); to > newHi {
			if p := strings.Index(ix.text[to:e], "\n\n"); p >= 0 {
				newHi = to + p
			} else {
				newHi = e
			}
		}
	}
	return newLo, newHi
}

// fullStop is the full stop of a claim's script: "。" for Chinese (or Japanese, Korean) text, "." otherwise.
func fullStop(claim string) string {
	if hasCJK(claim) {
		return "。"
	}
	return "."
}

// titleNamed reports whether a document's title is made of the question's terms: every word of its lead part
// (numbering aside; see titleLead) is one of terms, as "23.6. Tablespaces" is for a question about tablespaces, and
// "Cluster | Node.js v20.20.2 Documentation" for one about Node.js's cluster module — or, for a title of at most
// shortTitle words, half of them ("The Slice Type" for what a slice is).
func titleNamed(title string, terms []string) bool {
	words := titleLeadWords(title)
	n, in := len(words), 0
	for _, w := range words {
		if slices.Contains(terms, w) {
			in++
		}
	}
	if n <= shortTitle {
		return in > 0 && 2*in >= n
	}
	return n > 0 && in == n
}

// shortTitle is the most words a title may have and still be named by half of them: a short title's other word
// is often the kind of thing it names ("The Slice Type", "Advanced Traits"), and the page still opens with what
// that thing is.
const shortTitle = 3

// sectionLead is how many passages open a section: a section states its essentials first, so the analyst favours
// them in the section whose heading is the subject, and the report ranks them before the section's later ones.
const sectionLead = 5

// titleLeadWords are the index terms of a title's lead (titleLead), section numbering ("23.6.") left out.
func titleLeadWords(title string) []string {
	var out []string
	for _, t := range lexical.Tokenize(titleLead(title)) {
		if strings.IndexFunc(t, unicode.IsLetter) >= 0 {
			out = append(out, t)
		}
	}
	return out
}

// titleLead is what a title names before the site's name or a subtitle: "The Slice Type" of "The Slice Type - The
// Rust Programming Language", "Traits" of "Traits: Defining Shared Behavior". A part after the colon that repeats
// the word before it names one of a kind, and is the lead: "ECMAScript modules" of "Modules: ECMAScript modules".
func titleLead(title string) string {
	for _, sep := range []string{" - ", " | ", " — ", " – "} {
		title, _, _ = strings.Cut(title, sep)
	}
	kind, member, ok := strings.Cut(title, ": ")
	if !ok {
		return title
	}
	words := lexical.Tokenize(kind)
	if len(words) > 0 && slices.Contains(lexical.Tokenize(member), words[len(words)-1]) {
		return member
	}
	return kind
}

// firstParagraph is the byte range of the document's first paragraph of prose: from its first usable passage that
// is not a heading nor a line of the page's record (a reference page's purpose line "pg_dump — extract a PostgreSQL
// database …", its synopsis, a stability banner, a source link: lines that are no sentence, see recordLine; a row
// of a history table) to the blank line after it. -1, -1 when it has none.
func (ix *docIndex) firstParagraph() (int, int) {
	for i, sp := range ix.spans {
		if !ix.usable[i] || isHeading(ix.text, sp) || strings.Contains(sp.Text, "\t") || recordLine(sp.Text) {
			continue
		}
		end := len(ix.text)
		if k := strings.Index(ix.text[sp.Start:], "\n\n"); k >= 0 {
			end = sp.Start + k
		}
		return sp.Start, end
	}
	return -1, -1
}

// redundancy is the similarity MMR penalises: only near-duplicates (the same sentence quoted from two places, a
// sentence repeated with a word changed). Parallel rules share their boilerplate ("… is synchronized before the
// completion of …") and are exactly what a report should list together, so word overlap below the
// near-duplicate level costs nothing; order-aware shingles keep "send … receive" apart from "receive … send".
func redundancy(a, b []string) float64 {
	const nearDup = 0.5
	s := lexical.ShingleJaccard(a, b)
	if s < nearDup {
		return 0
	}
	return (s - nearDup) / (1 - nearDup)
}

// emphasisOpenRE is a passage that opens, after any list or quote marks, with a word in Markdown emphasis.
var emphasisOpenRE = regexp.MustCompile(`^(?:[-*>]\s+)*(?:\*[^*\s][^*]*\*|_[^_\s][^_]*_)\s`)

// usable reports whether a passage can stand as evidence: prose, not a heading, a code line or a table rule.
func usable(raw, plain string, tokens []string, described bool) bool {
	t := strings.TrimSpace(raw)
	if strings.HasPrefix(t, "#") || strings.HasPrefix(t, "```") || len(tokens) < 3 {
		return false
	}
	// A passage starting in lower case is the tail of a sentence broken by a code block or a figure — unless it
	// starts with a name in code ("`deepagents` 预设 …") or in emphasis ("*urlopen* raises `URLError` …", as
	// documentation sets a function's name in italics) or written as a name is ("pg_dump does not block …"), or
	// is Chinese, which has no case.
	first, _, _ := strings.Cut(plain, " ")
	if r, _ := utf8.DecodeRuneInString(plain); unicode.IsLower(r) && !strings.HasPrefix(strings.TrimLeft(t, "-*> "), "`") &&
		!emphasisOpenRE.MatchString(t) && !hasCJK(plain) && !lowerNameRE.MatchString(first) {
		return false
	}
	// A Chinese character carries about as much as a short word: "选项一：降低驱逐阈值" is a statement.
	size := 0
	for _, r := range plain {
		if lexical.IsCJK(r) {
			size += 2
		} else {
			size++
		}
	}
	if size < minPassage-4 {
		return false
	}
	letters, total := 0, 0
	for _, r := range plain {
		if unicode.IsSpace(r) {
			continue
		}
		total++
		if unicode.IsLetter(r) {
			letters++
		}
	}
	// Code and tables are mostly symbols and digits.
	if total == 0 || float64(letters)/float64(total) < 0.5 {
		return false
	}
	// The marks of a code line count outside code spans: a sentence naming `{expression}` or `a | b` is prose.
	prose := lexical.OutsideCode(t, "code")
	if strings.Count(prose, "|") >= 3 || (strings.Contains(prose, "{") && strings.Contains(prose, "}")) ||
		strings.Contains(prose, ":=") || strings.HasSuffix(prose, ";") || strings.HasPrefix(t, "//") || isDiagram(t) {
		return false
	}
	// A caption labels the listing or figure beside it; a fragment without a verb ("Rust logo Rust 1.63.0", a
	// term on its own, "This program (as above, but with …)": the verbs of an aside are not the sentence's)
	// states nothing. A table row is spelled out with its headers instead, and a name's description (describes)
	// with the name.
	if lexical.IsCaption(plain) || !described && !strings.Contains(raw, "\t") && !hasCJK(plain) && !lexical.HasVerb(lexical.WithoutAsides(plain)) {
		return false
	}
	return true
}

// lowerNameRE is a name of code written in lower case as a sentence's first word: snake_case, a dotted path or
// camelCase ("pg_dump", "os.path", "setTimeout"), not a version ("v12.3.0") nor an abbreviation ("e.g.").
var lowerNameRE = regexp.MustCompile(`^(?:[a-z][a-z0-9]*(?:[_.][A-Za-z][A-Za-z0-9]*)+|[a-z]+[A-Z][A-Za-z0-9]*)[,;:]?$`)

// fencedRanges returns the byte ranges of text inside fenced code blocks (between ``` or ~~~ lines).
func fencedRanges(text string) [][2]int {
	var out [][2]int
	open := -1
	for pos := 0; pos < len(text); {
		end := lineEnd(text, pos)
		if t := strings.TrimSpace(text[pos:end]); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			if open < 0 {
				open = end
			} else {
				out = append(out, [2]int{open, pos})
				open = -1
			}
		}
		pos = end + 1
	}
	if open >= 0 {
		out = append(out, [2]int{open, len(text)})
	}
	return out
}

// htmlComments returns the byte ranges of the HTML comments of a Markdown text ("<!--" to "-->" included), which
// a rendered page never shows: as CommonMark reads them, a comment opens a line (after at most three spaces) and
// runs to the line holding "-->", or to the end when none does. A "<!--" inside a sentence or in a fenced code
// block (fenced) is what the text talks about, not a comment.
func htmlComments(text string, fenced [][2]int) [][2]int {
	var out [][2]int
	for pos := 0; pos < len(text); {
		end := lineEnd(text, pos)
		line := text[pos:end]
		if t := strings.TrimLeft(line, " "); len(line)-len(t) <= 3 && strings.HasPrefix(t, "<!--") && !inRanges(fenced, pos) {
			start := pos + len(line) - len(t)
			if j := strings.Index(text[start+4:], "-->"); j >= 0 {
				stop := start + 4 + j + 3
				out = append(out, [2]int{start, stop})
				pos = stop
				continue
			}
			return append(out, [2]int{start, len(text)})
		}
		pos = end + 1
	}
	return out
}

// inRanges reports whether offset i lies in one of the ranges.
func inRanges(rs [][2]int, i int) bool {
	for _, r := range rs {
		if i >= r[0] && i < r[1] {
			return true
		}
	}
	return false
}

// isDiagram reports a line drawn rather than written: two or more arrows ("parent -> cancelChild parent ->
// valueChild", "a => b => c") lay out a tree or a flow, and quoted as a sentence it reads as a fragment. One arrow
// stays usable ("replacing c <- 0 with close(c)", "returns a -> b mapping").
func isDiagram(t string) bool {
	return strings.Count(t, "->")+strings.Count(t, "=>")+strings.Count(t, "→") >= 2
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	out := xs[:0:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// sortTogether sorts idx ascending and keeps vals aligned with it.
func sortTogether(idx []int, vals []float64) {
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && idx[j] < idx[j-1]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
			vals[j], vals[j-1] = vals[j-1], vals[j]
		}
	}
}

func endsInColon(s string) bool {
	t := strings.TrimSpace(s)
	return strings.HasSuffix(t, ":") || strings.HasSuffix(t, "：")
}

// asks reports a sentence that asks rather than states ("So how do you decide when you should call panic! and when
// you should return Result?"): a text's question is answered by what follows it.
func asks(s string) bool {
	t := strings.TrimRight(strings.TrimSpace(s), `"'”’)）*_`)
	return strings.HasSuffix(t, "?") || strings.HasSuffix(t, "？")
}

func startsLower(s string) bool {
	r, _ := utf8.DecodeRuneInString(plainText(s))
	return unicode.IsLower(r)
}

// commentLineRE is a line of a source-code comment: its sentences are stated one by one.
var commentLineRE = regexp.MustCompile(`(?m)^\s*//`)

var listItemRE = regexp.MustCompile(`^\s*(?:[-*+•]|\d+[.)])\s+\S`)

// Lead-sentence bounds: the paragraphs and list items after a sentence that ends its paragraph with a colon
// ("Programs that use Contexts should follow these rules …:") are what it announces; up to maxFollowers of them,
// within its section, take leadShare of its relevance and coverage.
const (
	maxFollowers = 8
	leadShare    = 0.9
)

// leadSentence is the lead-sentence heuristic: a passage that ends its paragraph with a colon and is followed by
// prose or a list (not code) introduces what follows, so what follows is about what it says even when it does not
// repeat its words ("Do not store Contexts inside a struct type" under "… should follow these rules …:").
func leadSentence(text string, sp lexical.Span) bool {
	if !endsInColon(sp.Text) || isHeading(text, sp) {
		return false
	}
	rest := text[sp.End:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 || strings.TrimSpace(rest[:nl]) != "" {
		return false // the paragraph goes on
	}
	for _, l := range strings.Split(rest[nl+1:], "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		return !strings.HasPrefix(l, "\t") && !strings.HasPrefix(l, "    ") && !strings.HasPrefix(l, "```") && !strings.HasPrefix(l, "#")
	}
	return false
}

// ordinalRE opens a paragraph that is one of a counted sequence: "The first rule is that …", "Second, …".
var ordinalRE = regexp.MustCompile(`(?i)^(?:the )?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|final)\b`)

// ordinalLead is the counted-sequence heuristic: a sentence that ends its paragraph announcing a number of things
// ("The compiler uses three rules to figure out ….") followed by a paragraph opening with "The first …" is the
// lead of the paragraphs that spell them out one by one, as a colon's list is; they rarely repeat its words.
func ordinalLead(text string, spans []lexical.Span, i int) bool {
	sp := spans[i]
	if i+1 >= len(spans) || isHeading(text, sp) || endsInColon(sp.Text) || !announcesCount(plainText(sp.Text)) {
		return false
	}
	// The announcing sentence may be followed by others of its paragraph; the sequence starts at the next one.
	for j := i + 1; j < len(spans) && j <= i+3; j++ {
		gap := text[spans[j-1].End:spans[j].Start]
		if strings.Contains(gap, "\n") {
			return !strings.HasPrefix(strings.TrimSpace(spans[j].Text), "#") && ordinalRE.MatchString(plainText(spans[j].Text))
		}
	}
	return false
}

// withFollowers extends a region's end hi over the passages of the leads inside [lo, hi) (see leadOf): a search hit
// on "… uses three rules …" or on "… these rules:" is read with what the lead announces, even past its section's
// reading bound.
func (ix *docIndex) withFollowers(lo, hi int) int {
	for j, sp := range ix.spans {
		if sp.End <= hi {
			continue
		}
		l := ix.leadOf[j]
		if l < 0 || ix.spans[l].Start < lo || ix.spans[l].Start >= hi {
			break
		}
		hi = sp.End
	}
	return hi
}

// completesLead is the continuation heuristic: a lead whose last word before the colon is a modal, an auxiliary,
// a preposition or an article ("every implementation must:", "… is one of:") is a sentence its list items
// finish, so an item alone ("Give an error if …") is no sentence. A lead ending in a noun ("… these rules:",
// "… for all architectures:") is complete, and so are items that are sentences of their own.
func completesLead(lead string) bool {
	t := strings.TrimRight(strings.TrimSpace(plainText(lead)), ":：")
	f := strings.Fields(t)
	if len(f) == 0 {
		return false
	}
	return continuationWords[strings.ToLower(f[len(f)-1])]
}

var continuationWords = toSet(`must should shall can could may might will would is are be include includes including
	to of for with by as from in on into the a an and or either than`)

// lineEnd is the offset of the end of the line holding offset i: its newline, or the end of text.
func lineEnd(text string, i int) int {
	if k := strings.IndexByte(text[i:], '\n'); k >= 0 {
		return i + k
	}
	return len(text)
}

// lineStart is the offset of the start of the line holding offset i.
func lineStart(text string, i int) int {
	return strings.LastIndexByte(text[:i], '\n') + 1
}

// maxCodeLines bounds the code block a colon's quote takes along.
const maxCodeLines = 6

// illustrated reports a sentence quoted as text[qs:qe] that ends in a colon before a code block and states its
// point before the colon ("To do floor division and get an integer result you can use the `//` operator; to
// calculate the remainder you can use `%`:" and the session that shows it): the code illustrates it, and the
// sentence stands without it when the block is too long to quote. A sentence that points ahead to the code ("It
// looks like this:", "For example:", "the following:") states nothing without it, nor does one without a verb.
func illustrated(text string, qs, qe int) bool {
	if _, lines := codeBlock(text, qe); lines == 0 {
		return false
	}
	sentence := strings.TrimRight(strings.TrimSpace(text[qs:qe]), ":：")
	if hasCJK(sentence) || announcesCount(sentence) || !lexical.HasVerb(plainText(sentence)) ||
		len(strings.Fields(sentence)) < minIllustratedWords || conjunctionOpenRE.MatchString(sentence) ||
		purposeOnly(plainText(sentence)) {
		return false
	}
	if strings.HasSuffix(sentence, "`") {
		return true // it ends on a name in code: "… you can use `%`"
	}
	words := strings.Fields(plainText(sentence)) // not empty: HasVerb found three words or more in it
	last := strings.ToLower(strings.TrimFunc(words[len(words)-1], func(r rune) bool { return !unicode.IsLetter(r) }))
	// A function word ("this", "is", "with", "as") or a word that points ahead ends a sentence whose object is
	// the code.
	return len(lexical.Tokenize(last)) > 0 && !pointingWordRE.MatchString(last)
}

// purposeOnly reports a sentence that is nothing but an infinitive of purpose ("To establish a savepoint and later
// undo the effects of all commands executed after it was established", "To use a single savepoint name"): it says
// what the code after it does and has no clause of its own, which a statement adds with a subject and a modal ("To
// do floor division … you can use the `//` operator") or after a comma ("To list them, run …").
func purposeOnly(s string) bool {
	return purposeOpenRE.MatchString(s) && !mainClauseRE.MatchString(s) && !strings.Contains(s, ", ")
}

var (
	purposeOpenRE = regexp.MustCompile(`^To [a-z]+\b`)
	// mainClauseRE: a personal subject or a modal verb, which a purpose clause leading into one has.
	mainClauseRE = regexp.MustCompile(`\b(?:you|we|one|can|could|may|might|must|shall|should|will|would)\b`)
)

// A sentence the code illustrates states its point in a clause of its own: at least minIllustratedWords words, and
// not a coordinated piece of the sentence before it ("Or, equivalently using `async function`s:").
const minIllustratedWords = 6

var conjunctionOpenRE = regexp.MustCompile(`^(?:Or|And|But|Nor|So)\b`)

// pointingWordRE: words that end a sentence pointing ahead to what follows it.
var pointingWordRE = regexp.MustCompile(`^(?:example|examples|instance|follows|following|below|shown|thus|output|like|syntax|usage|form)$`)

// codeEnd is the colon-code heuristic: when the text after end (a sentence ending in a colon) is, after at most
// one blank line, a short indented or fenced code block ("The Context should be the first parameter, typically
// named ctx:" and the signature that shows it), it returns the end of the block; 0 when no code follows or the
// block has more than maxCodeLines lines.
func codeEnd(text string, end int) int {
	last, n := codeBlock(text, end)
	if n > maxCodeLines+1 {
		return 0
	}
	return last
}

// codeBlock finds the indented or fenced code block that follows end after at most one blank line: it returns
// the end of the block (its trailing blank space left out) and its lines (a fenced block's opening fence
// included), or 0, 0 when no block follows.
func codeBlock(text string, end int) (int, int) {
	rest := text[end:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 || strings.TrimSpace(rest[:nl]) != "" {
		return 0, 0
	}
	off := end + nl + 1
	ls := strings.SplitAfter(text[off:], "\n")
	k := 0
	if k < len(ls) && strings.TrimSpace(ls[k]) == "" {
		off += len(ls[k])
		k++
	}
	fenced := k < len(ls) && strings.HasPrefix(ls[k], "```")
	n, last := 0, 0
	for ; k < len(ls); k++ {
		l := ls[k]
		if fenced {
			off += len(l)
			if n > 0 && strings.HasPrefix(l, "```") {
				last = off
				break
			}
			n++
			continue
		}
		if !strings.HasPrefix(l, "\t") && !strings.HasPrefix(l, "    ") {
			break
		}
		n++
		off += len(l)
		last = off
	}
	if n == 0 || last == 0 {
		return 0, 0
	}
	return len(strings.TrimRight(text[:last], " \t\n")), n
}

// countRE finds the words with which a sentence announces how many things follow, two or more ("four details:",
// "uses three rules", "the following:"), each with the word after it.
var countRE = regexp.MustCompile(`(?i)\b(two|three|four|five|six|seven|eight|nine|ten|[2-9]|[1-9]\d+|several|following|these|those|below|as follows)\b(?:\s+(\w+))?`)

// announcesCount reports a sentence that announces how many things follow: a number followed by a content word
// ("three rules", "4 steps", not "Python 3 is" or "2 or more"), or a word that points ahead ("the following:",
// "these rules"). What follows such a sentence is a list or a sequence, not an illustration.
func announcesCount(sentence string) bool {
	for _, m := range countRE.FindAllStringSubmatch(sentence, -1) {
		switch strings.ToLower(m[1]) {
		case "following", "these", "those", "below", "as follows":
			return true
		}
		if m[2] != "" && len(lexical.Tokenize(m[2])) > 0 {
			return true
		}
	}
	return false
}

// maxListItems bounds the list a colon's quote takes along.
const maxListItems = 8

// listEnd is the colon-list heuristic: when the text after end (a quote from start ending in a colon) is a
// Markdown list — after at most one blank line, consecutive items, each with its continuation lines — it returns
// the end of the list; 0 when no list follows, it has more than maxListItems items, or the quote would exceed
// maxQuote runes.
func listEnd(text string, start, end int) int {
	rest := text[end:]
	off := end
	lines := strings.SplitAfter(rest, "\n")
	k := 0
	if k < len(lines) && strings.TrimSpace(lines[k]) == "" { // the rest of the colon's line
		off += len(lines[k])
		k++
	}
	if k < len(lines) && strings.TrimSpace(lines[k]) == "" { // one blank line
		off += len(lines[k])
		k++
	}
	items, last := 0, 0
	for ; k < len(lines); k++ {
		l := lines[k]
		switch {
		case listItemRE.MatchString(l):
			items++
		case strings.TrimSpace(l) == "" || items == 0 || !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t"):
			k = len(lines) // a blank line or an unindented line ends the list
			continue
		}
		off += len(l)
		last = off
	}
	if items == 0 || items > maxListItems {
		return 0
	}
	last = len(strings.TrimRight(text[:last], " \t\n"))
	if utf8.RuneCountInString(text[start:last]) > maxQuote {
		return 0
	}
	return last
}

// listClaim spells out a colon and its list as one sentence: "A memory operation is modeled by four details: its
// kind; its location; …."
func listClaim(quote string) string {
	var head []string
	var items []string
	for _, l := range strings.Split(quote, "\n") {
		if len(items) == 0 && !listItemRE.MatchString(l) {
			head = append(head, l)
			continue
		}
		if listItemRE.MatchString(l) {
			items = append(items, plainText(l))
		} else if t := plainText(l); t != "" && len(items) > 0 {
			items[len(items)-1] += " " + t
		}
	}
	for k := range items {
		items[k] = strings.TrimRight(items[k], ".;；。")
	}
	h := plainText(strings.Join(head, " "))
	sep := "; "
	if hasCJK(h) {
		sep = "；"
	}
	return h + " " + strings.Join(items, sep) + fullStop(h)
}

// onHeadingLine reports a passage that is part of a heading line: "Default Argument Values", which the sentence
// splitter cut from "### 4.8.1. Default Argument Values" after its number, titles a section and states nothing.
func onHeadingLine(text string, sp lexical.Span) bool {
	return strings.HasPrefix(text[lineStart(text, sp.Start):], "#")
}

// titleLine reports a passage that is a line of its own which headings takes for a title — a definition list's
// term ("max_connections (integer)"), a bold label, an unmarked heading: it names what follows and states nothing.
// A list item is content even when it stands alone.
func titleLine(heads []lexical.Span, text string, sp lexical.Span) bool {
	k, _ := slices.BinarySearchFunc(heads, sp.Start, func(h lexical.Span, off int) int { return cmp.Compare(h.Start, off) })
	for ; k < len(heads) && heads[k].Start <= sp.End; k++ {
		if h := heads[k]; h.Start <= sp.Start && sp.End <= h.End && !listItemRE.MatchString(text[h.Start:h.End]) {
			return true
		}
	}
	if k > 0 {
		if h := heads[k-1]; h.Start <= sp.Start && sp.End <= h.End && !listItemRE.MatchString(text[h.Start:h.End]) {
			return true
		}
	}
	return false
}

// brokenByCode reports a Latin passage that a code block interrupts: it ends without sentence punctuation at the
// end of its line and a fenced block follows ("… are evaluated at the point of function definition, so that" and
// the code, then "will print 5."), so it is the first part of a sentence, not one.
func brokenByCode(text string, sp lexical.Span) bool {
	last, _ := utf8.DecodeLastRuneInString(strings.TrimSpace(sp.Text))
	if hasCJK(sp.Text) || strings.ContainsRune(".!?;:)\"'”’。！？；：", last) {
		return false
	}
	rest := text[sp.End:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 || strings.TrimSpace(rest[:nl]) != "" {
		return false
	}
	next := strings.TrimLeft(rest[nl:], " \t\n")
	return strings.HasPrefix(next, "```")
}

// cutSpan reports a passage that Passages cut out of a longer sentence of Latin text: it ends without sentence
// punctuation and the next passage goes on on the same line, or the passage before it did so. Such a piece is
// never a whole sentence. Unpunctuated Chinese text is cut the same way and stays usable: it has no sentences.
func cutSpan(text string, spans []lexical.Span, i int) bool {
	cutAfter := func(k int) bool {
		if k < 0 || k+1 >= len(spans) || hasCJK(spans[k].Text) {
			return false
		}
		last, _ := utf8.DecodeLastRuneInString(spans[k].Text)
		if strings.ContainsRune(".!?;:)\"'”’", last) {
			return false
		}
		return !strings.Contains(text[spans[k].End:spans[k+1].Start], "\n")
	}
	return cutAfter(i) || cutAfter(i-1)
}
