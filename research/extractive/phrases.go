package extractive

import (
	"context"
	"html"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/lexical/bilingual"
	"github.com/deepresearch/deepresearch/lexical/synonyms"
	"github.com/deepresearch/deepresearch/research/publish"
)

// phrase is a run of content words of the question, in its original spelling.
type phrase struct {
	Text string
	// Conj marks a phrase joined to the previous one by a conjunction ("A and B", "A 和 B").
	Conj bool
}

// question parts: separators end a phrase; conjunctions also join the phrases around them into one group.
var (
	enSeparators = toSet(`a an the of to in on at by for with from into onto over under about regarding through
		between among across via within without during after before per vs versus
		is are was were be been being am do does did done have has had having can could should would will shall
		may might must what which who whom whose when where why how it its this that these those there here
		i me my we us our you your he him his she her they them their mine yours ours theirs hers than such any some
		each every please tell as if while whereas because although though
		explain describe s t not
		rule rules program programs way ways thing things difference differences example examples
		part parts aspect aspects someone something anything follow follows instead whether
		won't can't cannot don't doesn't didn't isn't aren't wasn't weren't hasn't haven't hadn't wouldn't shouldn't
		couldn't mustn't needn't shan't ` + lexical.NegationRemnants)
	// enPermissionWords open "let me …" and "lets us …": the action after them is what is asked.
	enPermissionWords = toSet(`let lets`)
	// enKindWords end a phrase only as the head of "… of": "what kind of lock", "all sorts of values"; "Are sorts
	// in Python stable?" asks about sorts.
	enKindWords    = toSet(`kind kinds sort sorts`)
	enConjunctions = toSet(`and or vs versus nor`)
	// enClauseOpener is a word that opens a question of its own after "and" ("… and how should programs avoid it?").
	enClauseOpener = regexp.MustCompile(`^(` + enClauseOpeners + `)$`)
	// enHowWords complete "how" into a question word: how long, how many, how much, how often, how far.
	enHowWords = toSet(`long many much often far`)
	// relationVerbs name what the question asks of its subject; they are facets, not topics.
	enRelationVerbs = toSet(`say says said guarantee guarantees guaranteed promise promises ensure ensures
		require requires specify specifies define defines mean means allow allows permit permits provide provides
		state states handle handles treat treats work works differ differs compare compares affect affects
		recommend recommends support supports describe describes use uses used using happen happens`)
	// zhSeparators are the question words and particles that end a phrase besides the ones the bilingual
	// dictionary knows as question words (什么, 如何, 为什么, 是否, 哪些: see bilingual.Dict.Interrogative); they are
	// the ones whose dictionary senses are content words (方面 "aspect", 分别 "respectively", 可以 "can").
	zhSeparators = []string{"是什么", "有什么", "有哪些", "应该", "代替", "多少", "关于", "对于", "针对", "如何做", "怎么做", "做到", "做", "之间", "方面", "分别", "可以", "请问", "请", "的", "吗", "呢"}
	// zhWhichRE is "which/how many" with its numeral and classifier ("有哪五个", "哪几层", "几种"): a question word,
	// not part of the phrase it asks about.
	zhWhichRE      = regexp.MustCompile(`^(?:有?哪[一二三四五六七八九十两几0-9]*[些个种类层步项条件点里儿]?|几[个种类层步项条件点])`)
	zhConjunctions = []string{"以及", "还是", "或者", "和", "与", "及", "或", "、"}
	// zhRelationVerbs are the question's facet words: "有什么保证" asks for guarantees of its subject.
	zhRelationVerbs = toSet(`保证 规定 要求 区别 不同 差异 作用 影响 定义 原因 优势 局限 方法 做法 机制 策略 处理 说明 建议 含义 意思`)
)

func toSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// splitPhrases returns the question's content phrases and the relation verb(s) it asks about.
func splitPhrases(q string) (phrases []phrase, verbs []string) {
	if lexical.Language(q) == "zh" || hasCJK(q) {
		phrases, verbs = splitZH(q)
	} else {
		phrases, verbs = splitEN(q)
	}
	out := phrases[:0]
	for _, ph := range phrases {
		if ph.Text = withoutPlaceholders(ph.Text); ph.Text != "" {
			out = append(out, ph)
		}
	}
	return out, verbs
}

// placeholderNames are the metasyntactic variables programmers write for a name of their own ("src/foo/mod.rs",
// "bar.baz()"): no source uses them for the thing asked about.
var placeholderNames = toSet(`foo bar baz qux quux corge grault garply waldo fred plugh xyzzy thud hoge fuga piyo`)

