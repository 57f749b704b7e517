package llmroles

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deepresearch/deepresearch/research"
)

// Planner is the Scope stage on the strong tier.
type Planner struct{ s *set }

var _ research.Planner = (*Planner)(nil)

const plannerSystem = `You are the planner of a deep-research system. Decompose the research question into %d to %d sub-questions that together answer it completely and overlap as little as possible.
For each sub-question give:
- question: the sub-question, written in the language of the research question;
- queries: 2 to %d search-query variants (different wordings and synonyms; add an English variant when the question is in another language and English sources are likely to be better);
- source_types: the kinds of source expected to answer it (official documentation, peer-reviewed papers, standards, government statistics, company filings, reputable news, …);
- criteria: the acceptance criteria — what evidence would settle it.
Also give language: the BCP-47 primary language code of the research question (en, zh, ja, de, …). The final report is written in that language.`

type planOutput struct {
	Language     string     `json:"language" jsonschema:"BCP-47 primary language code of the research question, e.g. en or zh"`
	SubQuestions []planItem `json:"sub_questions" jsonschema:"the sub-questions, most fundamental first"`
}

type planItem struct {
	Question    string   `json:"question" jsonschema:"the sub-question"`
	Queries     []string `json:"queries,omitempty" jsonschema:"search-query variants"`
	SourceTypes []string `json:"source_types,omitempty" jsonschema:"expected kinds of source"`
	Criteria    string   `json:"criteria,omitempty" jsonschema:"what evidence would answer it"`
}

// Plan implements research.Planner.
func (p *Planner) Plan(ctx context.Context, question string) (*research.Plan, error) {
	question = strings.TrimSpace(question)
	if question == "" {
		return nil, errors.New("llmroles: planner: empty question")
	}
	lim := p.s.lim
	spec := p.s.spec(RolePlanner, p.s.cfg.Planner, fmt.Sprintf(plannerSystem, lim.MinSubQuestions, lim.MaxSubQuestions, lim.MaxQueries))
	prompt := "Research question:\n" + question
	out, err := RunRoleCheck(ctx, spec, prompt, func(o *planOutput) error {
		kept := o.SubQuestions[:0]
		for _, it := range o.SubQuestions {
			if strings.TrimSpace(it.Question) != "" {
				kept = append(kept, it)
			}
		}
		o.SubQuestions = kept
		switch n := len(kept); {
		case n == 0:
			return errors.New("the plan has no sub-questions")
		case n < lim.MinSubQuestions:
			return Soft(fmt.Errorf("the plan has %d sub-questions; give between %d and %d", n, lim.MinSubQuestions, lim.MaxSubQuestions))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out.SubQuestions) > lim.MaxSubQuestions {
		p.s.logger.Info("plan clamped", "role", RolePlanner, "sub_questions", len(out.SubQuestions), "kept", lim.MaxSubQuestions)
		out.SubQuestions = out.SubQuestions[:lim.MaxSubQuestions]
	}
	plan := &research.Plan{Question: question, Language: detectLanguage(question, out.Language)}
	for i, it := range out.SubQuestions {
		q := strings.TrimSpace(it.Question)
		plan.SubQuestions = append(plan.SubQuestions, research.SubQuestion{
			ID:          fmt.Sprintf("q%d", i+1),
			Question:    q,
			Queries:     cleanQueries(append(it.Queries, q), lim.MaxQueries),
			SourceTypes: cleanQueries(it.SourceTypes, 0),
			Criteria:    strings.TrimSpace(it.Criteria),
		})
	}
	p.s.reads.know(plan.SubQuestions...)
	return plan, nil
}

// cleanQueries trims, drops empty and duplicate entries (case-insensitively) and keeps at most n (n <= 0: all).
func cleanQueries(qs []string, n int) []string {
	seen := map[string]bool{}
	var out []string
	for _, q := range qs {
		q = strings.Join(strings.Fields(q), " ")
		k := strings.ToLower(q)
		if q == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, q)
		if n > 0 && len(out) == n {
			break
		}
	}
	return out
}
