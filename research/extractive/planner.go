package extractive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/lexical/bilingual"
	"github.com/deepresearch/deepresearch/research"
)

// Planner decomposes a question by its grammar: it splits the question into key phrases at question words,
// function words and punctuation, groups phrases joined by conjunctions, and asks the standard facets of the
// subject — what it is, the question itself, its rules and examples, its caveats — plus one sub-question per
// conjunct ("A and B" → A, B).
type Planner struct {
	cfg   Config
	vocab *vocabulary // the words the sources use, for choosing a translated word's renderings
}

// facet wording per language. %[1]s is the subject, %[2]s the focus.
type wording struct {
	definition, member, memberAlone, examples, caveats string
	section                                            string // %[1]s a corpus heading, %[2]s its document
	defQuery, exQueries, cavQueries                    []string
	join                                               string
}

// templates are every wording the planner writes sub-questions and queries with.
func (w wording) templates() []string {
	out := []string{w.definition, w.member, w.memberAlone, w.examples, w.caveats, w.section}
	out = append(out, w.defQuery...)
	out = append(out, w.exQueries...)
	return append(out, w.cavQueries...)
}

// slotRE is a slot of a wording: "%s", "%[1]s", "%[2]s".
var slotRE = regexp.MustCompile(`%(?:\[\d\])?s`)

var wordings = map[string]wording{
	"en": {
		definition:  "What is %[1]s?",
		member:      "What do the sources say about %[1]s and %[2]s?",
		memberAlone: "What is %[1]s and how is it used?",
		examples:    "What rules or examples illustrate %[2]s?",
		caveats:     "What caveats, limits or exceptions apply to %[2]s?",
		section:     "What does %[2]s say under “%[1]s”?",
		defQuery:    []string{"%s", "%s is defined"},
		exQueries:   []string{"%s rule", "%s example"},
		cavQueries:  []string{"%s not guaranteed", "%s unless except limit"},
		join:        " ",
	},
	"zh": {
		definition:  "%[1]s是什么？",
		member:      "%[1]s在%[2]s方面是怎样的？",
		memberAlone: "%[1]s是什么，如何使用？",
		examples:    "%[2]s有哪些规则和示例？",
		caveats:     "%[2]s有哪些限制或例外？",
		section:     "%[2]s的“%[1]s”部分讲了什么？",
		defQuery:    []string{"%s", "%s 定义"},
		exQueries:   []string{"%s 规则", "%s 示例"},
		cavQueries:  []string{"%s 不", "%s 限制 问题"},
		join:        " ",
	},
}

