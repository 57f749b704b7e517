package extractive

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

const memDoc = `# The Go Memory Model

## Introduction

The Go memory model specifies the conditions under which reads of a variable in one goroutine can be guaranteed to observe values produced by writes to the same variable in a different goroutine.

### Channel communication

Channel communication is the main method of synchronization between goroutines.
Each send on a particular channel is matched to a corresponding receive from that channel, usually in a different goroutine.

A send on a channel is synchronized before the completion of the corresponding receive from that channel.

The closing of a channel is synchronized before a receive that returns a zero value because the channel is closed.

` + "```" + `
var c = make(chan int, 10)
` + "```" + `

### Locks

The sync package implements two lock data types, sync.Mutex and sync.RWMutex.
`

func doc(url, text string) *sources.Document {
	return &sources.Document{URL: url, Title: "The Go Memory Model", Text: text, Hash: sources.HashText(text)}
}

var lineAnchorRE = regexp.MustCompile(`#L(\d+)-L(\d+)$`)

// checkGrounded asserts what the graph and the bench check: the quote is verbatim in the text and, for a line
// anchor, inside the anchored lines.
func checkGrounded(t *testing.T, text string, e research.Evidence) {
	t.Helper()
	i := strings.Index(text, e.Quote)
	if i < 0 {
		t.Fatalf("quote not verbatim: %q", e.Quote)
	}
	if m := lineAnchorRE.FindStringSubmatch(e.Source); m != nil {
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		first, last := lexical.LineAt(text, i), lexical.LineAt(text, i+len(e.Quote))
		if first != a || last != b {
			t.Errorf("source %s: quote is on lines %d-%d", e.Source, first, last)
		}
	}
	if e.Confidence < 0 || e.Confidence > 1 || strings.TrimSpace(e.Claim) == "" {
		t.Errorf("bad item %+v", e)
	}
}

func TestAnalystQuotesVerbatimWithLineAnchors(t *testing.T) {
	a := New(Config{}).Analyst
	sq := research.SubQuestion{ID: "q1", Question: "What does the Go memory model guarantee about channel communication?",
		Queries: []string{"Go memory model channel communication", "channel communication"}}
	ev, err := a.Analyze(t.Context(), sq, doc("file:///docs/go_mem.md", memDoc))
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) == 0 || len(ev) > 4 {
		t.Fatalf("got %d items, want 1..4", len(ev))
	}
	var claims []string
	for _, e := range ev {
		checkGrounded(t, memDoc, e)
		if !strings.HasPrefix(e.Source, "file:///docs/go_mem.md#L") || e.SubQuestion != "q1" {
			t.Errorf("item %+v", e)
		}
		if strings.Contains(e.Quote, "var c") || strings.HasPrefix(e.Quote, "#") {
			t.Errorf("code or heading quoted: %q", e.Quote)
		}
		claims = append(claims, e.Claim)
	}
	if !strings.Contains(strings.Join(claims, "\n"), "A send on a channel is synchronized before") {
		t.Errorf("claims %q miss the rule the section states", claims)
	}
}

func TestAnalystReadsOnlyTheAnchoredLines(t *testing.T) {
	a := New(Config{}).Analyst
	sq := research.SubQuestion{ID: "q1", Question: "What locks does the sync package provide?", Queries: []string{"sync lock Mutex"}}
	lines := strings.Split(memDoc, "\n")
	lockLine := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "The sync package") {
			lockLine = i + 1
		}
	}
	// Anchored at the channel section, which never mentions the sync package: no evidence about locks.
	ev, err := a.Analyze(t.Context(), sq, doc("file:///docs/go_mem.md#L7-L14", memDoc))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ev {
		if strings.Contains(e.Quote, "sync.Mutex") {
			t.Errorf("quoted outside the anchor: %q", e.Quote)
		}
	}
	ev, err = a.Analyze(t.Context(), sq, doc(fmt.Sprintf("file:///docs/go_mem.md#L%d-L%d", lockLine-2, lockLine), memDoc))
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 1 || !strings.Contains(ev[0].Quote, "sync.Mutex") {
		t.Fatalf("evidence %+v, want the lock sentence", ev)
	}
	checkGrounded(t, memDoc, ev[0])
}

func TestAnalystAddsContextForBackReferences(t *testing.T) {
	text := "A receive from an unbuffered channel is synchronized before the completion of the corresponding send.\nThis rule generalizes the previous rule to buffered channels with capacity.\n"
	a := New(Config{EvidencePerSource: 1}).Analyst
	sq := research.SubQuestion{ID: "q1", Question: "buffered channels rule", Queries: []string{"buffered channels rule"}}
	ev, err := a.Analyze(t.Context(), sq, doc("https://go.dev/ref/mem", text))
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 1 {
		t.Fatalf("got %d items", len(ev))
	}
	e := ev[0]
	checkGrounded(t, text, e)
	if !strings.HasPrefix(e.Quote, "A receive") || !strings.HasSuffix(e.Quote, "capacity.") || e.Source != "https://go.dev/ref/mem" {
		t.Errorf("quote %q (source %s), want both sentences verbatim from the web URL", e.Quote, e.Source)
	}
}

// A sentence that opens by pointing at the page itself ("This tutorial is …") refers to no sentence before it, so
// the opening of a page is quoted alone; "This rule …" and "This page-size limit …" still point back.
func TestAnalystReadsASentenceAboutThePageItself(t *testing.T) {
	sq := research.SubQuestion{ID: "q1", Question: "What is the argparse module for?", Queries: []string{"argparse module"}}
	read := func(text string) []research.Evidence {
		t.Helper()
		ev, err := New(Config{}).Analyst.Analyze(t.Context(), sq, doc("file:///py/howto/argparse.html", text))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ev {
			checkGrounded(t, text, e)
		}
		return ev
	}
	page := "This tutorial is intended to be a gentle introduction to `argparse`, the recommended command-line parsing module in the standard library.\n"
	if ev := read(page); len(ev) != 1 || ev[0].Quote != strings.TrimSpace(page) {
		t.Errorf("evidence %+v, want the page's opening sentence alone", ev)
	}
	for s, want := range map[string]bool{"This tutorial is intended …": false, "These sections describe …": false,
		"This HOWTO discusses …": false, "This rule generalizes …": true, "This page-size limit …": true} {
		if refersBack(s) != want {
			t.Errorf("refersBack(%q) = %v, want %v", s, !want, want)
		}
	}
}

