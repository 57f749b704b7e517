package extractive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/lexical/bilingual"
	"github.com/deepresearch/deepresearch/lexical/synonyms"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/sources"
)

// Synthesizer writes the extractive report: a summary, a section per sub-question and the conflicts, every
// sentence an evidence claim followed by its citation marker.
type Synthesizer struct {
	cfg      Config
	sections *sectionMemo
	vocab    *vocabulary         // the words the sources use; nil or empty: unknown
	syn      *synonyms.Thesaurus // the English words there are; nil: unknown
}

// english reports a word the thesaurus knows in any of its forms, or the bilingual dictionary writes in its senses
// ("money", which has no synonym); with neither every word is known.
func (s *Synthesizer) english(w string) bool {
	d, err := bilingual.Default()
	if err != nil || s.syn == nil || d.SenseWord(w) {
		return true
	}
	senses, err := s.syn.Senses(w)
	return err != nil || len(senses) > 0
}

type labels struct {
	summary, conflicts, noEvidence, versus string
	// notCoveredAll and notCoveredTerms (%s: the terms, joined by listJoin) open a report whose question the
	// sources do not answer.
	notCoveredAll, notCoveredTerms, listJoin string
}

var reportLabels = map[string]labels{
	"en": {
		summary:         "Summary",
		conflicts:       "Conflicts between sources",
		noEvidence:      " — no grounded evidence found in the sources searched",
		versus:          "versus",
		notCoveredAll:   "Not covered: nothing in the sources searched answers this question.",
		notCoveredTerms: "Not covered: the sources searched never mention %s.",
		listJoin:        ", ",
	},
	"zh": {
		summary:         "摘要",
		conflicts:       "来源之间的冲突",
		noEvidence:      "（在所检索的来源中未找到可靠证据）",
		versus:          "对比",
		notCoveredAll:   "未涵盖：所检索的来源中没有回答这个问题的内容。",
		notCoveredTerms: "未涵盖：所检索的来源没有提到 %s。",
		listJoin:        "、",
	},
}

var evidenceIDRE = regexp.MustCompile(`\be\d+\b`)

