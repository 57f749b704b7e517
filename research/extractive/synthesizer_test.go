package extractive

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/sources"
)

func TestSynthesizerEverySentenceCited(t *testing.T) {
	plan := testPlan()
	pool := []research.Evidence{
		ev("e1", "q1", "file:///go_mem.html#L131-L163", "A send on a channel is synchronized before the completion of the corresponding receive from that channel.", 0.9),
		ev("e2", "q1", "file:///go_mem.html#L165-L191", "(It might print the empty string, crash, or do something else.)", 0.6),
		ev("e3", "q1", "file:///go_spec.html#L961-L975", "If the capacity is zero or absent, the channel is unbuffered. Otherwise, the channel is buffered.", 0.7),
		ev("e4", "q2", "file:///go_mem.html#L1-L19", "In v1.2 a limit was 16 calls", 0.8),
		ev("e5", "q2", "file:///other.html#L1-L3", "In v1.2 a limit was 32 calls", 0.7),
	}
	verdict := &research.Verdict{Pass: true, Conflicts: []research.Conflict{{SubQuestion: "q2", Description: "other.html and go_mem.html give different numbers about the same subject", EvidenceIDs: []string{"e4", "e5"}}}}
	d, err := New(Config{}).Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: plan, Evidence: pool, Verdict: verdict})
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"e1": true, "e2": true, "e3": true, "e4": true, "e5": true}
	problems := publish.CheckIntegrity(d.Markdown, func(id string) error {
		if !known[id] {
			return errors.New("unknown")
		}
		return nil
	})
	if len(problems) > 0 {
		t.Errorf("integrity problems %v in\n%s", problems, d.Markdown)
	}
	// The summary answers; the sections would only repeat it, so none is written.
	for _, want := range []string{"## Summary", "## Conflicts between sources", "[e1]", "[e3]", "[e4]", "[e5]"} {
		if !strings.Contains(d.Markdown, want) {
			t.Errorf("draft lacks %q:\n%s", want, d.Markdown)
		}
	}

	// Asked again with problems naming e2: the draft leaves it out.
	d, err = New(Config{}).Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: plan, Evidence: pool, Verdict: verdict,
		Problems: []string{"cites e2: its quote is not found in the source text"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(d.Markdown, "[e2]") {
		t.Errorf("e2 still cited:\n%s", d.Markdown)
	}
}

func TestSynthesizerChineseAndEmptySections(t *testing.T) {
	plan := &research.Plan{Question: "上下文压缩有什么不同？", Language: "zh", SubQuestions: []research.SubQuestion{
		{ID: "q1", Question: "上下文压缩有什么不同？"}, {ID: "q2", Question: "上下文压缩有哪些限制或例外？"}}}
	pool := []research.Evidence{ev("e1", "q1", "file:///000.txt#L7-L7", "触发时机：DeepAgent：上下文达 85%，Claude Code：上下文达 95-98%", 0.9)}
	d, err := New(Config{}).Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: plan, Evidence: pool})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## 摘要", "95-98% [e1]。", "## 上下文压缩有哪些限制或例外？（在所检索的来源中未找到可靠证据）"} {
		if !strings.Contains(d.Markdown, want) {
			t.Errorf("draft lacks %q:\n%s", want, d.Markdown)
		}
	}
	if p := publish.CheckIntegrity(d.Markdown, func(string) error { return nil }); len(p) > 0 {
		t.Errorf("integrity problems %v", p)
	}
}

func TestCitePlacesMarkerInsideEverySentence(t *testing.T) {
	for in, want := range map[string]string{
		"One. Two!": "One [e1]. Two [e1]!",
		"(It might crash, or do something else.)": "(It might crash, or do something else) [e1].",
		"No final stop": "No final stop [e1].",
		// A claim keeps its code's words without the backticks: "'hello!'" ends no sentence, which goes on in lower case.
		"The statement t = 1, 'hello!' is an example of tuple packing: the values 1 and 'hello!' are packed together.": "The statement t = 1, 'hello!' is an example of tuple packing: the values 1 and 'hello!' are packed together [e1].",
	} {
		if got := cite(in, []string{"e1"}, "en"); got != want {
			t.Errorf("cite(%q) = %q, want %q", in, got, want)
		}
	}
	if got := cite("第一句。第二句", []string{"e2"}, "zh"); got != "第一句[e2]。第二句[e2]。" {
		t.Errorf("zh cite = %q", got)
	}
}

