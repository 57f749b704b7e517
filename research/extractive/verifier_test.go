package extractive

import (
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

func testPlan() *research.Plan {
	return &research.Plan{Question: "What does the Go memory model guarantee about channel communication?", Language: "en",
		SubQuestions: []research.SubQuestion{
			{ID: "q1", Question: "What does the Go memory model guarantee about channel communication?", Queries: []string{"channel communication"}},
			{ID: "q2", Question: "What is the Go memory model?", Queries: []string{"Go memory model"}},
		}}
}

func ev(id, sq, source, claim string, conf float64) research.Evidence {
	return research.Evidence{ID: id, SubQuestion: sq, Claim: claim, Quote: claim, Source: source, Confidence: conf, Status: research.StatusAccepted}
}

func TestVerifierCoverageGapsAndPass(t *testing.T) {
	v := New(Config{}).Verifier
	plan := testPlan()
	pool := []research.Evidence{
		ev("e1", "q1", "file:///go/doc/go_mem.html#L131-L163", "A send on a channel is synchronized before the completion of the corresponding receive from that channel.", 0.9),
		ev("e2", "q1", "file:///go/doc/go_spec.html#L3271-L3293", "A send on a buffered channel can proceed if there is room in the buffer.", 0.8),
		ev("e3", "q2", "file:///go/doc/go_mem.html#L1-L19", "The Go memory model specifies the conditions under which reads of a variable in one goroutine can observe writes.", 0.9),
		ev("e4", "q2", "file:///go/doc/go_mem.html#L1-L19", "The Go memory model specifies the conditions under which reads of a variable in one goroutine can observe writes", 0.5),
		ev("e5", "q9", "file:///go/doc/go_mem.html#L1-L19", "Unplanned.", 0.9),
		ev("e6", "q1", "file:///go/doc/go_mem.html#L1-L19", "Weak match.", 0.1),
		// A parallel rule shares nearly every word of e1 but says something else: not a repeat.
		ev("e7", "q1", "file:///go/doc/go_mem.html#L131-L163", "A receive from an unbuffered channel is synchronized before the completion of the corresponding send on that channel.", 0.85),
		// A short sentence quoted with its neighbour (e3) for context claims only itself: not a repeat of e3.
		{ID: "e8", SubQuestion: "q2", Claim: "It is formal.", Quote: "The Go memory model specifies the conditions under which reads of a variable in one goroutine can observe writes. It is formal.",
			Source: "file:///go/doc/go_mem.html#L1-L19", Confidence: 0.7, Status: research.StatusAccepted},
		// The same claim with the sentence that refers back to it holds e1's claim and more: it replaces e1.
		ev("e9", "q1", "file:///go/doc/go_mem.html#L131-L163", "A send on a channel is synchronized before the completion of the corresponding receive from that channel. This rule is central.", 0.6),
	}
	verdict, err := v.Verify(t.Context(), plan, pool)
	if err != nil {
		t.Fatal(err)
	}
	rejected := map[string]string{}
	for _, r := range verdict.Rejected {
		rejected[r.EvidenceID] = r.Reason
	}
	if !strings.Contains(rejected["e4"], "e3") || !strings.Contains(rejected["e5"], "q9") || !strings.Contains(rejected["e6"], "floor") || rejected["e9"] != "" ||
		rejected["e7"] != "" || rejected["e8"] != "" || !strings.Contains(rejected["e1"], "contained in e9") {
		t.Errorf("rejections %v", rejected)
	}
	if verdict.Pass || len(verdict.Gaps) != 1 || verdict.Gaps[0].SubQuestion != "q2" {
		t.Fatalf("verdict %+v, want one gap for q2 (one item)", verdict)
	}
	g := verdict.Gaps[0]
	if len(g.Queries) == 0 || slices.Contains(g.Queries, "Go memory model") {
		t.Errorf("gap queries %q: want new reformulations, not the query already tried", g.Queries)
	}

	// The directed re-search found a second item, from the same document; it looked once already, so the
	// sub-question is accepted as the best the sources offer and the verdict passes.
	pool = append(pool, ev("e7", "q2", "file:///go/doc/go_mem.html#L21-L25", "The memory model describes the requirements on program executions.", 0.7))
	verdict, err = v.Verify(t.Context(), plan, pool)
	if err != nil {
		t.Fatal(err)
	}
	if !verdict.Pass || !strings.Contains(verdict.Notes, "best the sources offer") {
		t.Errorf("verdict %+v, want pass with a note", verdict)
	}
}

func TestVerifierAsksOnceForASecondSource(t *testing.T) {
	v := New(Config{}).Verifier
	plan := testPlan()
	pool := []research.Evidence{
		ev("e1", "q1", "file:///go/doc/go_mem.html#L131-L163", "A send on a channel is synchronized before the completion of the corresponding receive from that channel.", 0.9),
		ev("e2", "q1", "file:///go/doc/go_spec.html#L3271-L3293", "A send on a buffered channel can proceed if there is room in the buffer.", 0.8),
		ev("e3", "q2", "file:///go/doc/go_mem.html#L1-L19", "The Go memory model specifies the conditions under which reads of a variable in one goroutine can observe writes.", 0.9),
		ev("e4", "q2", "file:///go/doc/go_mem.html#L21-L25", "The memory model describes the requirements on program executions.", 0.7),
	}
	verdict, err := v.Verify(t.Context(), plan, pool)
	if err != nil {
		t.Fatal(err)
	}
	if verdict.Pass || len(verdict.Gaps) != 1 || verdict.Gaps[0].SubQuestion != "q2" || !strings.Contains(verdict.Gaps[0].Missing, "independent source") {
		t.Fatalf("verdict %+v, want a gap asking q2 for a second source", verdict)
	}
	verdict, err = v.Verify(t.Context(), plan, pool)
	if err != nil {
		t.Fatal(err)
	}
	if !verdict.Pass {
		t.Errorf("verdict %+v, want pass after one directed re-search", verdict)
	}
}

func TestVerifierFlagsConflictsBetweenSources(t *testing.T) {
	plan := &research.Plan{Question: "压缩何时触发？", Language: "zh", SubQuestions: []research.SubQuestion{{ID: "q1", Question: "压缩何时触发？"}}}
	pool := []research.Evidence{
		ev("e1", "q1", "file:///a.txt#L1-L1", "Claude Code 的压缩触发时机是上下文达到 95%", 0.9),
		ev("e2", "q1", "file:///b.txt#L4-L4", "Claude Code 的压缩触发时机是上下文达到 85%", 0.8),
		ev("e3", "q1", "file:///a.txt#L9-L9", "Claude Code 的压缩触发时机是上下文达到 80%", 0.7), // same document as e1: not a conflict between sources
	}
	verdict, err := New(Config{}).Verifier.Verify(t.Context(), plan, pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(verdict.Conflicts) != 2 {
		t.Fatalf("conflicts %+v, want e1/e2 and e2/e3", verdict.Conflicts)
	}
	for _, c := range verdict.Conflicts {
		if !slices.Contains(c.EvidenceIDs, "e2") || !strings.Contains(c.Description, "数字") {
			t.Errorf("conflict %+v", c)
		}
	}
}

func TestVerifierNeedsAPlan(t *testing.T) {
	if _, err := New(Config{}).Verifier.Verify(t.Context(), nil, nil); err == nil {
		t.Error("want an error without a plan")
	}
}

// Of a sentence claimed alone and again with the sentence that refers back to it, the more complete claim stays,
// even when it ranks lower.
func TestVerifierKeepsTheMoreCompleteClaim(t *testing.T) {
	plan := &research.Plan{Question: "What does iota represent?", SubQuestions: []research.SubQuestion{{ID: "q1", Question: "What does iota represent?"}}}
	first := "Within a constant declaration, the predeclared identifier iota represents successive untyped integer constants."
	pool := []research.Evidence{
		{ID: "e1", SubQuestion: "q1", Claim: first, Quote: first, Source: "file:///spec.html#L1-L1", Confidence: 0.9, Status: research.StatusAccepted},
		{ID: "e2", SubQuestion: "q1", Claim: first + " Its value is the index of the respective ConstSpec, starting at zero.",
			Quote: first + " Its value is …", Source: "file:///spec.html#L1-L2", Confidence: 0.7, Status: research.StatusAccepted},
	}
	v, err := New(Config{}).Verifier.Verify(t.Context(), plan, pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Rejected) != 1 || v.Rejected[0].EvidenceID != "e1" {
		t.Errorf("rejected %+v, want e1 (contained in e2)", v.Rejected)
	}
}

// The re-search vocabulary is the same on every call: words used equally often keep the order they first
// appear in, bigrams of one CJK word included, never the order a map happens to give.
func TestEvidenceVocabularyIsStable(t *testing.T) {
	tests := []struct {
		name   string
		claims []string
		n      int
		want   []string
	}{
		{"cjk bigrams of one word in reading order", []string{"熔断触发后停止检索", "熔断触发后停止检索"}, 3, []string{"熔断", "断触", "触发"}},
		{"more frequent first", []string{"budget fuse", "fuse tripped", "fuse budget"}, 2, []string{"fuse", "budget"}},
		{"latin ties by first appearance", []string{"alpha bravo charlie", "charlie bravo alpha"}, 3, []string{"alpha", "bravo", "charlie"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev []research.Evidence
			for _, c := range tt.claims {
				ev = append(ev, research.Evidence{Claim: c})
			}
			for range 50 {
				got := evidenceVocabulary(ev, map[string]bool{}, tt.n)
				if !slices.Equal(got, tt.want) {
					t.Fatalf("evidenceVocabulary = %q, want %q", got, tt.want)
				}
			}
		})
	}
}

// Of two repeats, the verifier keeps the one of the page a reader would open, even when the copy's (a Markdown
// source beside its HTML rendering) ranks higher; and a copy that negates where its page states is no conflict
// between sources, while two independent pages that disagree still are.
func TestVerifierKeepsTheOriginalOfARepeat(t *testing.T) {
	plan := &research.Plan{Question: "When is the flush event emitted?", Language: "en", SubQuestions: []research.SubQuestion{
		{ID: "q1", Question: "When is the flush event emitted?", Queries: []string{"flush event emitted"}}}}
	page, copyOf, other := "file:///api/queue.html", "file:///api/queue.md", "file:///api/pool.html"
	pool := []research.Evidence{
		ev("e1", "q1", page+"#L19-L19", "The flush event is emitted when the queue empties and has no additional work to schedule.", 0.8),
		ev("e2", "q1", copyOf+"#L30-L31", "The flush event is emitted when the queue empties and has no additional work to schedule.", 0.95),
		ev("e3", "q1", page+"#L23-L23", "The flush event is emitted for conditions causing explicit termination of the queue.", 0.7),
		ev("e4", "q1", copyOf+"#L39-L40", "The flush event is not emitted for conditions causing explicit termination of the queue.", 0.9),
		ev("e5", "q1", other+"#L5-L5", "The drain event is emitted when the pool empties its buffers.", 0.6),
		ev("e6", "q1", "file:///api/buffer.html#L9-L9", "The drain event is not emitted when the pool empties its buffers.", 0.6),
	}
	src := redundancySource{why: map[string]string{copyOf: "copy"}}
	verdict, err := New(Config{Searchers: []sources.Searcher{src}}).Verifier.Verify(t.Context(), plan, pool)
	if err != nil {
		t.Fatal(err)
	}
	rejected := map[string]string{}
	for _, r := range verdict.Rejected {
		rejected[r.EvidenceID] = r.Reason
	}
	if rejected["e1"] != "" || !strings.Contains(rejected["e2"], "repeats e1") {
		t.Errorf("rejections %v: want the copy's repeat (e2) dropped for the page's (e1)", rejected)
	}
	independent := false
	for _, c := range verdict.Conflicts {
		if slices.Contains(c.EvidenceIDs, "e4") {
			t.Errorf("a copy disagrees with its page: %+v", c)
		}
		independent = independent || slices.Contains(c.EvidenceIDs, "e5") && slices.Contains(c.EvidenceIDs, "e6")
	}
	if !independent {
		t.Errorf("conflicts %+v: want the two independent pages' disagreement (e5, e6)", verdict.Conflicts)
	}
	// Without the index's word on copies, the stronger item stays, as before.
	verdict, err = New(Config{}).Verifier.Verify(t.Context(), plan, pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range verdict.Rejected {
		if r.EvidenceID == "e2" {
			t.Errorf("with no copies known, the stronger repeat was dropped: %v", r)
		}
	}
}