// Synthesize implements research.Synthesizer. Citation markers are evidence ids in square brackets ("[e3]"),
// placed before each sentence's final punctuation so that the sentence and its citation are one sentence for the
// integrity check. On a second attempt the items named in in.Problems are left out.
func (s *Synthesizer) Synthesize(ctx context.Context, in research.SynthesisInput) (*research.Draft, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if in.Plan == nil {
		return nil, errors.New("extractive synthesize: no plan")
	}
	lang := in.Plan.Language
	if lang == "" {
		lang = lexical.Language(in.Plan.Question)
	}
	lb, ok := reportLabels[lang]
	if !ok {
		lb = reportLabels["en"]
	}
	bad := map[string]bool{}
	for _, p := range in.Problems {
		for _, id := range evidenceIDRE.FindAllString(p, -1) {
			bad[id] = true
		}
	}
	bySQ := map[string][]research.Evidence{}
	byID := map[string]research.Evidence{}
	for _, e := range in.Evidence {
		if e.ID == "" || bad[e.ID] || (e.Status != "" && e.Status != research.StatusAccepted) || strings.TrimSpace(e.Claim) == "" || label(e.Claim) ||
			s.vocab.boilerplate(ctx, e.Claim) {
			continue
		}
		bySQ[e.SubQuestion] = append(bySQ[e.SubQuestion], e)
		byID[e.ID] = e
	}
	for k := range bySQ {
		ev := bySQ[k]
		sort.SliceStable(ev, func(i, j int) bool {
			if ev[i].Confidence != ev[j].Confidence {
				return ev[i].Confidence > ev[j].Confidence
			}
			// Ties by source and quote, not by id: ids follow the order reads happened to finish in.
			if ev[i].Source != ev[j].Source {
				return ev[i].Source < ev[j].Source
			}
			return ev[i].Quote < ev[j].Quote
		})
	}

	var b strings.Builder
	// The graph writes the engine header ("extractive mode — no language model") and the sources list.
	fmt.Fprintf(&b, "# %s\n\n", in.Plan.Question)
	if len(in.Plan.SubQuestions) == 0 {
		return &research.Draft{Markdown: strings.TrimRight(b.String(), "\n") + "\n"}, nil
	}

	// The question itself draws on the whole pool, all items ranked alike: the pool keeps a quote once, under
	// whichever sub-question's read found it first.
	core := in.Plan.SubQuestions[0]
	var all []research.Evidence
	facets := map[string]string{}
	for _, sq := range in.Plan.SubQuestions {
		all = append(all, bySQ[sq.ID]...)
		facets[sq.ID] = facetOf(sq.Question)
	}
	// Nested claims across sub-questions: a claim another item states in full (a sentence quoted once alone and
	// once with its neighbour) is left to the fuller item, as the verifier does within one sub-question.
	nested := nestedClaims(all)
	if len(nested) > 0 {
		all = slices.DeleteFunc(all, func(e research.Evidence) bool { return nested[e.ID] })
		for k := range bySQ {
			bySQ[k] = slices.DeleteFunc(bySQ[k], func(e research.Evidence) bool { return nested[e.ID] })
		}
	}
	defines := definedTerms(ctx, in.Plan.Question, s.vocab)
	ranked := rankFor(core, all, facets, s.sections, defines)

	// Topic anchor: only items about what the question asks enter the report; the rest were relevant to a facet's
	// wording, not to the question.
	pool, variants, scores, best := s.focusOn(ctx, core, ranked)
	// Answer sections: the sections the best-matching items stand in state the answer, and their other items
	// belong to it even when they do not repeat the question's words ("If there is no default case, …" under
	// "Select statements"); an item elsewhere must match the question nearly as well as the best.
	onTopic := map[string]bool{}
	answerSection := map[string]bool{}
	for i, e := range ranked {
		if best > 0 && scores[i] >= focusShare*best {
			onTopic[e.ID] = true
			if h := s.sections.section(e.Source, e.Quote); h != "" {
				answerSection[docKey(e.Source)+"\x00"+h] = true
			}
		}
	}
	// Named subject: when the question names an API the pool mentions ("sync.Mutex"), an item that mentions none
	// of the question's names is about a neighbour ("A Value must not be copied …"), however much of the rest of
	// the question it repeats.
	setting := func(t string) bool { return s.vocab.setting(ctx, t) }
	subject, place := subjectAndPlace(ctx, in.Plan.Question, s.vocab)
	// A symbol the question names ("the ? operator") is the most specific name it can write: it alone is required.
	required := pool.namedSymbols(in.Plan.Question)
	if len(required) == 0 {
		required = pool.requiredNames(in.Plan.Question, subject, setting)
		if len(required) > 0 {
			required = append(required, pool.subjectIdentifiers(subject, s.english, setting)...)
		}
		required = append(required, titledSubjects(in.Plan.Question, ranked, func(t string) bool { return s.vocab.specific(ctx, t) })...)
	}
	if len(required) > 0 {
		for i, e := range ranked {
			if !pool.hasName(i, required) {
				onTopic[e.ID] = false
				scores[i] = 0
			}
		}
	}
	for i, e := range ranked {
		if !onTopic[e.ID] && scores[i] >= sectionShare*best && answerSection[docKey(e.Source)+"\x00"+s.sections.section(e.Source, e.Quote)] {
			onTopic[e.ID] = true
		}
	}
	// Answer documents: the pages that answer the question, not every page that shares some of its words.
	redundant := func(doc string) string { return s.vocab.redundant(ctx, doc) }
	about := focusVariants(ctx, research.SubQuestion{Question: subject, Queries: []string{strings.TrimSpace(subject + " " + place)}}, s.vocab)
	for doc, keep := range answerDocuments(ranked, scores, onTopic, variants, about, defines, s.sections, redundant) {
		if !keep {
			for _, e := range ranked {
				if docKey(e.Source) == doc {
					onTopic[e.ID] = false
				}
			}
		}
	}
	var answer []research.Evidence
	for _, e := range ranked {
		if onTopic[e.ID] {
			answer = append(answer, e)
		}
	}

	// Not covered: the question names something no source mentions, or nothing in the pool is about it.
	units := keyUnits(in.Plan.Question)
	var missing []string
	for _, u := range units {
		inPool := false
		for _, t := range lexical.Tokenize(u) {
			inPool = inPool || pool.df[t] > 0
		}
		if !inPool {
			missing = append(missing, u)
		}
	}
	// How closely one item answers the question without the word u (the other missing words still count).
	head := ""
	if f := strings.Fields(subject); len(f) > 0 {
		head = f[0]
	}
	bestOfRest := func(u string) float64 {
		if strings.EqualFold(u, head) {
			return 0 // the first word of the subject is what the question is about: never a matter of wording
		}
		rest := without(variants, []string{u})
		b := 0.0
		for i := range ranked {
			b = math.Max(b, pool.focus(rest, i))
		}
		return b
	}
	absent := s.absentTerms(ctx, pool, in.Plan.Question, subject, missing, bestOfRest)
	if len(absent) > 0 || len(answer) == 0 {
		what := lb.notCoveredAll
		if len(absent) > 0 {
			what = fmt.Sprintf(lb.notCoveredTerms, strings.Join(absent, lb.listJoin))
		}
		fmt.Fprintf(&b, "### %s\n", what)
		return &research.Draft{Markdown: b.String(), NotCovered: true}, nil
	}

	// Summary: the answer first — the best on-topic items, near-duplicates merged, the best one leading and rules
	// and definitions next.
	cited := map[string]bool{}
	var said []research.Evidence
	sayable := func(e research.Evidence) bool {
		return !cited[e.ID] && !containsNear(said, e.Claim)
	}
	var summary []research.Evidence
	summaryWords := 0
	for _, e := range answer {
		if len(summary) >= summaryMax || in.Words > 0 && len(summary) > 0 && summaryWords >= in.Words/2 {
			break
		}
		if sayable(e) {
			summary = append(summary, e)
			cited[e.ID] = true
			said = append(said, e)
			summaryWords += research.CountWords(e.Claim)
		}
	}
	// The item that answers the question best opens the summary whatever its kind; after it, rules and
	// definitions come before examples and remarks.
	if len(summary) > 1 {
		rest := summary[1:]
		sort.SliceStable(rest, func(i, j int) bool {
			return normative(passageKind(rest[i].Quote)) && !normative(passageKind(rest[j].Quote))
		})
	}
	fmt.Fprintf(&b, "## %s\n\n", lb.summary)
	var parts []string
	for _, e := range summary {
		parts = append(parts, cite(e.Claim, []string{e.ID}, lang))
	}
	b.WriteString(joinSentences(parts))
	b.WriteString("\n\n")

	// Sections: what each sub-question adds beyond the summary, each claim cited once in the whole report.
	// A clause with a subject of its own ("… And how do worker bees make beeswax?") is answered from the whole pool
	// by what is about its subject: the pool keeps a quote under whichever sub-question found it first, and the
	// question's subject, which decides what is on topic above, is not the clause's.
	own := ownSubjects(in.Plan.Question, subject, lang)
	for k, sq := range in.Plan.SubQuestions {
		ev := bySQ[sq.ID]
		topical := onTopic
		switch {
		case k == 0:
			ev = ranked
		case own[sq.Question]:
			ev, topical = s.clauseItems(ctx, sq, all, facets)
		default:
			ev = rankFor(sq, ev, facets, s.sections, nil)
		}
		if len(ev) == 0 {
			// Said in the heading: a note in the body would be an uncited sentence, which the integrity check
			// (rightly) refuses to publish.
			fmt.Fprintf(&b, "## %s%s\n\n", sq.Question, lb.noEvidence)
			continue
		}
		var shown []research.Evidence
		words := research.CountWords(b.String())
		for _, e := range ev {
			if len(shown) >= s.cfg.SectionItems {
				break
			}
			if in.Words > 0 && words >= in.Words {
				break // the length asked for: the best-ranked quotes of each section, no more
			}
			if !topical[e.ID] || !sayable(e) {
				continue
			}
			shown = append(shown, e)
			cited[e.ID] = true
			said = append(said, e)
			words += research.CountWords(e.Claim)
		}
		if len(shown) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n", sq.Question)
		for _, e := range shown {
			b.WriteString("- " + cite(e.Claim, []string{e.ID}, lang) + "\n")
		}
		b.WriteString("\n")
	}

	if in.Verdict != nil {
		var lines []string
		for _, c := range in.Verdict.Conflicts {
			if len(c.EvidenceIDs) < 2 {
				continue
			}
			a, okA := byID[c.EvidenceIDs[0]]
			z, okZ := byID[c.EvidenceIDs[1]]
			if !okA || !okZ {
				continue
			}
			// One sentence citing both sides: the conflict is stated with its evidence and nothing uncited is
			// published.
			end := "."
			if lang == "zh" {
				end = "。"
			}
			lines = append(lines, fmt.Sprintf("- %s: %s [%s]; %s %s [%s]%s", c.Description, quoteClaim(a.Claim, lang), a.ID,
				lb.versus, quoteClaim(z.Claim, lang), z.ID, end))
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "## %s\n\n%s\n\n", lb.conflicts, strings.Join(lines, "\n"))
		}
	}
	return &research.Draft{Markdown: strings.TrimRight(b.String(), "\n") + "\n"}, nil
}