// Nested claims across sub-questions: the fuller claim stays, a claim that merely contains a shorter one's words
// mid-sentence does not supersede it.
func TestNestedClaims(t *testing.T) {
	pool := []research.Evidence{
		ev("e1", "q1", "file:///s.md#L3-L3", "deepresearch run 调用 research.Run，按顺序执行五个阶段。", 0.9),
		ev("e2", "q2", "file:///s.md#L3-L3", "deepresearch run 调用 research.Run，按顺序执行五个阶段。五个阶段依次是范围界定和综合成文。", 0.8),
		ev("e3", "q1", "file:///a.md#L1-L1", "The name SP refers to the stack pointer.", 0.9),
		ev("e4", "q2", "file:///a.md#L1-L2", "The name SP refers to the stack pointer. For the hardware register, use R13.", 0.8),
		ev("e5", "q1", "file:///b.md#L1-L1", "A Mutex is a lock.", 0.9),
		ev("e6", "q1", "file:///b.md#L4-L4", "Not every A Mutex is a lock.", 0.9),
	}
	got := nestedClaims(pool)
	want := map[string]bool{"e1": true, "e3": true}
	if len(got) != len(want) || !got["e1"] || !got["e3"] {
		t.Errorf("nestedClaims = %v, want %v", got, want)
	}
}

// Of two items that match the question alike, the one that opens its section ranks first: "The Rc<T> type keeps
// track of the number of references …" before a remark on a listing further down the page; unknown positions
// leave the order to the matching alone, and a passage past the section's opening gains nothing.
func TestRankForPutsASectionsOpeningFirst(t *testing.T) {
	opening := ev("e1", "q1", "file:///book/rc.html#L5-L5", "The Rc type keeps track of the number of references to a value.", 0.87)
	later := ev("e2", "q1", "file:///book/rc.html#L140-L140", "Each clone of the Rc type adds to the number of references to a value.", 0.87)
	sq := research.SubQuestion{ID: "q1", Question: "What is the Rc type for?", Queries: []string{"Rc type"}}
	rank := func(memo *sectionMemo) string {
		return rankFor(sq, []research.Evidence{later, opening}, map[string]string{}, memo, nil)[0].ID
	}
	plain := rank(nil)
	if plain != "e2" {
		t.Fatalf("without positions %s ranks first: the test needs the later item first by its words alone", plain)
	}
	memo := &sectionMemo{}
	memo.put(opening.Source, opening.Quote, "Rc<T>, the Reference Counted Smart Pointer", 1)
	memo.put(later.Source, later.Quote, "Rc<T>, the Reference Counted Smart Pointer", 9)
	if got := rank(memo); got != "e1" {
		t.Errorf("with positions %s ranks first, want the section's opening passage e1", got)
	}
	if memo.at(later.Source, later.Quote) != 9 || memo.at(opening.Source, "not quoted") != -1 {
		t.Errorf("positions remembered: %d, %d", memo.at(later.Source, later.Quote), memo.at(opening.Source, "not quoted"))
	}
}

// An item under a lead sentence ranks by what the lead says it is about as well as by its own words.
func TestRankForReadsTheLead(t *testing.T) {
	memo := &sectionMemo{}
	rule := ev("e1", "q1", "file:///c.md#L15-L15", "Do not store Contexts inside a struct type.", 0.7)
	other := ev("e2", "q1", "file:///c.md#L40-L40", "WithValue returns a derived context that points to the parent Context.", 0.7)
	memo.put(rule.Source, rule.Quote, "Package context\nPrograms that use Contexts should follow these rules to check context propagation:", -1)
	sq := research.SubQuestion{ID: "q1", Question: "What rules should programs follow when using Context values?", Queries: []string{"Context values"}}
	for _, sections := range []*sectionMemo{memo, nil} {
		got := rankFor(sq, []research.Evidence{other, rule}, map[string]string{}, sections, nil)
		if want := sections != nil; (got[0].ID == "e1") != want {
			t.Errorf("with lead %v: ranked %s first", want, got[0].ID)
		}
	}
}

