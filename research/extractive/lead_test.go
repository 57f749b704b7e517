package extractive

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
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
	got := analyzedClaims(t, sq, "file:///pkg/context.md", contextRulesDoc)
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

// A lead sentence that refers back ("Those escapes include the ability to:") is quoted with the sentence it
// points to, and so is as relevant as that sentence: its list is the answer, though neither the lead nor the
// items repeat the question's words. The quote is one enumeration, stated as one sentence.
func TestListLeadReferringBackSharesItsAntecedent(t *testing.T) {
	text := "# Sandboxed mode\n\nSandboxed mode runs plugins under a guard. The guard checks every call a plugin makes.\n\n" +
		"To switch to sandboxed mode, pass the flag. You can take four actions in sandboxed mode that you cannot take in normal mode, which we call escapes. Those escapes include the ability to:\n\n" +
		"- Open a raw socket\n- Load a kernel module\n- Write to the boot sector\n- Read the files of another user\n\n" +
		"Plugins written for normal mode run unchanged.\n"
	sq := research.SubQuestion{ID: "q1", Question: "What can sandboxed mode do that normal mode cannot?", Queries: []string{"sandboxed mode normal mode cannot"}}
	ev, err := New(Config{}).Analyst.Analyze(t.Context(), sq, doc("file:///guide/sandbox.md", text))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range ev {
		checkGrounded(t, text, e)
		found = found || strings.Contains(e.Claim, "Those escapes include the ability to: Open a raw socket; Load a kernel module; Write to the boot sector; Read the files of another user.") &&
			strings.HasPrefix(e.Claim, "You can take four actions")
	}
	if !found {
		t.Errorf("the list is not evidence with its lead and the sentence the lead refers to: %v", ev)
	}
}

// The counted-sequence heuristic: which sentences announce the paragraphs "The first …", "The second …".
func TestOrdinalLead(t *testing.T) {
	for text, want := range map[string]bool{
		"The planner uses three rules to order the steps.\n\nThe first rule is that inputs come first.\n": true,
		"There are two cases. Both are rare.\n\nFirst, the cache may be cold.\n":                          true,
		"The planner uses three rules to order the steps.\n\nInputs come first.\n":                        false,
		"The planner uses rules to order the steps.\n\nThe first rule is that inputs come first.\n":       false,
		"The planner uses three rules:\n\nThe first rule is that inputs come first.\n":                    false, // a colon lead
		"The planner uses three rules. The first rule is that inputs come first.\n":                       false, // one paragraph
		"Python 3 is the version this guide covers.\n\nThe first chapter installs it.\n":                  false, // a version, not a count
		"Use 2 or more workers.\n\nThe first worker starts the others.\n":                                 false,
		"The loader takes 4 steps.\n\nThe first step reads the header.\n":                                 true,
	} {
		if got := ordinalLead(text, lexical.Sentences(text), 0); got != want {
			t.Errorf("ordinalLead(%q) = %v, want %v", text, got, want)
		}
	}
}

// A sentence announces how many things follow by a number and the things it counts, or by a word pointing ahead;
// a number followed by a function word is a version or a bound, not a count.
func TestAnnouncesCount(t *testing.T) {
	for s, want := range map[string]bool{
		"You can take four actions in unsafe Rust": true, "The loader takes 4 steps.": true,
		"Do the following:": true, "Remember these rules.": true, "as follows": true,
		"Python 3 is the current version.": false, "Use 2 or more workers.": false, "Version 2.": false,
		"Nothing here.": false, "": false,
	} {
		if got := announcesCount(s); got != want {
			t.Errorf("announcesCount(%q) = %v, want %v", s, got, want)
		}
	}
}