// clauseItems ranks the pool for a clause that has a subject of its own (ownSubjects) and marks the items about
// it: those whose focus on the clause is within focusShare of the best.
func (s *Synthesizer) clauseItems(ctx context.Context, sq research.SubQuestion, pool []research.Evidence, facets map[string]string) ([]research.Evidence, map[string]bool) {
	ranked := rankFor(sq, pool, facets, s.sections, nil)
	_, _, scores, best := s.focusOn(ctx, sq, ranked)
	about := map[string]bool{}
	for i, e := range ranked {
		about[e.ID] = best > 0 && scores[i] >= focusShare*best
	}
	return ranked, about
}

// focusOn indexes the ranked items and scores each one's focus on sq (poolIndex.focus, with the sources' weights of
// its terms): the index, sq's focus variants, the scores and the best of them.
func (s *Synthesizer) focusOn(ctx context.Context, sq research.SubQuestion, ranked []research.Evidence) (*poolIndex, []variant, []float64, float64) {
	pool := indexPool(ranked, s.sections)
	pool.sourcesIDF = s.vocab.idf(ctx)
	variants := focusVariants(ctx, sq, s.vocab)
	scores := make([]float64, len(ranked))
	best := 0.0
	for i := range ranked {
		scores[i] = pool.focus(variants, i)
		best = math.Max(best, scores[i])
	}
	return pool, variants, scores, best
}

