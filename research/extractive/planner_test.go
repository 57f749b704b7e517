package extractive

import (
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
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
	for _, want := range []string{"examples illustrate channel communication", "caveats"} {
		if !strings.Contains(all, want) {
			t.Errorf("sub-questions %q lack %q", questions, want)
		}
	}
	// The memory model is not something the question asks to define.
	if strings.Contains(all, "What is Go memory model?") {
		t.Errorf("machine-made definition question in %q", questions)
	}
}

// Sub-questions a person would ask: one per clause of a compound question with the pronoun resolved, a
// definition only for a name of the domain, facets about the subject rather than a possessive or a verb.
func TestPlannerSubQuestionsFollowTheQuestion(t *testing.T) {
	for _, tt := range []struct {
		q          string
		want, nope []string
	}{
		{"What is a data race in Go and how should programs avoid it?",
			[]string{"What is a data race in Go?", "How should programs avoid data race?"}, []string{"What is data race?", "Go avoid"}},
		// "and how" joins two questions, not "Python" and "regular functions": the pronoun is the subject.
		{"What are generators in Python and how do they differ from regular functions?",
			[]string{"How do generators differ from regular functions?"}, []string{"How do Python regular functions"}},
		{"When should sync.Map be used instead of a plain Go map?",
			[]string{"What is sync.Map?", "What rules or examples illustrate sync.Map?"}, []string{"illustrate plain", "apply to plain"}},
		{"上下文压缩在什么时候触发，分为哪几层？",
			[]string{"上下文压缩在什么时候触发？", "上下文压缩分为哪几层？", "上下文压缩有哪些规则和示例？"}, []string{"上下文压缩是什么？"}},
		{"Go 的 context 包如何传播取消信号？", []string{"context 包有哪些规则和示例？"}, []string{"Go是什么？", "Go有哪些"}},
		// "How long" is a question word; a lone participle is no topic.
		{"How long are GODEBUG settings maintained for compatibility?", nil, []string{"illustrate long", "apply to long"}},
		{"What happens when a Go context is canceled?", []string{"What rules or examples illustrate Go context?"}, []string{"illustrate canceled"}},
		// "有哪五个" is a question word with its numeral, not part of the subject.
		{"deepresearch 的研究流程有哪五个阶段？", []string{"研究流程有哪些规则和示例？"}, []string{"有哪五个阶段有哪些", "五个阶段有哪些"}},
		// A clause that asks nothing ("Go 的 context 包中") frames the next one instead of being a question of its
		// own, and a place phrase ("context 包中") is the setting, not the subject.
		{"Go 的 context 包中，取消一个 context 时如何取消由它派生的子 context？", []string{"取消一个 context 时有哪些规则和示例？"},
			[]string{"Go 的 context 包中？", "context 包中有哪些"}},
		{"垃圾回收开始时，sync.Pool 中缓存的对象会怎样？", nil, []string{"垃圾回收开始时？"}},
		// Nor is it the topic of the facets when a relation word (作用) asks about the subject.
		{"PostgreSQL 中的用户名映射有什么作用？", []string{"用户名映射有哪些规则和示例？", "用户名映射有哪些限制或例外？"},
			[]string{"PostgreSQL 中有哪些"}},
		// Beside a list of members, the possessive domain word is no focus ("Syscall6在Go方面是怎样的？").
		{"Go 的 syscall 包中 Syscall、Syscall6 和 RawSyscall 有什么区别？", nil, []string{"在Go方面"}},
	} {
		plan, err := New(Config{}).Planner.Plan(t.Context(), tt.q)
		if err != nil {
			t.Fatal(err)
		}
		var qs []string
		for _, sq := range plan.SubQuestions {
			qs = append(qs, sq.Question)
		}
		all := strings.Join(qs, "\n")
		for _, w := range tt.want {
			if !slices.Contains(qs, w) {
				t.Errorf("%q: sub-questions %q lack %q", tt.q, qs, w)
			}
		}
		for _, n := range tt.nope {
			if strings.Contains(all, n) {
				t.Errorf("%q: sub-questions %q contain %q", tt.q, qs, n)
			}
		}
	}
}