// A search hit on the sentence that announces a counted sequence is read with the paragraphs that spell it out,
// even where they lie past the reading bound of a long section and share none of the question's words; the
// paragraph after the sequence is not part of it.
func TestOrdinalSequenceIsReadWithItsLead(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Scheduling\n\n")
	for i := range 40 {
		fmt.Fprintf(&b, "Paragraph %d about queues and workers describes how the runner keeps its workers busy across many hosts.\n\n", i)
	}
	b.WriteString("The step planner uses three rules to order the steps of a build.\n\n")
	hit := strings.Count(b.String(), "\n") - 1 // the announcing line, 1-based
	b.WriteString("The first rule is that every input is fetched before anything reads it.\n\n" +
		"The second rule is that, if exactly one output exists, it is written last.\n\n" +
		"The third rule is that a cached result replaces the whole subtree under it.\n\n" +
		"Let us pretend we are the runner and apply them to a small graph of tasks.\n\n")
	for i := range 40 {
		fmt.Fprintf(&b, "Closing paragraph %d says the runner reports the build to its caller when the hosts are idle.\n\n", i)
	}
	text := b.String()
	sq := research.SubQuestion{ID: "q1", Question: "Which rules does the step planner use to order build steps?", Queries: []string{"step planner rules order build steps"}}
	got := analyzedClaims(t, sq, fmt.Sprintf("file:///ci/scheduling.md#L%d-L%d", hit, hit), text)
	for _, want := range []string{"The first rule is that every input is fetched before anything reads it.",
		"The second rule is that, if exactly one output exists, it is written last.",
		"The third rule is that a cached result replaces the whole subtree under it."} {
		if !got[want] {
			t.Errorf("missing %q among %v", want, got)
		}
	}
	if got["Let us pretend we are the runner and apply them to a small graph of tasks."] {
		t.Error("the paragraph after the sequence was read as one of its items")
	}
}

// A sentence is quoted with the sentences of its paragraph that go on explaining it ("It has …", "Furthermore,
// it …"), up to two; a sentence that does not refer back ends the quote.
func TestQuoteTakesTheExplanationThatGoesOn(t *testing.T) {
	text := "# PURGE\n\nPURGE quickly removes all jobs from a queue. It has the same effect as a DRAIN of each worker, but it is faster. " +
		"Furthermore, it frees the spool files immediately, rather than waiting for the nightly sweep. Workers keep their own logs.\n"
	sq := research.SubQuestion{ID: "q1", Question: "How does PURGE remove jobs from a queue?", Queries: []string{"PURGE removes jobs queue"}}
	ev, err := New(Config{}).Analyst.Analyze(t.Context(), sq, doc("file:///admin/purge.md", text))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range ev {
		checkGrounded(t, text, e)
		if strings.HasPrefix(e.Claim, "PURGE quickly removes") {
			found = true
			if !strings.Contains(e.Claim, "Furthermore, it frees the spool files immediately") || strings.Contains(e.Claim, "Workers keep") {
				t.Errorf("claim %q: want the two sentences that go on explaining it, and no more", e.Claim)
			}
		}
	}
	if !found {
		t.Errorf("no evidence opens with the sentence asked about: %v", ev)
	}
}

// Neither the title part of a numbered heading ("### 4.8.1. Default Argument Values", which the sentence splitter
// cuts after its number) nor the first part of a sentence a code block interrupts ("…, so that" + code + "will
// print 5.") is evidence; a sentence that ends before its code block, or with a colon, still is.
func TestHeadingTailsAndSentencesBrokenByCodeAreNoEvidence(t *testing.T) {
	text := "## 4.8. Defining Functions\n\n### 4.8.1. Default Argument Values Are Evaluated Once\n\n" +
		"Default argument values are evaluated at the point of function definition in the defining scope, so that\n\n" +
		"```\ni = 5\ndef f(arg=i):\n    print(arg)\n```\n\nwill print 5.\n\n" +
		"Default argument values are evaluated only once, when the definition runs.\n\n```\ndef g(a, L=[]):\n    return L\n```\n\n" +
		"Default argument values can be shared between calls as follows:\n\n```\nprint(g(1))\n```\n"
	sq := research.SubQuestion{ID: "q1", Question: "When are default argument values evaluated?", Queries: []string{"default argument values evaluated"}}
	ev, err := New(Config{}).Analyst.Analyze(t.Context(), sq, doc("file:///tutorial/functions.md", text))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range ev {
		checkGrounded(t, text, e)
		got[e.Claim] = true
		if strings.Contains(e.Quote, "Default Argument Values Are Evaluated Once") || strings.HasSuffix(strings.TrimSpace(e.Quote), "so that") {
			t.Errorf("a heading or a sentence cut by code is evidence: %q", e.Quote)
		}
	}
	if !got["Default argument values are evaluated only once, when the definition runs."] {
		t.Errorf("the whole sentence before a code block is lost: %v", got)
	}
}

