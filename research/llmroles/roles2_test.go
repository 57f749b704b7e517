package llmroles

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

func TestAnalystSnapsQuotesAndPassesInventedOnesToTheCheck(t *testing.T) {
	doc := &sources.Document{URL: "https://example.org/westphalia", FinalURL: "https://example.org/westphalia/", Title: "Westphalia", Text: groundDoc}
	m := replies(`{"evidence": [
	 {"claim": "Signed in 1648", "quote": "The Treaty of Westphalia was signed in 1648.", "confidence": 0.9},
	 {"claim": "Ended the Thirty Years' War", "quote": "It ended the \"Thirty Years' War\"   in the Holy Roman Empire", "confidence": 85},
	 {"claim": "Some see the modern state", "quote": "Some regard it as the origin of the modern state system.", "confidence": 0.6},
	 {"claim": "Created the UN", "quote": "The treaty created the United Nations in 1945.", "confidence": 0.99},
	 {"claim": "Duplicate", "quote": "the treaty of westphalia was signed in 1648", "confidence": 0.5},
	 {"claim": "", "quote": "Historians disagree about its long-term effects on state sovereignty.", "confidence": 0.5},
	 {"claim": "Quantum is early", "quote": "量子计算机利用量子比特进行计算,目前仍处于早期阶段", "confidence": -3}
	]}`)
	ev, err := New(Config{Analyst: m, Logger: quietLogger()}).Analyst.Analyze(t.Context(), testPlan.SubQuestions[0], doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		claim, quote string
		conf         float64
	}{
		{"Signed in 1648", "The Treaty of Westphalia was signed in 1648.", 0.9},
		{"Ended the Thirty Years' War", "It ended the “Thirty Years’ War” in the Holy Roman Empire", 0.85},
		{"Some see the modern state", "Some regard it as the birth of the modern state system", 0.6},
		{"Created the UN", "The treaty created the United Nations in 1945.", 0.99}, // invented: the graph refuses and counts it
		{"Quantum is early", "量子计算机利用量子比特进行计算，目前仍处于早期阶段", 0},
	}
	if len(ev) != len(want) {
		t.Fatalf("got %d items, want %d: %+v", len(ev), len(want), ev)
	}
	for i, w := range want {
		e := ev[i]
		if e.Claim != w.claim || e.Quote != w.quote || e.Confidence != w.conf {
			t.Errorf("item %d = {%q %q %v}, want {%q %q %v}", i, e.Claim, e.Quote, e.Confidence, w.claim, w.quote, w.conf)
		}
		if inDoc := strings.Contains(doc.Text, e.Quote); inDoc == (w.claim == "Created the UN") {
			t.Errorf("quote %q: verbatim in the document %v", e.Quote, inDoc)
		}
		if e.Source != doc.URL || e.SubQuestion != "q1" || e.Title != "Westphalia" {
			t.Errorf("item %d provenance %+v", i, e)
		}
	}
	prompt := lastUser(m.Requests()[0])
	if !strings.Contains(prompt, `<source url="https://example.org/westphalia"`) || !strings.Contains(prompt, sources.UntrustedNotice) {
		t.Errorf("document not wrapped as untrusted material:\n%s", prompt)
	}
	if !strings.Contains(prompt, testPlan.SubQuestions[0].Question) {
		t.Error("sub-question missing from the analyst prompt")
	}
}