func TestNameLike(t *testing.T) {
	for in, want := range map[string]bool{"sync.Map": true, "GODEBUG": true, "WaitGroup": true, "utf8": true, "go_line": true,
		"Go": false, "memory model": false, "go": false, "context": false, "上下文": false, "": false} {
		if got := nameLike(in); got != want {
			t.Errorf("nameLike(%q) = %v", in, got)
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
	english := slices.ContainsFunc(q1, func(q string) bool {
		words := strings.FieldsFunc(q, func(r rune) bool { return r == ' ' || r == '|' })
		return slices.Contains(words, "memory") && slices.Contains(words, "model") && slices.Contains(words, "channel")
	})
	if !slices.Contains(q1, "Go 内存模型 通道通信") || !english {
		t.Errorf("queries %q, want the Chinese key phrases and their English rendering", q1)
	}
	if !strings.HasSuffix(plan.SubQuestions[1].Question, "有哪些规则和示例？") {
		t.Errorf("facet sub-question %q is not in Chinese", plan.SubQuestions[1].Question)
	}
}

// Each Chinese query is followed by its English rendering, so the queries a depth keeps (the first four at the
// standard depth) are never the Chinese ones alone; a relation word (作用) asks for a facet and is rendered by none.
func TestPlannerRendersEachChineseQueryAfterIt(t *testing.T) {
	plan, err := New(Config{}).Planner.Plan(t.Context(), "Rust 中的 Weak<T> 弱引用有什么作用？")
	if err != nil {
		t.Fatal(err)
	}
	q1 := plan.SubQuestions[0].Queries
	english := func(q string) bool { return !hasCJK(q) && strings.Contains(q, "weak") }
	if len(q1) < 2 || !hasCJK(q1[0]) || !english(q1[1]) {
		t.Errorf("queries %q: want a Chinese query, then its English rendering", q1)
	}
	for _, sq := range plan.SubQuestions {
		for _, q := range sq.Queries {
			if !hasCJK(q) && strings.Contains(q, "affect") {
				t.Errorf("%s: query %q renders the relation word 作用", sq.ID, q)
			}
		}
	}
}

func TestPlannerRefusesEmptyQuestion(t *testing.T) {
	for _, q := range []string{"", "   ", "?？"} {
		if _, err := New(Config{}).Planner.Plan(t.Context(), q); err == nil {
			t.Errorf("Plan(%q) succeeded", q)
		}
	}
}

func TestTranslate(t *testing.T) {
	for in, want := range map[string][]string{
		"Go 内存模型 通道通信": {"Go", "memory", "model", "channel"},
		"互斥锁":          {"mutually", "exclusive", "lock"},
		// A partial rendering still searches: the word the dictionary lacks keeps its spelling.
		"𪚥𪚥压缩策略 规则": {"𪚥", "compress", "strategy", "rule"},
		"C 线程退出时":   {"C", "thread"},
		"程序计数器 栈指针": {"counter", "pointer"},
	} {
		got := strings.FieldsFunc(translateFor(nil, in), func(r rune) bool { return r == ' ' || r == '|' })
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("translateFor(nil, %q) = %q, lacks %q", in, got, w)
			}
		}
	}
	// Nothing Chinese to render: no query.
	for _, in := range []string{"DeepAgent", "的吗", ""} {
		if got := translateFor(nil, in); got != "" {
			t.Errorf("translateFor(nil, %q) = %q, want none", in, got)
		}
	}
}

var _ research.Planner = (*Planner)(nil)