// summaryMax bounds the summary: the answer in at most six sentences.
const (
	summaryMax = 6
)

// subjectFirst is the gain of a sentence that opens with the subject of a question asking what it is.
const subjectFirst = 0.5

// definedTerms are the index terms of the subject of a question that asks what its subject is ("What is a trait in
// Rust?", "Rust 中的 trait 是什么？", a Chinese subject by its first English rendering); nil for any other question.
func definedTerms(ctx context.Context, question string, v *vocabulary) []string {
	if !asksDefinition(question) {
		return nil
	}
	subj := subjectOf(ctx, question, v)
	if hasCJK(subj) {
		var first []string
		for _, f := range strings.Fields(translateFor(v, subj)) {
			first = append(first, firstRendering(f))
		}
		subj = strings.Join(first, " ")
	}
	if hasCJK(subj) {
		return nil
	}
	return lexical.Tokenize(subj)
}

// opensWith reports a claim whose first index terms are the subject's (defines): its grammatical subject is what
// the question asks about ("A *trait* defines functionality …", "`CREATE SEQUENCE` creates a new sequence number
// generator").
func opensWith(claim string, defines []string) bool {
	t := lexical.Tokenize(claim)
	if len(defines) == 0 || len(t) < len(defines) {
		return false
	}
	for _, d := range defines {
		if !slices.Contains(t[:len(defines)], d) {
			return false
		}
	}
	return true
}