// Plan implements research.Planner.
func (p *Planner) Plan(ctx context.Context, question string) (*research.Plan, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q := strings.TrimSpace(question)
	if q == "" {
		return nil, errors.New("extractive plan: empty question")
	}
	lang := lexical.Language(q)
	w, ok := wordings[lang]
	if !ok {
		w = wordings["en"]
	}
	phrases, verbs := splitPhrases(q)
	if len(phrases) == 0 {
		// Nothing but question words ("What is it?"): search for the words themselves.
		if len(lexical.Tokenize(q)) == 0 && len(verbs) == 0 {
			return nil, fmt.Errorf("extractive plan: %q has no words to search for", q)
		}
		phrases = []phrase{{Text: strings.Trim(q, "?？!！。. ")}}
	}

	// The domain named at the end ("the url module of Node.js" over Node's API reference) is no subject, focus or
	// topic of a facet, only a word the question's own search keeps.
	tail := domainTail(ctx, q, phrases, p.vocab)
	if tail != "" {
		phrases = phrases[:len(phrases)-1]
	}
	// So is the domain that opens the question as the one who acts ("Why won't Rust let me implement …", "Does
	// PostgreSQL support …" over those manuals).
	if lang == "en" {
		if head := domainHead(ctx, phrases, p.vocab); head != "" {
			phrases = phrases[1:]
			tail = strings.TrimSpace(head + " " + tail)
		}
	}
	// Group conjuncts: "DeepAgent and Claude Code" is one group of two members.
	var groups [][]string
	for _, ph := range phrases {
		if ph.Conj && len(groups) > 0 {
			groups[len(groups)-1] = append(groups[len(groups)-1], ph.Text)
			continue
		}
		groups = append(groups, []string{ph.Text})
	}
	var members, rest []string
	for _, g := range groups {
		if len(g) > 1 && members == nil && nominal(g) {
			members = g
			continue
		}
		rest = append(rest, g...)
	}
	all := make([]string, 0, len(phrases))
	for _, ph := range phrases {
		all = append(all, ph.Text)
	}
	verb := strings.Join(dedupe(verbs), " ")

	domain := func(w string) bool { return p.vocab.domain(ctx, w) }
	var subject, focus string
	if members != nil {
		subject = strings.Join(members, w.join)
		// The possessive domain word ("Go 的 syscall 包中 Syscall、Syscall6 和 RawSyscall") is no focus either. A name
		// stays, even one the sources are all about: as the comparison's focus it says where the two are compared
		// ("PostgreSQL 的物化视图和普通视图" is asked of PostgreSQL's).
		if len(rest) > 0 && domainPossessive(q, rest[0], func(w string) bool { return !nameLike(w) }) {
			rest = rest[1:]
		}
		focus = strings.Join(rest, w.join)
		if focus == "" {
			focus = subject
		}
	} else {
		// A possessive first Latin word names the domain, not the subject, when the sources are all about it
		// ("PostgreSQL 的 serial 类型" over PostgreSQL's manual, where it is in a tenth of the passages) or never use
		// it; "Unicode 的码位" over a language's manual asks about Unicode's code points (vocabulary.domain). "互斥锁的零值"
		// asks about the mutex.
		if len(all) > 1 && domainPossessive(q, all[0], domain) {
			all = all[1:]
		}
		// A place phrase ("context 包中", in the context package) says where the question is asked, not what about:
		// it is searched with the question, and is neither its subject nor its focus.
		place := ""
		if len(all) > 1 && locative(all[0]) {
			place = all[0]
			all = append(all[1:], all[0])
		}
		// A compound identifier further on ("the default value of max_connections", "the type of os.Args") is
		// what the question asks about; the phrase before it names an attribute of it.
		if !nameLike(all[0]) {
			for k := 1; k < len(all); k++ {
				if codeName(all[k]) {
					all = append(append([]string{all[k]}, all[:k]...), all[k+1:]...)
					break
				}
			}
		}
		subject = all[0]
		focus = strings.Join(slices.DeleteFunc(slices.Clone(all[1:]), func(p string) bool { return p == place }), w.join)
		if focus == "" {
			focus = subject
		}
	}

	var sqs []research.SubQuestion
	add := func(question string, queries ...string) {
		for _, s := range sqs {
			// Templates share most words, so only an (almost) identical question is a duplicate.
			// Only an (almost) identical question with the same first query is a duplicate: "How is a GODEBUG
			// setting configured?" shares every content word with the question it was cut from, not its query.
			if strings.EqualFold(s.Question, question) || lexical.NearDuplicate(s.Question, question, 0.95) &&
				len(s.Queries) > 0 && len(queries) > 0 && strings.EqualFold(s.Queries[0], lexical.NormalizeSpace(queries[0])) {
				return
			}
		}
		var qs []string
		for _, x := range queries {
			if x = lexical.NormalizeSpace(x); x != "" {
				qs = append(qs, x)
			}
		}
		// "strings.Builder" is also searched as "strings Builder": an index may keep the dotted name as one term.
		for _, x := range qs {
			if y := identSplitter.Replace(x); y != x {
				qs = append(qs, y)
			}
		}
		if lang != "en" {
			// English renderings let a Chinese question find English documents. Each follows the query it renders:
			// a depth keeps the first few queries of a sub-question (four at the standard depth), which must not be
			// the Chinese ones alone. A relation word (作用 of "有什么作用") asks for a facet and is rendered by none:
			// its senses ("function|affect|result") are words of other topics.
			var with []string
			for _, x := range qs {
				with = append(with, x)
				if t := translateFor(p.vocab, withoutWords(x, zhRelationVerbs)); t != "" {
					with = append(with, t)
				}
			}
			qs = with
		} else if len(qs) > 0 {
			// A Chinese rendering of the first query lets an English question find Chinese documents.
			if t := searchableZH(p.vocab, qs[0]); t != "" {
				qs = append(qs, t)
				if u := usedZH(p.vocab, qs[0]); u != "" {
					qs = append(qs, u)
				}
			}
		}
		sqs = append(sqs, research.SubQuestion{Question: question, Queries: dedupe(qs)})
	}
	format := func(pattern string, args ...any) []string {
		var out []string
		for _, a := range args {
			out = append(out, fmt.Sprintf(pattern, a))
		}
		return out
	}

	// The question itself comes first: it is what the report must answer.
	core := []string{strings.TrimSpace(strings.Join(all, " ") + " " + tail)}
	if verb != "" {
		core = append(core, strings.TrimSpace(focus+" "+verb))
	}
	if subject != focus {
		core = append(core, focus)
	}
	if rest := withoutProperModifier(all); rest != "" {
		core = append(core, rest)
	}
	add(q, core...)
	// Each clause of a compound question ("What is a data race and how should programs avoid it?") is a question
	// of its own, with the subject put back where the clause only points at it.
	if cl := clauses(q, lang); len(cl) > 1 {
		ownClauses := ownSubjects(q, subject, lang)
		for _, c := range cl {
			ph, _ := splitPhrases(c)
			own := ownClauses[c]
			c = resolvePronoun(c, subject, lang)
			var words []string
			for _, x := range ph {
				words = append(words, x.Text)
			}
			if !own && !strings.Contains(strings.Join(words, " "), subject) {
				words = append([]string{subject}, words...)
			}
			add(c, strings.Join(words, " "))
		}
	}
	// "What is X?" only for a name of the domain (sync.Map, GODEBUG, WaitGroup), never for a phrase the grammar
	// happened to cut out ("go line") nor when the question asks it already.
	if members == nil && nameLike(subject) && !asksDefinition(q) {
		add(fmt.Sprintf(w.definition, subject), format(w.defQuery[0], subject)[0], format(w.defQuery[1], subject)[0])
	}
	for _, m := range members {
		if focus != subject {
			add(fmt.Sprintf(w.member, m, focus), m+" "+focus, m+" "+verb+" "+focus)
		} else {
			add(fmt.Sprintf(w.memberAlone, m), m, format(w.defQuery[1], m)[0])
		}
	}
	// The corpus's own facets: the sections the question's search lands in, asked about by their headings.
	facets, heads := p.corpusFacets(ctx, q, strings.Join(all, " "), keyTerms(all, p.vocab))
	for _, f := range facets {
		qs := []string{f.Heading}
		if !strings.Contains(strings.ToLower(f.Heading), strings.ToLower(subject)) {
			qs = append(qs, f.Heading+" "+subject)
		}
		add(fmt.Sprintf(w.section, f.Heading, f.Title), qs...)
	}
	// Rules and caveats are asked of the question's topic: a named subject ("sync.Map") itself, else what is asked
	// about it ("channel communication" for the Go memory model).
	topic := subject
	if verb != "" && members == nil && !nameLike(subject) {
		topic = focus
	}
	// A lone past participle ("canceled" of "What happens when a Go context is canceled?") is what happens to the
	// subject, not a topic of its own.
	if f := strings.Fields(topic); len(f) == 1 && commonWord(f[0]) && strings.HasSuffix(f[0], "ed") {
		topic = subject
	}
	topic = corpusTopic(topic, heads)
	add(fmt.Sprintf(w.examples, subject, topic), append(format(w.exQueries[0], topic), format(w.exQueries[1], topic)...)...)
	add(fmt.Sprintf(w.caveats, subject, topic), append(format(w.cavQueries[0], topic), format(w.cavQueries[1], topic)...)...)
	if len(sqs) < 3 {
		add(fmt.Sprintf(w.memberAlone, subject), subject, format(w.defQuery[1], subject)[0])
	}
	if len(sqs) > p.cfg.MaxSubQuestions {
		sqs = sqs[:p.cfg.MaxSubQuestions]
	}
	var kinds []string
	for _, s := range p.cfg.Searchers {
		kinds = append(kinds, s.Name())
	}
	for i := range sqs {
		sqs[i].ID = fmt.Sprintf("q%d", i+1)
		sqs[i].SourceTypes = kinds
		sqs[i].Criteria = fmt.Sprintf("at least %d grounded sentences, from %d independent sources where they exist, that mention %s",
			p.cfg.MinEvidence, p.cfg.MinSources, strings.Join(sqs[i].Queries[:1], ""))
	}
	return &research.Plan{Question: q, Language: lang, SubQuestions: sqs}, nil
}