// A sentence whose object is a bare demonstrative ("… a RETURNING clause that supports this.") stands for the
// sentence before it, and is quoted with it; "this:" before a list points ahead, and "that" opening a clause is no
// pronoun.
func TestAnalystQuotesASentenceEndingInADemonstrativeWithItsAntecedent(t *testing.T) {
	text := "Sometimes it is useful to obtain data from modified rows while they are being manipulated. " +
		"The INSERT, UPDATE, and DELETE commands all have an optional RETURNING clause that supports this.\n\n" +
		"The RETURNING clause can contain column names of the target table.\n\nIn an INSERT, the data available to RETURNING is the row as inserted.\n"
	sq := research.SubQuestion{ID: "q1", Question: "What is the RETURNING clause of INSERT for?", Queries: []string{"RETURNING clause INSERT"}}
	ev := analyzedWith(t, Config{EvidencePerSource: 1}, sq, doc("file:///pg/dml-returning.html", text))
	found := false
	for _, e := range ev {
		if strings.HasPrefix(e.Quote, "The INSERT") || strings.HasPrefix(e.Claim, "The INSERT") {
			t.Errorf("quote %q, claim %q: the demonstrative quoted without what it stands for", e.Quote, e.Claim)
		}
		found = found || strings.HasPrefix(e.Claim, "Sometimes it is useful") && strings.HasSuffix(e.Claim, "supports this.")
	}
	if !found {
		t.Errorf("evidence %+v: want the sentence ending in \"this\" quoted with the sentence before it", ev)
	}
	for s, want := range map[string]bool{
		"The commands all have an optional RETURNING clause that supports this.": true,
		"There is no way to do that.":                                            true,
		"Use these (and only these).":                                            true,
		"To enable it, do this:":                                                 false,
		"The clause reports that the row was inserted.":                          false,
		"This means the rule applies to all rows.":                               true,
		"Returning data avoids an extra database query.":                         false,
		// An anticipatory "it" stands for the clause it announces; a shell noun's thing is in the sentence before.
		"It is good practice to use the with keyword when dealing with file objects.": false,
		"It is not possible to assign to the individual items of a tuple.":            false,
		"It's often a good idea to close the file.":                                   false,
		"It is used to store the values.":                                             true,
		"It is similar to the previous example.":                                      true,
		"The advantage is that the file is properly closed.":                          true,
		"The default is to use the system locale.":                                    true,
		"A consequence is that the numbers you enter are only approximated.":          true,
		"The first rule is that every input is fetched first.":                        false,
		"The file is closed when the block ends.":                                     false,
		// A subject that points back at what stands above it: the example the sentence describes.
		"The above transaction will insert the values 1 and 3, but not 2.": true,
		"The preceding example shows the default.":                         true,
		"The previous version is kept.":                                    true,
		"The abovementioned rule is old.":                                  false,
		// A short opener before the pronoun subject leaves it pointing back; an anticipatory "it" still does not.
		"For example, this is not a good idea.":           true,
		"In practice, they are rarely needed.":            true,
		"In Python, it is possible to assign a function.": false,
		"For example, the file is closed.":                false,
		"When the program exits, it closes the file.":     false,
	} {
		if refersBack(s) != want {
			t.Errorf("refersBack(%q) = %v, want %v", s, !want, want)
		}
	}
}

// "It is good practice to …" announces its own clause and reaches back to nothing, across no paragraph break;
// "The advantage is that …" after it says what that practice gains, and is quoted with it.
func TestAnalystQuotesAnAnticipatoryItWithoutThePreviousParagraph(t *testing.T) {
	text := "Be very careful to use binary mode when reading and writing such files.\n\n" +
		"It is good practice to use the `with` keyword when dealing with file objects. " +
		"The advantage is that the file is properly closed after its suite finishes, even if an exception is raised.\n"
	sq := research.SubQuestion{ID: "q1", Question: "Why use the with keyword for file objects?", Queries: []string{"keyword file objects"}}
	ev := analyzedWith(t, Config{EvidencePerSource: 1}, sq, doc("file:///py/inputoutput.html", text))
	want := "It is good practice to use the `with` keyword when dealing with file objects. The advantage is that the file is properly closed after its suite finishes, even if an exception is raised."
	if len(ev) != 1 || ev[0].Quote != want {
		t.Errorf("evidence %+v, want the one quote %q", ev, want)
	}
}

// An API reference describes a name under its signature heading without a verb ("The operating system-specific
// end-of-line marker." under "## `os.EOL`"): quoted from the heading, past the annotations between them, it is
// stated of the name. A verbless line elsewhere stays out, and so does one under a heading that names no API.
func TestAnalystStatesADescriptionOfItsName(t *testing.T) {
	sq := research.SubQuestion{ID: "q1", Question: "What is os.EOL?", Queries: []string{"os.EOL end-of-line marker"}}
	for name, tt := range map[string]struct {
		text, quote, claim string
	}{
		"Node's Markdown": {
			text:  "# OS\n\n## `os.EOL`\n\n<!-- YAML\nadded: v0.7.8\n-->\n\n* {string}\n\nThe operating system-specific end-of-line marker.\n\n* `\\n` on POSIX\n",
			quote: "`os.EOL`\n\n<!-- YAML\nadded: v0.7.8\n-->\n\n* {string}\n\nThe operating system-specific end-of-line marker.",
			claim: "`os.EOL`: The operating system-specific end-of-line marker.",
		},
		"its HTML, extracted": {
			text:  "# OS\n\n### `os.EOL`\n\nAdded in: v0.7.8\n\nThe operating system-specific end-of-line marker.\n",
			quote: "`os.EOL`\n\nAdded in: v0.7.8\n\nThe operating system-specific end-of-line marker.",
			claim: "`os.EOL`: The operating system-specific end-of-line marker.",
		},
		"prose between": {
			text: "## `os.EOL`\n\nSee the platform notes below for details.\n\nThe operating system-specific end-of-line marker.\n",
		},
		"a heading that names no API": {
			text: "## Line endings\n\nThe operating system-specific end-of-line marker.\n",
		},
	} {
		ev := analyzedWith(t, Config{}, sq, doc("file:///api/os.md", tt.text))
		var got []string
		for _, e := range ev {
			if strings.Contains(e.Quote, "end-of-line marker") {
				got = append(got, e.Quote)
				if e.Quote != tt.quote || e.Claim != tt.claim {
					t.Errorf("%s: quote %q, claim %q; want %q, %q", name, e.Quote, e.Claim, tt.quote, tt.claim)
				}
			}
		}
		if tt.quote != "" && len(got) != 1 {
			t.Errorf("%s: quotes of the description %q, want one", name, got)
		}
	}
}

// A question the text asks ("So how do you decide …?") is no finding; quoted with the sentence that answers it, it is.
func TestAnalystQuotesAQuestionWithItsAnswer(t *testing.T) {
	text := "## To panic or not\n\nSo how do you decide when you should call panic and when you should return Result? " +
		"When code panics, there is no way to recover.\n\nReturning Result gives the calling code options.\n"
	sq := research.SubQuestion{ID: "q1", Question: "When should code call panic rather than return Result?", Queries: []string{"call panic return Result"}}
	ev := analyzedWith(t, Config{}, sq, doc("file:///book/panic.html", text))
	found := false
	for _, e := range ev {
		if asks(e.Quote) {
			t.Errorf("quote %q asks and answers nothing", e.Quote)
		}
		found = found || strings.HasPrefix(e.Quote, "So how do you decide") && strings.HasSuffix(e.Quote, "no way to recover.")
	}
	if !found {
		t.Errorf("evidence %+v: want the question quoted with its answer", ev)
	}
	for s, want := range map[string]bool{"Why?": true, "它安全吗？": true, "Is it \"safe?\"": true, "It is safe.": false, "See (why?) below.": false} {
		if asks(s) != want {
			t.Errorf("asks(%q) = %v, want %v", s, !want, want)
		}
	}
}

// A sentence that states its point and ends in a colon before a code session too long to quote is evidence on its
// own, its claim ending in a full stop; one that points ahead to the code ("It looks like this:") is not.
func TestAnalystStatesASentenceItsLongCodeIllustrates(t *testing.T) {
	session := "```\n>>> 17 / 3\n5.666666666666667\n>>> 17 // 3\n5\n>>> 17 % 3\n2\n>>> 5 * 3 + 2\n17\n```\n"
	text := "## Numbers\n\nDivision (`/`) always returns a float. To do floor division and get an integer result you can use the `//` operator; to calculate the remainder you can use `%`:\n\n" +
		session + "\nThe integer result of floor division looks like this:\n\n" + session
	sq := research.SubQuestion{ID: "q1", Question: "How do you do floor division and get an integer result?", Queries: []string{"floor division integer result"}}
	ev := analyzedWith(t, Config{}, sq, doc("file:///tutorial/introduction.html", text))
	found := false
	for _, e := range ev {
		checkGrounded(t, text, e)
		if strings.Contains(e.Quote, "looks like this") {
			t.Errorf("quote %q points ahead to code it does not hold", e.Quote)
		}
		if strings.HasPrefix(e.Quote, "To do floor division") {
			found = true
			if !strings.HasSuffix(e.Quote, "you can use `%`") {
				t.Errorf("quote %q: want the sentence up to its colon", e.Quote)
			}
			if e.Claim != "To do floor division and get an integer result you can use the // operator; to calculate the remainder you can use %." {
				t.Errorf("claim %q: want the sentence ending in a full stop", e.Claim)
			}
		}
	}
	if !found {
		t.Errorf("evidence %+v: want the sentence the session illustrates", ev)
	}
	for s, want := range map[string]bool{
		"You can create a view over the query, which gives a name to the query:": true,
		"It looks like this:":                     false,
		"For example:":                            false,
		"The program prints the following lines:": false,
		"Here is how you might use it:":           false,
		// An infinitive of purpose with no clause of its own is the example's caption; with one it states how.
		"To establish a savepoint and later undo the effects of all commands executed after it was established:": false,
		"To use a single savepoint name and see what happens:":                                                   false,
		"To create the table in the database, run this statement twice:":                                         true,
		"To do floor division and get an integer result you can use the `//` operator:":                          true,
	} {
		in := "Intro.\n\n" + s + "\n\n" + session
		qs := strings.Index(in, s)
		if got := illustrated(in, qs, qs+len(s)); got != want {
			t.Errorf("illustrated(%q) = %v, want %v", s, got, want)
		}
	}
	if illustrated("It is used this way: and more text follows.", 0, 20) {
		t.Error("illustrated without a code block after the colon")
	}
}

