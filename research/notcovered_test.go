package research_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

// offTopicRoles stand for a model over sources that hold nothing relevant: searches find nothing to read and the
// writer, as models do, answers anyway without citing anything.
type offTopicRoles struct {
	plan  research.Plan
	draft string
}

func (o *offTopicRoles) Plan(_ context.Context, q string) (*research.Plan, error) {
	p := o.plan
	p.Question = q
	return &p, nil
}

func (o *offTopicRoles) Search(context.Context, research.SubQuestion, []string) ([]research.Candidate, error) {
	return nil, nil
}

func (o *offTopicRoles) Analyze(context.Context, research.SubQuestion, *sources.Document) ([]research.Evidence, error) {
	return nil, nil
}

func (o *offTopicRoles) Verify(context.Context, *research.Plan, []research.Evidence) (*research.Verdict, error) {
	return &research.Verdict{Pass: true}, nil
}

func (o *offTopicRoles) Synthesize(context.Context, research.SynthesisInput) (*research.Draft, error) {
	return &research.Draft{Markdown: o.draft}, nil
}

type noFetch struct{}

func (noFetch) Fetch(context.Context, string) (*sources.Document, error) {
	return nil, sources.ErrUnsupportedScheme
}

// TestNothingRelevantNamesTheUncoveredSubQuestions: when the sources support no statement at all, whatever the
// engine, the report says which sub-questions they leave open, in the question's language, instead of only
// that nothing could be supported.
func TestNothingRelevantNamesTheUncoveredSubQuestions(t *testing.T) {
	for _, tc := range []struct {
		lang, question, draft, intro string
		subs                         []string
	}{
		{"en", "What is the boiling point of water at altitude?", "Water boils at lower temperatures at altitude.",
			"The sources searched answer none of these sub-questions:",
			[]string{"At what temperature does water boil at 3,000 m?", "Why does air pressure change the boiling point?"}},
		{"zh", "高海拔地区水的沸点是多少？", "高海拔地区水的沸点较低。",
			"所检索的来源没有回答以下任何子问题：",
			[]string{"海拔三千米处水在多少度沸腾？", "气压为什么会改变沸点？"}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			roles := &offTopicRoles{draft: tc.draft, plan: research.Plan{Language: tc.lang}}
			for i, s := range tc.subs {
				roles.plan.SubQuestions = append(roles.plan.SubQuestions, research.SubQuestion{ID: "q" + string(rune('1'+i)), Question: s, Queries: []string{s}})
			}
			out := filepath.Join(t.TempDir(), "run")
			rep, err := research.Run(t.Context(), research.Config{Question: tc.question, Fetcher: noFetch{}, OutDir: out,
				Roles: research.Roles{Engine: "test", Planner: roles, Searcher: roles, Analyst: roles, Verifier: roles, Synthesizer: roles}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Citations) != 0 || strings.Contains(rep.Markdown, tc.draft) {
				t.Fatalf("an unsupported statement was published:\n%s", rep.Markdown)
			}
			body, _, _ := strings.Cut(rep.Markdown, "\n## ") // the body, before "How this report was made"
			if !strings.Contains(body, tc.intro) {
				t.Errorf("report does not say, in %s, that the sources answer none of the sub-questions:\n%s", tc.lang, rep.Markdown)
			}
			for _, s := range tc.subs {
				if !strings.Contains(body, "- "+s) {
					t.Errorf("sub-question %q not listed as uncovered:\n%s", s, rep.Markdown)
				}
			}
		})
	}
}
