package extractive

import (
	"context"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/lexical/bilingual"
	"github.com/deepresearch/deepresearch/research"
)

// Focus bounds: an item is on the question's topic when it covers at least focusShare of what the best item
// covers of the question's key units (IDF-weighted over the pool), or stands in the same section as such an
// item and covers at least sectionShare of it.
const (
	focusShare   = 0.6
	sectionShare = 0.25
)

// focusVariants are the ways the question's key phrases may be spelled in the sources: as asked, and with every
// Chinese unit the bilingual dictionary can render replaced by its English rendering (a unit it cannot render is
// kept, and weighs little when no source uses it; chosen by the sources' vocabulary v, as the queries were), or
// for an English question its Chinese rendering.
func focusVariants(ctx context.Context, core research.SubQuestion, v *vocabulary) []variant {
	if len(core.Queries) == 0 {
		return []variant{queryVariant(core.Question)}
	}
	q := core.Queries[0]
	// The domain the question names at the end ("in PostgreSQL" over its manual, which the planner keeps in the
	// search: domainTail) tells no item apart: the focus is on the rest.
	phrases, _ := splitPhrases(core.Question)
	if tail := domainTail(ctx, core.Question, phrases, v); tail != "" {
		if rest := withoutWords(q, toSet(tail)); rest != "" {
			q = rest
		}
	}
	// The subject's units count twice: "data race" is what "What is a data race and how should programs avoid
	// it?" is about; "avoid" only says what is asked of it.
	if subj := subjectOf(ctx, core.Question, v); subj != "" && subj != q {
		q = subj + " " + q
	}
	out := []variant{queryVariant(q)}
	// A common noun after a name says what kind of thing the name is ("the ANALYZE command", "the RETURNING
	// clause"); when the sources seldom put it there (under a fifth of the passages using the name), they speak of
	// the name alone, and so may the focus — of the question as asked and of its English rendering ("COPY 命令" is
	// "COPY command|order").
	withoutKinds := func(s string) {
		if k := kindNouns(ctx, s, v); len(k) > 0 {
			out = append(out, queryVariant(withoutWords(s, k)))
		}
	}
	withoutKinds(q)
	if hasCJK(q) {
		var mixed []string
		for _, f := range strings.Fields(q) {
			if t := translateFor(v, f); t != "" && hasCJK(f) {
				f = t
			}
			mixed = append(mixed, f)
		}
		if m := strings.Join(mixed, " "); m != q {
			out = append(out, queryVariant(m))
			withoutKinds(m)
		}
	} else if t := translateZH(q); t != "" {
		// An English question over Chinese sources: its key words in Chinese, as the dictionary renders them
		// and as the sources write them.
		out = append(out, queryVariant(t))
		if u := usedZH(v, q); u != "" && u != t {
			out = append(out, queryVariant(u))
		}
	}
	return withSymbols(out, core.Question)
}

// withSymbols adds to every variant a unit for each symbol the question names (askedSymbols) that it lacks: the
// focus reads the planner's keywords, which never hold one.
func withSymbols(variants []variant, question string) []variant {
	syms := askedSymbols(question)
	for i, v := range variants {
		v = slices.Clip(v)
		for _, s := range syms {
			if !slices.ContainsFunc(v, func(u []string) bool { return slices.Equal(u, []string{s}) }) {
				v = append(v, []string{s})
			}
		}
		variants[i] = v
	}
	return variants
}