func TestAnalystChineseTextWithoutPunctuation(t *testing.T) {
	// An article pasted without any sentence punctuation.
	text := "五阶段工作流全景把执行过程拉直了看是五个阶段" + strings.Repeat("这是一段没有标点的说明文字用来填充上下文", 8) +
		"验证Agent拿着证据清单去挑刺来源可信吗证据支持结论吗不同来源之间矛盾吗不通过就带着缺口回到搜索阶段补搜这是一个收敛循环有最大重试次数防止无限循环" +
		strings.Repeat("另一段无关的填充文字讲的是别的话题", 8)
	a := New(Config{}).Analyst
	sq := research.SubQuestion{ID: "q1", Question: "对抗验证阶段如何处理证据缺口？", Queries: []string{"验证 证据 缺口 补搜"}}
	ev, err := a.Analyze(t.Context(), sq, doc("file:///notes/workflow.txt", text))
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) == 0 {
		t.Fatal("no evidence")
	}
	checkGrounded(t, text, ev[0])
	if !strings.Contains(ev[0].Quote, "缺口") || len([]rune(ev[0].Quote)) > maxQuote {
		t.Errorf("top quote %q", ev[0].Quote)
	}
}

func TestAnalystTableRowsCarryTheirHeaders(t *testing.T) {
	text := "1.1 上下文压缩策略\n\n维度\tDeepAgent\tClaude Code\n触发时机\t上下文达 85%\t上下文达 95-98%\n手动控制\t无\t/compact 命令\n"
	a := New(Config{}).Analyst
	sq := research.SubQuestion{ID: "q1", Question: "上下文压缩的触发时机是什么？", Queries: []string{"压缩 触发时机"}}
	ev, err := a.Analyze(t.Context(), sq, doc("file:///notes/compare.txt", text))
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) == 0 {
		t.Fatal("no evidence")
	}
	checkGrounded(t, text, ev[0])
	if want := "触发时机：DeepAgent：上下文达 85%，Claude Code：上下文达 95-98%"; ev[0].Claim != want {
		t.Errorf("claim %q, want %q", ev[0].Claim, want)
	}
	for _, e := range ev {
		if strings.HasPrefix(e.Quote, "维度") {
			t.Errorf("header row quoted as evidence: %q", e.Quote)
		}
	}
}

func TestAnalystNothingRelevant(t *testing.T) {
	ev, err := New(Config{}).Analyst.Analyze(t.Context(), research.SubQuestion{ID: "q1", Question: "garbage collector pacing"}, doc("file:///a.md", memDoc))
	if err != nil || len(ev) != 0 {
		t.Errorf("ev=%v err=%v, want nothing", ev, err)
	}
	if _, err := New(Config{}).Analyst.Analyze(t.Context(), research.SubQuestion{ID: "q1"}, nil); err == nil {
		t.Error("nil document: want an error")
	}
}