var identSplitter = strings.NewReplacer(".", " ", "/", " ", "_", " ")

// facetPatterns are the planner's facet wordings of sub-questions and queries as patterns whose groups are their
// slots, the wording with the most words of its own first ("What is %[1]s and how is it used?" before "What is
// %[1]s?"). A wording that is nothing but a slot ("%s") is left out: any text would match it.
var facetPatterns = func() []*regexp.Regexp {
	type pattern struct {
		re      *regexp.Regexp
		literal int
	}
	var ps []pattern
	for _, w := range wordings {
		for _, t := range w.templates() {
			lits := slotRE.Split(t, -1)
			literal := len(strings.TrimSpace(strings.Join(lits, "")))
			if literal == 0 {
				continue
			}
			for i := range lits {
				lits[i] = regexp.QuoteMeta(lits[i])
			}
			ps = append(ps, pattern{regexp.MustCompile("^" + strings.Join(lits, "(.+?)") + "$"), literal})
		}
	}
	slices.SortFunc(ps, func(a, b pattern) int {
		return cmp.Or(cmp.Compare(b.literal, a.literal), strings.Compare(a.re.String(), b.re.String()))
	})
	out := make([]*regexp.Regexp, len(ps))
	for i, p := range ps {
		out[i] = p.re
	}
	return out
}()