// askedSymbols are the symbols a question names as the thing it asks about ("What does the ? operator do", "the
// `_` variable", "Python 中 // 运算符"): a word of symbols alone (lexical.SymbolWord) after "the" or in quotes or
// backticks, which make it a name, or set apart by spaces in Chinese, which writes none between its words. "read /
// write" joins two words, and "a + b" adds a variable. The words beside a named symbol only say what kind of thing
// it is; the tokens and the search never see it, so the focus, the analyst's coverage and the named-subject rule
// read it as a term of its own (indexPool, docIndex.symbols).
func askedSymbols(question string) []string {
	var out []string
	fields := strings.Fields(question)
	cjk := hasCJK(question)
	for i, f := range fields {
		sym, ok := lexical.SymbolWord(f)
		if !ok || i == len(fields)-1 || slices.Contains(out, sym) {
			continue // the last word's symbols close the sentence ("… in Rust ?")
		}
		quoted := sym != f
		definite := i > 0 && strings.EqualFold(fields[i-1], "the")
		if quoted || definite || cjk {
			out = append(out, sym)
		}
	}
	return out
}

// withoutWords is q without the words (as written, space-separated) that drop holds.
func withoutWords(q string, drop map[string]bool) string {
	return strings.Join(slices.DeleteFunc(strings.Fields(q), func(w string) bool { return drop[w] }), " ")
}

// kindNouns are the words of q that follow a name of the domain (nameLike) as a common noun the sources seldom put
// after it: "command" of "ANALYZE command" over PostgreSQL's manual (15 of the 169 passages using ANALYZE). A word
// the dictionary knows only as an action ("create") is no noun, and a name the sources are all about (their
// setting, "PostgreSQL smallint") is no name a kind is said of. None when no source can tell. The name stays, so a
// variant without them is never empty.
func kindNouns(ctx context.Context, q string, v *vocabulary) map[string]bool {
	f := strings.Fields(q)
	out := map[string]bool{}
	for i := 1; i < len(f); i++ {
		// A word of a translated query stands with its other renderings ("command|order" for 命令): the first
		// is the best, and the sources' use of it after the name decides for all.
		noun := firstRendering(f[i])
		if !nameLike(f[i-1]) || !commonWord(noun) || !nounWord(noun) || v.setting(ctx, f[i-1]) {
			continue
		}
		// After an auxiliary and the name ("does CREATE INDEX create"), the word is the clause's verb.
		start := i - 1
		for start > 0 && nameLike(f[start-1]) {
			start--
		}
		if start > 0 && lexical.Auxiliary(f[start-1]) {
			continue
		}
		name, _, known := v.docFreq(ctx, f[i-1])
		pair, _, _ := v.phraseFreq(ctx, f[i-1]+" "+noun)
		if known && name > 0 && 5*pair < name {
			out[f[i]] = true
		}
	}
	return out
}

// poolIndex is the pool's items as term sets (claim, quote, title and section headings), with document frequencies over them.
type poolIndex struct {
	terms []map[string]bool
	df    map[string]int
	cjk   bool // some item is in Chinese (or Japanese, Korean)
	// sourcesIDF is a term's IDF over all the sources' passages, scaled (vocabulary.idf); nil: not known.
	sourcesIDF func(term string) float64
}

func indexPool(ev []research.Evidence, sections *sectionMemo) *poolIndex {
	p := &poolIndex{terms: make([]map[string]bool, len(ev)), df: map[string]int{}}
	for i, e := range ev {
		m := map[string]bool{}
		for _, part := range []string{e.Claim, plainText(e.Quote), e.Title, sections.get(e.Source, e.Quote)} {
			ts := lexical.Tokenize(part)
			for k, t := range ts {
				m[t] = true
				if k > 0 {
					m[ts[k-1]+" "+t] = true // two terms side by side: a keyword phrase's key (keywordPhrases)
				}
			}
			for _, sym := range lexical.Symbols(part) {
				m[sym] = true // an operator named on its own ("the ? operator"): withSymbols
			}
		}
		p.terms[i] = m
		p.cjk = p.cjk || hasCJK(e.Claim)
		for t := range m {
			p.df[t]++
		}
	}
	return p
}

