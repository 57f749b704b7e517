package extractive

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
)

// A chain of back references ("… rule. This rule … It allows …") is quoted from the sentence the chain starts
// at, or not at all; no claim opens with a pronoun whose antecedent it lacks.
func TestAnalystResolvesChainedBackReferences(t *testing.T) {
	tests := []struct {
		name, text string
		want       string // the claim the back reference must appear in, "" for no item starting with it
	}{
		{"chain of two", "# Buffered channels\n\nThe kth receive from a buffered channel is synchronized before the k+Cth send.\n\n" +
			"This rule generalizes the previous rule to buffered channels. It allows a counting semaphore to be modeled by a buffered channel.\n",
			"The kth receive from a buffered channel is synchronized before the k+Cth send. This rule generalizes"},
		{"antecedent behind a heading", "# Buffered channels\n\nThis rule generalizes the previous rule to buffered channels. It allows a counting semaphore to be modeled by a buffered channel.\n",
			""},
	}
	for _, tt := range tests {
		a := New(Config{}).Analyst
		sq := research.SubQuestion{ID: "q1", Question: "What rule applies to buffered channels?", Queries: []string{"buffered channels semaphore rule"}}
		ev, err := a.Analyze(t.Context(), sq, doc("file:///docs/mem.md", tt.text))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range ev {
			checkGrounded(t, tt.text, e)
			if refersBack(e.Claim) {
				t.Errorf("%s: claim %q opens with a back reference", tt.name, e.Claim)
			}
			if tt.want != "" && strings.HasPrefix(e.Claim, tt.want) && strings.Contains(e.Claim, "It allows") {
				found = true
			}
		}
		if tt.want != "" && !found {
			t.Errorf("%s: no claim carries the whole chain; items %+v", tt.name, ev)
		}
	}
}