// The colon-list heuristic: a quote ending in a colon takes the list it introduces, within bounds, and is
// spelled out as one sentence; with no list (a code block, another paragraph) it is not evidence.
func TestColonTakesItsList(t *testing.T) {
	tests := []struct {
		name, text string
		want       string // the claim, "" for no item quoting the colon
	}{
		{"list", "# Model\n\nA memory operation is modeled by four details:\n\n- its kind, a read or a write;\n- its location;\n- the instruction.\n\nMore text follows here.\n",
			"A memory operation is modeled by four details: its kind, a read or a write; its location; the instruction."},
		{"hard-wrapped head", "# Model\n\nA memory operation\nis modeled by four details:\n- its kind\n- its location\n",
			"A memory operation is modeled by four details: its kind; its location."},
		{"code block", "# Model\n\nA memory operation is modeled by four details:\n\n\tx := 1\n\ty := 2\n\nUnrelated.\n", ""},
		// Code that illustrates a whole sentence is quoted with it; the claim is the sentence.
		{"illustration", "# Model\n\nA memory operation modeled in four details is passed first, typically named op:\n\n\tfunc Model(op Operation) error {\n\t\t// ...\n\t}\n\nUnrelated.\n", ""},
		{"illustrated", "# Model\n\nA memory operation should be modeled first, typically named op:\n\n\tfunc Model(op Operation) error {\n\t\t// ...\n\t}\n\nUnrelated.\n",
			"A memory operation should be modeled first, typically named op."},
		{"too long", "# Model\n\nA memory operation is modeled by four details:\n\n" + strings.Repeat("- one more detail of the operation\n", 12), ""},
	}
	for _, tt := range tests {
		sq := research.SubQuestion{ID: "q1", Question: "How is a memory operation modeled?", Queries: []string{"memory operation modeled details"}}
		ev, err := New(Config{}).Analyst.Analyze(t.Context(), sq, doc("file:///docs/m.md", tt.text))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, e := range ev {
			checkGrounded(t, tt.text, e)
			if strings.Contains(e.Claim, "four details") || strings.Contains(e.Claim, "modeled first") {
				got = e.Claim
			}
			if endsInColon(e.Quote) {
				t.Errorf("%s: quote ends in a colon: %q", tt.name, e.Quote)
			}
		}
		if got != tt.want {
			t.Errorf("%s: claim %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A piece Passages cut out of a long Latin sentence is no evidence; unpunctuated Chinese stays usable.
func TestCutSpan(t *testing.T) {
	long := "A deferred function runs " + strings.Repeat("when the surrounding function returns normally or by panicking ", 12) + "in the end."
	spans := lexical.Passages(long, 100)
	if len(spans) < 2 {
		t.Fatalf("%d spans", len(spans))
	}
	for i := range spans {
		if !cutSpan(long, spans, i) {
			t.Errorf("piece %d of a cut sentence counts as whole: %q", i, spans[i].Text)
		}
	}
	whole := "First sentence here.\nSecond sentence there."
	ws := lexical.Passages(whole, 100)
	for i := range ws {
		if cutSpan(whole, ws, i) {
			t.Errorf("whole sentence %q counts as cut", ws[i].Text)
		}
	}
	zh := strings.Repeat("这是一段没有标点的说明文字用来填充上下文", 20)
	zs := lexical.Passages(zh, 50)
	for i := range zs {
		if cutSpan(zh, zs, i) {
			t.Errorf("unpunctuated Chinese piece %d counts as cut", i)
		}
	}
}

// A page whose title is what the question asks about states what it is in its first paragraph: read with the
// passage the search found far below it, and only on such a page.
func TestAnalystReadsTheLeadOfThePageTheQuestionNames(t *testing.T) {
	text := longPage("## 23.6. Tablespaces\n\nTablespaces in PostgreSQL allow database administrators to define locations in the file system where the files representing database objects can be stored.\n\n",
		"Creating a tablespace needs an empty directory that the database's operating-system user owns.\n")
	last := strings.Count(text, "\n")
	sq := research.SubQuestion{ID: "q1", Question: "What are tablespaces for?", Queries: []string{"tablespaces"}}
	read := func(title string) []research.Evidence {
		t.Helper()
		d := &sources.Document{URL: fmt.Sprintf("file:///pg/manage-ag-tablespaces.html#L%d-L%d", last-2, last), Title: title, Text: text, Hash: sources.HashText(text)}
		ev, err := New(Config{}).Analyst.Analyze(t.Context(), sq, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ev {
			checkGrounded(t, text, e)
		}
		return ev
	}
	quoted := func(ev []research.Evidence, s string) bool {
		return slices.ContainsFunc(ev, func(e research.Evidence) bool { return strings.Contains(e.Quote, s) })
	}
	ev := read("23.6. Tablespaces")
	if !quoted(ev, "allow database administrators to define locations") || !quoted(ev, "needs an empty directory") {
		t.Errorf("evidence %+v, want the page's lead and the passage found", ev)
	}
	if ev := read("23.6. Tablespaces | PostgreSQL 15 Documentation"); !quoted(ev, "allow database administrators to define locations") {
		t.Errorf("the lead of a page named before the site's name is not read: %+v", ev)
	}
	if ev := read("23.6. Disk Layout"); quoted(ev, "allow database administrators") {
		t.Errorf("the lead of a page the question does not name is read: %+v", ev)
	}
}

// A Chinese sentence that a code block illustrates is the claim, ending in the Chinese full stop.
func TestIllustratedChineseSentenceClaim(t *testing.T) {
	text := "# 部署\n\n先把配置文件复制到部署目录里，填入数据库密码，然后运行：\n\n```sh\ndocker compose up -d\n```\n\n其他内容。\n"
	sq := research.SubQuestion{ID: "q1", Question: "怎样部署？", Queries: []string{"配置文件 复制 部署目录 数据库密码"}}
	ev, err := New(Config{}).Analyst.Analyze(t.Context(), sq, doc("file:///docs/deploy.md", text))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ev {
		checkGrounded(t, text, e)
		if strings.Contains(e.Claim, "配置文件") {
			if want := "先把配置文件复制到部署目录里，填入数据库密码，然后运行。"; e.Claim != want {
				t.Errorf("claim %q, want %q", e.Claim, want)
			}
			if !strings.Contains(e.Quote, "docker compose up -d") {
				t.Errorf("quote %q lacks the code it is illustrated by", e.Quote)
			}
			return
		}
	}
	t.Fatalf("no item quotes the sentence: %+v", ev)
}

// The lead of a page is its first paragraph of prose, past the record before it: a reference page's purpose line
// and synopsis, a stability banner, a source link.
func TestFirstParagraphSkipsTheRecord(t *testing.T) {
	for _, text := range []string{
		"# pg_dump\n\npg_dump — extract a PostgreSQL database into a script file or other archive file\n\n## Synopsis\n\n" +
			"pg_dump [connection-option...] [option...] [dbname]\n\n## Description\n\n" +
			"pg_dump is a utility for backing up a PostgreSQL database. It makes consistent backups even if the database is being used concurrently.\n",
		"## Domain\n\n[Stability: 0](documentation.html#stability-index) - Deprecated\n\n**Source Code:** [lib/domain.js](https://example.org/lib/domain.js)\n\n" +
			"This module is pending deprecation. Once a replacement API has been finalized, this module will be fully deprecated.\n\n## Warning\n\nDon't ignore errors.\n",
	} {
		a := &Analyst{cfg: Config{}.withDefaults()}
		ix := a.index(&sources.Document{URL: "file:///doc.html", Text: text, Hash: sources.HashText(text)})
		lo, hi := ix.firstParagraph()
		if got := strings.TrimSpace(text[max(lo, 0):max(hi, 0)]); lo < 0 || !strings.HasSuffix(got, ".") {
			t.Errorf("firstParagraph = %q, want the first paragraph of prose", got)
		}
	}
}

// A demonstrative that opens a section names the section's subject; anywhere else it points back to what was said.
func TestNamesSectionSubject(t *testing.T) {
	tests := []struct {
		name, text string
		want       bool
	}{
		{"under a heading", "## Description\n\nThis command displays the execution plan.\n", true},
		{"plural under a heading", "## Notes\n\nThese functions must be called with a lock held.\n", true},
		{"first line of the text", "This module provides access to the mathematical functions.\n", true},
		{"after a sentence", "## Description\n\nEXPLAIN shows plans.\nThis command is slow.\n", false},
		{"after a paragraph", "## Description\n\nEXPLAIN shows plans.\n\nThis command displays the plan.\n", false},
		{"this is", "## Description\n\nThis is the command that shows plans.\n", false},
		{"a pronoun", "## Description\n\nIt displays the execution plan.\n", false},
		{"a connective", "## Description\n\nHowever, the plan may change.\n", false},
		{"a name after this", "## Description\n\nThis EXPLAIN output shows costs.\n", true},
		{"a name after these", "## No __filename or __dirname\n\nThese CommonJS variables are not available in ES modules.\n", true},
		{"this is, capitalised", "## Description\n\nThis Is the command.\n", false},
		{"points back in words", "## Buffered channels\n\nThis rule generalizes the previous rule to buffered channels.\n", false},
		// Node's API docs put a section's history between its heading and its first sentence: a label and a table.
		{"after the section's history", "### Class: `AsyncLocalStorage`\n\nHistory\n\nVersion\tChanges\nv16.4.0\tAsyncLocalStorage is now Stable.\n\nThis class creates stores that stay coherent through asynchronous operations.\n", true},
		{"a label after a sentence", "## Description\n\nEXPLAIN shows plans.\n\nHistory\n\nThis command displays the plan.\n", false},
		// …and a page's record, lines that are no sentence: its stability and source link, its history in a comment.
		{"after the page's record", "## Domain\n\n[Stability: 0](documentation.html#stability-index) - Deprecated\n\n**Source Code:** [lib/domain.js](https://example.org/lib/domain.js)\n\n**This module is pending deprecation.**\n", true},
		{"after a comment", "# Domain\n\n<!-- YAML\nchanges:\n  - description: Handlers are now invoked in the domain in which\n      the first promise of a chain was created.\n-->\n\n> Stability: 0 - Deprecated\n\nThis module is pending deprecation.\n", true},
		{"after code", "## Usage\n\n```js\nconst d = domain.create()\n```\n\nThis module is pending deprecation.\n", false},
		{"after a wrapped line", "## Description\n\nEXPLAIN displays the plan that the planner generates for\nstatements\n\nThis command displays the plan.\n", false},
		{"after a list item", "## Usage\n\n- creates a domain\n\nThis module is pending deprecation.\n", false},
	}
	for _, tt := range tests {
		sps := lexical.Sentences(tt.text)
		sp := sps[len(sps)-1]
		if got := namesSectionSubject(tt.text, sp); got != tt.want {
			t.Errorf("%s: namesSectionSubject(%q) = %v, want %v", tt.name, sp.Text, got, tt.want)
		}
	}
}

// The first sentence of a reference page's Description ("This command displays …") is what the page's command
// does: it is evidence, though it opens with "This".
func TestAnalystTakesTheSentenceThatOpensItsSection(t *testing.T) {
	text := "## EXPLAIN\n\nEXPLAIN — show the execution plan of a statement\n\n## Synopsis\n\n```\nEXPLAIN [ ANALYZE ] statement\n```\n\n" +
		"## Description\n\nThis command displays the execution plan that the planner generates for the supplied statement.\n\n" +
		"The ANALYZE option causes the statement to be actually executed, not only planned.\n"
	sq := research.SubQuestion{ID: "q1", Question: "What does the EXPLAIN command display?", Queries: []string{"EXPLAIN command display"}}
	if ev := analyzed(t, sq, doc("file:///pg/sql-explain.html", text)); !quotedFrom(ev, "This command displays the execution plan") {
		t.Errorf("evidence %+v, want the Description's first sentence", ev)
	}
}

func TestTitleLead(t *testing.T) {
	for title, want := range map[string]string{
		"The Slice Type - The Rust Programming Language":          "The Slice Type",
		"Cluster | Node.js v20.20.2 Documentation":                "Cluster",
		"Traits: Defining Shared Behavior - The Rust Book":        "Traits",
		"venv — Creation of virtual environments":                 "venv",
		"23.6. Tablespaces":                                       "23.6. Tablespaces",
		"Package sync":                                            "Package sync",
		"Modules: ECMAScript modules | Node.js v20 Documentation": "ECMAScript modules",
		"Modules: Packages | Node.js v20 Documentation":           "Modules",
	} {
		if got := titleLead(title); got != want {
			t.Errorf("titleLead(%q) = %q, want %q", title, got, want)
		}
	}
}

// A Chinese question over an English page: the character the dictionary leaves as written (中 in "Rust 中的 trait")
// can never occur in the page, so it does not count against the page's passages, and the lead that says what a
// trait is is evidence.
func TestAnalystIgnoresChineseLeftoversInAnEnglishPage(t *testing.T) {
	var b strings.Builder
	b.WriteString("## Traits: Defining Shared Behavior\n\nA trait defines functionality a particular type has and can share with other types.\n\n")
	for i := range 12 {
		fmt.Fprintf(&b, "### Trait example %d\n\nListing %d implements the Summary trait on one more type, with a default method the trait supplies.\n\n", i, i)
	}
	b.WriteString("Implementations of a trait on any type are used throughout the Rust standard library.\n")
	text := b.String()
	last := strings.Count(text, "\n")
	sq := research.SubQuestion{ID: "q1", Question: "Rust 中的 trait 是什么？", Queries: []string{"trait Rust 中", "Rust 中", "trait 中"}}
	d := &sources.Document{URL: fmt.Sprintf("file:///book/ch10-02-traits.html#L%d-L%d", last-1, last), Title: "Traits: Defining Shared Behavior - The Rust Programming Language",
		Text: text, Hash: sources.HashText(text)}
	if ev := analyzed(t, sq, d); !quotedFrom(ev, "A trait defines functionality") {
		t.Errorf("evidence %+v, want the page's lead", ev)
	}
}

func TestTitleNamed(t *testing.T) {
	terms := lexical.Tokenize("what is a slice in Rust tablespaces")
	for _, tt := range []struct {
		title string
		want  bool
	}{
		{"23.6. Tablespaces", true},
		{"The Slice Type - The Rust Programming Language", true},
		{"Slices", true},
		{"Storing Lists of Values with Vectors", false},
		{"Slice Type Layout Rules", false}, // four words: all must be asked about
		{"Vector Type", false},
		{"", false},
	} {
		if got := titleNamed(tt.title, terms); got != tt.want {
			t.Errorf("titleNamed(%q) = %v, want %v", tt.title, got, tt.want)
		}
	}
}

// An API reference names each entry by its signature ("#### `setInterval(callback[, delay])`") and describes it
// without repeating the name. A question naming setInterval() reads that section wherever on the page the search
// landed, "History" and the parameter list under the heading included; a signature's parameters are not what its
// section is about.
func TestAnalystReadsTheSectionOfANamedSignature(t *testing.T) {
	history := "History\n\nVersion\tChanges\nv0.0.1\tAdded in: v0.0.1\n\n"
	text := "# Timers\n\nThe timer functions within Node.js implement a similar API as the timers API provided by Web Browsers.\n\n" +
		"## Scheduling timers\n\n#### `setImmediate(callback[, ...args])`\n\n" + history +
		"Schedules the immediate execution of `callback` after I/O events' callbacks.\n\n" +
		"#### `setInterval(callback[, delay[, ...args]])`\n\n" + history + "- `callback` The function to call when the timer elapses.\n\n" +
		"Schedules repeated execution of `callback` every `delay` milliseconds.\n\n" +
		"#### `setTimeout(callback[, delay[, ...args]])`\n\n" + history + "Schedules execution of a one-time `callback` after `delay` milliseconds.\n\n" +
		"## Timers promises API\n\n#### `timersPromises.setInterval([delay[, value]])`\n\n" +
		"Returns an async iterator that generates values in an interval of `delay` ms.\n\n" +
		"The setInterval promise variant is used with `for await` loops in async code over setInterval values.\n"
	lines := strings.Count(text[:strings.Index(text, "## Timers promises API")], "\n") + 1
	url := fmt.Sprintf("file:///node/api/timers.html#L%d-L%d", lines, strings.Count(text, "\n"))
	sq := research.SubQuestion{ID: "q1", Question: "What does setInterval() do?", Queries: []string{"setInterval"}}
	var claims []string
	for _, e := range analyzedWith(t, Config{EvidencePerSource: 8}, sq, doc(url, text)) {
		claims = append(claims, e.Claim)
	}
	if !slices.Contains(claims, "Schedules repeated execution of callback every delay milliseconds.") {
		t.Errorf("claims %q: want the setInterval section's description", claims)
	}
	for _, c := range claims {
		if strings.Contains(c, "one-time") || strings.Contains(c, "immediate execution") {
			t.Errorf("claim %q is from another entry's section", c)
		}
	}
	for h, want := range map[string]string{"#### `setInterval(callback[, delay[, ...args]])`": "setInterval",
		"### fs.readFile(path[, options], callback)": "fs.readFile", "### `new URL(input[, base])`": "URL",
		"### func (b *Builder) Cap() int": "", "## Class: `Buffer`": "", "## Using setInterval (the basics)": "",
		"## `os.EOL`": "os.EOL", "## Overview": "", "### `os` and `path` together": ""} {
		if got := signatureName(h); got != want {
			t.Errorf("signatureName(%q) = %q, want %q", h, got, want)
		}
	}
}

// The search returns a few chunks of a page; when they are its examples, the page's opening may still say what
// the question asks in so many words. A sentence of the opening (before the page's first section) stating every
// word of the question is read; one that states part of it is not.
func TestAnalystReadsAnOpeningSentenceThatStatesTheQuestion(t *testing.T) {
	text := "# Processing a Series of Items with Iterators\n\nThe iterator pattern allows you to perform some task on a sequence of items in turn.\n\n" +
		"In Rust, iterators are lazy, meaning they have no effect until you call methods that consume the iterator to use it up.\n\n" +
		"Iterators are handy in many places of a program.\n\n" +
		"## Methods that Produce Other Iterators\n\n" + strings.Repeat("Iterator adaptors are methods defined on the Iterator trait that produce different iterators by changing some aspect of the original iterator.\n\n", 3) +
		"The map method returns a new iterator that produces the modified items, and the warning tells us that the adaptor is lazy.\n"
	first := strings.Count(text[:strings.Index(text, "## Methods")], "\n") + 1
	url := fmt.Sprintf("file:///book/ch13-02-iterators.html#L%d-L%d", first, strings.Count(text, "\n"))
	sq := research.SubQuestion{ID: "q1", Question: "Are Rust iterators lazy?", Queries: []string{"Rust iterators lazy", "iterators lazy"}}
	var claims []string
	for _, e := range analyzedWith(t, Config{EvidencePerSource: 8}, sq, doc(url, text)) {
		claims = append(claims, e.Claim)
	}
	if !slices.ContainsFunc(claims, func(c string) bool { return strings.HasPrefix(c, "In Rust, iterators are lazy") }) {
		t.Errorf("claims %q: want the opening's statement that iterators are lazy", claims)
	}
	if slices.ContainsFunc(claims, func(c string) bool {
		return strings.HasPrefix(c, "Iterators are handy") || strings.HasPrefix(c, "The iterator pattern")
	}) {
		t.Errorf("claims %q: an opening sentence that states part of the question was read", claims)
	}
}

// Node's Markdown sources carry their metadata in HTML comments ("<!-- YAML added: v0.7.8 -->"), which a rendered
// page never shows: no passage of one is evidence. The entry's description under its name heading ("## `os.arch()`")
// is.
func TestAnalystSkipsHTMLCommentsOfMarkdown(t *testing.T) {
	text := "# OS\n\nThe node:os module provides operating system-related utility methods and properties.\n\n" +
		"## `os.EOL`\n\n<!-- YAML\nadded: v0.7.8\n-->\n\nThe end-of-line marker is specific to the operating system.\n\n" +
		"## `os.arch()`\n\n<!-- YAML\nadded: v0.5.0\n-->\n\nReturns the operating system CPU architecture for which the Node.js binary was compiled.\n"
	sq := research.SubQuestion{ID: "q1", Question: "What does os.arch() return?", Queries: []string{"os.arch return", "os arch return"}}
	var claims []string
	for _, e := range analyzedWith(t, Config{EvidencePerSource: 8}, sq, doc("file:///node/api/os.md", text)) {
		if strings.Contains(e.Quote, "<!--") || strings.Contains(e.Quote, "-->") {
			t.Errorf("quote %q is from an HTML comment", e.Quote)
		}
		claims = append(claims, e.Claim)
	}
	if !slices.Contains(claims, "Returns the operating system CPU architecture for which the Node.js binary was compiled.") {
		t.Errorf("claims %q: want os.arch()'s description", claims)
	}
	for text, want := range map[string]int{
		"<!-- a -->\nText.\n<!-- b\nc -->\nMore.": 2,
		"no comment":                            0,
		"Text.\n<!-- never closed\nrest":        1,
		"Write <!-- to open a comment in HTML.": 0, // in a sentence: what the text talks about
		"```html\n<!-- in code\n```\nText.":     0,
	} {
		if got := len(htmlComments(text, fencedRanges(text))); got != want {
			t.Errorf("htmlComments(%q) found %d, want %d", text, got, want)
		}
	}
}

// The Markdown structure the analyst reads from untrusted files — HTML comments and signature headings — is
// parsed without panics into ranges within the text, ascending, apart, each opening with "<!--", and into bare
// names.
var apiNameRE = regexp.MustCompile("^" + apiName + "$")

func FuzzMarkdownStructure(f *testing.F) {
	for _, s := range []string{"## `os.EOL`\n\n<!-- YAML\nadded: v0.7.8\n-->\n\nText.", "#### `setInterval(callback[, delay])`",
		"<!--", "   <!-- a --> b\n<!--\n", "```\n<!--\n```\n-->", "### new URL(input)", "## `a.`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		prev := 0
		for _, r := range htmlComments(text, fencedRanges(text)) {
			if r[0] < prev || r[1] < r[0] || r[1] > len(text) || !strings.HasPrefix(text[r[0]:], "<!--") {
				t.Fatalf("htmlComments(%q): bad range %v after %d", text, r, prev)
			}
			prev = r[1]
		}
		for _, line := range strings.Split(text, "\n") {
			if name := signatureName(line); name != "" && !apiNameRE.MatchString(name) {
				t.Fatalf("signatureName(%q) = %q, not a bare name (no \"new \", backtick or parameters)", line, name)
			}
		}
	})
}

// The marks of a code line — braces, ":=", a closing ";", table pipes — are read outside code spans: a sentence
// that names `{expression}` or a pipeline in code is prose and may be evidence; a code line is not. A passage that
// opens in lower case is the tail of a broken sentence unless it opens with a name in code or emphasis.
func TestUsablePassages(t *testing.T) {
	for raw, want := range map[string]bool{
		"*urlopen* raises `URLError` when it cannot handle a response.": true,
		"- _open_ returns the file object it opened for reading.":       true,
		"raises `URLError` when it cannot handle a response.":           false,
		"Formatted string literals let you include the value of Python expressions inside a string by prefixing the string with `f` or `F` and writing expressions as `{expression}`.": true,
		"The shell runs `cmd1 | cmd2 | cmd3 | cmd4` as one pipeline of four processes.":                                                                                                true,
		"A short variable declaration such as `x := f()` declares and assigns the variable at once.":                                                                                   true,
		"fn main() { println!(\"the value is {}\", value); }":                                                                                                                          false,
		"result := compute(input, options) returns the total":                                                                                                                          false,
		"| name | type | default value | description |":                                                                                                                                false,
		"The loop stops when the counter reaches the limit set before it;":                                                                                                             false,
		// The verbs of a parenthetical aside are not the sentence's: a program named, nothing said of it.
		"This program (as above, but with the send and receive statements swapped and using an unbuffered channel).": false,
		"This program (as above) prints the same value twice.":                                                       true,
	} {
		plain := plainText(raw)
		if got := usable(raw, plain, lexical.Tokenize(plain), false); got != want {
			t.Errorf("usable(%q) = %v, want %v", raw, got, want)
		}
	}
}

// A common noun after a name that the sources seldom put there ("command" of "the CREATE SEQUENCE command") is no
// word a passage must have, and ranks none: on the name's own page it is the rare word of the passages that happen
// to use it ("… owned by the user issuing the command"), while the page's subject is in every passage. The sentence
// that says what the command creates is then evidence; where the sources use the phrase themselves, the noun
// counts as before and that sentence, which lacks it, is not.
func TestKindNounIsNoRequiredWord(t *testing.T) {
	text := "# CREATE SEQUENCE\n\nCREATE SEQUENCE — define a new sequence generator\n\n## Description\n\n" +
		"`CREATE SEQUENCE` creates a new sequence number generator. This involves creating and initializing a new special single-row table with the name of the sequence. The generator will be owned by the user issuing the command.\n\n" +
		"If a schema name is given then the sequence is created in the specified schema. Otherwise it is created in the current schema. Temporary sequences exist in a special schema, so a schema name cannot be given when creating a temporary sequence.\n\n" +
		"After a sequence is created, you use the functions nextval, currval, and setval to operate on the sequence. Although you cannot update a sequence directly, you can use a query to examine the parameters and current state of a sequence.\n\n" +
		"## Notes\n\nUse DROP SEQUENCE to remove a sequence. Sequences are based on bigint arithmetic, so the range cannot exceed the range of an eight-byte integer. Because nextval and setval calls are never rolled back, sequence objects cannot be used if gapless assignment of sequence numbers is needed.\n\n" +
		"## Examples\n\nCreate an ascending sequence called serial, starting at 101. Select the next number from this sequence. Use this sequence in an INSERT command. Update the sequence value after a COPY FROM command.\n\n" +
		"## Compatibility\n\nCREATE SEQUENCE conforms to the SQL standard, with the following exceptions: the OWNED BY clause of the command is a PostgreSQL extension.\n"
	d := &sources.Document{URL: "file:///pg/sql-createsequence.html", Title: "CREATE SEQUENCE", Text: text, Hash: sources.HashText(text)}
	sq := research.SubQuestion{ID: "q1", Question: "What does the CREATE SEQUENCE command create?", Queries: []string{"CREATE SEQUENCE command create"}}
	vocab := func(pair int) *vocabulary {
		return newVocabulary([]sources.Searcher{vocabSource{df: map[string]int{"SEQUENCE": 240, "sequence": 240,
			"SEQUENCE command": pair, "sequence command": pair, "command": 900, "create": 1500}}})
	}
	defines := func(v *vocabulary) bool {
		a := &Analyst{cfg: Config{}.withDefaults(), vocab: v}
		ev, err := a.Analyze(t.Context(), sq, d)
		if err != nil || len(ev) == 0 {
			t.Fatalf("Analyze: %v, %d items", err, len(ev))
		}
		return slices.ContainsFunc(ev, func(e research.Evidence) bool {
			return strings.Contains(e.Claim, "creates a new sequence number generator")
		})
	}
	if !defines(vocab(4)) {
		t.Error("sources that seldom write \"SEQUENCE command\": the sentence saying what it creates is no evidence")
	}
	if defines(vocab(200)) {
		t.Error("sources that write \"SEQUENCE command\" themselves: the noun should count as before")
	}
}

// A sentence that opens with a definite description of what the sentence before it names ("The fractional
// precision is determined by …" after "… with a fixed fractional precision") continues what was said of it: it
// shares that sentence's relevance though it does not repeat the question's subject (zh13-pg-money-precision in
// the quality benchmark). One word after "The" may name a new subject; a phrase the sentence before does not name
// is no restatement, nor is a sentence of another paragraph.
func TestRestated(t *testing.T) {
	ix := &docIndex{}
	const prev = "The money type stores a currency amount with a fixed fractional precision."
	for _, tc := range []struct {
		sep, s string
		want   bool
	}{
		{" ", "The fractional precision is determined by the setting.", true},
		{" ", "The result is double precision.", false},
		{" ", "The output format depends on the locale.", false},
		{"\n\n", "The fractional precision is locale-sensitive.", false}, // another paragraph
		{" ", "The amount is rounded.", false},                           // "amount" without "the" before
		{" ", "The currency, the amount.", false},                        // not a noun alone ("currency,")
	} {
		ix.text = prev + tc.sep + tc.s
		ix.spans = []lexical.Span{{Start: 0, End: len(prev), Text: prev}, {Start: len(prev) + len(tc.sep), End: len(ix.text), Text: tc.s}}
		ix.usable = []bool{true, true}
		if got := ix.restated(1) == 0; got != tc.want {
			t.Errorf("restated(%q after %q) = %v, want %v", tc.s, prev+tc.sep, got, tc.want)
		}
	}
	// One word is enough when the sentence before says "the" with it too: the same definite description.
	const before = "Once the callable returns, wrapper() will restore the original state of the terminal."
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"The callable is called inside a try…except that catches exceptions.", true},
		{"The terminal is left as it was.", true},
		{"The wrapper is a function.", false},      // "wrapper()", not "the wrapper"
		{"The callables are listed below.", false}, // another word
	} {
		ix.text = before + " " + tc.s
		ix.spans = []lexical.Span{{Start: 0, End: len(before), Text: before}, {Start: len(before) + 1, End: len(ix.text), Text: tc.s}}
		if got := ix.restated(1) == 0; got != tc.want {
			t.Errorf("restated(%q after %q) = %v, want %v", tc.s, before, got, tc.want)
		}
	}
}

// A hit in a section too long to read whole is read with the whole paragraphs around it, about maxSection bytes in
// all (a paragraph more at each end at most) and never past the section's headings: the rule one paragraph above a
// three-line chunk is read with it.
func TestSectionReadsTheParagraphsAroundAHitInALongSection(t *testing.T) {
	text := longPage("## 5.10. Inheritance\n\n", "## 5.10.1. Caveats\n\nNot every command honors inheritance.\n")
	next := strings.Index(text, "## 5.10.1.")
	ix := &docIndex{text: text, heads: []lexical.Span{{Start: 0, End: len("## 5.10. Inheritance")}, {Start: next, End: next + len("## 5.10.1. Caveats")}}}
	lo := strings.Index(text, "Paragraph 30 ")
	hi := lo + strings.Index(text[lo:], "\n")
	s, e := ix.section(lo, hi)
	switch {
	case s >= lo || e <= hi:
		t.Errorf("section(%d, %d) = %d, %d: the paragraphs around the hit are not read", lo, hi, s, e)
	case e-s > maxSection+2*(hi-lo+2):
		t.Errorf("section(%d, %d) = %d, %d: %d bytes, more than maxSection and a paragraph at each end", lo, hi, s, e, e-s)
	case s < next && !strings.HasPrefix(text[s:], "Paragraph ") || e > next:
		t.Errorf("section(%d, %d) = %d, %d: not whole paragraphs of the section (%q … %q)", lo, hi, s, e, text[s:min(s+20, len(text))], text[max(e-20, 0):e])
	}
	// A section short enough is read whole, as before.
	short := "## A\n\nOne.\n\nTwo.\n\n## B\n\nThree.\n"
	ix = &docIndex{text: short, heads: []lexical.Span{{Start: 0, End: 4}, {Start: strings.Index(short, "## B"), End: strings.Index(short, "## B") + 4}}}
	if s, e := ix.section(strings.Index(short, "Two"), strings.Index(short, "Two")+4); s != 0 || e != strings.Index(short, "## B") {
		t.Errorf("section of a short section = %d, %d, want 0, %d", s, e, strings.Index(short, "## B"))
	}
}

// A table row whose first cell is a name in code that the question writes is read however far above the search's
// region the table stands: it is what the table says of that name. A row of another name is not.
func TestAnalystReadsTheTableRowOfTheNameAsked(t *testing.T) {
	text := longPage("## 8.1. Numeric Types\n\nNumeric types consist of integers, floating-point numbers and decimals.\n\n**Table 8.2. Numeric Types**\n\n"+
		"Name\tStorage Size\tDescription\tRange\n`smallint`\t2 bytes\tsmall-range integer\t-32768 to +32767\n`bigint`\t8 bytes\tlarge-range integer\t-9223372036854775808 to +9223372036854775807\n\n",
		"### 8.1.1. Integer Types\n\nThe types smallint, integer, and bigint store whole numbers of various ranges.\n")
	last := strings.Count(text, "\n")
	url := fmt.Sprintf("file:///pg/datatype-numeric.html#L%d-L%d", last-1, last)
	quoted := func(q, s string) bool {
		sq := research.SubQuestion{ID: "q1", Question: q, Queries: []string{"smallint type byte range"}}
		return slices.ContainsFunc(analyzedWith(t, Config{}, sq, doc(url, text)), func(e research.Evidence) bool { return strings.Contains(e.Quote, s) })
	}
	if !quoted("PostgreSQL 的 smallint 类型占多少字节？", "`smallint`\t2 bytes") {
		t.Error("the table row of the smallint type, which the question names, is not read")
	}
	if quoted("PostgreSQL 的 smallint 类型占多少字节？", "`bigint`\t8 bytes") {
		t.Error("the table row of bigint, which the question does not name, is read")
	}
}

// longPage is head, then paragraphs enough to pass maxSection (so the region read around a hit is not the whole
// page), then tail.
func longPage(head, tail string) string {
	var b strings.Builder
	b.WriteString(head)
	for i := range 60 {
		fmt.Fprintf(&b, "Paragraph %d describes how the server lays out the files of one relation on disk, one segment after another, as the data grows.\n\n", i)
	}
	b.WriteString(tail)
	return b.String()
}

// A name written with its type parameters ("Weak<T>") is a name however it is capitalised, and a section whose
// heading writes it in code ("Turning an `Rc<T>` into a `Weak<T>`") is read wherever on the page the search's
// chunks fell, as a signature heading's section is (zh10-rust-weak in the quality benchmark).
func TestNamedSectionsByANameInCode(t *testing.T) {
	for q, want := range map[string]bool{"Rust 中的 Weak<T> 弱引用有什么作用？": true, "What is a weak reference?": false, "What does Weak do?": false} {
		if got := slices.Contains(nameTerms(q), "weak"); got != want {
			t.Errorf("nameTerms(%q) = %q: weak named = %v, want %v", q, nameTerms(q), got, want)
		}
	}
	headings := []string{"## Reference Cycles Can Leak Memory", "### Preventing Reference Cycles: Turning an `Rc<T>` into a `Weak<T>`",
		"### Creating a Tree Data Structure", "### Weak pointers in other languages"}
	ix := &docIndex{}
	for _, h := range headings {
		ix.heads = append(ix.heads, lexical.Span{Start: len(ix.text), End: len(ix.text) + len(h), Text: h})
		ix.text += h + "\n\nSome paragraph about it.\n\n"
	}
	got := ix.namedSections([]string{"weak"}, nil)
	if want := [][2]int{{ix.heads[1].Start, ix.heads[2].Start}}; !slices.Equal(got, want) {
		t.Errorf("namedSections(weak) = %v, want %v: the section whose heading writes `Weak<T>`, not one that says weak in prose", got, want)
	}
}

// A question about an operator names it by its symbol, which neither the search nor the word tokens see: the
// section whose heading names it ("… the `?` Operator") is read wherever the search's chunks fell, a listing's
// "#![allow(unused)]" does not end it (it is no CommonMark heading), and the passage that names the symbol covers
// the question (rust4-question-mark in the quality benchmark).
func TestAnalystReadsTheSectionOfANamedSymbol(t *testing.T) {
	page := "# Recoverable Errors with Result\n\n" +
		"Most errors are not serious enough to stop the program entirely.\n\n" +
		"## Propagating Errors\n\n" +
		"When a function's implementation calls something that might fail, it can return the error to the calling code.\n\n" +
		"#### A Shortcut for Propagating Errors: the `?` Operator\n\n" +
		"Listing 9-7 shows an implementation that uses the operator.\n\n" +
		"```rust\n#![allow(unused)]\nfn main() {\nlet f = File::open(\"hello.txt\")?;\n}\n```\n\n" +
		"The `?` placed after a `Result` value is defined to work in almost the same way as a `match` expression. If the value of the `Result` is an `Ok`, the value inside the `Ok` will get returned from this expression.\n\n" +
		"## Where the Operator Can Be Used\n\n" +
		"The operator and the value of a Result go together with the return type of the function, which the operator needs to match the value it is used on.\n"
	lines := strings.Split(page, "\n")
	last := len(lines)
	a := New(Config{}).Analyst
	sq := research.SubQuestion{ID: "q1", Question: "What does the ? operator do with a Result value?", Queries: []string{"operator Result value"}}
	ev, err := a.Analyze(t.Context(), sq, doc(fmt.Sprintf("file:///docs/result.md#L%d-L%d", last-2, last), page))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range ev {
		checkGrounded(t, page, e)
		found = found || strings.Contains(e.Quote, "placed after")
	}
	if !found {
		t.Errorf("evidence %+v: want the sentence under the heading that names `?`", ev)
	}
}

// A "#" line is a heading as CommonMark writes one: "#![allow(unused)]" atop a listing and a "#hashtag" are text.
func TestHeadingsAreCommonMarkHeadings(t *testing.T) {
	text := "# Title\n\nBody text here.\n\n#![allow(unused)]\nfn main() {}\n\n#hashtag\n\n####### seven\n\n## Sub\n\nMore text here."
	var got []string
	for _, h := range headings(text) {
		got = append(got, h.Text)
	}
	if want := []string{"# Title", "## Sub"}; !slices.Equal(got, want) {
		t.Errorf("headings = %q, want %q", got, want)
	}
}

// A sentence whose subject is the code block after it ("For example, this is not a good idea:"), when the block is
// too long to quote with it, says nothing on its own and is no evidence; a sentence that names its subject before
// the same block is.
func TestAnalystLeavesOutASentenceWhoseSubjectIsLongCode(t *testing.T) {
	var code strings.Builder
	for i := range 30 {
		fmt.Fprintf(&code, "    server.on('request', (req, res) => { handle(req, res, %d); });\n", i)
	}
	sq := research.SubQuestion{ID: "q1", Question: "Is it a good idea to use a domain for error handling?", Queries: []string{"good idea domain error handling"}}
	for lead, want := range map[string]bool{
		"For example, this is not a good idea:":                 false,
		"This is not a good idea for error handling:":           false,
		"Using a domain for error handling is not a good idea:": true,
	} {
		text := "Domains catch errors thrown in callbacks.\n\n" + lead + "\n\n" + code.String() + "\nThe process keeps running.\n"
		got := false
		for _, e := range analyzedWith(t, Config{}, sq, doc("file:///node/domain.html", text)) {
			got = got || strings.Contains(e.Quote, strings.TrimSuffix(lead, ":"))
		}
		if got != want {
			t.Errorf("%q quoted: %v, want %v", lead, got, want)
		}
	}
}

// A sentence may open with a name of code in lower case ("pg_dump does not block …"); a lower-case opening that
// is no such name is the tail of a sentence broken by a figure or a code block, or a history row's version.
func TestUsableOpeningWithALowerCaseName(t *testing.T) {
	for s, want := range map[string]bool{
		"pg\\_dump does not block other users accessing the database (readers or writers).": true,
		"process.exitCode is set when the process exits with an error.":                     true,
		"setTimeout schedules the callback after the delay in milliseconds.":                true,
		"v12.3.0 The event is from now on triggered if the repl is used as a program.":      false,
		"and then the value is returned to the caller of the function.":                     false,
	} {
		plain := plainText(s)
		if got := usable(s, plain, lexical.Tokenize(plain), false); got != want {
			t.Errorf("usable(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestAnalystAnswersAQuestionThatTellsItsSituation: a question that tells the asker's circumstances in many words
// before asking is answered by a sentence holding a few of them; it must not fall under the confidence floor for
// not holding the rest (saturateUnits).
func TestAnalystAnswersAQuestionThatTellsItsSituation(t *testing.T) {
	q := "Our service runs a worker pool where each worker goroutine sends its results over a channel to the main loop, " +
		"while the others write logs to disk, retry failed uploads and update metrics counters. " +
		"Is the send synchronized before the receive completes?"
	// The page speaks of the asker's circumstances too, elsewhere: their words weigh on the page.
	text := memDoc + "\n### Worker pools\n\nA worker pool runs a fixed number of worker goroutines that take jobs from a queue.\n\n" +
		"Workers that write logs to disk should buffer them. Failed uploads are retried with a backoff. " +
		"The metrics counters are updated atomically by each worker. The main loop collects the results.\n"
	ev, err := New(Config{}).Analyst.Analyze(t.Context(), research.SubQuestion{ID: "q1", Question: q, Queries: []string{q}}, doc("file:///mem.md", text))
	if err != nil {
		t.Fatal(err)
	}
	const want = "A send on a channel is synchronized before the completion of the corresponding receive from that channel."
	if !slices.ContainsFunc(ev, func(e research.Evidence) bool { return strings.Contains(e.Quote, want) }) {
		t.Errorf("the sentence that answers is not evidence; got %d items:", len(ev))
		for _, e := range ev {
			t.Logf("  %q", e.Quote)
		}
	}
}

// On a page about its subject every passage names the subject, so within the page the subject's words weigh next
// to nothing, and a word the page never uses weighs the most: the question's passing word "PostgreSQL", on every page
// of a PostgreSQL manual but not on this one, would outweigh "window function" and leave the sentence that says
// what a window function is under the confidence floor. A term keeps a share of its weight over all the sources
// (topicShare), and a term the page lacks weighs what it weighs there.
func TestCoverageWeighsTermsByTheSources(t *testing.T) {
	text := "# 3.5. Window Functions\n\n" +
		"A window function performs a calculation across a set of table rows that are somehow related to the current row. " +
		"This is comparable to the type of calculation that can be done with an aggregate function.\n\n" +
		"A window function call always contains an OVER clause directly following the window function's name and argument(s).\n\n" +
		"The window function is computed across all rows of the partition; the rows are ordered by the window's ORDER BY.\n\n" +
		"Window functions are permitted only in the SELECT list and the ORDER BY clause of the query.\n\n" +
		"When a query involves multiple window functions, it is possible to write out each one with a separate OVER clause.\n"
	d := &sources.Document{URL: "file:///pg/tutorial-window.html", Title: "3.5. Window Functions", Text: text, Hash: sources.HashText(text)}
	sq := research.SubQuestion{ID: "q1", Question: "What is a window function in PostgreSQL?", Queries: []string{"window function PostgreSQL"}}
	defines := func(v *vocabulary) bool {
		a := &Analyst{cfg: Config{}.withDefaults(), vocab: v}
		ev, err := a.Analyze(t.Context(), sq, d)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ev, func(e research.Evidence) bool { return strings.Contains(e.Claim, "performs a calculation") })
	}
	manual := newVocabulary([]sources.Searcher{vocabSource{df: map[string]int{"window": 30, "function": 1500, "postgresql": 9000}}})
	if !defines(manual) {
		t.Error("over a manual that names PostgreSQL everywhere, the sentence saying what a window function is is no evidence")
	}
	if defines(nil) {
		t.Error("with no sources to weigh the terms by, the page's own weights should decide as before")
	}
}