func TestAnalystWindowsLongDocuments(t *testing.T) {
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "Paragraph %d states that fact number %d is true and well documented.\n", i, i)
	}
	doc := &sources.Document{URL: "https://example.org/long", Text: b.String()}
	var mu sync.Mutex
	var prompts []string
	m := scripted.New(llm.Info{Name: "small", ContextWindow: 4000, MaxOutput: 500}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		p := lastUser(req)
		mu.Lock()
		prompts = append(prompts, p)
		mu.Unlock()
		// Quote the first paragraph the window holds.
		i := strings.Index(p, "Paragraph ")
		j := strings.Index(p[i:], "\n")
		q := p[i : i+j]
		return scripted.Reply(fmt.Sprintf(`{"evidence": [{"claim": "c", "quote": %q, "confidence": 0.5}]}`, q)), nil
	})
	ev, err := New(Config{Analyst: m, Logger: quietLogger(), Limits: Limits{MaxWindows: 50}}).Analyst.Analyze(t.Context(), testPlan.SubQuestions[0], doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts) < 3 {
		t.Fatalf("%d model calls; a document over the window must be read in several", len(prompts))
	}
	if len(ev) != len(prompts) {
		t.Fatalf("%d evidence items from %d windows", len(ev), len(prompts))
	}
	for i, p := range prompts {
		if !strings.Contains(p, fmt.Sprintf("part %d of %d", i+1, len(prompts))) || !strings.Contains(p, `untrusted="true"`) {
			t.Fatalf("window %d prompt lacks its part number or wrapper", i+1)
		}
	}
	if !strings.Contains(prompts[len(prompts)-1], "Paragraph 399 ") {
		t.Error("the end of the document was never read")
	}

	// MaxWindows bounds the reading, and the windows read are the ones about the sub-question.
	var rb strings.Builder
	for i := range 400 {
		switch i {
		case 120, 330:
			fmt.Fprintf(&rb, "Paragraph %d: the Treaty of Westphalia was signed on a date in 1648.\n", i)
		default:
			fmt.Fprintf(&rb, "Paragraph %d states that fact number %d is true and well documented.\n", i, i)
		}
	}
	prompts = nil
	long := &sources.Document{URL: "https://example.org/long", Text: rb.String()}
	if _, err := New(Config{Analyst: m, Logger: quietLogger(), Limits: Limits{MaxWindows: 2}}).Analyst.Analyze(t.Context(), testPlan.SubQuestions[0], long); err != nil {
		t.Fatal(err)
	}
	if len(prompts) != 2 || !strings.Contains(prompts[0], "Paragraph 120:") || !strings.Contains(prompts[1], "Paragraph 330:") {
		t.Fatalf("%d windows read, limit 2; want the two about the treaty", len(prompts))
	}
}

func TestAnalystReadsAroundTheHit(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&b, "Line %d says the Treaty of Westphalia matters for reason %d.\n", i, i)
	}
	m := replies(`{"evidence": []}`)
	doc := &sources.Document{URL: "file:///corpus/long.md#L900-L910", Text: b.String()}
	if _, err := New(Config{Analyst: m, Logger: quietLogger()}).Analyst.Analyze(t.Context(), testPlan.SubQuestions[0], doc); err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d calls for one hit", len(reqs))
	}
	p := lastUser(reqs[0])
	if !strings.Contains(p, "Line 900 ") || !strings.Contains(p, "Line 885 ") || strings.Contains(p, "Line 1 says") || strings.Contains(p, "Line 1500 ") {
		t.Fatalf("the analyst did not read the hit's lines and their surroundings only")
	}
}

func TestAnalystShrinksOnContextOverflow(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "Paragraph %d: the Treaty of Westphalia was signed in 1648, fact %d.\n", i, i)
	}
	var mu sync.Mutex
	var sizes []int
	// The model claims a large window but overflows above 2,000 characters of prompt.
	m := scripted.New(llm.Info{Name: "liar", ContextWindow: 200_000}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		p := lastUser(req)
		mu.Lock()
		sizes = append(sizes, len(p))
		mu.Unlock()
		if len(p) > 4000 {
			return nil, &llm.ContextLengthError{Provider: "test", Message: "maximum context length exceeded"}
		}
		i := strings.Index(p, "Paragraph ")
		j := strings.Index(p[i:], "\n")
		return scripted.Reply(fmt.Sprintf(`{"evidence": [{"claim": "c", "quote": %q, "confidence": 0.5}]}`, p[i:i+j])), nil
	})
	ev, err := New(Config{Analyst: m, Logger: quietLogger(), Limits: Limits{WindowTokens: 4000, MaxWindows: 1}}).Analyst.Analyze(t.Context(), testPlan.SubQuestions[0], &sources.Document{URL: "https://x.example/t", Text: b.String()})
	if len(ev) == 0 {
		t.Fatalf("nothing read after shrinking: %v (sizes %v)", err, sizes)
	}
	for i := 1; i < len(sizes); i++ {
		if sizes[i] == sizes[0] {
			t.Fatalf("the overflowing request was sent again unchanged: sizes %v", sizes)
		}
	}
}