// facetSlots finds the facet wording that wrote q and returns what fills its slots (the subject and focus, the
// reader's words) and true; false for text no wording wrote, such as the reader's own question.
func facetSlots(q string) ([]string, bool) {
	q = strings.TrimSpace(q)
	for _, re := range facetPatterns {
		if m := re.FindStringSubmatch(q); m != nil {
			return m[1:], true
		}
	}
	return nil, false
}

// facetTerms are the index terms the planner's facet wording adds to sub-questions and queries ("rules",
// "example", "not guaranteed", "限制" …). They say what kind of passage is wanted, not what it is about, so the
// analyst scores topic relevance without them and uses facet cues instead.
var facetTerms = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range wordings {
		for _, t := range lexical.Tokenize(slotRE.ReplaceAllString(strings.Join(w.templates(), " "), " ")) {
			m[t] = true
		}
	}
	return m
}()

// nominal reports whether conjuncts look like things rather than actions: "created or exits" joins two verbs of
// one subject, "DeepAgent and Claude Code" two subjects. A single lower-case Latin word on each side is taken for
// a verb.
func nominal(members []string) bool {
	for _, m := range members {
		if hasCJK(m) || strings.Contains(m, " ") {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(m); unicode.IsLower(r) {
			return false
		}
	}
	return true
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		k := strings.ToLower(strings.TrimSpace(x))
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, strings.TrimSpace(x))
	}
	return out
}