// The answer-document rule: the report answers from the page that states the answer — several on-topic items under
// a title naming the subject — and not from a page that shares the question's words in one passage; a second page
// that answers nearly as well is kept beside it.
func TestSynthesizerAnswersFromTheAnswerDocuments(t *testing.T) {
	plan := &research.Plan{Question: "What are the rules of references?", Language: "en", SubQuestions: []research.SubQuestion{
		{ID: "q1", Question: "What are the rules of references?", Queries: []string{"rules references"}}}}
	titled := func(e research.Evidence, title string) research.Evidence { e.Title = title; return e }
	main := "file:///book/references-and-borrowing.html"
	pool := []research.Evidence{
		titled(ev("e1", "q1", main+"#L10-L10", "At any given time, you can have either one mutable reference or any number of immutable references to a value.", 0.9), "References and Borrowing"),
		titled(ev("e2", "q1", main+"#L12-L12", "References must always be valid, and the rules of references are checked by the compiler.", 0.9), "References and Borrowing"),
		titled(ev("e3", "q1", main+"#L14-L14", "The rules of references keep a mutable reference from existing beside other references.", 0.85), "References and Borrowing"),
		titled(ev("e4", "q1", "file:///book/deref.html#L5-L5", "The borrowing rules say that converting references between kinds follows three rules.", 0.9), "Smart Pointers and Deref"),
	}
	draft := func(pool []research.Evidence) string {
		t.Helper()
		d, err := New(Config{}).Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: plan, Evidence: pool})
		if err != nil {
			t.Fatal(err)
		}
		return d.Markdown
	}
	md := draft(pool)
	for _, want := range []string{"[e1]", "[e2]", "[e3]"} {
		if !strings.Contains(md, want) {
			t.Errorf("the answer page's item %s is not cited:\n%s", want, md)
		}
	}
	if strings.Contains(md, "[e4]") {
		t.Errorf("the page that shares the question's words in passing is cited:\n%s", md)
	}
	// A second page answering as well as the first is kept.
	second := "file:///reference/references.html"
	pool = append(pool,
		titled(ev("e5", "q1", second+"#L3-L3", "The rules of references forbid a dangling reference to a value.", 0.9), "References"),
		titled(ev("e6", "q1", second+"#L4-L4", "A reference obeys the borrowing rules of references at compile time.", 0.9), "References"))
	md = draft(pool)
	for _, want := range []string{"[e1]", "[e5]"} {
		if !strings.Contains(md, want) {
			t.Errorf("%s of an answer page is not cited:\n%s", want, md)
		}
	}
}

// A page whose many items match the question only through what they share (its title) does not outweigh the page
// whose two items state the answer: a document's further items add less and less to its support.
func TestAnswerDocumentsDiscountFurtherItems(t *testing.T) {
	var ranked []research.Evidence
	var scores []float64
	onTopic := map[string]bool{}
	add := func(doc string, score, conf float64) {
		e := ev(fmt.Sprintf("e%d", len(ranked)+1), "q1", doc+"#L1-L1", "claim", conf)
		e.Title = "Index Types"
		ranked = append(ranked, e)
		scores = append(scores, score)
		onTopic[e.ID] = true
	}
	for range 6 {
		add("file:///docs/textsearch-indexes.html", 0.68, 0.48)
	}
	add("file:///docs/indexes-types.html", 0.54, 0.92)
	add("file:///docs/indexes-types.html", 0.78, 0.56)
	add("file:///docs/extend-type-system.html", 0.40, 0.47)
	keep := answerDocuments(ranked, scores, onTopic, []variant{queryVariant("index types")}, nil, nil, nil, nil)
	want := map[string]bool{"file:///docs/textsearch-indexes.html": true, "file:///docs/indexes-types.html": true, "file:///docs/extend-type-system.html": false}
	if !maps.Equal(keep, want) {
		t.Errorf("answerDocuments = %v, want %v", keep, want)
	}
	for _, tt := range []struct {
		gains []float64
		want  float64
	}{
		{nil, 0},
		{[]float64{1}, 1},
		{[]float64{0.5, 1}, 1 + 0.5/math.Log2(3)},
	} {
		if got := discountedSum(tt.gains); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("discountedSum(%v) = %v, want %v", tt.gains, got, tt.want)
		}
	}
}