func TestAnalystRejectsEmptyDocument(t *testing.T) {
	m := replies()
	_, err := New(Config{Analyst: m, Logger: quietLogger()}).Analyst.Analyze(t.Context(), testPlan.SubQuestions[0], &sources.Document{URL: "https://x.example", Text: "  "})
	if err == nil || !strings.Contains(err.Error(), "https://x.example") || m.Calls() != 0 {
		t.Fatalf("err %v, %d calls", err, m.Calls())
	}
}

func testPool() []research.Evidence {
	return []research.Evidence{
		{ID: "e1", SubQuestion: "q1", Claim: "Signed in 1648", Quote: "The Treaty of Westphalia was signed in 1648.", Source: "https://a.example/1", Confidence: 0.9},
		{ID: "e2", SubQuestion: "q1", Claim: "Signed in 1649", Quote: "The treaty dates from 1649.", Source: "https://blog.example/x", Confidence: 0.3},
		{ID: "e3", SubQuestion: "q2", Claim: "Historians disagree on sovereignty", Quote: "Historians disagree about its long-term effects on state sovereignty.", Source: "https://a.example/2", Confidence: 0.8},
	}
}

func TestVerifierHappyPath(t *testing.T) {
	m := replies(`{"pass": false,
	 "gaps": [{"sub_question": "Q3", "missing": "which wars", "queries": ["Thirty Years War end", "Eighty Years War end"]},
	          {"sub_question": "What did historians say about sovereignty?", "missing": "more historians"},
	          {"sub_question": "q9", "missing": "nonsense"}],
	 "rejected": [{"evidence_id": "e2", "reason": "blog, contradicts the primary source"}, {"evidence_id": "e77", "reason": "?"}],
	 "conflicts": [{"sub_question": "q1", "description": "1648 vs 1649", "evidence_ids": ["e1", "[e2]", "e99"]}],
	 "notes": "dates conflict"}`)
	v, err := New(Config{Verifier: m, Logger: quietLogger()}).Verifier.Verify(t.Context(), testPlan, testPool())
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || v.Notes != "dates conflict" {
		t.Fatalf("verdict %+v", v)
	}
	if len(v.Gaps) != 2 || v.Gaps[0].SubQuestion != "q3" || len(v.Gaps[0].Queries) != 2 || v.Gaps[1].SubQuestion != "q2" || v.Gaps[1].Queries[0] != "more historians" {
		t.Errorf("gaps %+v", v.Gaps)
	}
	if len(v.Rejected) != 1 || v.Rejected[0].EvidenceID != "e2" {
		t.Errorf("rejected %+v", v.Rejected)
	}
	if len(v.Conflicts) != 1 || strings.Join(v.Conflicts[0].EvidenceIDs, ",") != "e1,e2" {
		t.Errorf("conflicts %+v", v.Conflicts)
	}
	req := m.Requests()[0]
	if s := system(req); !strings.Contains(s, "adversarial") || !strings.Contains(s, "credible") {
		t.Errorf("verifier prompt is not adversarial: %s", s)
	}
	p := lastUser(req)
	for _, want := range []string{"[e1]", "[e2]", "[e3]", "https://blog.example/x", "confidence 0.30", "q2: What did historians", `<evidence_pool untrusted="true">`} {
		if !strings.Contains(p, want) {
			t.Errorf("verifier prompt lacks %q", want)
		}
	}
}