// nameLike reports a name of the domain rather than a phrase of common words: a name in code (codeName), a
// CamelCase or all-capital name (WaitGroup, GODEBUG), or letters with digits (HTTP2, utf8). "Go", "memory model"
// and "go line" are not.
func nameLike(x string) bool {
	if x == "" || strings.ContainsAny(x, " \t") || hasCJK(x) {
		return false
	}
	if codeName(x) {
		return true
	}
	upper, lower, digit := 0, 0, 0
	for i, r := range x {
		switch {
		case unicode.IsUpper(r):
			if i > 0 {
				upper++
			}
		case unicode.IsLower(r):
			lower++
		case unicode.IsDigit(r):
			digit++
		}
	}
	first, _ := utf8.DecodeRuneInString(x)
	allCaps := lower == 0 && utf8.RuneCountInString(x) >= 2 && unicode.IsUpper(first)
	return upper > 0 || allCaps || digit > 0 && lower+upper > 0
}

// codeName reports a word written as code: a qualified or compound identifier (sync.Map, errors.Join, go_line) or
// a name written as a call (now(); see calledAt).
func codeName(x string) bool {
	return x != "" && !strings.ContainsAny(x, " \t") && !hasCJK(x) && (strings.ContainsAny(x, "._/") || strings.HasSuffix(x, "()"))
}

// asksDefinition reports a question that asks what something is.
func asksDefinition(q string) bool {
	l := strings.ToLower(strings.TrimSpace(q))
	return strings.HasPrefix(l, "what is ") || strings.HasPrefix(l, "what are ") || strings.Contains(q, "是什么")
}

var (
	enClauseRE = regexp.MustCompile(`(?i),?\s+and\s+(` + enClauseOpeners + `)\b`)
	zhClauseRE = regexp.MustCompile(`[，,；;]`)
	// enAsksRE is an English sentence that asks without a question mark: it opens with a question word, an
	// auxiliary or a request ("Explain …", "Tell me …").
	enAsksRE = regexp.MustCompile(`(?i)^(?:` + enClauseOpeners + `|could|would|will|did|has|have|was|were|may|might|must|explain|describe|tell|list|show|compare|give|name)\b`)
	// questionMarkRE is a question mark that may end a sentence inside a question: "Why does the id skip? Can I
	// make it gapless?", "为什么会跳号？能不能生成连续的编号？" (see questionSentences).
	questionMarkRE = regexp.MustCompile(`？\s*|\?\s+`)
)

// questionSentences cuts a question at the question marks that end a sentence inside it. A mark after a space
// names something ("the ? operator"), and one without a space after it is part of a name or address ("?q=1").
func questionSentences(s string) []string {
	var out []string
	prev := 0
	for _, m := range questionMarkRE.FindAllStringIndex(s, -1) {
		if m[0] == 0 || s[m[0]] == '?' && unicode.IsSpace(rune(s[m[0]-1])) {
			continue
		}
		out = append(out, s[prev:m[0]])
		prev = m[1]
	}
	return append(out, s[prev:])
}

// clauses splits a compound question into its questions: at a question mark inside it, in English at "and" before
// a question word, in Chinese at a comma or semicolon. Each clause ends with the question's own mark.
func clauses(q, lang string) []string {
	body := strings.TrimRight(q, "?？ ")
	mark := "?"
	if lang == "zh" {
		mark = "？"
	}
	var parts []string
	if lang == "zh" {
		// A clause that asks nothing ("Go 的 context 包中", "垃圾回收开始时") is the frame of the clause after it
		// (the last one, of the clause before): it goes with it rather than standing as a question of its own.
		// A sentence that ends with a question mark asks, whatever its words.
		for _, sentence := range questionSentences(body) {
			var frame string
			first := len(parts)
			for _, p := range zhClauseRE.Split(sentence, -1) {
				switch {
				case !zhAsks(p):
					frame += p
				default:
					parts = append(parts, frame+p)
					frame = ""
				}
			}
			if frame != "" {
				if len(parts) == first {
					parts = append(parts, frame)
				} else {
					parts[len(parts)-1] += frame
				}
			}
		}
	} else {
		sentences := questionSentences(body)
		if !strings.HasSuffix(strings.TrimSpace(q), "?") && len(sentences) > 1 && !enAsksRE.MatchString(strings.TrimSpace(sentences[len(sentences)-1])) {
			// "How do I ship …? The tool is a handful of files that require() some npm packages." The statement after
			// the last question tells the asker's circumstances; it is searched with the whole question, and is no
			// question of its own.
			sentences = sentences[:len(sentences)-1]
		}
		for _, sentence := range sentences {
			prev := 0
			for _, m := range enClauseRE.FindAllStringSubmatchIndex(sentence, -1) {
				parts = append(parts, sentence[prev:m[0]])
				prev = m[2] // the question word starts the next clause
			}
			parts = append(parts, sentence[prev:])
		}
	}
	var out []string
	for _, p := range parts {
		if p = strings.TrimRight(strings.TrimSpace(p), ".。"); utf8.RuneCountInString(p) >= 4 {
			r, n := utf8.DecodeRuneInString(p)
			out = append(out, string(unicode.ToUpper(r))+p[n:]+mark)
		}
	}
	return out
}

