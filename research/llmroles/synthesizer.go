package llmroles

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/publish"
)

// Synthesizer is the Synthesize stage on the strong tier.
type Synthesizer struct{ s *set }

var _ research.Synthesizer = (*Synthesizer)(nil)

const synthesizerSystem = `You are the synthesizer of a deep-research system. Write a research report in Markdown that answers the research question from the evidence pool and nothing else.
Language: write the whole report in %s (language code %s), whatever the language of the sources.
Rules:
- Every sentence, list item and table row says only what the evidence items it cites say, and ends with their ids in square brackets: [e3] or [e3, e7]. Cite only ids from the pool. Every number, name, URL, piece of code and quoted phrase must appear in a quote you cite; add nothing from your own knowledge. A sentence you cannot support with an id does not belong in the report: it will be checked against its quotes and removed.
- Where sources disagree, say so openly: "A says X, B says Y", citing both sides.
- Structure: a title (# …), a short summary, one section (## …) per sub-question in the order given, with headings in the report's language, then a short conclusion. Write no notes on missing evidence, open questions, caveats or how the research was done: they cannot be cited, and the report's footer states them.
- A code block only when it is copied verbatim from a quote you cite. Do not add a sources list; it is generated from your citations.
- Output only the report — no preamble, no code fences.`