// A search hit inside a short section reads the whole section: the rule one paragraph above the hit is found.
// A long section is read only on the hit's lines.
func TestAnalystReadsWholeShortSections(t *testing.T) {
	section := "# Memory\n\n### Channel communication\n\nA send on a channel is synchronized before the completion of the corresponding receive.\n\n" +
		"Programs print the value.\n\nChannel communication is used by every program that shares memory.\n\n### Locks\n\nThe lock rule for mutexes.\n"
	tests := []struct {
		name    string
		filler  int // paragraphs inserted into the channel section
		wantFar bool
	}{
		{"short section", 0, true},
		{"long section", 150, false},
	}
	for _, tt := range tests {
		var filler strings.Builder
		for i := range tt.filler {
			fmt.Fprintf(&filler, "Filler paragraph number %d of the section says nothing of note.\n\n", i)
		}
		text := strings.Replace(section, "Programs print the value.", filler.String()+"Programs print the value.", 1)
		lines := strings.Split(text, "\n")
		hit := 0
		for i, l := range lines {
			if strings.HasPrefix(l, "Channel communication is used") {
				hit = i + 1
			}
		}
		a := New(Config{}).Analyst
		sq := research.SubQuestion{ID: "q1", Question: "What is guaranteed about channel communication?", Queries: []string{"channel communication"}}
		ev, err := a.Analyze(t.Context(), sq, doc("file:///docs/mem.md#L"+itoa(hit)+"-L"+itoa(hit), text))
		if err != nil {
			t.Fatal(err)
		}
		far := false
		for _, e := range ev {
			checkGrounded(t, text, e)
			if strings.HasPrefix(e.Quote, "A send on a channel") {
				far = true
			}
			if strings.Contains(e.Quote, "lock rule") {
				t.Errorf("%s: quoted the next section: %q", tt.name, e.Quote)
			}
		}
		if far != tt.wantFar {
			t.Errorf("%s: rule above the hit found = %v, want %v (items %+v)", tt.name, far, tt.wantFar, ev)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// MMR penalises near-duplicates only: parallel rules that share their wording are both kept.
func TestRedundancy(t *testing.T) {
	tests := []struct {
		a, b string
		high bool
	}{
		{"A send on a channel is synchronized before the completion of the corresponding receive from that channel.",
			"A receive from an unbuffered channel is synchronized before the completion of the corresponding send on that channel.", false},
		{"A send on a channel is synchronized before the completion of the corresponding receive from that channel.",
			"A send on a channel is synchronized before the completion of the corresponding receive from the channel.", true},
		{"Mutexes protect shared maps.", "Channels synchronize goroutines.", false},
	}
	for _, tt := range tests {
		r := redundancy(lexical.Tokenize(tt.a), lexical.Tokenize(tt.b))
		if (r > 0.5) != tt.high || r < 0 || r > 1 {
			t.Errorf("redundancy(%q, %q) = %.2f, want high=%v", tt.a, tt.b, r, tt.high)
		}
	}
}

// The summary answers first, 3 to 6 sentences from the whole pool ranked alike (whichever sub-question's read
// found an item), the best item leading and rules and definitions next; no claim is cited twice in the report; an
// item about another topic than the question's is left out.
func TestSynthesizerAnswersFirstAndCitesEachClaimOnce(t *testing.T) {
	plan := &research.Plan{Question: "What does the Go memory model guarantee about channel communication?", Language: "en",
		SubQuestions: []research.SubQuestion{
			{ID: "q1", Question: "What does the Go memory model guarantee about channel communication?", Queries: []string{"Go memory model channel communication"}},
			{ID: "q2", Question: "What rules or examples illustrate channel communication?", Queries: []string{"channel communication example"}},
			{ID: "q3", Question: "What caveats, limits or exceptions apply to channel communication?", Queries: []string{"channel communication unless"}},
		}}
	pool := []research.Evidence{
		ev("e1", "q1", "file:///spec.html#L1-L1", "Both the channel and the value expression are evaluated before communication begins.", 0.6),
		ev("e2", "q2", "file:///mem.html#L3-L3", "The write to `a` is sequenced before the receive on `c` in channel communication.", 1),
		ev("e3", "q3", "file:///mem.html#L5-L5", "A send on a channel is synchronized before the completion of the corresponding receive in channel communication.", 0.95),
		ev("e4", "q3", "file:///mem.html#L7-L7", "A receive from an unbuffered channel is synchronized before the completion of the corresponding send in channel communication.", 0.95),
		ev("e5", "q2", "file:///mem.html#L9-L9", "Channel communication is the main method of synchronization between goroutines.", 0.9),
		ev("e6", "q3", "file:///mem.html#L11-L11", "The closing of a channel is synchronized before a receive that returns because the channel is closed.", 0.9),
		ev("e7", "q2", "file:///asm.html#L3-L3", "The assembler uses a pseudo-register for the frame pointer.", 0.9),
		ev("e8", "q1", "file:///mem.html#L13-L13", "A send on a channel is synchronized before the completion of the corresponding receive in channel communication!", 0.5),
	}
	for i := range pool {
		pool[i].Title = "The Go Memory Model"
	}
	pool[6].Title = "A Quick Guide to Go's Assembler"
	d, err := New(Config{}).Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: plan, Evidence: pool})
	if err != nil {
		t.Fatal(err)
	}
	summary, _, _ := strings.Cut(strings.SplitN(d.Markdown, "## Summary\n\n", 2)[1], "\n\n")
	n := strings.Count(summary, "].")
	if n < 3 || n > 6 {
		t.Errorf("summary has %d sentences, want 3..6:\n%s", n, summary)
	}
	for _, id := range []string{"[e3]", "[e4]"} {
		if !strings.Contains(summary, id) {
			t.Errorf("summary lacks %s:\n%s", id, summary)
		}
	}
	if i := strings.Index(summary, "[e2]"); i >= 0 && i < strings.Index(summary, "[e3]") {
		t.Errorf("the example's walk-through leads the summary:\n%s", summary)
	}
	for _, id := range []string{"e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8"} {
		if c := strings.Count(d.Markdown, "["+id+"]"); c > 1 {
			t.Errorf("%s cited %d times:\n%s", id, c, d.Markdown)
		}
	}
	if strings.Contains(d.Markdown, "[e7]") {
		t.Errorf("the assembler's frame pointer is off topic:\n%s", d.Markdown)
	}
	if strings.Contains(d.Markdown, "[e3]") && strings.Contains(d.Markdown, "[e8]") {
		t.Errorf("a near-duplicate of e3 cited beside it:\n%s", d.Markdown)
	}
}

// A sentence quoted with the example before it for its back reference is judged by what it says itself: "This
// restriction is called the orphan rule …" states a rule, and the example it points back to does not make it an
// example's walk-through, whose confidence is scaled down: the item counts as much as with a plain sentence before it.
func TestAnalystJudgesABackReferenceByItsOwnSentence(t *testing.T) {
	const rule = "This restriction is called the orphan rule, because the parent type is absent."
	confidence := func(before string) float64 {
		text := "# Implementing a trait on a type\n\n" +
			"A crate may implement a trait on a type when the trait or the type is local to the crate.\n\n" +
			"You cannot implement a foreign trait on a foreign type. " + before + " " + rule + "\n\n" +
			"Implementing a trait on a type is similar to implementing regular methods.\n"
		sq := research.SubQuestion{ID: "q1", Question: "What is the orphan rule for implementing a trait?", Queries: []string{"implement trait orphan rule|regular"}}
		for _, e := range analyzed(t, sq, doc("file:///book/traits.html", text)) {
			if strings.HasSuffix(e.Claim, rule) {
				return e.Confidence
			}
		}
		t.Fatalf("the orphan rule's sentence is not taken after %q", before)
		return 0
	}
	example := confidence("For example, a crate cannot implement Display for Vec<T>, since both come from the standard library.")
	plain := confidence("A crate cannot implement Display for Vec<T>, since both come from the standard library.")
	if example != plain {
		t.Errorf("confidence %.3f after an example, %.3f after a plain sentence", example, plain)
	}
}

// The summary opens with the item that answers the question best, even when it is neither a rule nor a definition:
// a definition of a word the question uses comes after it, not before.
func TestSummaryOpensWithTheBestAnswer(t *testing.T) {
	plan := &research.Plan{Question: "Do I have to close a file after reading it?", Language: "en",
		SubQuestions: []research.SubQuestion{
			{ID: "q1", Question: "Do I have to close a file after reading it?", Queries: []string{"close file after reading"}},
		}}
	pool := []research.Evidence{
		ev("e1", "q1", "file:///io.html#L5-L5", "If you are not using the with keyword, you call f.close() to close the file after reading it and free the resources it holds.", 0.95),
		ev("e2", "q1", "file:///io.html#L3-L3", "A file object is an object exposing a file-oriented API for reading and closing a file.", 0.7),
		ev("e3", "q1", "file:///io.html#L7-L7", "After a file is closed, reading it again raises an error.", 0.6),
	}
	for i := range pool {
		pool[i].Title = "Reading and Writing Files"
	}
	d, err := New(Config{}).Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: plan, Evidence: pool})
	if err != nil {
		t.Fatal(err)
	}
	summary, _, _ := strings.Cut(strings.SplitN(d.Markdown, "## Summary\n\n", 2)[1], "\n\n")
	if !strings.HasPrefix(summary, "If you are not using the with keyword") || !strings.Contains(summary, "[e2]") {
		t.Errorf("the summary does not open with the answer, the definition after it:\n%s", summary)
	}
}