// rankFor orders the whole pool for one sub-question, every item by the same measure whichever sub-question's
// read found it: its confidence, re-based from the facet it was read for to sq's own (facets weigh examples
// differently), times how strongly its claim and source title match sq (BM25 over the pool, normalised to the
// best), up to a fifth more for a passage that opens its section, and half as much again (subjectFirst) for a
// sentence that opens with the subject of a question asking what it is (defines, its terms; nil otherwise): it says
// what the subject is, wherever it stands. Every item in the pool was judged relevant to some sub-question of this
// question, and the facets share its subject, so none is excluded: a weak match ranks low.
func rankFor(sq research.SubQuestion, ev []research.Evidence, facets map[string]string, sections *sectionMemo, defines []string) []research.Evidence {
	var query []string
	for _, q := range append([]string{sq.Question}, sq.Queries...) {
		for _, t := range lexical.Tokenize(q) {
			if !facetTerms[t] {
				query = append(query, t)
			}
		}
	}
	docs := make([][]string, len(ev))
	for i, e := range ev {
		// The lead sentence an item stands under says what it is about ("… should follow these rules:").
		_, lead, _ := strings.Cut(sections.get(e.Source, e.Quote), "\n")
		docs[i] = append(lexical.Tokenize(e.Claim+" "+lead), lexical.Tokenize(e.Title)...)
	}
	scores := lexical.NewBM25(docs).Scores(uniq(query))
	maxS := 0.0
	for _, x := range scores {
		maxS = max(maxS, x)
	}
	type scored struct {
		e research.Evidence
		s float64
	}
	var out []scored
	target := facetOf(sq.Question)
	for i, e := range ev {
		rel := scores[i] / max(maxS, 1e-9)
		k := passageKind(e.Quote)
		conf := e.Confidence * k.weight(target) / k.weight(facets[e.SubQuestion])
		s := conf * (0.4 + 0.6*rel)
		// A section's opening passages (sectionLead) state what it is about: "The Rc<T> type keeps track of the
		// number of references …" before the walk-through of a listing further down the same page.
		if at := sections.at(e.Source, e.Quote); at >= 0 {
			s *= 1 + 0.2*math.Max(0, 1-float64(at)/sectionLead)
		}
		if opensWith(e.Claim, defines) {
			s *= 1 + subjectFirst
		}
		out = append(out, scored{e, s})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].s != out[j].s {
			return out[i].s > out[j].s
		}
		if out[i].e.Source != out[j].e.Source {
			return out[i].e.Source < out[j].e.Source
		}
		return out[i].e.Quote < out[j].e.Quote
	})
	res := make([]research.Evidence, len(out))
	for i, x := range out {
		res[i] = x.e
	}
	return res
}

// nestedClaims returns the items whose claim is part of another item's longer claim (whole sentences, not
// a word inside a sentence).
func nestedClaims(ev []research.Evidence) map[string]bool {
	out := map[string]bool{}
	norm := make([]string, len(ev))
	for i, e := range ev {
		norm[i] = lexical.NormalizeSpace(e.Claim)
	}
	for i := range ev {
		for j := range ev {
			if i == j || len(norm[i]) >= len(norm[j]) || norm[i] == "" {
				continue
			}
			k := strings.Index(norm[j], norm[i])
			if k < 0 {
				continue
			}
			// Only at a sentence boundary: "A Mutex is …" inside "… says: A Mutex is …" is still a whole claim.
			before, _ := utf8.DecodeLastRuneInString(strings.TrimRight(norm[j][:k], " "))
			if k == 0 || strings.ContainsRune(".!?;:。！？；：", before) {
				out[ev[i].ID] = true
				break
			}
		}
	}
	return out
}

func containsNear(ev []research.Evidence, claim string) bool {
	for _, x := range ev {
		if lexical.SameClaim(x.Claim, claim, sameClaim) {
			return true
		}
	}
	return false
}