// focus is the topic-anchor heuristic: how much of the question's key units item i covers, each unit weighted by
// its rarest term's IDF over the pool, so the question's specific subject ("iota", "errgroup") weighs more than
// the words every item shares ("constant", "declaration"). A unit no item contains weighs 0.3 (a difference of
// wording). The best variant counts.
func (p *poolIndex) focus(variants []variant, i int) float64 {
	n := float64(len(p.terms))
	best := 0.0
	for _, v := range variants {
		var got, all float64
		for _, unit := range v {
			if isAlt(unit) {
				idf := func(t string) float64 {
					df := float64(p.df[t])
					return 1 + lexical.IDF(df, n)
				}
				uw, hit := altUnit(unit, func(t string) bool { return p.df[t] > 0 }, idf, p.terms[i])
				all += uw
				if hit {
					got += uw
				}
				continue
			}
			var uw, ugot, uall float64
			absent := true
			for _, t := range unit {
				df := float64(p.df[t])
				// 1 + IDF: a unit every item shares (the subject of an on-topic pool) still counts, and counts
				// for what it weighs among all the sources: the subject every pooled item repeats is rare there.
				w := 1 + lexical.IDF(df, n)
				if p.sourcesIDF != nil {
					w += p.sourcesIDF(t)
				}
				uw = math.Max(uw, w)
				uall += w
				if p.terms[i][t] {
					ugot += w
				}
				if df > 0 {
					absent = false
				}
			}
			if uall == 0 {
				continue
			}
			if absent {
				uw *= 0.3
			}
			all += uw
			got += uw * ugot / uall
		}
		if all > 0 {
			best = math.Max(best, got/all)
		}
	}
	return best
}

// absentTerms is the not-covered heuristic: the key words of the question that no pooled item contains and that
// no configured source returns anything for — what the question asks about and the sources never mention
// ("errgroup" over the standard library's sync documentation). A word the pool lacks but a source has is a
// difference of wording, not an absence. Words of a Chinese question are checked as asked and in their English
// rendering: absent only when both are.
func (s *Synthesizer) absentTerms(ctx context.Context, p *poolIndex, question, subject string, units []string, bestOfRest func(unit string) float64) []string {
	if len(s.cfg.Searchers) == 0 {
		return nil
	}
	heads := headNouns(question)
	references := referencePoints(question)
	inSubject := toSet(strings.Join(lexical.Tokenize(subject), " "))
	var out []string
	for _, u := range units {
		if references[strings.ToLower(u)] {
			// "the Rust equivalent of gofmt", "println!("{}", rect)": what the asker compares with or their own
			// value, which the sources need not name.
			continue
		}
		inPool := false
		for _, t := range lexical.Tokenize(u) {
			if p.df[t] > 0 {
				inPool = true
				break
			}
		}
		if inPool || len(lexical.Tokenize(u)) == 0 {
			continue
		}
		// An everyday word ("contract" in "the io.Reader contract") that the sources word differently is forgiven
		// when one item answers the rest of the question closely; a name (capitals, digits, CJK) never is.
		if commonWord(u) && !heads[u] && bestOfRest(u) >= forgiveCover {
			continue
		}
		// An everyday word outside the question's subject tells the asker's circumstances ("… as one executable file
		// to colleagues", "a function that takes a callback"): the sources' not having it says nothing about
		// whether they answer the question.
		if commonWord(u) && !heads[u] && s.english(u) && !slices.ContainsFunc(lexical.Tokenize(u), func(t string) bool { return inSubject[t] }) {
			continue
		}
		queries := []string{u}
		if !hasCJK(u) && p.cjk {
			// An English word over Chinese sources is checked in Chinese too; one the dictionary cannot render
			// (too general: "light" is 光, 轻, 灯 …), or renders only by another form of it (an agent noun by its
			// verb's senses: 核实 for one who verifies, where the sources write 验证者), leaves nothing to judge by.
			t := translateZH(u)
			if t == "" || !senseWord(u) {
				continue
			}
			queries = append(queries, t)
		}
		if hasCJK(u) {
			t := translateFor(s.vocab, u)
			if !p.cjk && (t == "" || !confidentRendering(u)) {
				// A Chinese word over sources in another language that the dictionary renders only by a guess
				// (a single character, 包 "cover" for package) leaves nothing to judge by.
				continue
			}
			if t != "" {
				queries = append(queries, t)
			}
		}
		found := false
		for _, q := range queries {
			for _, src := range s.cfg.Searchers {
				rs, err := src.Search(ctx, q, 1)
				if err != nil || len(rs) > 0 {
					found = true // a failing source cannot show an absence
					break
				}
			}
		}
		if !found {
			out = append(out, u)
		}
	}
	return out
}