// One sentence that answers clearly best keeps its page beside a page of many weaker items ("When you use Python
// interactively, it is frequently handy to have some standard commands executed every time the interpreter is
// started" against a Windows FAQ's sentences on the interactive interpreter); a tie decides nothing.
func TestAnswerDocumentsKeepTheDecisiveItem(t *testing.T) {
	run := func(best float64) map[string]bool {
		var ranked []research.Evidence
		var scores []float64
		onTopic := map[string]bool{}
		add := func(doc string, score float64) {
			e := ev(fmt.Sprintf("e%d", len(ranked)+1), "q1", doc+"#L1-L1", "claim", 0.9)
			e.Title = path.Base(doc)
			ranked = append(ranked, e)
			scores = append(scores, score)
			onTopic[e.ID] = true
		}
		add("file:///py/appendix.html", best)
		for range 8 {
			add("file:///py/windows.html", 0.68)
		}
		return answerDocuments(ranked, scores, onTopic, []variant{queryVariant("python commands interactive interpreter starts")}, nil, nil, nil, nil)
	}
	if keep := run(0.84); !keep["file:///py/appendix.html"] || !keep["file:///py/windows.html"] {
		t.Errorf("the page of the item that answers best is not kept: %v", keep)
	}
	if keep := run(0.7); keep["file:///py/appendix.html"] {
		t.Errorf("an item hardly better than the other page's decides: %v", keep)
	}
}

// A question asking what something is is answered by the page titled by it: beside it, a page with more items that
// mention the subject in passing ("… with the Deref Trait", "Derivable Traits") is left out, where a question that
// defines nothing keeps both.
func TestAnswerDocumentsForADefinition(t *testing.T) {
	var ranked []research.Evidence
	var scores []float64
	onTopic := map[string]bool{}
	add := func(doc, title string, n int, score float64) {
		for range n {
			e := ev(fmt.Sprintf("e%d", len(ranked)+1), "q1", doc+"#L1-L1", "claim", 0.9)
			e.Title = title
			ranked = append(ranked, e)
			scores = append(scores, score)
			onTopic[e.ID] = true
		}
	}
	const deref, traits = "file:///book/ch15-02-deref.html", "file:///book/ch10-02-traits.html"
	add(deref, "Treating Smart Pointers Like Regular References with the Deref Trait - The Rust Programming Language", 8, 0.6)
	add(traits, "Traits: Defining Shared Behavior - The Rust Programming Language", 3, 0.6)
	v := []variant{queryVariant("trait rust")}
	if keep := answerDocuments(ranked, scores, onTopic, v, nil, nil, nil, nil); !keep[traits] || !keep[deref] {
		t.Fatalf("without a definition asked, both pages are answer documents: %v", keep)
	}
	keep := answerDocuments(ranked, scores, onTopic, v, nil, []string{"trait"}, nil, nil)
	if !keep[traits] || keep[deref] {
		t.Errorf("what a trait is: kept %v, want the Traits page alone", keep)
	}
	// A page whose title's lead lacks a word of what is defined is not titled by it ("Default Values" for the
	// default value of max_connections).
	ranked, scores, onTopic = nil, nil, map[string]bool{}
	const values, conn = "file:///pg/ddl-default.html", "file:///pg/runtime-config-connection.html"
	add(conn, "20.3. Connections and Authentication", 3, 0.8)
	add(values, "5.2. Default Values", 4, 0.6)
	if keep := answerDocuments(ranked, scores, onTopic, []variant{queryVariant("default value max_connections")}, nil,
		[]string{"default", "valu", "max", "connect"}, nil, nil); !keep[conn] {
		t.Errorf("a page titled by part of what is defined outweighs the answer: %v", keep)
	}
}

