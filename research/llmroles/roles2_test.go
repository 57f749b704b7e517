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

	// MaxWindows bounds the reading.
	prompts = nil
	if _, err := New(Config{Analyst: m, Logger: quietLogger(), Limits: Limits{MaxWindows: 2}}).Analyst.Analyze(t.Context(), testPlan.SubQuestions[0], doc); err != nil {
		t.Fatal(err)
	}
	if len(prompts) != 2 {
		t.Fatalf("%d windows read, limit 2", len(prompts))
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
	for _, want := range []string{"The treaty was popular.", "cost fuse reached", "1648 vs 1649 [e1, e2]", "[e3]", "English"} {
		if !strings.Contains(p, want) {
			t.Errorf("synthesizer prompt lacks %q", want)
		}
	}
	if strings.Contains(p, "rejected claim") {
		t.Error("rejected evidence shown to the synthesizer")
	}
	if s := system(reqs[0]); !strings.Contains(s, "[e3, e7]") || !strings.Contains(s, "the evidence favours Y because") {
		t.Errorf("synthesizer system prompt lacks the citation or conflict rules: %s", s)
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