// ownSubjects are the clauses of a compound English question (clauses) that ask about a subject of their own
// rather than about the question's: "How does the waggle dance tell bees where flowers are? And how do worker bees
// make beeswax?". Such a clause is a sentence of its own; it points back at nothing (no pronoun, no "the", "one" or
// "that": "How is the limit changed?", "how do you roll back to one?" ask about the subject); it shares no word
// with the subject; and it names something — two phrases, a phrase of several words or a name. It is searched and
// answered by its own words.
func ownSubjects(q, subject, lang string) map[string]bool {
	out := map[string]bool{}
	if lang == "zh" || subject == "" {
		return out
	}
	sentence := map[string]bool{}
	for _, x := range questionSentences(strings.TrimRight(q, "?？ ")) {
		sentence[strings.ToLower(strings.TrimRight(strings.TrimSpace(x), "."))] = true
	}
	subj := toSet(strings.Join(lexical.Tokenize(subject), " "))
	for _, c := range clauses(q, lang) {
		if !sentence[strings.ToLower(strings.TrimSuffix(c, "?"))] || enPronounRE.MatchString(c) || definiteRE.MatchString(c) {
			continue
		}
		ph, _ := splitPhrases(c)
		shares, named := false, len(ph) >= 2
		for _, p := range ph {
			for _, t := range lexical.Tokenize(p.Text) {
				shares = shares || subj[t]
			}
			named = named || strings.Contains(p.Text, " ") || nameLike(p.Text)
		}
		out[c] = named && !shares
	}
	return out
}

// definiteRE is a word by which a clause of a question refers to what the question said before it.
var definiteRE = regexp.MustCompile(`(?i)\b(the|one|ones|that|those|its|their|such|same|there)\b`)