// The page a question's subject names outweighs a longer page that mentions the subject in its title's tail:
// "Traits" answers what a trait is; "… with the Deref Trait" has more items that use the word.
func TestAnswerDocumentsPreferThePageTheTitleNames(t *testing.T) {
	var ranked []research.Evidence
	var scores []float64
	onTopic := map[string]bool{}
	add := func(doc, title string, n int) {
		for range n {
			e := ev(fmt.Sprintf("e%d", len(ranked)+1), "q1", doc+"#L1-L1", "claim", 0.9)
			e.Title = title
			ranked = append(ranked, e)
			scores = append(scores, 0.8)
			onTopic[e.ID] = true
		}
	}
	const deref, traits = "file:///book/ch15-02-deref.html", "file:///book/ch10-02-traits.html"
	add(deref, "Treating Smart Pointers Like Regular References with the Deref Trait - The Rust Programming Language", 16)
	add(traits, "Traits: Defining Shared Behavior - The Rust Programming Language", 6)
	keep := answerDocuments(ranked, scores, onTopic, []variant{queryVariant("trait rust")}, nil, nil, nil, nil)
	if !keep[traits] {
		t.Errorf("the page titled by the question's subject is not kept: %v", keep)
	}
	for _, tt := range []struct {
		title string
		want  float64
	}{
		{"Traits: Defining Shared Behavior - The Rust Programming Language", 1},
		{"3.4. Transactions", 0},
		{"Advanced Traits - The Rust Programming Language", 0.5},
		{"", 0},
	} {
		if got := leadNamed([]variant{queryVariant("trait rust")}, nil, tt.title); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("leadNamed(%q) = %v, want %v", tt.title, got, tt.want)
		}
	}
	// A title that names only what the subject is asked of, none of the subject or the place it is asked in, leads
	// with something else: "the RETURNING clause of INSERT, UPDATE and DELETE" is not about rules on those commands.
	const returning = "RETURNING clause RETURNING clause INSERT UPDATE DELETE"
	for _, tt := range []struct {
		asked, about, title string
		want                float64
	}{
		{returning, "RETURNING clause", "41.4. Rules on INSERT, UPDATE, and DELETE", 0},
		{returning, "RETURNING clause", "6.4. Returning Data from Modified Rows", 0.25},
		{returning, "", "41.4. Rules on INSERT, UPDATE, and DELETE", 0.75},
		// The place it is asked in counts ("在唯一约束中，两个空值……": in unique constraints).
		{"null values unique constraint", "null values unique constraint", "5.4. Constraints", 1},
		{"null values unique constraint", "null values", "5.4. Constraints", 0},
	} {
		var about []variant
		if tt.about != "" {
			about = []variant{queryVariant(tt.about)}
		}
		if got := leadNamed([]variant{queryVariant(tt.asked)}, about, tt.title); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("leadNamed(%q about %q) = %v, want %v", tt.title, tt.about, got, tt.want)
		}
	}
}

func TestNamedShare(t *testing.T) {
	vs := []variant{queryVariant("mutable references"), queryVariant("json type")}
	terms := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, t := range lexical.Tokenize(s) {
			m[t] = true
		}
		return m
	}
	for text, want := range map[string]float64{"References and Borrowing": 0.5, "JSON Types": 1, "Unsafe Rust": 0, "": 0} {
		if got := namedShare(vs, terms(text)); got != want {
			t.Errorf("namedShare(%q) = %v, want %v", text, got, want)
		}
	}
}

// redundancySource is a searcher that knows which of its documents are copies, as a corpus index does.
type redundancySource struct {
	fakeSearcher
	why map[string]string
	err error
}

func (r redundancySource) Redundant(_ context.Context, url string) (string, error) {
	return r.why[url], r.err
}

