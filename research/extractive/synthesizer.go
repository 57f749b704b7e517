package extractive

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
)

// Synthesizer writes the extractive report: a summary, a section per sub-question and the conflicts, every
// sentence an evidence claim followed by its citation marker.
type Synthesizer struct{ cfg Config }

type labels struct {
	summary, conflicts, noEvidence, versus string
}

var reportLabels = map[string]labels{
	"en": {
		summary:    "Summary",
		conflicts:  "Conflicts between sources",
		noEvidence: " — no grounded evidence found in the sources searched",
		versus:     "versus",
	},
	"zh": {
		summary:    "摘要",
		conflicts:  "来源之间的冲突",
		noEvidence: "（在所检索的来源中未找到可靠证据）",
		versus:     "对比",
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
		if e.ID == "" || bad[e.ID] || (e.Status != "" && e.Status != research.StatusAccepted) || strings.TrimSpace(e.Claim) == "" {
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

	// The question itself draws on the whole pool, all items ranked alike: the pool keeps a quote once, under
	// whichever sub-question's read found it first, so the passage that answers the question best may sit under
	// one of its facets — and which one depends on the order reads finished in.
	if len(in.Plan.SubQuestions) > 0 {
		core := in.Plan.SubQuestions[0]
		var all []research.Evidence
		facets := map[string]string{}
		for _, sq := range in.Plan.SubQuestions {
			all = append(all, bySQ[sq.ID]...)
			facets[sq.ID] = facetOf(sq.Question)
		}
		bySQ[core.ID] = rankFor(core, all, facets)
	}

	var b strings.Builder
	// The graph writes the engine header ("extractive mode — no language model") and the sources list.
	fmt.Fprintf(&b, "# %s\n\n", in.Plan.Question)

	// Summary: the items that answer the question itself best lead, then the best of each facet not yet said,
	// at most summaryMax sentences.
	var summary []research.Evidence
	pick := func(e research.Evidence) bool {
		if len(summary) >= summaryMax {
			return false
		}
		for _, x := range summary {
			if x.ID == e.ID || lexical.SameClaim(x.Claim, e.Claim, sameClaim) {
				return false
			}
		}
		summary = append(summary, e)
		return true
	}
	for i, sq := range in.Plan.SubQuestions {
		n := 1
		if i == 0 {
			n = summaryCore
		}
		for _, e := range bySQ[sq.ID] {
			if n == 0 {
				break
			}
			// A facet adds its best item only when it states something: its example or a remark would not answer
			// the question.
			if i > 0 && !normative(passageKind(e.Quote)) {
				break
			}
			if pick(e) {
				n--
			}
		}
	}
	// A question with few facets found still gets a summary of summaryMin sentences when the pool has them.
	if len(in.Plan.SubQuestions) > 0 {
		for _, e := range bySQ[in.Plan.SubQuestions[0].ID] {
			if len(summary) >= summaryMin {
				break
			}
			pick(e)
		}
	}
	// Normative first: rules and definitions lead, each group in its ranked order.
	sort.SliceStable(summary, func(i, j int) bool {
		return normative(passageKind(summary[i].Quote)) && !normative(passageKind(summary[j].Quote))
	})
	if len(summary) > 0 {
		fmt.Fprintf(&b, "## %s\n\n", lb.summary)
		for _, e := range summary {
			b.WriteString(cite(e.Claim, []string{e.ID}, lang))
			b.WriteString(" ")
		}
		b.WriteString("\n\n")
	}

	// Sections: a claim an earlier section already made is cited there, not repeated, unless the section would
	// otherwise be left with nothing.
	var before []research.Evidence
	for k, sq := range in.Plan.SubQuestions {
		limit := s.cfg.SectionItems
		if k == 0 {
			limit *= 2 // the question itself gets the room
		}
		ev := bySQ[sq.ID]
		if len(ev) == 0 {
			// Said in the heading: a note in the body would be an uncited sentence, which the integrity check
			// (rightly) refuses to publish.
			fmt.Fprintf(&b, "## %s%s\n\n", sq.Question, lb.noEvidence)
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n", sq.Question)
		var shown, repeats []research.Evidence
		for _, e := range ev {
			if len(shown) >= limit {
				break
			}
			if containsNear(shown, e.Claim) {
				continue
			}
			if containsNear(before, e.Claim) {
				repeats = append(repeats, e)
				continue
			}
			shown = append(shown, e)
		}
		if len(shown) == 0 && len(repeats) > 0 {
			shown = repeats[:1]
		}
		for _, e := range shown {
			b.WriteString("- " + cite(e.Claim, []string{e.ID}, lang) + "\n")
		}
		before = append(before, shown...)
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

// Summary size: summaryCore items of the question itself, then one per facet, summaryMin to summaryMax in all.
const (
	summaryCore = 5
	summaryMin  = 4
	summaryMax  = 7
)

// rankFor orders the whole pool for one sub-question, every item by the same measure whichever sub-question's
// read found it: its confidence, re-based from the facet it was read for to sq's own (facets weigh examples
// differently), times how strongly its claim and source title match sq (BM25 over the pool, normalised to the
// best). Every item in the pool was judged relevant to some sub-question of this question, and the facets share
// its subject, so none is excluded: a weak match ranks low.
func rankFor(sq research.SubQuestion, ev []research.Evidence, facets map[string]string) []research.Evidence {
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
		docs[i] = append(lexical.Tokenize(e.Claim), lexical.Tokenize(e.Title)...)
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
		out = append(out, scored{e, conf * (0.4 + 0.6*rel)})
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
// marker after the full stop would be a sentence of its own and leave the text before it uncited.
func cite(text string, ids []string, lang string) string {
	marker := "[" + strings.Join(ids, ", ") + "]"
	var parts []string
	for _, sp := range lexical.Sentences(lexical.NormalizeSpace(text)) {
		body, end := splitEnd(sp.Text)
		if body == "" {
			continue
		}
		if end == "" {
			end = "."
			if lang == "zh" || lang == "ja" {
				end = "。"
			}
		}
		sep := " "
		if r, _ := utf8.DecodeLastRuneInString(body); lexical.IsCJK(r) || unicode.IsPunct(r) && r > 0x3000 {
			sep = ""
		}
		parts = append(parts, body+sep+marker+end)
	}
	join := " "
	if lang == "zh" {
		join = ""
	}
	return strings.Join(parts, join)
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