func quoteClaim(claim, lang string) string {
	claim = strings.TrimRightFunc(claim, func(r rune) bool { return unicode.IsPunct(r) && r != ')' && r != '）' })
	if lang == "zh" {
		return "“" + claim + "”"
	}
	return "\u201c" + claim + "\u201d"
}

// cite attaches citation markers to every sentence of text, before its final punctuation: "A [e3]. B [e3]." A
// marker after the full stop would be a sentence of its own and leave the text before it uncited. A sentence
// without final punctuation gets the full stop of its own script (Latin "." or Chinese "。"), whatever the
// report's language: an English quote in a Chinese report ends in ".". Its sentences are the report's, as the
// integrity check splits them (publish.SplitSentences): a claim's "'hello!' are packed …" is one sentence, which
// a split at every "!" would cut in two, each cited and neither whole.
func cite(text string, ids []string, lang string) string {
	marker := "[" + strings.Join(ids, ", ") + "]"
	var parts []string
	whole := label(text)
	for _, sent := range publish.SplitSentences(lexical.NormalizeSpace(text)) {
		body, end := splitEnd(sent)
		if body == "" {
			continue
		}
		// A label among the sentences of one claim ("Usage: (gdb) goroutine." before the sentence it labels)
		// states nothing on its own; it is left out when the claim says something else.
		if !whole && label(body) {
			continue
		}
		last, _ := utf8.DecodeLastRuneInString(body)
		cjkEnd := lexical.IsCJK(last) || unicode.IsPunct(last) && last > 0x3000
		if end == "" {
			end = "."
			if cjkEnd || (lang == "zh" || lang == "ja") && !unicode.IsLetter(last) && !unicode.IsDigit(last) && hasCJK(body) {
				end = "。"
			}
		}
		sep := " "
		if cjkEnd {
			sep = ""
		}
		parts = append(parts, body+sep+marker+end)
	}
	return joinSentences(parts)
}

// label reports a text of Latin script none of whose sentences has a verb ("Usage: (gdb) goroutine <goid>", "G state
// (runtime2.go)", a comment's heading): it names something and states nothing, so it is no finding on its own.
func label(text string) bool {
	if hasCJK(text) {
		return false
	}
	for _, sent := range publish.SplitSentences(lexical.NormalizeSpace(text)) {
		if lexical.HasVerb(sent) {
			return false
		}
	}
	return true
}

// joinSentences is the CJK/Latin spacing rule for running text: sentences are joined by a space, except a
// sentence ending in a full-width mark ("。") followed by one that starts with a CJK character. Never "[2].This".
func joinSentences(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			prev, _ := utf8.DecodeLastRuneInString(parts[i-1])
			next, _ := utf8.DecodeRuneInString(p)
			if !(prev > 0x3000 && (lexical.IsCJK(next) || next > 0x3000)) {
				b.WriteString(" ")
			}
		}
		b.WriteString(p)
	}
	return b.String()
}

// splitEnd separates a sentence's final punctuation. A closing bracket or quote stays with the body, and the
// full stop inside it moves out ("(… else.)" → "(… else)" + "."), so no sentence end precedes the marker.
func splitEnd(s string) (body, end string) {
	body = strings.TrimSpace(s)
	isEnd := func(r rune) bool { return strings.ContainsRune(".!?;:,。！？；：，、…", r) }
	for {
		r, n := utf8.DecodeLastRuneInString(body)
		if n == 0 || !isEnd(r) {
			break
		}
		if end == "" && strings.ContainsRune(".!?。！？", r) {
			end = string(r)
		}
		body = body[:len(body)-n]
	}
	// "(… else.)" and "“… stop.”": drop the sentence end inside the closer.
	if r, n := utf8.DecodeLastRuneInString(body); n > 0 && strings.ContainsRune(`)）"'”’」』`, r) {
		inner := body[:len(body)-n]
		trimmed := strings.TrimRightFunc(inner, isEnd)
		if trimmed != inner {
			if end == "" {
				end = "."
			}
			body = trimmed + string(r)
		}
	}
	return strings.TrimSpace(body), end
}