// withoutPlaceholders drops the placeholder parts of the names of a phrase — paths, dotted names, calls — keeping
// the others as words: "src/foo/mod.rs" is asked as "src mod rs", "src/foo.rs" as "src rs", and "foo.bar()" goes.
// A word standing alone is left as it is: "bar" of "a progress bar" is a word, not a placeholder.
func withoutPlaceholders(text string) string {
	placeholder := func(p string) bool { return placeholderNames[strings.ToLower(strings.TrimSuffix(p, "()"))] }
	f := strings.Fields(text)
	changed := false
	for i, w := range f {
		parts := strings.FieldsFunc(w, func(r rune) bool { return r == '/' || r == '.' || r == '\\' })
		if len(parts) < 2 && !strings.HasSuffix(w, "()") || !slices.ContainsFunc(parts, placeholder) {
			continue
		}
		changed = true
		f[i] = strings.Join(slices.DeleteFunc(parts, placeholder), " ")
	}
	if !changed {
		return text
	}
	return strings.Join(strings.Fields(strings.Join(f, " ")), " ")
}

func hasCJK(s string) bool {
	for _, r := range s {
		if lexical.IsCJK(r) {
			return true
		}
	}
	return false
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}'_./+#-]*[\p{L}\p{N}+#]|[\p{L}\p{N}]|[,;:?!()"]`)

// enClauseOpeners are the question words and auxiliaries with which a second question follows "and".
const enClauseOpeners = `how|what|why|when|where|which|who|is|are|does|do|can|should`

func splitEN(q string) (out []phrase, verbs []string) {
	var cur []string
	conj := false
	// listed[k]: phrase k follows phrase k-1 right after a comma ("INSERT, UPDATE and DELETE").
	listed := map[int]bool{}
	afterComma := false
	flush := func() {
		// A gerund before a name is its verb: "running pg_dump", "calling os.Exit".
		if len(cur) > 1 && len(cur[0]) > 4 && strings.HasSuffix(strings.ToLower(cur[0]), "ing") && nameLike(cur[1]) {
			verbs = append(verbs, strings.ToLower(cur[0]))
			cur = cur[1:]
		}
		if len(cur) > 0 {
			out = append(out, phrase{Text: strings.Join(cur, " "), Conj: conj})
			conj = false
		}
		cur = nil
	}
	prev := ""
	// "Is it a good idea to rely on …?" judges the clause after "to": the predicate and the clause's verb say what
	// is asked of the subject, as a relation verb does, and the subject is the verb's object.
	frameEnd, frameVerb := 0, false
	if m := askedFrameRE.FindStringIndex(q); m != nil {
		frameEnd, frameVerb = m[1], strings.HasSuffix(q[:m[1]], " to")
	}
	var words []string
	var at []int
	for _, loc := range wordRE.FindAllStringIndex(q, -1) {
		words, at = append(words, q[loc[0]:loc[1]]), append(at, loc[0])
	}
	for i, w := range words {
		lw := strings.ToLower(w)
		after := prev
		prev = lw
		if at[i] < frameEnd || frameVerb && after == "to" && at[i-1] < frameEnd {
			if isWordish(w) && !enSeparators[lw] {
				verbs = append(verbs, lw)
			}
			continue
		}
		kindOf := enKindWords[lw] && i+1 < len(words) && strings.EqualFold(words[i+1], "of")
		// "cidr rather than inet" compares the two as "cidr or inet" does; "than" is a separator.
		ratherThan := lw == "rather" && i+1 < len(words) && strings.EqualFold(words[i+1], "than")
		// The comma itself ends the phrase before it (below); a content word right after it opens the next.
		if afterComma && len(out) > 0 && isWordish(w) && !enConjunctions[lw] && !enSeparators[lw] && !enRelationVerbs[lw] && !kindOf {
			listed[len(out)] = true
		}
		afterComma = w == ","
		switch {
		case after == "how" && enHowWords[lw]:
			// "How long", "how many": one question word, not a topic.
			flush()
		case enPermissionWords[lw] && i+1 < len(words) && (strings.EqualFold(words[i+1], "me") || strings.EqualFold(words[i+1], "us")):
			flush()
		case enConjunctions[lw] || ratherThan:
			flush()
			conj = len(out) > 0
		case enSeparators[lw] || kindOf || !isWordish(w):
			flush()
			if !isWordish(w) && w != "," || conj && enClauseOpener.MatchString(lw) {
				// "… in Python and how do they differ from …": the conjunction joins two questions, not two
				// phrases.
				conj = false
			}
		case enRelationVerbs[lw]:
			flush()
			verbs = append(verbs, lw)
		case isQualifiedIdent(w):
			// "sync.Once synchronize initialization": the API name is a phrase of its own.
			flush()
			cur = append(cur, w)
			flush()
		case calledAt(q, words, at, i):
			// "inserts log rows with now()": a name written as a call is code, a phrase of its own, and keeps its
			// parentheses to say so.
			flush()
			cur = append(cur, w+"()")
			flush()
		default:
			cur = append(cur, w)
		}
	}
	flush()
	// A serial list joins all its items: "INSERT, UPDATE and DELETE" is one group of three, as "A and B" is of two.
	for i := len(out) - 1; i > 0; i-- {
		if !out[i].Conj {
			continue
		}
		for k := i - 1; k > 0 && listed[k]; k-- {
			out[k].Conj = true
		}
	}
	return out, verbs
}