// A line of its own that names what follows — a definition list's term, a bold label — is no evidence, however
// well it matches; the definition under it is. A list item standing alone is still content.
func TestTitleLinesAreNoEvidence(t *testing.T) {
	text := "## 20.3. Connections\n\npool_size (integer)\n\nDetermines the maximum number of pooled connections to the broker. The default is typically 100 connections.\n\n" +
		"**Pool size and connections**\n\nThe pool size applies to every broker connection.\n\n- Connections in the pool are reused by the broker\n"
	sq := research.SubQuestion{ID: "q1", Question: "What is the default pool_size of broker connections?", Queries: []string{"pool_size default connections broker", "pool size connections"}}
	ev, err := New(Config{}).Analyst.Analyze(t.Context(), sq, doc("file:///broker/config.md", text))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range ev {
		checkGrounded(t, text, e)
		got[e.Claim] = true
		if strings.Contains(e.Quote, "(integer)") || strings.Contains(e.Quote, "**Pool size") {
			t.Errorf("a title line is evidence: %q", e.Quote)
		}
	}
	if !got["Determines the maximum number of pooled connections to the broker."] || !got["Connections in the pool are reused by the broker"] {
		t.Errorf("evidence %v lacks the definition or the list item", got)
	}
}

// A one-word label line inside a section with a Markdown heading ("History" over an API's changelog) is no section
// of its own: the sentences after it stay under the signature heading, whose name they describe. A caption of
// several words still names what follows it, and in a plain-text document without Markdown headings a short line
// standing alone is still a heading.
func TestLabelLineKeepsItsSectionsHeading(t *testing.T) {
	text := "# Util\n\n### `util.promisify(original)`\n\nHistory\n\nVersion\tChanges\nv8.0.0\tAdded in: v8.0.0\n\n" +
		"- `original` <Function>\n- Returns: <Function>\n\n" +
		"Takes a function following the common error-first callback style, and returns a version that returns promises.\n\n" +
		"### `util.inspect(object)`\n\nReturns a string representation of object.\n"
	a := &Analyst{cfg: Config{}.withDefaults()}
	ix := a.index(doc("file:///api/util.html", text))
	found := false
	for i, sp := range ix.spans {
		if strings.HasPrefix(sp.Text, "Takes a function") {
			found = true
			if want := lexical.Tokenize("util.promisify"); !slices.Equal(ix.head[i], want) {
				t.Errorf("the description's heading terms %q, want the signature's %q", ix.head[i], want)
			}
		}
		if sp.Text == "History" && ix.usable[i] {
			t.Error("the label line is evidence")
		}
	}
	if !found {
		t.Fatalf("no passage of the description in %+v", ix.spans)
	}
	captioned := "# Channels\n\nListing 16-10: Sending multiple messages\n\nThe spawned thread sends each value in turn.\n"
	ix = a.index(doc("file:///book/ch16.html", captioned))
	for i, sp := range ix.spans {
		if strings.HasPrefix(sp.Text, "The spawned thread") && !slices.Equal(ix.head[i], lexical.Tokenize("Listing 16-10: Sending multiple messages")) {
			t.Errorf("the caption's section lost: %q", ix.head[i])
		}
	}
	plain := "Connection pool\n\nThe pool holds idle connections for reuse.\n"
	ix = a.index(doc("file:///notes/pool.txt", plain))
	for i, sp := range ix.spans {
		if strings.HasPrefix(sp.Text, "The pool holds") && !slices.Equal(ix.head[i], lexical.Tokenize("Connection pool")) {
			t.Errorf("plain-text heading lost: %q", ix.head[i])
		}
	}
}

