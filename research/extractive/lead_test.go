package extractive

import (
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
)

const contextRulesDoc = `# Package context

Package context defines the Context type, which carries deadlines, cancellation signals, and other request-scoped values across API boundaries and between processes.

Programs that use Contexts should follow these rules to keep interfaces consistent across packages and enable static analysis tools to check context propagation:

Do not store Contexts inside a struct type; instead, pass a Context explicitly to each function that needs it.

Do not pass a nil Context, even if a function permits it. Pass context.TODO if you are unsure about which Context to use.

Use context Values only for request-scoped data that transits processes and APIs, not for passing optional parameters to functions.

## func WithValue

WithValue returns a derived context that points to the parent Context. In the derived context, the value associated with key is val.

Keys are best declared with an unexported type of their own.
`

// The lead-sentence heuristic: which passages introduce what follows them.
func TestLeadSentence(t *testing.T) {
	tests := []struct {
		name, text string
		want       bool
	}{
		{"paragraphs follow", "Programs should follow these rules:\n\nDo not store Contexts.\n", true},
		{"list follows", "The set is the same everywhere:\n\n- `FP`: frame pointer.\n", true},
		{"code follows", "The Context should be the first parameter, typically named ctx:\n\n\tfunc DoSomething(ctx context.Context) error\n", false},
		{"fenced code follows", "Write this:\n\n```go\nx := 1\n```\n", false},
		{"heading follows", "Contents:\n\n## Next\n", false},
		{"paragraph goes on", "He said: it works.\n", false},
		{"no colon", "Programs should follow these rules.\n\nDo not store Contexts.\n", false},
		{"nothing follows", "The end:\n", false},
	}
	for _, tt := range tests {
		sp := lexical.Sentences(tt.text)[0]
		if got := leadSentence(tt.text, sp); got != tt.want {
			t.Errorf("%s: leadSentence(%q) = %v, want %v", tt.name, sp.Text, got, tt.want)
		}
	}
}

// The paragraphs a lead sentence announces are evidence for what the lead matches, though they do not repeat the
// question's words; they stop at the next heading.
func TestLeadFollowersShareRelevance(t *testing.T) {
	sq := research.SubQuestion{ID: "q1", Question: "What rules should programs follow when using Context values?", Queries: []string{"Context values", "Context values using"}}
	ev, err := New(Config{}).Analyst.Analyze(t.Context(), sq, doc("file:///pkg/context.md", contextRulesDoc))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range ev {
		checkGrounded(t, contextRulesDoc, e)
		got[e.Claim] = true
	}
	for _, want := range []string{"Do not store Contexts inside a struct type; instead, pass a Context explicitly to each function that needs it.",
		"Do not pass a nil Context, even if a function permits it."} {
		if !got[want] {
			t.Errorf("missing %q among %v", want, got)
		}
	}
	if got["Keys are best declared with an unexported type of their own."] {
		t.Error("a paragraph of the next section inherited the lead's relevance")
	}
}

// The continuation heuristic: which leads are sentences finished by their list items.
func TestCompletesLead(t *testing.T) {
	for lead, want := range map[string]bool{
		"That said, every implementation must:":                              true,
		"A value of interface type is one of:":                               true,
		"Programs that use Contexts should follow these rules:":              false,
		"The set of pseudo-registers is the same for all architectures:":     false,
		"The **zero value** of a [Mutex](#Mutex) is one of the following to": true,
		"编译器必须：": false,
	} {
		if got := completesLead(lead); got != want {
			t.Errorf("completesLead(%q) = %v, want %v", lead, got, want)
		}
	}
}

// A list item that finishes its lead's sentence ("Give an error if …" after "every implementation must:") is no
// sentence: it is quoted only with its lead, as one list.
func TestContinuationItemsStayWithTheirLead(t *testing.T) {
	text := "# Constants\n\nImplementation restriction: numeric constants have arbitrary precision. That said, every implementation must:\n\n" +
		"- Represent integer constants with at least 256 bits.\n- Give an error if unable to represent an integer constant precisely.\n\nConstants are untyped.\n"
	sq := research.SubQuestion{ID: "q1", Question: "What must an implementation do with integer constants?", Queries: []string{"implementation integer constants"}}
	ev, err := New(Config{}).Analyst.Analyze(t.Context(), sq, doc("file:///spec.md", text))
	if err != nil {
		t.Fatal(err)
	}
	withList := false
	for _, e := range ev {
		checkGrounded(t, text, e)
		if strings.HasPrefix(e.Claim, "Give an error") || strings.HasPrefix(e.Claim, "Represent integer") {
			t.Errorf("a continuation item quoted alone: %q", e.Claim)
		}
		withList = withList || strings.Contains(e.Claim, "must: Represent integer constants with at least 256 bits; Give an error")
	}
	if !withList {
		t.Errorf("the lead with its list is not evidence: %v", ev)
	}
}

// A short sentence quoted with the sentence before it for context is stated with it.
func TestShortSentenceStatedWithItsContext(t *testing.T) {
	text := "# Architecture\n\nThe name SP always refers to the virtual stack pointer described earlier. For the hardware register, use R13.\n"
	sq := research.SubQuestion{ID: "q1", Question: "Which register is the hardware stack pointer register?", Queries: []string{"hardware register R13"}}
	ev, err := New(Config{}).Analyst.Analyze(t.Context(), sq, doc("file:///asm.md", text))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ev {
		checkGrounded(t, text, e)
		if strings.Contains(e.Claim, "R13") && !strings.HasPrefix(e.Claim, "The name SP always refers") {
			t.Errorf("claim %q lacks the sentence its quote took for context", e.Claim)
		}
	}
	if len(ev) == 0 {
		t.Fatal("no evidence")
	}
}