// A copy or an aggregate the index names is not cited beside the page it repeats, even where it answers as well;
// when only copies answer they are cited; a source that fails to tell names no copy.
func TestSynthesizerLeavesCopiesToTheirOriginal(t *testing.T) {
	plan := &research.Plan{Question: "What is the difference between exec and execFile?", Language: "en", SubQuestions: []research.SubQuestion{
		{ID: "q1", Question: "What is the difference between exec and execFile?", Queries: []string{"exec execFile difference"}}}}
	page, source, all := "file:///api/child_process.html", "file:///api/child_process.md", "file:///api/all.html"
	titled := func(e research.Evidence) research.Evidence { e.Title = "Child process"; return e }
	pool := []research.Evidence{
		titled(ev("e1", "q1", page+"#L49-L49", "exec spawns a shell and runs a command within that shell, unlike execFile.", 0.9)),
		titled(ev("e2", "q1", page+"#L50-L50", "execFile is similar to exec except that it spawns the command directly, the difference being no shell.", 0.9)),
		titled(ev("e3", "q1", source+"#L252-L254", "The difference of exec and execFile shows in the callback, which exec passes the output of the shell.", 0.9)),
		titled(ev("e4", "q1", all+"#L14044-L14044", "The execFile function differs from exec in that it does not spawn a shell by default.", 0.9)),
		titled(ev("e5", "q1", source+"#L260-L260", "The difference between exec and execFile matters on Windows, where execFile cannot run a batch file.", 0.9)),
		titled(ev("e6", "q1", all+"#L14046-L14046", "Since execFile spawns no shell, the difference from exec is that redirection is not supported.", 0.9)),
	}
	why := map[string]string{source: "copy", all: "aggregate"}
	draft := func(src sources.Searcher, pool []research.Evidence) string {
		t.Helper()
		d, err := New(Config{Searchers: []sources.Searcher{src}}).Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: plan, Evidence: pool})
		if err != nil {
			t.Fatal(err)
		}
		return d.Markdown
	}
	md := draft(redundancySource{why: why}, pool)
	if !strings.Contains(md, "[e1]") || !strings.Contains(md, "[e2]") {
		t.Errorf("the page itself is not cited:\n%s", md)
	}
	if strings.Contains(md, "[e3]") || strings.Contains(md, "[e4]") || strings.Contains(md, "[e5]") || strings.Contains(md, "[e6]") {
		t.Errorf("a copy or the aggregate is cited beside the page:\n%s", md)
	}
	if md := draft(redundancySource{why: why}, pool[2:]); !strings.Contains(md, "[e3]") && !strings.Contains(md, "[e4]") {
		t.Errorf("with only copies answering, nothing is cited:\n%s", md)
	}
	if md := draft(redundancySource{why: why, err: errors.New("index closed")}, pool); !strings.Contains(md, "[e3]") && !strings.Contains(md, "[e4]") {
		t.Errorf("a failing source still named copies:\n%s", md)
	}
}

// A label among a claim's sentences ("Usage: (gdb) goroutine.") is left out of the report; a claim that is only
// labels is no finding (label), and cite keeps it whole when asked to, so nothing is lost silently.
func TestCiteLeavesOutLabels(t *testing.T) {
	got := cite("Usage: (gdb) goroutine. It switches to the goroutine and runs the command.", []string{"e1"}, "en")
	if strings.Contains(got, "Usage") || !strings.Contains(got, "It switches to the goroutine and runs the command [e1].") {
		t.Errorf("cite = %q, want the sentence without its label", got)
	}
	for text, want := range map[string]bool{
		"G state (runtime2.go)":                      true,
		"Usage: (gdb) goroutine <goid> <gdbcmd>":     true,
		"The lock is held until Unlock is called.":   false,
		"Usage: (gdb) goroutine. It runs a command.": false,
		"锁被持有直到解锁":                                   false,
		"":                                           true,
	} {
		if got := label(text); got != want {
			t.Errorf("label(%q) = %v, want %v", text, got, want)
		}
	}
	if got := cite("G state (runtime2.go)", []string{"e2"}, "en"); !strings.Contains(got, "G state") {
		t.Errorf("cite of a label alone = %q, want it kept", got)
	}
}

