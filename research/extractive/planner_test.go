package extractive

import (
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
)

func TestPlannerEnglish(t *testing.T) {
	p := New(Config{}).Planner
	plan, err := p.Plan(t.Context(), "What does the Go memory model guarantee about channel communication?")
	if err != nil {
		t.Fatal(err)
	}
	if plan.Language != "en" || len(plan.SubQuestions) < 3 || len(plan.SubQuestions) > 6 {
		t.Fatalf("plan = %+v", plan)
	}
	first := plan.SubQuestions[0]
	if first.ID != "q1" || first.Question != plan.Question {
		t.Errorf("first sub-question %+v, want the question itself", first)
	}
	if !slices.Contains(first.Queries, "channel communication") {
		t.Errorf("core queries %q lack the focus phrase", first.Queries)
	}
	var questions []string
	for _, sq := range plan.SubQuestions {
		questions = append(questions, sq.Question)
		if len(sq.Queries) == 0 {
			t.Errorf("%s has no queries", sq.ID)
		}
	}
	all := strings.Join(questions, "\n")
	for _, want := range []string{"What is Go memory model?", "examples illustrate channel communication", "caveats"} {
		if !strings.Contains(all, want) {
			t.Errorf("sub-questions %q lack %q", questions, want)
		}
	}
}

func TestPlannerConjunctionsMakeOneSubQuestionEach(t *testing.T) {
	p := New(Config{}).Planner
	for _, tt := range []struct {
		q       string
		members []string
		lang    string
	}{
		{"How do DeepAgent and Claude Code handle context compression?", []string{"DeepAgent", "Claude Code"}, "en"},
		{"DeepAgent 和 Claude Code 的上下文压缩策略有什么不同？", []string{"DeepAgent", "Claude Code"}, "zh"},
		{"子Agent隔离、上下文压缩以及大结果驱逐分别怎么做？", []string{"子Agent隔离", "上下文压缩", "大结果驱逐"}, "zh"},
	} {
		plan, err := p.Plan(t.Context(), tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Language != tt.lang {
			t.Errorf("%q: language %s, want %s", tt.q, plan.Language, tt.lang)
		}
		if n := len(plan.SubQuestions); n < 3 || n > 6 {
			t.Errorf("%q: %d sub-questions", tt.q, n)
		}
		for _, m := range tt.members {
			found := false
			for _, sq := range plan.SubQuestions[1:] {
				if strings.Contains(sq.Question, m) && !strings.Contains(sq.Question, strings.Join(tt.members, "")) {
					found = true
				}
			}
			if !found {
				t.Errorf("%q: no sub-question for %q in %+v", tt.q, m, plan.SubQuestions)
			}
		}
	}
}

func TestPlannerChineseQuestionGetsEnglishQueries(t *testing.T) {
	plan, err := New(Config{}).Planner.Plan(t.Context(), "Go 内存模型对通道通信有什么保证？")
	if err != nil {
		t.Fatal(err)
	}
	if plan.Language != "zh" {
		t.Fatalf("language %s", plan.Language)
	}
	q1 := plan.SubQuestions[0].Queries
	if !slices.Contains(q1, "Go 内存模型 通道通信") || !slices.Contains(q1, "Go memory model channel communication") {
		t.Errorf("queries %q, want the Chinese key phrases and their English rendering", q1)
	}
	if !strings.HasSuffix(plan.SubQuestions[1].Question, "是什么？") {
		t.Errorf("definition sub-question %q is not in Chinese", plan.SubQuestions[1].Question)
	}
}

func TestPlannerRefusesEmptyQuestion(t *testing.T) {
	for _, q := range []string{"", "   ", "?？"} {
		if _, err := New(Config{}).Planner.Plan(t.Context(), q); err == nil {
			t.Errorf("Plan(%q) succeeded", q)
		}
	}
}

func TestTranslateOnlyWhenFullyCovered(t *testing.T) {
	for in, want := range map[string]string{
		"Go 内存模型 通道通信": "Go memory model channel communication",
		"互斥锁":          "mutex",
		"下文压缩策略 规则":    "", // 压缩策略 is not in the glossary: no half translation
		"DeepAgent":    "",
	} {
		if got := translate(in); got != want {
			t.Errorf("translate(%q) = %q, want %q", in, got, want)
		}
	}
}

var _ research.Planner = (*Planner)(nil)