func TestVerifierTrimsLargePool(t *testing.T) {
	var pool []research.Evidence
	for i := range 300 {
		pool = append(pool, research.Evidence{ID: fmt.Sprintf("e%d", i+1), SubQuestion: "q3", Claim: fmt.Sprintf("Unrelated filler statement number %d about cooking pasta", i),
			Quote: strings.Repeat("Boil the water and add salt. ", 5), Source: "https://food.example", Confidence: 0.2})
	}
	pool = append(pool,
		research.Evidence{ID: "e501", SubQuestion: "q1", Claim: "The Treaty of Westphalia was signed in 1648", Quote: "The Treaty of Westphalia was signed in 1648.", Source: "https://a.example", Confidence: 0.9},
		research.Evidence{ID: "e502", SubQuestion: "q2", Claim: "Historians disagree about sovereignty", Quote: "Historians disagree about its long-term effects on state sovereignty.", Source: "https://a.example", Confidence: 0.9})
	m := replies(`{"pass": true}`)
	v, err := New(Config{Verifier: m, Logger: quietLogger(), Limits: Limits{PoolTokens: 1500}}).Verifier.Verify(t.Context(), testPlan, pool)
	if err != nil || !v.Pass {
		t.Fatalf("%+v %v", v, err)
	}
	p := lastUser(m.Requests()[0])
	if !strings.Contains(p, "[e501]") || !strings.Contains(p, "[e502]") {
		t.Error("the most relevant items were trimmed")
	}
	if strings.Contains(p, "[e300]") || !strings.Contains(p, "not shown") {
		t.Error("a pool over the budget was not trimmed, or the model was not told")
	}
}