// locative reports a Chinese phrase that names a place, a noun with a locative particle after it ("context 包中",
// "标准库里", "函数内"): the setting of a question, not its subject.
func locative(phrase string) bool {
	if !hasCJK(phrase) || utf8.RuneCountInString(phrase) < 3 {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(phrase)
	return strings.ContainsRune(bilingual.Localizers, last) && !strings.HasSuffix(phrase, "其中")
}

// zhQuestionWords are the words with which a Chinese clause asks something.
var zhQuestionWords = []string{"如何", "怎样", "怎么", "什么", "哪", "吗", "是否", "为什么", "为何", "多少", "几", "谁", "能否",
	"可否", "呢", "会不会", "是不是", "有没有"}

// zhAsks reports whether the Chinese clause c asks something: it holds a question word.
func zhAsks(c string) bool {
	for _, w := range zhQuestionWords {
		if strings.Contains(c, w) {
			return true
		}
	}
	return false
}

var enPronounRE = regexp.MustCompile(`(?i)\b(it|them|they|this|these)\b`)

// resolvePronoun puts the subject in place of a pronoun that stands for it ("How should programs avoid it?"); a
// Chinese clause without the subject gets it in front ("分为哪几层？" → "上下文压缩分为哪几层？").
func resolvePronoun(clause, subject, lang string) string {
	if subject == "" || strings.Contains(clause, subject) {
		return clause
	}
	if lang == "zh" {
		return subject + clause
	}
	if loc := enPronounRE.FindStringIndex(clause); loc != nil {
		return clause[:loc[0]] + subject + clause[loc[1]:]
	}
	return clause
}

// domainPossessive reports a phrase of question that is one Latin word followed by a possessive mark and, by
// domain (vocabulary.domain), names the domain the question is asked in: "Go 的 context 包", "PostgreSQL's
// manual" over PostgreSQL's own.
func domainPossessive(question, phrase string, domain func(word string) bool) bool {
	return !hasCJK(phrase) && !strings.Contains(phrase, " ") && possessive(question, phrase) && domain(phrase)
}

// domainTail is the question's last phrase when it names the domain the question is asked in: Latin words after
// "of" or "in" (its article aside) that the sources are all about (vocabulary.setting), every one of them — "the
// url module of Node.js" over Node's API reference, "a mutex in Go" over Go's documentation, "schemas in a
// PostgreSQL database" over PostgreSQL's manual; "" for none. phrases are the question's (splitPhrases).
func domainTail(ctx context.Context, question string, phrases []phrase, v *vocabulary) string {
	k := len(phrases) - 1
	if k < 1 || phrases[k].Conj {
		return ""
	}
	w := phrases[k].Text
	if hasCJK(w) {
		return ""
	}
	if !v.settingWords(ctx, w, false) {
		return ""
	}
	i := strings.LastIndex(question, w)
	if i < 0 {
		return ""
	}
	before := strings.Fields(strings.ToLower(question[:i]))
	if n := len(before); n > 0 && (before[n-1] == "the" || before[n-1] == "a" || before[n-1] == "an") {
		before = before[:n-1]
	}
	if n := len(before); n == 0 || before[n-1] != "of" && before[n-1] != "in" {
		return ""
	}
	return w
}

// domainHead is the question's first phrase when it names the domain the question is asked in and more follows:
// proper names the sources are all about (vocabulary.setting), every word of it, not joined to the next phrase by a
// conjunction ("Rust and Go" compares them) — "Rust" of "Why won't Rust let me implement Display for Vec<String>?"
// over the Rust book, not "generics" of "Do generics have a runtime cost?", which the book uses nearly as widely;
// "" for none. phrases are the question's (splitPhrases).
func domainHead(ctx context.Context, phrases []phrase, v *vocabulary) string {
	if len(phrases) < 2 || phrases[1].Conj {
		return ""
	}
	w := phrases[0].Text
	if hasCJK(w) || !v.settingWords(ctx, w, true) {
		return ""
	}
	return w
}

// possessive reports a word of the question followed by a possessive mark: "Go 的", "Go's".
func possessive(q, word string) bool {
	i := strings.Index(q, word)
	if i < 0 {
		return false
	}
	rest := strings.TrimLeft(q[i+len(word):], " ")
	return strings.HasPrefix(rest, "的") || strings.HasPrefix(rest, "'s ") || strings.HasPrefix(rest, "’s ")
}

// withoutProperModifier is the proper-modifier heuristic: a phrase that opens with a capitalised word before
// other words ("Go context", "Go HTTP server") names its thing by the maker or language it belongs to, which the
// sources about it rarely repeat ("When a Context is canceled, …" in the context package's own documentation). It
// returns the key phrases without that word, as one more query variant (the analyst takes the best one), or "" when
// no phrase opens so. A name (HTTP, GODEBUG, sync.Map) is no modifier.
func withoutProperModifier(phrases []string) string {
	changed := false
	var out []string
	for _, ph := range phrases {
		f := strings.Fields(ph)
		if len(f) >= 2 && !hasCJK(f[0]) && !nameLike(f[0]) {
			if r, _ := utf8.DecodeRuneInString(f[0]); unicode.IsUpper(r) {
				f = f[1:]
				changed = true
			}
		}
		out = append(out, strings.Join(f, " "))
	}
	if !changed {
		return ""
	}
	return strings.Join(out, " ")
}
