package research_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
)

// TestPlanFileRoundTrips: a plan written to plan.yaml reads back as the same plan.
func TestPlanFileRoundTrips(t *testing.T) {
	in := &research.Plan{Question: "How do kilns dry oak?", Language: "en", Depth: research.DepthDeep, SubQuestions: []research.SubQuestion{
		{ID: "q1", Question: "How fast does oak dry?", Queries: []string{"oak drying days", "oak: moisture # percent"}, Criteria: "a trial's figures"},
		{ID: "q2", Question: "What does it cost?", SourceTypes: []string{"vendor pages"}},
	}}
	b, err := research.MarshalPlan(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := research.ParsePlan(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if out.Question != in.Question || out.Depth != in.Depth || len(out.SubQuestions) != 2 ||
		out.SubQuestions[0].Queries[1] != "oak: moisture # percent" || out.SubQuestions[0].Criteria != "a trial's figures" ||
		out.SubQuestions[1].SourceTypes[0] != "vendor pages" {
		t.Fatalf("read back %+v from\n%s", out, b)
	}
}

// TestAPlanOfQuestionsAloneIsEnough: a list of questions, at the top or under sub_questions:, is a plan.
func TestAPlanOfQuestionsAloneIsEnough(t *testing.T) {
	for _, src := range []string{
		"- How fast does oak dry?\n- What does it cost?\n",
		"sub_questions:\n  - How fast does oak dry?\n  - question: What does it cost?\n",
		"sub_questions: [\"How fast does oak dry?\", \"What does it cost?\"]\n",
	} {
		p, err := research.ParsePlan([]byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if len(p.SubQuestions) != 2 || p.SubQuestions[1].Question != "What does it cost?" {
			t.Fatalf("%q: %+v", src, p.SubQuestions)
		}
	}
}

// TestHostilePlanFilesAreRefusedClearly: what is not a plan gets an error that says what is wrong, and where.
func TestHostilePlanFilesAreRefusedClearly(t *testing.T) {
	many := "sub_questions:\n" + strings.Repeat("  - Why?\n", 5000)
	bomb := "sub_questions:\n  - &a Why does oak dry slowly?\n  - *a\n"
	for _, tc := range []struct{ name, src, want string }{
		{"empty", "", "the plan file is empty"},
		{"only a comment", "# nothing here\n", "the plan file is empty"},
		{"not YAML", "sub_questions: [unclosed\n", "not valid YAML"},
		{"a number", "42\n", "the plan is a single value"},
		{"no sub-questions", "question: Why?\n", "no sub_questions: list"},
		{"null sub-questions", "sub_questions:\n", "no sub_questions: list"},
		{"sub-questions a mapping", "sub_questions: {a: b}\n", "line 1: sub_questions is a mapping"},
		{"empty list", "sub_questions: []\n", "list is empty"},
		{"an item without question", "sub_questions:\n  - queries: [a]\n", "line 2: sub-question 1 has no question"},
		{"an item a list", "sub_questions:\n  - [a, b]\n", "sub-question 1 is a list"},
		{"queries a mapping", "sub_questions:\n  - question: Why?\n    queries: {a: b}\n", "queries is a mapping"},
		{"question a list", "sub_questions:\n  - question: [Why]\n", "question is a list"},
		{"unknown key", "sub_questions:\n  - question: Why?\n    querys: [a]\n", `unknown key "querys"`},
		{"unknown top key", "subquestions:\n  - Why?\n", `unknown key "subquestions"`},
		{"thousands of items", many, "5000 sub-questions; a run researches at most 8"},
		{"too many queries", "sub_questions:\n  - question: Why?\n    queries: [a, b, c, d, e, f, g, h, i]\n", "9 queries; the limit is 8"},
		{"a huge question", "sub_questions:\n  - " + strings.Repeat("why ", 2000) + "\n", "the limit is 4000"},
		{"a control character", "sub_questions:\n  - \"Why\\e[2J?\"\n", "control character"},
		{"a bad depth", "depth: bottomless\nsub_questions: [Why]\n", `depth "bottomless"`},
		{"aliases", bomb, "is a alias"},
		{"not UTF-8", "sub_questions: [\xff\xfe]\n", "not UTF-8"},
		{"too big", "sub_questions: [Why]\n#" + strings.Repeat("x", research.MaxPlanBytes), "the limit is 262144"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := research.ParsePlan([]byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, research.ErrBadInput) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// FuzzParsePlan: whatever the file holds, ParsePlan returns a plan within the bounds or an ErrBadInput error,
// never a panic; a plan it accepts renders and reads back with the same sub-questions.
func FuzzParsePlan(f *testing.F) {
	for _, s := range []string{"- Why?\n", "sub_questions:\n  - question: Why?\n    queries: [a, b]\n    criteria: c\n",
		"question: q\ndepth: quick\nsub_questions: [a, b]\n", "&a [*a]", "sub_questions: !!binary aGVsbG8=\n", "{", "- - - x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := research.ParsePlan(b)
		if err != nil {
			if !errors.Is(err, research.ErrBadInput) {
				t.Fatalf("an error that is not ErrBadInput: %v", err)
			}
			return
		}
		if len(p.SubQuestions) == 0 || len(p.SubQuestions) > research.MaxSubQuestions {
			t.Fatalf("%d sub-questions accepted", len(p.SubQuestions))
		}
		for _, sq := range p.SubQuestions {
			if research.CheckQuestion(sq.Question) != nil || len(sq.Queries) > research.MaxQueries {
				t.Fatalf("accepted %+v", sq)
			}
		}
		out, err := research.MarshalPlan(p)
		if err != nil {
			t.Fatal(err)
		}
		back, err := research.ParsePlan(out)
		if err != nil {
			t.Fatalf("a plan it wrote does not read back: %v\n%s", err, out)
		}
		if fmt.Sprint(back.SubQuestions) != fmt.Sprint(p.SubQuestions) {
			t.Fatalf("read back\n%v\nwrote\n%v", back.SubQuestions, p.SubQuestions)
		}
	})
}