func TestVerifierEmptyPoolNeverPasses(t *testing.T) {
	v, err := New(Config{Verifier: replies(`{"pass": true}`), Logger: quietLogger()}).Verifier.Verify(t.Context(), testPlan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || len(v.Gaps) != len(testPlan.SubQuestions) {
		t.Fatalf("verdict %+v", v)
	}
}

func TestSynthesizer(t *testing.T) {
	m := replies("```markdown\n# Westphalia\n\nSigned in 1648 [e1]; one blog says 1649 [e2], but the primary source favours 1648 [e1]. Historians disagree [e3, e9].\n```",
		"# Westphalia\n\nSigned in 1648 [e1]. A blog says 1649 [e2]; the evidence favours 1648 [e1]. Historians disagree [e3].")
	pool := testPool()
	pool = append(pool, research.Evidence{ID: "e4", SubQuestion: "q3", Claim: "rejected claim", Quote: "x", Source: "https://x.example", Status: research.StatusRejected})
	in := research.SynthesisInput{Plan: testPlan, Evidence: pool, Verdict: &research.Verdict{Conflicts: []research.Conflict{{SubQuestion: "q1", Description: "1648 vs 1649", EvidenceIDs: []string{"e1", "e2"}}}},
		Problems: []string{"sentence 'The treaty was popular.' cites nothing"}, CutShort: "cost fuse reached at $0.50"}
	d, err := New(Config{Synthesizer: m, Logger: quietLogger()}).Synthesizer.Synthesize(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Markdown, "# Westphalia") || strings.Contains(d.Markdown, "e9") || strings.Contains(d.Markdown, "```") {
		t.Fatalf("draft %q", d.Markdown)
	}
	reqs := m.Requests()
	if len(reqs) != 2 || !strings.Contains(lastUser(reqs[1]), "e9") {
		t.Fatalf("unknown citation not sent back: %d calls", len(reqs))
	}
	p := lastUser(reqs[0])
	for _, want := range []string{"The treaty was popular.", "1648 vs 1649 [e1, e2]", "[e3]", "English"} {
		if !strings.Contains(p, want) {
			t.Errorf("synthesizer prompt lacks %q", want)
		}
	}
	if strings.Contains(p, "rejected claim") {
		t.Error("rejected evidence shown to the synthesizer")
	}
	// The renderer writes the cut-short note and the footer: asking the model for uncitable notes would only
	// get its draft refused.
	if strings.Contains(p, "cost fuse reached") || strings.Contains(strings.ToLower(system(reqs[0])), "open questions and") {
		t.Error("the synthesizer is asked for uncitable text")
	}
	if s := system(reqs[0]); !strings.Contains(s, "[e3, e7]") || !strings.Contains(s, "A says X, B says Y") ||
		!strings.Contains(s, "Today's date is ") {
		t.Errorf("synthesizer system prompt lacks the citation or conflict rules or the date: %s", s)
	}
}

// A draft that cites none of the pool's evidence is sent back once, with the reason; the cited ids are read as
// the integrity check reads them (publish.CitedIDs), so a list in one marker counts each of its ids.
func TestSynthesizerSendsBackAnUncitedDraft(t *testing.T) {
	m := replies("# Westphalia\n\nSigned in 1648. Historians disagree.",
		"# Westphalia\n\nSigned in 1648 [e1; e2]. Historians disagree [e3].")
	d, err := New(Config{Synthesizer: m, Logger: quietLogger()}).Synthesizer.Synthesize(t.Context(),
		research.SynthesisInput{Plan: testPlan, Evidence: testPool()})
	if err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	if len(reqs) != 2 || !strings.Contains(lastUser(reqs[1]), "cites no evidence") {
		t.Fatalf("the uncited draft was not sent back: %d calls", len(reqs))
	}
	if !strings.Contains(d.Markdown, "[e1; e2]") {
		t.Errorf("draft %q", d.Markdown)
	}
}

// TestChineseQuestionReachesSynthesizer follows the language from the planner to the synthesizer's
// instructions.
func TestChineseQuestionReachesSynthesizer(t *testing.T) {
	planner := replies("好的：\n```json\n{\"language\": \"en\", \"sub_questions\": [{\"question\": \"威斯特伐利亚和约何时签订？\", \"queries\": [\"威斯特伐利亚和约 签订 时间\", \"Peace of Westphalia date\"]}, {\"question\": \"它结束了哪些战争？\"}, {\"question\": \"它如何影响主权观念？\"}]}\n```")
	synth := replies("# 威斯特伐利亚和约\n\n和约于1648年签订 [e1]。")
	roles := New(Config{Planner: planner, Synthesizer: synth, Logger: quietLogger()})
	plan, err := roles.Planner.Plan(t.Context(), "威斯特伐利亚和约如何改变了国家主权？")
	if err != nil {
		t.Fatal(err)
	}
	if plan.Language != "zh" {
		t.Fatalf("language %q, want zh (the model said en, the question is Chinese)", plan.Language)
	}
	ev := []research.Evidence{{ID: "e1", SubQuestion: "q1", Claim: "Signed in 1648", Quote: "The Treaty of Westphalia was signed in 1648.", Source: "https://a.example", Confidence: 0.9}}
	d, err := roles.Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: plan, Evidence: ev})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Markdown, "[e1]") {
		t.Fatalf("draft %q", d.Markdown)
	}
	req := synth.Requests()[0]
	if s := system(req); !strings.Contains(s, "Chinese") || !strings.Contains(s, "language code zh") {
		t.Errorf("synthesizer instructions do not name the language: %s", s)
	}
	if !strings.Contains(lastUser(req), "Write the report in Chinese") {
		t.Errorf("synthesizer prompt does not name the language")
	}
}