// Synthesize implements research.Synthesizer. The draft must cite the pool's evidence ids; a draft citing ids
// that do not exist, or none at all, is sent back (bounded) and then accepted for the integrity check to judge.
func (s *Synthesizer) Synthesize(ctx context.Context, in research.SynthesisInput) (*research.Draft, error) {
	if in.Plan == nil {
		return nil, errors.New("llmroles: synthesizer: no plan")
	}
	m := s.s.cfg.Synthesizer
	if m == nil {
		return nil, errors.New("llmroles: synthesizer: no model configured")
	}
	var pool []research.Evidence
	for _, e := range in.Evidence {
		if e.Status != research.StatusRejected {
			pool = append(pool, e)
		}
	}
	lang := in.Plan.Language
	if lang == "" {
		lang = detectLanguage(in.Plan.Question, "")
	}
	info := m.Info()
	budget := s.s.windowBudget(info, s.s.lim.PoolTokens, 0)
	counter := tokens.ForModel(info.Name)
	var text string
	var loops int   // drafts that had fallen into a loop
	var repeats int // sentences removed from the accepted draft as repeats
	err := s.s.withPool(ctx, RoleSynthesizer, in.Plan, pool, budget, counter, func(poolText string, shown []research.Evidence, omitted int) error {
		known := map[string]bool{}
		for _, e := range shown {
			known[e.ID] = true
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Research question: %s\nWrite the report in %s (%s).\n\nSub-questions:\n", in.Plan.Question, languageName(lang), lang)
		for _, sq := range in.Plan.SubQuestions {
			fmt.Fprintf(&b, "- %s: %s\n", sq.ID, sq.Question)
		}
		if in.Verdict != nil && len(in.Verdict.Conflicts) > 0 {
			b.WriteString("\nConflicts the verifier found (state them openly):\n")
			for _, c := range in.Verdict.Conflicts {
				fmt.Fprintf(&b, "- %s [%s]\n", oneLine(c.Description), strings.Join(c.EvidenceIDs, ", "))
			}
		}
		if in.Verdict != nil && !in.Verdict.Pass && len(in.Verdict.Gaps) > 0 {
			b.WriteString("\nWhere the evidence is thin (write only what it supports; do not speculate):\n")
			for _, g := range in.Verdict.Gaps {
				fmt.Fprintf(&b, "- %s: %s\n", g.SubQuestion, oneLine(g.Missing))
			}
		}
		if st := steering(in.Words, in.Instructions); st != "" {
			b.WriteString(st + "\nThe length is a target, not a reason to pad: write no more than the evidence supports.\n")
		}
		if len(in.Problems) > 0 {
			b.WriteString("\nYour previous draft was refused by the integrity check. Fix every one of these problems:\n")
			for _, p := range in.Problems {
				fmt.Fprintf(&b, "- %s\n", oneLine(p))
			}
		}
		fmt.Fprintf(&b, "\nEvidence pool (%d items", len(pool))
		if omitted > 0 {
			fmt.Fprintf(&b, "; %d less relevant not shown", omitted)
		}
		b.WriteString("):\n")
		b.WriteString(poolText)
		system := fmt.Sprintf(synthesizerSystem, languageName(lang), lang)
		var err error
		text, err = RunTextCheck(ctx, s.s.spec(RoleSynthesizer, m, system), b.String(), func(t string) (string, error) {
			// The report inside whatever wraps it, each sentence once: a draft in a loop is judged on what it
			// says, not on how often.
			if degenerate(t) {
				loops++
			}
			t, repeats = dropRepeats(publish.UnwrapReport(t))
			if strings.TrimSpace(t) == "" {
				return "", errors.New("the report is empty")
			}
			cited, unknown := 0, []string(nil)
			for _, id := range publish.CitedIDs(publish.CanonicalMarkers(t)) { // as the integrity check reads them
				if known[id] {
					cited++
				} else {
					unknown = append(unknown, id)
				}
			}
			if len(unknown) > 0 {
				return t, Soft(fmt.Errorf("the report cites ids that are not in the evidence pool: %s; cite only ids from the pool", strings.Join(unknown, ", ")))
			}
			if len(known) > 0 && cited == 0 {
				return t, Soft(errors.New("the report cites no evidence; every factual sentence needs [eN] citations from the pool"))
			}
			return t, Soft(checkShape(t, in.Plan, lang))
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if loops > 0 || repeats > 0 {
		s.s.logger.Warn("the synthesizer repeated itself; repeats removed", "role", RoleSynthesizer, "loops", loops, "repeats", repeats)
	}
	return &research.Draft{Markdown: strings.TrimSpace(text) + "\n", Loops: loops, Repeats: repeats}, nil
}

var headingLineRe = regexp.MustCompile(`(?m)^#{2,3}\s+\S`)

// checkShape checks a draft against the plan before it is published: written in the plan's language (by
// script, for the languages a script settles), a section for most sub-questions, and not ending in an empty
// section (the sign of an answer cut off mid-way).
func checkShape(md string, plan *research.Plan, lang string) error {
	var problems []string
	want := scriptOf(lang)
	if want == "zh" || want == "ja" || want == "ko" {
		want = "cjk"
	}
	if !inScript(md, want) {
		problems = append(problems, fmt.Sprintf("the report must be written in %s, but its text is in another language; translate every sentence and heading", languageName(lang)))
	}
	// A draft with sections must have one for most sub-questions: fewer is what an answer cut off looks like.
	if plan != nil && len(plan.SubQuestions) > 1 {
		if n := len(headingLineRe.FindAllString(md, -1)); n > 0 && n < (len(plan.SubQuestions)+1)/2 {
			problems = append(problems, fmt.Sprintf("the report has %d sections for %d sub-questions; give each sub-question its own ## section", n, len(plan.SubQuestions)))
		}
	}
	lines := strings.Split(strings.TrimSpace(md), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); strings.HasPrefix(last, "#") {
		problems = append(problems, fmt.Sprintf("the report ends with the heading %q and nothing under it; finish it", last))
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "; "))
}

// inScript reports whether the body text of a draft — headings, code and citations aside — is mostly written in
// the script want names (as letterScript names them). Headings are left out because a model that drifts into another language often keeps the headings it
// was given. A CJK character weighs as three letters; product names and code stay Latin in any report.
func inScript(md, want string) bool {
	target, other := 0, 0
	for _, line := range strings.Split(publish.StripMarkers(publish.CanonicalMarkers(stripCode(md))), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, r := range line {
			if !unicode.IsLetter(r) {
				continue
			}
			w := 1
			if lexical.IsCJK(r) {
				w = 3
			}
			if letterScript(r) == want {
				target += w
			} else {
				other += w
			}
		}
	}
	return other <= target
}

// letterScript names the script of a letter: "cjk" for Chinese, Japanese and Korean (which share Han
// characters), "ru" for Cyrillic, "ar" for Arabic, "" for Latin and the rest.
func letterScript(r rune) string {
	switch {
	case lexical.IsCJK(r):
		return "cjk"
	case unicode.Is(unicode.Cyrillic, r):
		return "ru"
	case unicode.Is(unicode.Arabic, r):
		return "ar"
	}
	return ""
}

// scriptOf is the lexical.Language code a report in lang must show: zh, ja, ko, ru or ar, else "" (any Latin
// script).
func scriptOf(lang string) string { return langScript[lang] }

var fenceRe = regexp.MustCompile("(?s)```.*?```")

func stripCode(md string) string { return fenceRe.ReplaceAllString(md, "") }
