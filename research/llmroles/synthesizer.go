package llmroles

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/research"
)

// Synthesizer is the Synthesize stage on the strong tier.
type Synthesizer struct{ s *set }

var _ research.Synthesizer = (*Synthesizer)(nil)

const synthesizerSystem = `You are the synthesizer of a deep-research system. Write a research report in Markdown that answers the research question from the evidence pool and nothing else.
Language: write the whole report in %s (language code %s), whatever the language of the sources.
Rules:
- Every factual sentence ends with the ids of the evidence items that support it, in square brackets: [e3] or [e3, e7]. Cite only ids from the pool; a sentence you cannot support with an id does not belong in the report.
- Where sources disagree, say so openly: "A says X, B says Y; the evidence favours Y because …", citing both sides.
- Structure: a title, a short summary, one section per sub-question, then conclusions and open questions. Do not add a sources list; it is generated from your citations.
- Output only the report — no preamble, no code fences.`

var citationRe = regexp.MustCompile(`\[((?:e\d+)(?:\s*[,;，、]\s*e\d+)*)\]`)

var idRe = regexp.MustCompile(`e\d+`)

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
	budget := windowBudget(info.ContextWindow, info.MaxOutput, s.s.lim.PoolTokens, 0)
	poolText, shown, omitted := renderPool(in.Plan, pool, budget, tokens.ForModel(info.Name))
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
		b.WriteString("\nGaps that remain (name them as open questions):\n")
		for _, g := range in.Verdict.Gaps {
			fmt.Fprintf(&b, "- %s: %s\n", g.SubQuestion, oneLine(g.Missing))
		}
	}
	if in.CutShort != "" {
		fmt.Fprintf(&b, "\nThe research was cut short (%s): say so near the top of the report.\n", in.CutShort)
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
	text, err := RunTextCheck(ctx, s.s.spec(RoleSynthesizer, m, system), b.String(), func(t string) (string, error) {
		t = stripFence(t)
		if strings.TrimSpace(t) == "" {
			return "", errors.New("the report is empty")
		}
		cited, unknown := citedIDs(t, known)
		if len(unknown) > 0 {
			return t, Soft(fmt.Errorf("the report cites ids that are not in the evidence pool: %s; cite only ids from the pool", strings.Join(unknown, ", ")))
		}
		if len(known) > 0 && cited == 0 {
			return t, Soft(errors.New("the report cites no evidence; every factual sentence needs [eN] citations from the pool"))
		}
		return t, nil
	})
	if err != nil {
		return nil, err
	}
	return &research.Draft{Markdown: strings.TrimSpace(text) + "\n"}, nil
}

// citedIDs counts citations of known ids and lists unknown ones.
func citedIDs(md string, known map[string]bool) (int, []string) {
	n := 0
	var unknown []string
	seen := map[string]bool{}
	for _, m := range citationRe.FindAllStringSubmatch(md, -1) {
		for _, id := range idRe.FindAllString(m[1], -1) {
			if known[id] {
				n++
			} else if !seen[id] {
				seen[id] = true
				unknown = append(unknown, id)
			}
		}
	}
	return n, unknown
}

// stripFence removes a code fence wrapping the whole report.
func stripFence(t string) string {
	s := strings.TrimSpace(t)
	if !strings.HasPrefix(s, "```") {
		return t
	}
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return t
	}
	body := s[nl+1:]
	body = strings.TrimSpace(body)
	body = strings.TrimSuffix(body, "```")
	return strings.TrimSpace(body)
}