func TestCutOffAnswers(t *testing.T) {
	cut := func(text string) *llm.Response {
		r := scripted.Reply(text)
		r.StopReason = llm.StopMaxTokens
		return r
	}
	t.Run("a draft is continued where it stopped", func(t *testing.T) {
		var reqs []*llm.Request
		answers := []*llm.Response{
			cut("# Westphalia\n\n## When\n\nSigned in 1648 [e1].\n\n## What or"),
			scripted.Reply("der came after it\n\nHistorians disagree [e3]."),
		}
		m := scripted.New(llm.Info{}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
			reqs = append(reqs, req)
			return answers[len(reqs)-1], nil
		})
		d, err := New(Config{Synthesizer: m, Logger: quietLogger()}).Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: testPlan, Evidence: testPool()})
		if err != nil {
			t.Fatal(err)
		}
		if len(reqs) != 2 || !strings.Contains(lastUser(reqs[1]), "Continue exactly where it stopped") {
			t.Fatalf("%d calls", len(reqs))
		}
		if !strings.Contains(d.Markdown, "## What order came after it") || !strings.Contains(d.Markdown, "Historians disagree [e3].") {
			t.Fatalf("draft %q", d.Markdown)
		}
	})
	t.Run("a draft cut for good keeps its complete paragraphs", func(t *testing.T) {
		parts := []string{"# Westphalia\n\nSigned in 1648 [e1].\n\nHistorians disag", "ree [e3].\n\nSome", " regard it as the birth [e3].\n\nIt also end"}
		n := 0
		m := scripted.New(llm.Info{}, func(context.Context, *llm.Request) (*llm.Response, error) {
			n++
			return cut(parts[min(n, len(parts))-1]), nil
		})
		d, err := New(Config{Synthesizer: m, Logger: quietLogger()}).Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: testPlan, Evidence: testPool()})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(d.Markdown, "It also end") || !strings.Contains(d.Markdown, "Historians disagree [e3].\n\nSome regard it as the birth [e3].") {
			t.Fatalf("draft %q", d.Markdown)
		}
		if n != 1+maxContinuations {
			t.Fatalf("%d calls, want %d (bounded continuations)", n, 1+maxContinuations)
		}
	})
	t.Run("a cut-off JSON answer is asked again, shorter", func(t *testing.T) {
		var reqs []*llm.Request
		m := scripted.New(llm.Info{}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
			reqs = append(reqs, req)
			if len(reqs) == 1 {
				return cut(`{"language": "en", "sub_questions": [{"question": "When was it sig`), nil
			}
			return scripted.Reply(goodPlan), nil
		})
		if _, err := New(Config{Planner: m, Logger: quietLogger()}).Planner.Plan(t.Context(), "How did the Treaty of Westphalia change sovereignty?"); err != nil {
			t.Fatal(err)
		}
		if len(reqs) != 2 || !strings.Contains(lastUser(reqs[1]), "cut off by the output token limit") {
			t.Fatalf("%d calls; second prompt %q", len(reqs), lastUser(reqs[len(reqs)-1]))
		}
	})
}

func TestInScript(t *testing.T) {
	for _, tc := range []struct {
		md, want string
		ok       bool
	}{
		{"# 通道\n\n## 保证\n\nThe source states this point clearly and in detail [e1].", "cjk", false},
		{"# 通道\n\nGo 的通道发送在相应的接收完成之前同步 [e1]。使用 `sync.Mutex` 保护共享变量 [e2]。", "cjk", true},
		{"# Каналы\n\nОтправка в канал синхронизирована до завершения приёма [e1].", "ru", true},
		{"# Channels\n\nA send on a channel is synchronized before the receive completes [e1].", "", true},
		{"# Channels\n\n通道发送在相应的接收完成之前同步 [e1]。", "", false},
	} {
		if got := inScript(tc.md, tc.want); got != tc.ok {
			t.Errorf("inScript(%q, %q) = %v, want %v", tc.md, tc.want, got, tc.ok)
		}
	}
}

// A draft whose only citations are in a marker shape the integrity check accepts after canonicalising (【e3】)
// cites evidence: it is not sent back as uncited.
func TestSynthesizerReadsCitationsAsTheIntegrityCheckDoes(t *testing.T) {
	m := replies("# Westphalia\n\nHistorians disagree 【e3】.")
	if _, err := New(Config{Synthesizer: m, Logger: quietLogger()}).Synthesizer.Synthesize(t.Context(),
		research.SynthesisInput{Plan: testPlan, Evidence: testPool()}); err != nil {
		t.Fatal(err)
	}
	if n := len(m.Requests()); n != 1 {
		t.Errorf("a draft citing 【e3】 was asked again: %d calls", n)
	}
}