// analyzedClaims runs the analyst on one document and returns the claims it extracted, each checked to be
// grounded in text.
func analyzedClaims(t *testing.T, sq research.SubQuestion, url, text string) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	for _, e := range analyzed(t, sq, doc(url, text)) {
		got[e.Claim] = true
	}
	return got
}

// analyzed reads d for sq with the default analyst and checks that every quote is grounded in d's text.
func analyzed(t *testing.T, sq research.SubQuestion, d *sources.Document) []research.Evidence {
	t.Helper()
	return analyzedWith(t, Config{}, sq, d)
}

// analyzedWith is analyzed with the analyst of cfg.
func analyzedWith(t *testing.T, cfg Config, sq research.SubQuestion, d *sources.Document) []research.Evidence {
	t.Helper()
	ev, err := New(cfg).Analyst.Analyze(t.Context(), sq, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ev {
		checkGrounded(t, d.Text, e)
	}
	return ev
}

// quotedFrom reports an item whose quote starts with prefix.
func quotedFrom(ev []research.Evidence, prefix string) bool {
	return slices.ContainsFunc(ev, func(e research.Evidence) bool { return strings.HasPrefix(e.Quote, prefix) })
}

// A search hit in a subsection ("### URLError") is read with the opening of the section it stands in when that
// section's heading names what the question asks ("## Handling Exceptions"): the opening says what the
// subsections detail. A sentence that opens with a name in emphasis ("*urlopen* raises …") is a sentence, not the
// tail of one (TestUsablePassages). A section whose heading names nothing asked is not read.
func TestAnalystReadsTheOpeningOfTheSectionAboveTheHit(t *testing.T) {
	text := "# HOWTO Fetch Internet Resources\n\n## Fetching URLs\n\nThe simplest way to use urllib.request is as follows.\n\n" +
		"## Handling Exceptions\n\n" +
		"*urlopen* raises `URLError` when it cannot handle a response (though built-in exceptions such as `ValueError` may also be raised).\n\n" +
		"### URLError\n\nOften, URLError is raised because there is no network connection, or the specified server does not exist.\n\n" +
		"### HTTPError\n\nEvery HTTP response from the server contains a numeric status code.\n"
	lines := strings.Split(text, "\n")
	at := func(prefix string) int {
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return i + 1
			}
		}
		t.Fatalf("no line %q", prefix)
		return 0
	}
	hit := fmt.Sprintf("file:///howto/urllib2.md#L%d-L%d", at("### URLError"), at("Often,"))
	read := func(question string) []research.Evidence {
		sq := research.SubQuestion{ID: "q1", Question: question, Queries: []string{question}}
		d := doc(hit, text)
		d.Title = "HOWTO Fetch Internet Resources"
		return analyzedWith(t, Config{}, sq, d)
	}
	if ev := read("What exceptions does urlopen raise when a request fails?"); !quotedFrom(ev, "*urlopen* raises") {
		t.Errorf("evidence %+v: want the opening of \"Handling Exceptions\"", ev)
	}
	text = strings.Replace(text, "## Handling Exceptions", "## Troubleshooting", 1)
	if ev := read("When is URLError raised by urlopen?"); quotedFrom(ev, "*urlopen* raises") {
		t.Errorf("evidence %+v: the opening of a section whose heading names nothing asked is read", ev)
	}
	// An opening that shares only the section's own word with the subsection's heading does not introduce it.
	text = strings.Replace(text, "## Troubleshooting", "## Handling URLError", 1)
	text = strings.Replace(text, "### URLError", "### Handling network errors", 1)
	if ev := read("What exceptions does urlopen raise when handling a request?"); quotedFrom(ev, "*urlopen* raises") {
		t.Errorf("evidence %+v: an opening that names nothing particular to the subsection is read", ev)
	}
}