// A copy (the Markdown a page was rendered from) that the search found instead of its page is cited when the pages
// beside it answer less well: the page it repeats is not among them. Beside a page that answers at least as well,
// and always for a page of all pages, the repeat is left out.
func TestAnswerDocumentsKeepACopyWhosePageWasNotFound(t *testing.T) {
	const (
		copyMD  = "file:///api/cluster.md"
		page    = "file:///api/cluster.html"
		other   = "file:///api/module.html"
		allHTML = "file:///api/all.html"
	)
	why := map[string]string{copyMD: sources.RedundantCopy, allHTML: sources.RedundantAggregate}
	redundant := func(doc string) string { return why[doc] }
	run := func(items map[string]float64) map[string]bool {
		var ranked []research.Evidence
		var scores []float64
		onTopic := map[string]bool{}
		for _, doc := range slices.Sorted(maps.Keys(items)) {
			e := ev(fmt.Sprintf("e%d", len(ranked)+1), "q1", doc+"#L1-L1", "claim", 1)
			ranked = append(ranked, e)
			scores = append(scores, items[doc])
			onTopic[e.ID] = true
		}
		return answerDocuments(ranked, scores, onTopic, []variant{queryVariant("cluster module")}, nil, nil, nil, redundant)
	}
	for _, tt := range []struct {
		name  string
		items map[string]float64
		want  map[string]bool
	}{
		{"copy answers best", map[string]float64{copyMD: 0.5, other: 0.4}, map[string]bool{copyMD: true, other: true}},
		{"a page answers as well", map[string]float64{copyMD: 0.5, other: 0.5}, map[string]bool{copyMD: false, other: true}},
		{"aggregate answers best", map[string]float64{allHTML: 0.5, other: 0.4}, map[string]bool{allHTML: false, other: true}},
		{"only repeats answer", map[string]float64{allHTML: 0.5, copyMD: 0.4}, map[string]bool{allHTML: true, copyMD: true}},
		// The copy's support is its page's: a copy that outweighs its page does not push it under the share of
		// the best, and the page is cited in its place.
		{"copy outweighs its page", map[string]float64{copyMD: 1, page: 0.5, other: 0.8}, map[string]bool{copyMD: false, page: true, other: true}},
	} {
		if got := run(tt.items); !maps.Equal(got, tt.want) {
			t.Errorf("%s: answerDocuments = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The section memo is bounded whatever it is given: items with a position and no headings count too.
func TestSectionMemoIsBounded(t *testing.T) {
	memo := &sectionMemo{}
	for i := range maxSections + 5 {
		memo.put(fmt.Sprintf("file:///d%d.md#L1-L1", i), "quote", "", 0)
	}
	if len(memo.m) > maxSections {
		t.Errorf("memo holds %d items, more than %d", len(memo.m), maxSections)
	}
	if memo.at(fmt.Sprintf("file:///d%d.md#L1-L1", maxSections+4), "quote") != 0 {
		t.Error("the latest item's position is lost")
	}
}

// For a question that asks what its subject is, a sentence that opens with the subject ranks before one that
// matches the question's words as well or better but is about something else the subject touches; for any other
// question (no defined terms) the order is the words' alone. definedTerms finds the subject, in English for a
// Chinese question.
func TestRankForPutsTheSubjectFirstSentenceFirst(t *testing.T) {
	defines := ev("e1", "q1", "file:///book/traits.html#L3-L3", "A trait defines functionality a particular type has and can share with other types.", 0.871)
	aside := ev("e2", "q1", "file:///book/advanced-traits.html#L446-L446", "Sometimes, you might write a trait definition that depends on another trait.", 0.918)
	sq := research.SubQuestion{ID: "q1", Question: "What is a trait in Rust?", Queries: []string{"trait Rust"}}
	terms := definedTerms(t.Context(), sq.Question, nil)
	if !slices.Equal(terms, lexical.Tokenize("trait")) {
		t.Fatalf("definedTerms = %v, want trait", terms)
	}
	if got := rankFor(sq, []research.Evidence{aside, defines}, map[string]string{}, nil, nil)[0].ID; got != "e2" {
		t.Fatalf("without defined terms %s ranks first: the test needs the aside first by its words alone", got)
	}
	if got := rankFor(sq, []research.Evidence{aside, defines}, map[string]string{}, nil, terms)[0].ID; got != "e1" {
		t.Errorf("with the subject's terms %s ranks first, want the sentence that says what a trait is", got)
	}
	for q, want := range map[string]bool{"What is a trait in Rust?": true, "Rust 中的 trait 是什么？": true, "How do I implement a trait?": false} {
		if got := definedTerms(t.Context(), q, nil); (len(got) > 0) != want {
			t.Errorf("definedTerms(%q) = %v", q, got)
		}
	}
	for claim, want := range map[string]bool{
		"`CREATE SEQUENCE` creates a new sequence number generator.":   true,
		"The generator will be owned by the user issuing the command.": false,
		"": false,
	} {
		if got := opensWith(claim, lexical.Tokenize("CREATE SEQUENCE")); got != want {
			t.Errorf("opensWith(%q) = %v, want %v", claim, got, want)
		}
	}
}