// referencePoints are the words of a question that name what the asker compares with or works on rather than
// what they ask about, lower-cased: the things after "equivalent of", "counterpart to", "similar to" and the like
// ("a Rust equivalent of gofmt and go vet") with the word of likeness itself, and the plain names passed to a call
// the question writes out (rect in `println!("{}", rect)`), which are the asker's own values.
func referencePoints(question string) map[string]bool {
	out := map[string]bool{}
	for _, m := range analogyRE.FindAllStringSubmatch(question, -1) {
		// The word of likeness is the frame of the question, not its topic: the sources need not say "equivalent".
		out[strings.ToLower(strings.Fields(m[0])[0])] = true
		// The named things run to the first word that is neither a name nor a conjunction ("gofmt and go vet" of
		// "… of gofmt and go vet to run over a Cargo project").
		for _, w := range wordRE.FindAllString(m[1], -1) {
			lw := strings.ToLower(w)
			if !isWordish(w) || enSeparators[lw] {
				break
			}
			if !enConjunctions[lw] {
				out[lw] = true
			}
		}
	}
	for _, m := range callArgsRE.FindAllStringSubmatch(question, -1) {
		for _, arg := range strings.Split(stringLiteralRE.ReplaceAllString(m[1], ""), ",") {
			if a := strings.TrimSpace(arg); identRE.MatchString(a) {
				out[strings.ToLower(a)] = true
			}
		}
	}
	return out
}

var (
	// analogyRE captures what follows a word of likeness up to the end of its clause.
	analogyRE = regexp.MustCompile(`(?i)\b(?:equivalents?|counterparts?|analogues?|analogs?|alternatives?|similar|comparable|akin)\s+(?:of|to)\s+([^,;:?!.()]+)`)
	// callArgsRE captures the arguments of a call: a name, an optional macro bang, and its parenthesised arguments.
	callArgsRE      = regexp.MustCompile(`[\p{L}_][\p{L}\p{N}_:.]*!?\(([^()]*)\)`)
	stringLiteralRE = regexp.MustCompile(`"[^"]*"|'[^']*'`)
	identRE         = regexp.MustCompile(`^[\p{L}_][\p{L}\p{N}_]*$`)
)

// keyUnits are the question's key words as written: each Latin word of its key phrases, and each Chinese
// phrase whole.
func keyUnits(question string) []string {
	phrases, _ := splitPhrases(question)
	var out []string
	for _, ph := range phrases {
		for _, w := range strings.Fields(ph.Text) {
			if !quantityRE.MatchString(w) {
				out = append(out, w)
			}
		}
	}
	return dedupe(out)
}

// quantityRE matches a measurement: a number with a unit of size, time, frequency or a percent sign ("2G", "512MB",
// "1.5GiB", "30s", "200ms", "80%"). It describes the asker's setting, and the sources write such figures in their own
// notation ("2 GiB", "512 MiB"): its absence is no sign that they do not cover the question. A bare number is not
// one (a version, "Python 3.11", is a name).
var quantityRE = regexp.MustCompile(`^\d+(?:\.\d+)?(?:[kKmMgGtTpP]i?[bB]?|[bB]|bytes?|[mnuµ]?s|secs?|min|mins|h|hrs?|[kMG]?Hz|%)$`)