func TestWithoutProperModifier(t *testing.T) {
	for in, want := range map[string]string{
		"Go context|canceled":               "context canceled",
		"Go HTTP server|HTTP/2 server push": "HTTP server HTTP/2 server push",
		"sync.Map|plain Go map":             "",
		"GODEBUG setting":                   "",
		"select statement":                  "",
		"Go":                                "",
	} {
		if got := withoutProperModifier(strings.Split(in, "|")); got != want {
			t.Errorf("withoutProperModifier(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClauseFrames(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"上下文压缩在什么时候触发，分为哪几层？", []string{"上下文压缩在什么时候触发？", "分为哪几层？"}},
		{"Go 的 context 包中，取消一个 context 时如何取消由它派生的子 context？", []string{"Go 的 context 包中取消一个 context 时如何取消由它派生的子 context？"}},
		{"研究流程如何控制预算，熔断触发后", []string{"研究流程如何控制预算熔断触发后？"}}, // a frame at the end goes with the clause before
		// A sentence ending with a question mark asks, even without a question word, and is no frame of the next.
		{"serial 为什么会跳号？回滚以后 nextval 的值会退回去吗？能不能生成连续的编号？",
			[]string{"Serial 为什么会跳号？", "回滚以后 nextval 的值会退回去吗？", "能不能生成连续的编号？"}},
	} {
		if got := clauses(tc.q, "zh"); !slices.Equal(got, tc.want) {
			t.Errorf("clauses(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
	for q, want := range map[string][]string{
		"Why does the id skip numbers? Can I make a sequence gapless?": {"Why does the id skip numbers?", "Can I make a sequence gapless?"},
		"What is a data race, and how should programs avoid it?":       {"What is a data race?", "How should programs avoid it?"},
		"What does the ? operator do with a Result value?":             {"What does the ? operator do with a Result value?"},
		"Why does GET /search?q=go fail? Is the query escaped?":        {"Why does GET /search?q=go fail?", "Is the query escaped?"},
		// A statement after the last question tells the asker's circumstances; a request there still asks.
		"How do I ship my CLI tool as one file? The tool is a handful of files.": {"How do I ship my CLI tool as one file?"},
		"Why does the id skip numbers? Explain how sequences are cached.":        {"Why does the id skip numbers?", "Explain how sequences are cached?"},
	} {
		if got := clauses(q, "en"); !slices.Equal(got, want) {
			t.Errorf("clauses(%q) = %q, want %q", q, got, want)
		}
	}
	for in, want := range map[string]bool{"context 包中": true, "标准库里": true, "函数内": true, "其中": false, "包中": false,
		"取消一个 context 时": false, "sync.Pool": false} {
		if got := locative(in); got != want {
			t.Errorf("locative(%q) = %v, want %v", in, got, want)
		}
	}
}

// A name the sources are all about, in the possessive ("PostgreSQL 的 serial 类型" over PostgreSQL's manual), is the
// domain of the question, not its subject: the facets ask about serial. Over sources where it is a topic like any
// other, or with no vocabulary, it stays the subject.
func TestPlannerSkipsTheSourcesSettingInThePossessive(t *testing.T) {
	q := "PostgreSQL 的 serial 类型是真正的数据类型吗？"
	plan := func(df int) *research.Plan {
		t.Helper()
		roles := New(Config{Searchers: []sources.Searcher{vocabSource{df: map[string]int{"PostgreSQL": df, "postgresql": df}}}})
		p, err := roles.Planner.Plan(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	facets := func(p *research.Plan) string {
		var qs []string
		for _, sq := range p.SubQuestions[1:] {
			qs = append(qs, sq.Question)
		}
		return strings.Join(qs, " | ")
	}
	if got := facets(plan(2700)); strings.Contains(got, "PostgreSQL") || !strings.Contains(got, "serial") {
		t.Errorf("over PostgreSQL's manual the facets are %q, want them about serial", got)
	}
	if got := facets(plan(40)); !strings.Contains(got, "PostgreSQL") {
		t.Errorf("where PostgreSQL is a topic like another the facets are %q, want them about it", got)
	}
}

// An attribute asked of a compound identifier ("the default value of pool_size") makes the identifier the
// subject: the clauses and the facet sub-questions ask about it, not about the attribute's words, which every page
// of settings shares. A question that starts with the identifier is unchanged.
func TestPlannerIdentifierAfterItsAttributeIsTheSubject(t *testing.T) {
	p := New(Config{}).Planner
	plan, err := p.Plan(t.Context(), "What is the default value of pool_size in the broker, and when can it be changed?")
	if err != nil {
		t.Fatal(err)
	}
	var questions []string
	for _, sq := range plan.SubQuestions {
		questions = append(questions, sq.Question)
	}
	all := strings.Join(questions, "\n")
	for _, want := range []string{"When can pool_size be changed?", "caveats, limits or exceptions apply to pool_size"} {
		if !strings.Contains(all, want) {
			t.Errorf("sub-questions %q lack %q", questions, want)
		}
	}
	if strings.Contains(all, "apply to default value") {
		t.Errorf("sub-questions %q ask about the attribute, not the setting", questions)
	}
	plan, err = p.Plan(t.Context(), "How does sync.Map differ from a map guarded by a Mutex?")
	if err != nil {
		t.Fatal(err)
	}
	if q := plan.SubQuestions[len(plan.SubQuestions)-1].Question; !strings.Contains(q, "sync.Map") {
		t.Errorf("last sub-question %q: want it about sync.Map", q)
	}
}

// A possessive first word of common letters ("Unicode 的码位") is the domain, and dropped from the subject, only when
// the sources are all about it or never use it; where it is one topic among many it is part of what is asked. With
// no vocabulary to ask, it is taken for the domain ("Go 的 context 包").
func TestPlannerKeepsAPossessiveTopicWordInTheSubject(t *testing.T) {
	q := "Unicode 的码位是什么？"
	for _, tc := range []struct {
		name  string
		cfg   Config
		keeps bool
	}{
		{"a topic of the sources", Config{Searchers: []sources.Searcher{vocabSource{df: map[string]int{"Unicode": 40, "unicode": 40}}}}, true},
		{"the sources' setting", Config{Searchers: []sources.Searcher{vocabSource{df: map[string]int{"Unicode": 3000, "unicode": 3000}}}}, false},
		{"never used", Config{Searchers: []sources.Searcher{vocabSource{df: map[string]int{}}}}, false},
		{"no vocabulary", Config{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := New(tc.cfg).Planner.Plan(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			first := plan.SubQuestions[0].Queries[0]
			if got := strings.Contains(first, "Unicode"); got != tc.keeps {
				t.Errorf("first query %q: Unicode in it = %v, want %v", first, got, tc.keeps)
			}
		})
	}
}

// A last phrase after "of" or "in" that the sources are all about ("the url module of Node.js" over Node's API
// reference) says where the question is asked: the facets ask about the url module, and the dotted name is not
// taken for the subject, while the question's own search keeps it; so is such a name opening the question ("Why
// won't Rust let me …"). Where the word is a topic like any other, or no vocabulary can tell, it stays the subject.
func TestPlannerSkipsTheSourcesSettingAfterOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		q       string
		cfg     Config
		want    string // the subject of the facet sub-questions
		domain  string
		dropped bool // the domain is in the first query alone
	}{
		{"the sources' setting", "What does the url module of Node.js provide?",
			Config{Searchers: []sources.Searcher{vocabSource{df: map[string]int{"Node.js": 3000, "node.js": 3000}}}}, "url module", "Node.js", true},
		{"after in", "What is the zero value of a mutex in Go?",
			Config{Searchers: []sources.Searcher{vocabSource{df: map[string]int{"Go": 3000, "go": 3000}}}}, "zero value", "Go", true},
		{"a phrase of setting words", "Why would you use schemas in a PostgreSQL database?",
			Config{Searchers: []sources.Searcher{vocabSource{df: map[string]int{"PostgreSQL": 3000, "postgresql": 3000, "database": 2000}}}}, "schemas", "PostgreSQL database", true},
		{"a phrase with a topic word", "Why would you use schemas in a PostgreSQL database?",
			Config{Searchers: []sources.Searcher{vocabSource{df: map[string]int{"PostgreSQL": 3000, "postgresql": 3000, "database": 40}}}}, "PostgreSQL database", "PostgreSQL database", false},
		{"a topic of the sources", "What does the url module of Node.js provide?",
			Config{Searchers: []sources.Searcher{vocabSource{df: map[string]int{"Node.js": 40, "node.js": 40}}}}, "Node.js", "Node.js", false},
		{"no vocabulary", "What does the url module of Node.js provide?", Config{}, "Node.js", "Node.js", false},
		// The same for the domain that opens the question as the one who acts, when it is a proper name.
		{"the setting acting", "Why won't Rust let me implement Display for Vec in my crate?",
			Config{Searchers: []sources.Searcher{vocabSource{df: map[string]int{"Rust": 3000, "rust": 3000}}}}, "implement Display", "Rust", true},
		{"a common word as widely used", "Do generics have a runtime cost in my crate?",
			Config{Searchers: []sources.Searcher{vocabSource{df: map[string]int{"generics": 3000}}}}, "generics", "generics", false},
		{"a topic acting", "Why won't Rust let me implement Display for Vec in my crate?",
			Config{Searchers: []sources.Searcher{vocabSource{df: map[string]int{"Rust": 40, "rust": 40}}}}, "Rust", "Rust", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := New(tc.cfg).Planner.Plan(t.Context(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			last := plan.SubQuestions[len(plan.SubQuestions)-1].Question
			if !strings.Contains(last, tc.want) {
				t.Errorf("last sub-question %q: want it about %q", last, tc.want)
			}
			// The question's own search still has every word it asks with.
			if first := plan.SubQuestions[0].Queries[0]; !strings.Contains(first, tc.domain) {
				t.Errorf("first query %q lost %q", first, tc.domain)
			}
			// Elsewhere — the other queries, the facet sub-questions — the domain is asked about only when it stays.
			var elsewhere []string
			for k, sq := range plan.SubQuestions {
				if k > 0 {
					elsewhere = append(elsewhere, sq.Question)
				}
				for j, x := range sq.Queries {
					if k > 0 || j > 0 {
						elsewhere = append(elsewhere, x)
					}
				}
			}
			named := slices.ContainsFunc(elsewhere, func(x string) bool { return strings.Contains(x, tc.domain) })
			if named == tc.dropped {
				t.Errorf("sub-questions and queries past the first %q: %q named = %v, want %v", elsewhere, tc.domain, named, !tc.dropped)
			}
		})
	}
}

// The planner reads questions as users type them, so it is fuzzed: no panic, and either a clear error or a plan
// whose every sub-question has a query; every key phrase is made of the question's own words.
func FuzzPlanner(f *testing.F) {
	for _, s := range []string{"What is the RETURNING clause of INSERT, UPDATE and DELETE for in PostgreSQL?",
		"Are sorts in Python stable?", "In Go, what is a channel and a mutex?", "PostgreSQL 的物化视图和普通视图有什么区别？",
		", , and", "What kind of", "of in of", "a, b, c or d", "？", "sorts of sorts of"} {
		f.Add(s)
	}
	p := New(Config{Searchers: []sources.Searcher{vocabSource{df: map[string]int{"PostgreSQL": 3000, "postgresql": 3000}}}}).Planner
	f.Fuzz(func(t *testing.T, q string) {
		if len(q) > 300 {
			return
		}
		phrases, _ := splitPhrases(q)
		for _, ph := range phrases {
			for _, w := range strings.Fields(ph.Text) {
				if !strings.Contains(q, w) {
					t.Fatalf("splitPhrases(%q): phrase %q has %q, not a word of the question", q, ph.Text, w)
				}
			}
		}
		plan, err := p.Plan(t.Context(), q)
		if err != nil {
			return
		}
		if len(plan.SubQuestions) == 0 {
			t.Fatalf("Plan(%q): no sub-questions and no error", q)
		}
		for _, sq := range plan.SubQuestions {
			if strings.TrimSpace(sq.Question) == "" || len(sq.Queries) == 0 {
				t.Fatalf("Plan(%q): sub-question %+v without a question or a query", q, sq)
			}
		}
	})
}

// TestOwnSubjects: a sentence of a compound question that names a subject of its own is answered by its own words;
// one that points back at the question's subject ("the limit", "one", "it") or names only an aspect is not.
func TestOwnSubjects(t *testing.T) {
	for _, tc := range []struct {
		q, subject string
		want       []string
	}{
		{"How does the waggle dance tell honeybees where the flowers are? And how do worker bees make beeswax?", "waggle dance",
			[]string{"And how do worker bees make beeswax?"}},
		{"How many listeners can be registered for one event of an EventEmitter by default? How is the limit changed?", "listeners", nil},
		{"What is a savepoint in a PostgreSQL transaction? How do you roll back to one?", "savepoint", nil},
		{"What is a data race? How should programs avoid it?", "data race", nil},
		{"What does sync.Once do? What are its limits?", "sync.Once", nil},
		// A clause of the same sentence is no question of its own.
		{"How does the waggle dance tell honeybees where flowers are, and how do worker bees make beeswax?", "waggle dance", nil},
	} {
		var got []string
		for c, own := range ownSubjects(tc.q, tc.subject, "en") {
			if own {
				got = append(got, c)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ownSubjects(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
}