func normative(k kind) bool { return k == kindRule || k == kindDefinition }

// decisiveMargin is how much better than every other page's best item an item must answer for its page to be an
// answer document on its own.
const decisiveMargin = 1.15

// answerDocShare is how much of the best document's support another document needs for its items to be
// published beside it.
const answerDocShare = 0.65

// answerDocuments is the answer-document rule: it weighs each document by the support its on-topic items give
// (their focus times their confidence, a discounted sum), by how much of the question's subject its title and the
// headings of those items name, and by how much of its title's lead the question names (leadNamed), and keeps the
// documents within answerDocShare of the best. A page that states
// the answer states several of its parts under headings that name the subject ("References and Borrowing" for
// the rules of references); a page that shares some of the question's words in passing ("Treating Smart Pointers
// Like Regular References") gives fewer, weaker items. It returns, for every document with an on-topic item,
// whether to keep it. A document its source names redundant (a copy, a page of all pages) is never kept beside one
// that is not: the reader is sent to the page it repeats. A copy repeats one page, so it is left out beside that page
// (samePage) or beside one at least as well supported; when every page kept is another and weaker, the page the
// copy repeats is not among them (the search found the copy instead), and the copy is what states the answer. A
// page weighs at least what its copy does. The page of an item that answers clearly best (decisiveMargin) is kept
// whatever its support. When the question asks what something is (defines, its terms), the page
// whose title's lead names all of it counts its lead twice: it is the definition, and a page with more items that
// use the word in passing ("… with the Deref Trait", "Derivable Traits" beside "Traits") is no answer beside it.
func answerDocuments(ranked []research.Evidence, scores []float64, onTopic map[string]bool, variants, about []variant, defines []string, sections *sectionMemo, redundant func(doc string) string) map[string]bool {
	gains := map[string][]float64{}
	top := map[string]float64{} // each document's best item
	where := map[string]map[string]bool{}
	titles := map[string]string{}
	for i, e := range ranked {
		if !onTopic[e.ID] {
			continue
		}
		d := docKey(e.Source)
		titles[d] = e.Title
		gains[d] = append(gains[d], scores[i]*e.Confidence)
		top[d] = math.Max(top[d], scores[i])
		if where[d] == nil {
			where[d] = map[string]bool{}
		}
		h, _, _ := strings.Cut(sections.get(e.Source, e.Quote), "\n")
		for _, t := range lexical.Tokenize(e.Title + " " + h) {
			where[d][t] = true
		}
	}
	// The best item's page: the item that answers the question clearly best (by decisiveMargin over every other
	// page's best) is published whatever the support of its page, one sentence against many weaker ones.
	decisive, first, second := "", 0.0, 0.0
	for d, sc := range top {
		switch {
		case sc > first:
			decisive, first, second = d, sc, first
		case sc > second:
			second = sc
		}
	}
	if first < decisiveMargin*second {
		decisive = ""
	}
	weight := map[string]float64{}
	for d, g := range gains {
		lf := 1 + leadNamed(variants, about, titles[d])
		if titledBy(titles[d], defines) {
			lf *= lf
		}
		weight[d] = discountedSum(g) * (1 + namedShare(variants, where[d])) * lf
	}
	// A copy's support is its page's: the page weighs at least what its copy does, so a copy that happens to
	// outweigh its page (its chunks cut elsewhere) does not push the page under the share of the best.
	repeats := map[string]string{}
	if redundant != nil {
		for d := range weight {
			repeats[d] = redundant(d)
		}
		for d, r := range repeats {
			if r != sources.RedundantCopy {
				continue
			}
			for o := range weight {
				if repeats[o] == "" && samePage(d, o, titles) {
					weight[o] = math.Max(weight[o], weight[d])
				}
			}
		}
	}
	best := 0.0
	for _, w := range weight {
		best = math.Max(best, w)
	}
	out := map[string]bool{}
	why := map[string]string{}
	strongest := 0.0 // the best-supported original kept
	for d, w := range weight {
		out[d] = w >= answerDocShare*best || d == decisive
		if out[d] {
			if r := repeats[d]; r != "" {
				why[d] = r
				out[d] = false // decided below, once it is known which originals are kept
				continue
			}
		}
		if out[d] {
			strongest = math.Max(strongest, w)
		}
	}
	ownPageKept := func(d string) bool {
		for o, kept := range out {
			if kept && why[o] == "" && samePage(d, o, titles) {
				return true
			}
		}
		return false
	}
	for d, r := range why {
		// With no original kept, only repeats answer: they are what the sources have.
		out[d] = strongest == 0 || r == sources.RedundantCopy && weight[d] > strongest && !ownPageKept(d)
	}
	return out
}