// headNouns is the head-noun heuristic: the last word of each key phrase of two or more Latin words ("push" in
// "HTTP/2 server push", "pacing" in "garbage collector pacing"). An English compound names a kind of its last
// word, so when the sources have its modifiers ("HTTP/2", "server") but never the head, they speak of something
// else: the head is what the question asks about and is never forgiven as a difference of wording. A lone word
// ("contract" beside "io.Reader") may be.
func headNouns(question string) map[string]bool {
	phrases, _ := splitPhrases(question)
	out := map[string]bool{}
	for _, ph := range phrases {
		if f := strings.Fields(ph.Text); len(f) >= 2 && !hasCJK(ph.Text) {
			out[f[len(f)-1]] = true
		}
	}
	return out
}

// forgiveCover is how much of the question's other key units one item must cover for an everyday word missing
// from every source to count as a difference of wording.
const forgiveCover = 0.9

// commonWord reports a lower-case Latin word of letters only: not a name, an acronym, a version or a Chinese
// phrase.
func commonWord(u string) bool {
	for _, r := range u {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return u != ""
}

// without returns the variants with the units holding any of the terms of words removed.
func without(variants []variant, words []string) []variant {
	drop := map[string]bool{}
	for _, w := range words {
		for _, t := range lexical.Tokenize(w) {
			drop[t] = true
		}
	}
	var out []variant
	for _, v := range variants {
		var nv variant
		for _, unit := range v {
			keep := true
			for _, t := range unit {
				if drop[t] {
					keep = false
					break
				}
			}
			if keep {
				nv = append(nv, unit)
			}
		}
		out = append(out, nv)
	}
	return out
}

// subjectOf is the question's subject as the planner sees it: the members of a comparison, else its first key
// phrase (after a possessive word that names the domain the sources v are about, such as "Go 的"; see
// vocabulary.domain), and after an opening that says where it is asked ("In PostgreSQL, …", "标准库里的 …").
func subjectOf(ctx context.Context, question string, v *vocabulary) string {
	subject, _ := subjectAndPlace(ctx, question, v)
	return subject
}

// subjectAndPlace is the question's subject (subjectOf) and the place phrase it is asked in, if it opens with one
// ("context 包中", "In PostgreSQL"): what the answer is about, and where.
func subjectAndPlace(ctx context.Context, question string, v *vocabulary) (subject, place string) {
	phrases, _ := splitPhrases(question)
	if len(phrases) == 0 {
		return "", ""
	}
	if len(phrases) > 1 && domainPossessive(question, phrases[0].Text, func(w string) bool { return v.domain(ctx, w) }) {
		phrases = phrases[1:]
	}
	if len(phrases) > 1 && (locative(phrases[0].Text) || openingSetting(question, phrases[0].Text)) {
		place = phrases[0].Text
		phrases = phrases[1:]
	}
	out := []string{phrases[0].Text}
	for _, p := range phrases[1:] {
		if !p.Conj {
			break
		}
		out = append(out, p.Text)
	}
	// "How do you exit the Python interpreter?": a word right after the asker is the verb asked about, and what
	// it is done to is its subject as much.
	if len(out) == 1 && len(phrases) > 1 && !phrases[1].Conj && askerVerb(question, phrases[0].Text) {
		out = append(out, phrases[1].Text)
	}
	return strings.Join(out, " "), place
}

// askers are the pronouns by which an English question names who asks: "how do you …", "can I …", "should we …".
var askers = toSet(`you i we`)

// askerVerb reports a first phrase of one word that follows an asker: the verb of "how do you exit …", not a noun.
func askerVerb(question, phrase string) bool {
	if hasCJK(phrase) || strings.Contains(phrase, " ") {
		return false
	}
	i := strings.Index(question, phrase)
	if i < 0 {
		return false
	}
	before := strings.Fields(strings.ToLower(question[:i]))
	return len(before) > 0 && askers[before[len(before)-1]]
}

// enOpeningRE is an English question's opening adverbial, closed by its comma: "In PostgreSQL, what happens …",
// "For a Rust library, should …".
var enOpeningRE = regexp.MustCompile(`(?i)^\s*(?:in|on|for|with|within|under|inside|using)\s+([^,?]+),`)

// openingSetting reports a first phrase that stands in the question's opening adverbial: where it is asked, as
// a Chinese locative phrase is ("标准库里"), not what it asks about.
func openingSetting(question, phrase string) bool {
	m := enOpeningRE.FindStringSubmatch(question)
	return m != nil && strings.Contains(m[1], phrase)
}

// requiredNames is the named-subject heuristic: the terms that name the APIs the question asks about — the last
// part of each name of the domain in it ("mutex" for sync.Mutex, "godebug" for GODEBUG) — that some pooled item
// contains, each with its CamelCase parts first (nameWords). A name the sources are all about (setting: "PostgreSQL"
// over its manual) is no subject and is left out. Empty when the question names nothing or the pool never mentions
// its names (then the not-covered heuristic speaks). A name in the question's subject (subjectOf) whose term is a
// stem of it, not the name as written, stays one however many passages use the stem: "the RETURNING clause of
// INSERT and DELETE" asks about RETURNING, and "return" is in a tenth of PostgreSQL's manual ("returns"); a name
// its term spells (PostgreSQL) is counted as itself.
//
// A run of capitalised keywords ("NULLS LAST", "CREATE VIEW") is one name, required as written: the pair of its two
// terms side by side, which the pool indexes as one term (keywordPhrases, indexPool). "Returns the last value of
// the enum type" does not name NULLS LAST. A run of two words the sources are all about ("CREATE INDEX" over
// PostgreSQL's manual) is no subject, as a single such word is not.
func (p *poolIndex) requiredNames(question, subject string, setting func(term string) bool) [][]string {
	var out [][]string
	inPhrase := map[string]bool{}
	for _, k := range keywordPhrases(question) {
		inPhrase[k[0]], inPhrase[k[1]] = true, true
		if pair := k[0] + " " + k[1]; p.df[pair] > 0 && (setting == nil || !setting(k[0]) || !setting(k[1])) {
			out = append(out, []string{pair}) // a name of one term: the pair the pool indexes (indexPool)
		}
	}
	// The place a Chinese question opens with ("在 Node.js 的 ES 模块里 …") is where it is asked, not what about:
	// its names are no subject, as the sources' setting is not.
	placed := map[string]bool{}
	if m := zhPlaceRE.FindStringSubmatchIndex(question); m != nil {
		elsewhere := nameWords(question[:m[0]] + question[m[1]:])
		for _, w := range nameWords(question[m[2]:m[3]]) {
			if !slices.ContainsFunc(elsewhere, func(r []string) bool { return slices.Equal(r, w) }) {
				placed[w[len(w)-1]] = true
			}
		}
	}
	specific := qualifiedMembers(question)
	for _, w := range wordRE.FindAllString(subject, -1) {
		if ts := lexical.Tokenize(w); len(ts) == 1 && ts[0] != strings.ToLower(w) {
			specific[ts[0]] = true
		}
	}
	for _, w := range nameWords(question) {
		t := w[len(w)-1]
		if p.df[t] == 0 || setting != nil && setting(t) && !specific[t] || inPhrase[t] || placed[t] {
			continue
		}
		out = append(out, w)
	}
	return out
}

// namedSymbols are the symbols the question names (askedSymbols) that some pooled item names too, each as a name
// of one term (indexPool keeps an item's symbols). A symbol is the most specific name a question can write: the
// words beside it ("operator", "REPL", "Result") only say where it is used, so the items that name it are the ones
// about it, and they alone are required.
func (p *poolIndex) namedSymbols(question string) [][]string {
	var out [][]string
	for _, s := range askedSymbols(question) {
		if p.df[s] > 0 {
			out = append(out, []string{s})
		}
	}
	return out
}

// zhPlaceRE is the locative frame a Chinese question may open with: 在, a short phrase, then a locative mark.
var zhPlaceRE = regexp.MustCompile(`^\s*在\s*([^，。？！,?!]{1,24}?)\s*[` + bilingual.Localizers + `]`)

// keywordPhrases are the runs of two capitalised words a question writes ("NULLS FIRST or NULLS LAST", "CREATE
// VIEW"), a language's keywords, each as its two terms. A run of more words ("ON DELETE CASCADE") or one with a
// stop word ("ORDER BY") is left to the single names.
func keywordPhrases(question string) [][2]string {
	var out [][2]string
	for _, run := range keywordRunRE.FindAllString(question, -1) {
		ts := lexical.Tokenize(run)
		if len(strings.Fields(run)) != 2 || len(ts) != 2 || ts[0] == ts[1] {
			continue
		}
		out = append(out, [2]string{ts[0], ts[1]})
	}
	return out
}

// keywordRunRE is a run of words in capitals, two letters or more each, one space apart.
var keywordRunRE = regexp.MustCompile(`\b\p{Lu}[\p{Lu}\p{N}_]+(?: \p{Lu}[\p{Lu}\p{N}_]+)+\b`)

// titledSubjects extend the named-subject heuristic to the pages' own names: a word of the question that is the
// whole lead of a pooled page's title ("punycode" of "Punycode | Node.js Documentation") and that the sources use
// in few passages (specific) is what that page is about, and a question that names it asks about it as it would
// about an API, however it writes the word. A common word a page is titled with ("Modules: …") is no subject.
func titledSubjects(question string, pooled []research.Evidence, specific func(term string) bool) [][]string {
	asked := map[string]bool{}
	for _, t := range lexical.Tokenize(question) {
		asked[t] = true
	}
	var out [][]string
	seen := map[string]bool{}
	for _, e := range pooled {
		lead := titleLeadWords(e.Title)
		if len(lead) != 1 || !asked[lead[0]] || seen[lead[0]] {
			continue
		}
		seen[lead[0]] = true
		if specific(lead[0]) {
			out = append(out, lead)
		}
	}
	return out
}

// subjectIdentifiers complete the named-subject heuristic with the names a question writes in lower case: a word of
// its subject that no English dictionary knows ("querystring" beside URLSearchParams) is an identifier of the
// domain as a CamelCase name is, when some pooled item uses it and it is not the sources' setting. They are added
// to the names the question writes as names, never required alone. english reports a word a dictionary knows.
func (p *poolIndex) subjectIdentifiers(subject string, english, setting func(word string) bool) [][]string {
	var out [][]string
	for _, w := range wordRE.FindAllString(subject, -1) {
		if !commonWord(w) || utf8.RuneCountInString(w) < 4 || english(w) {
			continue
		}
		if ts := lexical.Tokenize(w); len(ts) == 1 && p.df[ts[0]] > 0 && !setting(ts[0]) {
			out = append(out, ts)
		}
	}
	return out
}

// qualifiedMembers are the last terms of the names a question writes as a member of a lower-case module or object
// ("code" of error.code, "eol" of os.EOL): the name is specific however common its last word is in the sources, so
// it stays a subject where the word alone would be their setting. A product's name ("Node.js") has a capital.
func qualifiedMembers(question string) map[string]bool {
	out := map[string]bool{}
	for _, w := range wordRE.FindAllString(question, -1) {
		w = strings.TrimRight(w, ".")
		if r, _ := utf8.DecodeRuneInString(w); !strings.Contains(w, ".") || !unicode.IsLower(r) || !nameLike(w) {
			continue
		}
		if ts := lexical.Tokenize(identSplitter.Replace(w)); len(ts) > 1 {
			out[ts[len(ts)-1]] = true
		}
	}
	return out
}

// hasName reports an item that mentions one of names: its term, or its parts spelled as words in prose
// ("hash map" for HashMap).
func (p *poolIndex) hasName(i int, names [][]string) bool {
	for _, n := range names {
		all := true
		for _, t := range n[:len(n)-1] {
			all = all && p.terms[i][t]
		}
		if p.terms[i][n[len(n)-1]] || len(n) > 2 && all {
			return true
		}
	}
	return false
}