// calledAt reports a word of the question (words[i], at byte at[i] of q) written as a call: a plain identifier
// with an opening parenthesis right after it ("now()", "lower(email)").
func calledAt(q string, words []string, at []int, i int) bool {
	w := words[i]
	if i+1 >= len(words) || words[i+1] != "(" || at[i+1] != at[i]+len(w) || !identRE.MatchString(w) {
		return false
	}
	return strings.Contains(q[at[i+1]:], ")")
}

// isQualifiedIdent reports a Go-style qualified name such as sync.Once or errors.Join.
func isQualifiedIdent(w string) bool {
	pkg, name, ok := strings.Cut(w, ".")
	if !ok || pkg == "" || name == "" || strings.Contains(name, ".") {
		return false
	}
	r, _ := utf8.DecodeRuneInString(name)
	return unicode.IsLetter(r) && unicode.IsLower([]rune(pkg)[0])
}

func isWordish(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// splitZH cuts a Chinese question at its function words and punctuation. Latin words inside it ("Go",
// "Claude Code") stay whole.
func splitZH(q string) (out []phrase, verbs []string) {
	var cur strings.Builder
	conj := false
	flush := func() {
		t := strings.TrimSpace(cur.String())
		cur.Reset()
		if t == "" {
			return
		}
		// A trailing relation verb is the facet asked for ("…有什么保证" → 保证).
		if zhRelationVerbs[t] {
			verbs = append(verbs, t)
			return
		}
		out = append(out, phrase{Text: t, Conj: conj})
		conj = false
	}
	words := wordsAt(q)
	rs := q
	for len(rs) > 0 {
		matched := false
		for _, c := range zhConjunctions {
			if strings.HasPrefix(rs, c) && cur.Len() > 0 {
				flush()
				conj = len(out) > 0
				rs = rs[len(c):]
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		if m := zhWhichRE.FindString(rs); m != "" {
			flush()
			rs = rs[len(m):]
			continue
		}
		w, isWord := words[len(q)-len(rs)]
		if isWord && w.question {
			flush()
			rs = rs[len(w.text):]
			continue
		}
		for _, s := range zhSeparators {
			if strings.HasPrefix(rs, s) {
				flush()
				rs = rs[len(s):]
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		r, n := utf8.DecodeRuneInString(rs)
		rs = rs[n:]
		// A preposition ("对通道通信", "在 Go 中") ends the phrase where the dictionary reads it as a word of its
		// own, not inside one (对象, 存在, 现在).
		if isWord && zhPrepositions[w.text] {
			flush()
			continue
		}
		// A hyphen, dot or underscore inside a Latin name ("claude-code", "sync.Map") is part of it.
		if strings.ContainsRune("-._/", r) && latinBefore(cur.String()) && latinAfter(rs) {
			cur.WriteRune(r)
			continue
		}
		if unicode.IsPunct(r) || unicode.IsSymbol(r) {
			flush()
			if r != '，' && r != ',' && r != '、' {
				conj = false
			}
			continue
		}
		cur.WriteRune(r)
	}
	flush()
	// An English word list inside a Chinese question ("Go 的 channel") is still split at English stop words.
	var clean []phrase
	for _, p := range out {
		if !hasCJK(p.Text) {
			sub, v := splitEN(p.Text)
			verbs = append(verbs, v...)
			for i := range sub {
				if i == 0 {
					sub[i].Conj = p.Conj
				}
			}
			clean = append(clean, sub...)
			continue
		}
		clean = append(clean, p)
	}
	return clean, verbs
}

// zhPrepositions are single characters that usually introduce a phrase ("对通道通信", "在 Go 中", the object marker
// of "把 socket 设为非阻塞", the passive "被删除") but are also part of common words (对象, 存在, 把握, 被动),
// which the dictionary's segmentation keeps whole.
var zhPrepositions = map[string]bool{"对": true, "在": true, "把": true, "被": true}

// zhWord is a word of a question's segmentation by the bilingual dictionary; question marks a question word or a
// grammar character, which end a phrase.
type zhWord struct {
	text     string
	question bool
}

// wordsAt maps the byte offset of each Chinese word of q, as the bilingual dictionary segments it, to the word.
func wordsAt(q string) map[int]zhWord {
	d, err := bilingual.Default()
	if err != nil {
		return nil
	}
	words := map[int]zhWord{}
	for _, seg := range d.Segment(q) {
		if seg.CJK {
			// A single character whose first sense is grammar (是 "to be", 它 "it", 能 "can") ends a phrase as a
			// question word does; a longer one ("取消一个 context 时") may be part of the phrase.
			q := d.Interrogative(seg.Text) || utf8.RuneCountInString(seg.Text) == 1 && d.Grammatical(seg.Text)
			words[seg.Start] = zhWord{text: seg.Text, question: q}
		}
	}
	return words
}

// translateFor renders a Chinese text in English with the bilingual dictionary (the dictionary-based query
// translation of classic cross-language retrieval): each Chinese word by its best English renderings, a word the
// dictionary lacks as written, function words dropped, Latin words kept. It returns "" when no Chinese word was
// rendered, so an untranslatable text adds no query. Each word's renderings are chosen among all its senses by
// how much the sources use them, and adjacent words' together by the phrases they use, through the renderings'
// WordNet synonyms where their own make none (see bilingual.Dict.ToEnglishBy); a nil or empty vocabulary keeps the
// dictionary's choice.
func translateFor(v *vocabulary, s string) string {
	d, err := bilingual.Default()
	if err != nil {
		return ""
	}
	t, _ := d.ToEnglishBy(s, v.usage(), relatedWords(synonyms.Embedded()))
	return t
}

// relatedWords gives the dictionary the synonyms of an English word's synonymSenses most frequent senses, a
// compound one by its head: an English compound names a kind of its last word, so "male parent" for "father"
// offers "parent" (父表, the "parent table" of a database manual). Nil without a thesaurus, and none for a word when
// the thesaurus cannot be read.
func relatedWords(th *synonyms.Thesaurus) bilingual.Related {
	if th == nil {
		return nil
	}
	return func(w string) []string {
		rs, err := th.Related(w, synonymSenses)
		if err != nil {
			return nil
		}
		var out []string
		for _, r := range rs {
			if f := strings.Fields(r); len(f) > 1 {
				r = f[len(f)-1]
			}
			if latinWord(r) && !strings.EqualFold(r, w) {
				out = append(out, r)
			}
		}
		return dedupe(out)
	}
}

// usage is the vocabulary as the dictionary asks it: in how many passages the sources use a word, or the words of
// a phrase one after the other, 0 for one they do not use (one passage may be a stray mention, see
// minCorpusUses), -1 when no source can tell; nil with no source that can.
func (v *vocabulary) usage() bilingual.Usage {
	if v == nil || len(v.srcs) == 0 {
		return nil
	}
	return func(w string) int {
		ctx := context.Background()
		freq := v.docFreq
		if strings.Contains(w, " ") {
			freq = v.phraseFreq
		}
		switch df, _, known := freq(ctx, w); {
		case !known:
			return -1
		case df < minCorpusUses:
			return 0
		default:
			return df
		}
	}
}

// confidentRendering reports whether every Chinese content word of s is a headword of two or more characters that
// CC-CEDICT itself has: a single character has many senses and the dictionary's first is often not the one meant; a
// word it lacks is not rendered at all; a word of the computing supplement alone is rendered to search with, not
// to judge by (its renderings are ECDICT's only, and one the sources do not write would read as an absence).
func confidentRendering(s string) bool {
	d, err := bilingual.Default()
	if err != nil {
		return false
	}
	for _, seg := range d.Segment(s) {
		if seg.CJK && !seg.Function && (!seg.Known || seg.Supplied || utf8.RuneCountInString(seg.Text) < 2) {
			return false
		}
	}
	return true
}

// senseWord reports whether the bilingual dictionary writes the English word as spelled in a sense
// (bilingual.Dict.SenseWord): its Chinese renderings are then the word's own, not a guess from another form of it.
func senseWord(en string) bool {
	d, err := bilingual.Default()
	return err == nil && d.SenseWord(en)
}

// firstRendering is the best of a translated word's renderings, which translateFor writes "command|order".
func firstRendering(word string) string {
	first, _, _ := strings.Cut(word, "|")
	return first
}

// nounWord reports whether the bilingual dictionary writes the English word on its own as a sense, not only as
// an action ("to create"): bilingual.Dict.Noun.
func nounWord(en string) bool {
	d, err := bilingual.Default()
	return err == nil && d.Noun(en)
}

// translateZH renders an English text in Chinese for a search over Chinese documents: runs of its words that are
// one sense of a headword become that headword, names and code stay as written; "" when nothing was rendered.
// The sources' vocabulary is not asked here: alone, the renderings it chooses lose words the dictionary's first
// choice finds; usedZH gives them beside this one.
func translateZH(s string) string {
	d, err := bilingual.Default()
	if err != nil {
		return ""
	}
	t, _ := d.ToChinese(s)
	return t
}

// usedZH renders an English text in Chinese choosing the headwords by the sources' usage (see
// bilingual.Dict.ToChineseBy): the words the documents themselves write (端口 for "port" in a manual, not 港口). It
// is searched and matched beside translateZH's rendering, never instead of it.
func usedZH(v *vocabulary, s string) string {
	d, err := bilingual.Default()
	if err != nil {
		return ""
	}
	t, _ := d.ToChineseBy(s, v.usage())
	return t
}

// searchableZH is the Chinese rendering of an English query when it can find something the English cannot: "" when
// the sources' vocabulary is known and they use none of its Chinese words (English documents), where the rendering
// would match only the words it leaves in English and add their passages to the search as noise.
func searchableZH(v *vocabulary, s string) string {
	t := translateZH(s)
	if t == "" || v == nil || len(v.srcs) == 0 {
		return t
	}
	ctx := context.Background()
	known := false
	for _, f := range strings.Fields(t) {
		for _, w := range strings.Split(f, bilingual.Alternatives) {
			if !hasCJK(w) {
				continue
			}
			df, _, ok := v.docFreq(ctx, w)
			if ok && df > 0 {
				return t
			}
			known = known || ok
		}
	}
	if known {
		return ""
	}
	return t
}

var (
	mdLinkRE     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	mdEmphRE     = regexp.MustCompile("(\\*\\*|__|\\*|`)")
	mdLeadRE     = regexp.MustCompile(`^\s*(#{1,6}\s+|[-*+•]\s+|\d+[.)]\s+|>\s*)+`)
	htmlTagRE    = regexp.MustCompile(`</?[a-zA-Z][^>]*>`)
	tableCellsRE = regexp.MustCompile(`\s*\|\s*`)
	// mdEscapeRE is a Markdown backslash escape ("map\[any]any").
	mdEscapeRE = regexp.MustCompile(`\\([\\\[\]()_#<>{}.!|-])`)
)

// plainText renders a Markdown/HTML fragment as plain prose for a claim (claims, unlike quotes, need not be
// verbatim). A code span keeps its text as written, without its backticks: `Vec<u8>`, `*args` and `a ** b` are
// code, not a tag or emphasis.
func plainText(s string) string {
	s = mdLinkRE.ReplaceAllString(s, "$1")
	s = mdLeadRE.ReplaceAllString(s, "")
	var b strings.Builder
	prose := func(t string) {
		t = htmlTagRE.ReplaceAllString(t, "")
		t = mdEmphRE.ReplaceAllString(t, "")
		b.WriteString(mdEscapeRE.ReplaceAllString(t, "$1"))
	}
	at := 0
	for _, c := range lexical.CodeSpans(s) {
		prose(s[at:c.Start])
		if code := s[c.Code[0]:c.Code[1]]; publish.ReadsAsCitation(code) {
			b.WriteString(s[c.Start:c.End]) // "`[1, 2, 3]`" is a list in code, no citations
		} else {
			b.WriteString(code)
		}
		at = c.End
	}
	prose(s[at:])
	s = strings.Trim(tableCellsRE.ReplaceAllString(b.String(), " | "), " |")
	return lexical.NormalizeSpace(html.UnescapeString(s))
}

// trimQuote drops Markdown list and heading markers and table pipes from the ends of a quote. It only ever
// shortens the span from its ends, so the result is still a verbatim substring of the text.
func trimQuote(text string, s, e int) (int, int) {
	if m := mdLeadRE.FindStringIndex(text[s:e]); m != nil && m[0] == 0 && s+m[1] < e {
		s += m[1]
	}
	for e > s && strings.ContainsRune(" \t\n|", rune(text[e-1])) {
		e--
	}
	for s < e && strings.ContainsRune(" \t\n|", rune(text[s])) {
		s++
	}
	return s, e
}

func latinBefore(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

func latinAfter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r))
}