// titledBy reports a title whose lead (titleLeadWords) has every one of the terms; false for none.
func titledBy(title string, terms []string) bool {
	if len(terms) == 0 {
		return false
	}
	lead := titleLeadWords(title)
	return !slices.ContainsFunc(terms, func(t string) bool { return !slices.Contains(lead, t) })
}

// samePage reports two documents that are one page: the same title, or the same name but for the extension in
// the same folder (api/cluster.md, the source of api/cluster.html).
func samePage(a, b string, titles map[string]string) bool {
	if titles[a] != "" && titles[a] == titles[b] {
		return true
	}
	stem := func(u string) string { return strings.TrimSuffix(u, path.Ext(u)) }
	return stem(a) == stem(b)
}

// discountedSum is a document's support from its items' gains, best first, the k-th weighted 1/log2(k+1) as a
// discounted cumulative gain weighs a ranking: a page's further items add to its support less and less, so a page
// that repeats the question's words in its title under many items does not outweigh the page whose few items
// state the answer.
func discountedSum(gains []float64) float64 {
	g := slices.Clone(gains)
	slices.SortFunc(g, func(a, b float64) int { return cmp.Compare(b, a) })
	sum := 0.0
	for k, x := range g {
		sum += x / math.Log2(float64(k)+2)
	}
	return sum
}

// leadNamed is the largest share of the words of a title's lead (titleLeadWords) that one variant names: 1 for
// "Traits" or "3.4. Transactions" when the question asks about traits or transactions, 1/8 for "Treating Smart
// Pointers Like Regular References with the Deref Trait". namedShare measures how much of the question a page's
// title and headings name; this measures how much of the title is the question's, so the page about the subject
// outweighs the page that mentions it in its title's tail. A lead that names nothing of about (the question's
// subject and the place it is asked in, subjectAndPlace) counts 0: "Rules on INSERT, UPDATE, and DELETE" names
// what "the RETURNING clause of INSERT, UPDATE and DELETE" is asked of, not the clause. Nil about: no such check.
func leadNamed(variants, about []variant, title string) float64 {
	words := titleLeadWords(title)
	if len(words) == 0 {
		return 0
	}
	if about != nil {
		inLead := map[string]bool{}
		for _, w := range words {
			inLead[w] = true
		}
		if namedShare(about, inLead) == 0 {
			return 0
		}
	}
	best := 0.0
	for _, v := range variants {
		named := map[string]bool{} // the variant's terms (an alternatives unit's mark is no word of a title)
		for _, unit := range v {
			for _, t := range unit {
				named[t] = true
			}
		}
		hit := 0
		for _, w := range words {
			if named[w] {
				hit++
			}
		}
		best = math.Max(best, float64(hit)/float64(len(words)))
	}
	return best
}

// namedShare is the largest share of one variant's units that terms name (any term of a unit counts).
func namedShare(variants []variant, terms map[string]bool) float64 {
	best := 0.0
	for _, v := range variants {
		n, hit := 0, 0
		for _, unit := range v {
			if isAlt(unit) {
				unit = unit[1:]
			}
			if len(unit) == 0 {
				continue
			}
			n++
			for _, t := range unit {
				if terms[t] {
					hit++
					break
				}
			}
		}
		if n > 0 {
			best = math.Max(best, float64(hit)/float64(n))
		}
	}
	return best
}
