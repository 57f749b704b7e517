package extractive

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

// The not-covered heuristic against a real corpus index: a name no source mentions makes the report say so and
// cite nothing; an everyday word the sources phrase differently ("contract") does not, when an item answers the
// rest of the question; a Chinese question gets the line in Chinese.
func TestNotCovered(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "io.md"), []byte("# Package io\n\n## type Reader\n\n"+
		"A Reader returns 0, EOF at the end of the input stream, and callers should process the bytes read before the error.\n\n"+
		"## type WaitGroup\n\nA WaitGroup waits for a collection of goroutines to finish; the number of active goroutines is counted.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := buildIndex(t, dir)
	file := "file://" + filepath.ToSlash(filepath.Join(dir, "io.md"))
	pool := []research.Evidence{
		ev("e1", "q1", file+"#L5-L5", "A Reader returns 0, EOF at the end of the input stream, and callers should process the bytes read before the error.", 0.9),
		ev("e2", "q1", file+"#L9-L9", "A WaitGroup waits for a collection of goroutines to finish; the number of active goroutines is counted.", 0.8),
	}
	pool[0].Title, pool[1].Title = "Package io", "Package io"
	tests := []struct {
		q, notCovered string
		cites         bool
	}{
		{"How does errgroup limit the number of active goroutines?", "Not covered: the sources searched never mention errgroup", false},
		{"What does the io.Reader contract say about EOF?", "", true},
		// The head of a compound the sources never complete ("Reader stream" without "rewind") is what is asked.
		{"How does the Reader stream rewind work?", "Not covered: the sources searched never mention rewind", false},
		{"如何用 GOGC 调整读取？", "未涵盖：所检索的来源没有提到 GOGC。", false},
		// A measurement of the asker's setting is written in the sources' own notation, if at all.
		{"What does a WaitGroup wait for in 30s?", "", true},
		// What the asker compares with, their own values and the everyday words of their circumstances need not be
		// in the sources: an equivalent of errgroup, the argument of a call they wrote, the colleagues they work for.
		{"Is there an equivalent of errgroup that counts the active goroutines?", "", true},
		{"What does wg.Wait(ctx) wait for in a WaitGroup?", "", true},
		{"Does a WaitGroup wait for the goroutines of my colleagues in production?", "", true},
		// The subject's own everyday words are still required.
		{"How does a WaitGroup rewind?", "Not covered: the sources searched never mention rewind", false},
	}
	for _, tt := range tests {
		md := planAndSynthesize(t, ix, tt.q, pool)
		if tt.notCovered != "" && !strings.Contains(md, tt.notCovered) {
			t.Errorf("%q: no %q in\n%s", tt.q, tt.notCovered, md)
		}
		if tt.notCovered == "" && strings.Contains(md, "Not covered") {
			t.Errorf("%q: wrongly not covered:\n%s", tt.q, md)
		}
		if got := strings.Contains(md, "[e"); got != tt.cites {
			t.Errorf("%q: cites = %v, want %v:\n%s", tt.q, got, tt.cites, md)
		}
	}
}

// planAndSynthesize plans question over the corpus ix with the extractive roles and writes the report from pool.
func planAndSynthesize(t *testing.T, ix sources.Searcher, question string, pool []research.Evidence) string {
	t.Helper()
	roles := New(Config{Searchers: []sources.Searcher{ix}})
	plan, err := roles.Planner.Plan(t.Context(), question)
	if err != nil {
		t.Fatal(err)
	}
	d, err := roles.Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: plan, Evidence: pool})
	if err != nil {
		t.Fatal(err)
	}
	return d.Markdown
}

func TestHeadNouns(t *testing.T) {
	tests := []struct {
		q    string
		want []string
	}{
		{"How does the Go HTTP server support HTTP/2 server push?", []string{"push", "server"}},
		{"What does the io.Reader contract say about EOF?", nil},
		{"How does garbage collector pacing work?", []string{"pacing"}},
		{"如何用 GOGC 调整读取？", nil},
	}
	for _, tt := range tests {
		got := headNouns(tt.q)
		var keys []string
		for k := range got {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, tt.want) {
			t.Errorf("headNouns(%q) = %v, want %v", tt.q, keys, tt.want)
		}
	}
}

func TestQuantity(t *testing.T) {
	for in, want := range map[string]bool{"2G": true, "512MB": true, "1.5GiB": true, "30s": true, "200ms": true, "80%": true,
		"3GHz": true, "3.11": false, "v20": false, "HTTP/2": false, "ES2015": false, "2to3": false, "x86": false, "G1": false} {
		if got := quantityRE.MatchString(in); got != want {
			t.Errorf("quantity %q = %v", in, got)
		}
	}
}

func TestCommonWord(t *testing.T) {
	for in, want := range map[string]bool{"contract": true, "push": true, "errgroup": true, "Kafka": false, "GOGC": false, "http2": false, "导出": false} {
		if got := commonWord(in); got != want {
			t.Errorf("commonWord(%q) = %v", in, got)
		}
	}
}

// The named-subject heuristic: a question naming an API keeps to items that mention it — by its term or by its
// CamelCase parts spelled as words — unless the name is the setting of the whole corpus.
func TestRequiredNames(t *testing.T) {
	pool := indexPool([]research.Evidence{
		ev("e1", "q1", "file:///sync.md#L1-L1", "A Mutex must not be copied after first use.", 0.9),
		ev("e2", "q1", "file:///atomic.md#L1-L1", "A Value must not be copied after first use.", 0.9),
		ev("e3", "q1", "file:///maps.md#L1-L1", "For owned values like String, the values will be moved and the hash map will be the owner.", 0.9),
		ev("e4", "q1", "file:///maps.md#L2-L2", "This HashMap has keys of type String.", 0.9),
		ev("e5", "q1", "file:///json.md#L1-L1", "PostgreSQL offers two types for storing JSON data.", 0.9),
		ev("e6", "q1", "file:///errors.md#L1-L1", "The error.code property is a string label that identifies the kind of error.", 0.9),
		ev("e7", "q1", "file:///errors.md#L2-L2", "The error.message property is the string description of the error.", 0.9),
		ev("e8", "q1", "file:///returning.md#L1-L1", "The INSERT, UPDATE, and DELETE commands all have an optional RETURNING clause.", 0.9),
		ev("e9", "q1", "file:///esm.md#L1-L1", "An import statement can reference an ES module or a CommonJS module.", 0.9),
	}, nil)
	setting := func(term string) bool {
		return term == "postgresql" || term == "code" || term == "return" || term == "insert" || term == "updat"
	}
	tests := []struct {
		q, subject string
		want       [][]string
	}{
		{"What is the zero value of a sync.Mutex and may it be copied?", "", [][]string{{"mutex", "mutex"}}},
		{"May a sync.Once be copied?", "", nil}, // no item names it: the not-covered heuristic speaks
		{"What is the zero value of a mutex?", "", nil},
		{"互斥锁的零值是什么？", "", nil},
		{"What happens to a String inserted into a HashMap?", "", [][]string{{"hash", "map", "hashmap"}}},
		// The corpus's own product names no subject: the question is about json.
		{"How does the jsonb type differ from the json type in PostgreSQL?", "", nil},
		// A member of a module stays a subject however common its last word: "code" is the setting, error.code is not.
		{"What is error.code, and why use it rather than error.message?", "", [][]string{{"code", "code"}, {"messag", "messag"}}},
		// A name in the subject stays one however common its word ("returns"); the commands it is asked of do not.
		{"What is the RETURNING clause of INSERT, UPDATE and DELETE for?", "RETURNING clause", [][]string{{"return", "return"}, {"delet", "delet"}}},
		{"What is the RETURNING clause of INSERT, UPDATE and DELETE for?", "", [][]string{{"delet", "delet"}}},
		// The setting's name in the subject is still the setting: its term is the name itself, not a stem.
		{"PostgreSQL JSON 类型有哪些？", "PostgreSQL JSON 类型", [][]string{{"json", "json"}}},
		// The place a Chinese question opens with (在 … 里) names where it is asked, not what about.
		{"在 Node.js 的 ES 模块里用 import 导入相对路径时必须写文件扩展名吗？", "", nil},
		{"ES 模块的 import 必须写文件扩展名吗？", "", [][]string{{"es", "es"}}},
		{"在 ES 模块里，ES 模块的 import 必须写扩展名吗？", "", [][]string{{"es", "es"}}}, // named again outside it
	}
	for _, tt := range tests {
		got := pool.requiredNames(tt.q, tt.subject, setting)
		if !slices.EqualFunc(got, tt.want, slices.Equal[[]string]) {
			t.Errorf("requiredNames(%q) = %v, want %v", tt.q, got, tt.want)
		}
	}
	names := pool.requiredNames("What happens to a String inserted into a HashMap?", "", setting)
	for i, want := range []bool{false, false, true, true, false, false, false, false} {
		if got := pool.hasName(i, names); got != want {
			t.Errorf("hasName(e%d, HashMap) = %v, want %v", i+1, got, want)
		}
	}
}

// A run of capitalised keywords is one name, found only with its words side by side: "NULLS LAST" is not named by
// an item that has "null" and "last" apart, however common or rare each word is.
func TestKeywordPhrasesAreRequiredSideBySide(t *testing.T) {
	pool := indexPool([]research.Evidence{
		ev("e1", "q1", "file:///order.md#L1-L1", "By default, null values sort as if larger than any non-null value; that is, NULLS FIRST is the default for DESC order, and NULLS LAST otherwise.", 0.9),
		ev("e2", "q1", "file:///enum.md#L1-L1", "Returns the last value of the input enum type.", 0.9),
		ev("e3", "q1", "file:///enum.md#L2-L2", "If the first parameter is null, the result will start with the first value of the enum type.", 0.9),
		ev("e4", "q1", "file:///index.md#L1-L1", "Specifies that nulls sort after non-nulls, as with nulls last in a query.", 0.9),
	}, nil)
	setting := func(term string) bool { return term == "null" || term == "first" || term == "creat" || term == "index" }
	q := "Where do null values go when PostgreSQL sorts rows, if I don't say NULLS FIRST or NULLS LAST?"
	names := pool.requiredNames(q, "", setting)
	// NULLS FIRST is two words the sources are all about, as CREATE INDEX would be: no subject.
	want := [][]string{{"null last"}}
	if !slices.EqualFunc(names, want, slices.Equal[[]string]) {
		t.Fatalf("requiredNames(%q) = %v, want %v", q, names, want)
	}
	for i, want := range []bool{true, false, false, true} {
		if got := pool.hasName(i, names); got != want {
			t.Errorf("hasName(e%d, NULLS FIRST|NULLS LAST) = %v, want %v", i+1, got, want)
		}
	}
	for _, tc := range []struct {
		q    string
		want [][2]string
	}{
		{"What does CREATE VIEW do?", [][2]string{{"creat", "view"}}},
		{"Why use ORDER BY with LIMIT?", nil},                // "by" is a stop word: ORDER is a name of its own
		{"What do ON DELETE CASCADE and NO ACTION do?", nil}, // three words, or one term: single names
		{"Is HTTP a protocol? GET is a method.", nil},        // not one run
		{"PostgreSQL 外键的 ON DELETE 选项", nil},
	} {
		if got := keywordPhrases(tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("keywordPhrases(%q) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// A page's own name in the question is its subject when the sources use the word in few passages: "punycode"
// of the page "Punycode", not "modules" of "Modules: Packages".
func TestTitledSubjects(t *testing.T) {
	titled := func(id, title string) research.Evidence {
		e := ev(id, "q1", "file:///api/"+id+".html#L1-L1", "Some text.", 0.9)
		e.Title = title
		return e
	}
	pooled := []research.Evidence{
		titled("packages", "Modules: Packages | Node.js v20.20.2 Documentation"),
		titled("punycode", "Punycode | Node.js v20.20.2 Documentation"),
		titled("punycode2", "Punycode | Node.js v20.20.2 Documentation"),
		titled("url", "URL and Punycode | Node.js v20.20.2 Documentation"),
	}
	q := "Should new code use the punycode module bundled with Node.js?"
	specific := func(term string) bool { return term != "modul" }
	if got, want := titledSubjects(q, pooled, specific), [][]string{{"punycod"}}; !slices.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("titledSubjects = %v, want %v", got, want)
	}
	if got := titledSubjects(q, pooled, func(string) bool { return false }); got != nil {
		t.Errorf("titledSubjects with no specific word = %v, want none", got)
	}
	if got := titledSubjects("What do modules export?", pooled, func(string) bool { return true }); len(got) != 1 || got[0][0] != "modul" {
		t.Errorf("titledSubjects of a question naming the lead \"Modules\" = %v, want [[modul]]", got)
	}
	if got := titledSubjects("What is a URL?", pooled, func(string) bool { return true }); got != nil {
		t.Errorf("titledSubjects = %v: a title of two words names no one subject", got)
	}
}

// The planner's facet wording is left out of a variant and what fills its slots is kept, whatever it is; in the
// reader's own question a facet word counts when written as a name.
func TestQueryVariantKeepsTheSlotsOfTheFacetWording(t *testing.T) {
	tests := []struct {
		q    string
		want variant
	}{
		{"What rules or examples illustrate LIMIT?", variant{{"limit"}}},
		{"What caveats, limits or exceptions apply to exceptions?", variant{{"except"}}},
		{"What caveats, limits or exceptions apply to rate limits?", variant{{"rate"}, {"limit"}}},
		{"LIMIT rule", variant{{"limit"}}},
		{"savepoint unless except limit", variant{{"savepoint"}}},
		{"What is LIMIT and how is it used?", variant{{"limit"}}},
		// The reader's question: facet words as common words ask for a kind of passage; as names they are the subject.
		{"What are the rules of references?", variant{{"refer"}}},
		{"Why should a query that uses LIMIT also use ORDER BY?", variant{{"queri"}, {"limit"}, {"order"}}},
		{"What does the `except` clause catch?", variant{{"except"}, {"claus"}, {"catch"}}},
		// "like" comparing is no word of the topic; "like" as a verb is.
		{"Does Rust support inheritance like object-oriented languages do?", variant{{"rust"}, {"support"}, {"inherit"}, {"object"}, {"orient"}, {"languag"}}},
		{"Why do you like Go channels?", variant{{"like"}, {"go"}, {"channel"}}},
	}
	for _, tt := range tests {
		if got := queryVariant(tt.q); !slices.EqualFunc(got, tt.want, slices.Equal[[]string]) {
			t.Errorf("queryVariant(%q) = %v, want %v", tt.q, got, tt.want)
		}
	}
}

func TestCamelWords(t *testing.T) {
	for in, want := range map[string][]string{
		"HashMap": {"Hash", "Map"}, "HTTPServer": {"HTTP", "Server"}, "Mutex": {"Mutex"}, "GODEBUG": {"GODEBUG"},
		"setMaxListeners": {"set", "Max", "Listeners"}, "": {""},
	} {
		if got := camelWords(in); !slices.Equal(got, want) {
			t.Errorf("camelWords(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNamedSubjectKeepsToItsName(t *testing.T) {
	pool := []research.Evidence{
		ev("e1", "q1", "file:///sync.md#L3-L3", "The zero value for a Mutex is an unlocked mutex.", 0.9),
		ev("e2", "q1", "file:///sync.md#L5-L5", "A Mutex must not be copied after first use.", 0.9),
		ev("e3", "q1", "file:///atomic.md#L7-L7", "The zero value for a Value returns nil from Load. A Value must not be copied after first use.", 0.95),
	}
	roles := New(Config{})
	plan, err := roles.Planner.Plan(t.Context(), "What is the zero value of a sync.Mutex and may it be copied?")
	if err != nil {
		t.Fatal(err)
	}
	d, err := roles.Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: plan, Evidence: pool})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(d.Markdown, "[e3]") || !strings.Contains(d.Markdown, "[e1]") {
		t.Errorf("want e1 cited, not e3:\n%s", d.Markdown)
	}
}

// An English word over Chinese sources that the dictionary renders only through another form of it ("verifier"
// by the senses of "verify": 核实, 得证) is no absence when the sources write it otherwise (验证者): the report
// answers instead of saying the sources never mention it.
func TestNotCoveredEnglishOverChinese(t *testing.T) {
	dir := t.TempDir()
	text := "# 抽取式引擎\n\n抽取式验证者拒绝低于置信度门槛的证据和重复的证据。\n\n一个子问题需要至少 2 条证据才算被覆盖。\n"
	// Other pages use the same words: a word in one passage only may be a stray mention (minCorpusUses).
	for name, body := range map[string]string{"extractive.md": text, "stages.md": "# 阶段\n\n验证者拒绝没有来源的证据。\n",
		"quickstart.md": "# 快速开始\n\n抽取式引擎不需要模型，验证者照样拒绝重复的证据。\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ix := buildIndex(t, dir)
	file := "file://" + filepath.ToSlash(filepath.Join(dir, "extractive.md"))
	pool := []research.Evidence{
		ev("e1", "q1", file+"#L3-L3", "抽取式验证者拒绝低于置信度门槛的证据和重复的证据。", 0.9),
		ev("e2", "q1", file+"#L5-L5", "一个子问题需要至少 2 条证据才算被覆盖。", 0.8),
	}
	pool[0].Title, pool[1].Title = "抽取式引擎", "抽取式引擎"
	if md := planAndSynthesize(t, ix, "How does the verifier refuse evidence?", pool); strings.Contains(md, "Not covered") || !strings.Contains(md, "[e1]") {
		t.Errorf("the report does not answer from the Chinese sources:\n%s", md)
	}
}

// The pool's focus weighs a term by the sources too: in a pool read for "What does the ANALYZE command do?" nearly
// every item says ANALYZE, so by the pool alone the item that adds "command" is the most on-topic, though the
// sources use "command" everywhere and "ANALYZE" on a few pages; with the sources' IDF the sentence saying what
// ANALYZE does comes first.
func TestPoolFocusWeighsTermsByTheSources(t *testing.T) {
	pool := indexPool([]research.Evidence{
		ev("e1", "q1", "file:///analyze.md#L3-L3", "ANALYZE collects statistics about the contents of tables.", 0.9),
		ev("e2", "q1", "file:///analyze.md#L9-L9", "If the wrapper does not support it, the command prints a warning.", 0.9),
		ev("e3", "q1", "file:///analyze.md#L5-L5", "ANALYZE requires only a read lock on the target table.", 0.9),
		ev("e4", "q1", "file:///analyze.md#L7-L7", "ANALYZE takes a random sample of a large table.", 0.9),
		ev("e5", "q1", "file:///vacuum.md#L2-L2", "VACUUM and ANALYZE are often run together.", 0.9),
	}, nil)
	variants := []variant{queryVariant("ANALYZE command")}
	if a, b := pool.focus(variants, 0), pool.focus(variants, 1); a > b {
		t.Fatalf("by the pool alone focus(e1) = %.2f > focus(e2) = %.2f: the case this test is about is gone", a, b)
	}
	rare := map[string]float64{"analyz": 8, "command": 1}
	pool.sourcesIDF = func(t string) float64 { return rare[t] }
	if a, b := pool.focus(variants, 0), pool.focus(variants, 1); a <= b {
		t.Errorf("with the sources' IDF focus(e1) = %.2f <= focus(e2) = %.2f, want the ANALYZE sentence first", a, b)
	}
}

// The subject the report's focus counts twice leaves out a possessive word only when it names the domain, by the
// same rule the planner follows (vocabulary.domain): "PostgreSQL" over PostgreSQL's manual, not "Unicode" over a
// manual where it is one topic.
func TestSubjectOfLeavesOutOnlyTheDomain(t *testing.T) {
	vocab := func(word string, df int) *vocabulary { // the sources' passages using word, of 10000
		return newVocabulary([]sources.Searcher{vocabSource{df: map[string]int{word: df, strings.ToLower(word): df}}})
	}
	for _, tc := range []struct {
		q    string
		v    *vocabulary
		want string
	}{
		{"PostgreSQL 的物化视图和普通视图有什么区别？", vocab("PostgreSQL", 2700), "物化视图 普通视图"}, // the manual's setting
		{"PostgreSQL 的物化视图和普通视图有什么区别？", vocab("PostgreSQL", 40), "PostgreSQL"},
		{"Unicode 的码位是什么？", vocab("Unicode", 40), "Unicode"}, // one topic among many
		{"Unicode 的码位是什么？", vocab("Unicode", 0), "码位"},       // never used
		{"Go 的延迟函数在什么时候执行？", nil, "延迟函数"},                    // no vocabulary: a plain word is the domain
		// An opening before the comma says where the question is asked, as a Chinese place phrase does.
		{"In PostgreSQL, what happens when row security is enabled on a table?", nil, "row security"},
		{"What happens to row security in PostgreSQL?", nil, "row security"},
		{"标准库里的 sync.Pool 是什么？", nil, "sync.Pool"},
		// A word right after the asker is a verb; what it is done to belongs to the subject.
		{"How do you exit the Python interactive interpreter?", nil, "exit Python interactive interpreter"},
		{"What does exit do in the Python interpreter?", nil, "exit"},
	} {
		if got := subjectOf(t.Context(), tc.q, tc.v); got != tc.want {
			t.Errorf("subjectOf(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
	for q, want := range map[string][2]string{
		"In PostgreSQL, what happens when row security is enabled?": {"row security", "PostgreSQL"},
		"在唯一约束中，两个空值被视为相等吗？":                                        {"两个空值", "唯一约束中"},
		"What is the RETURNING clause of INSERT and DELETE for?":    {"RETURNING clause", ""},
	} {
		if s, p := subjectAndPlace(t.Context(), q, nil); s != want[0] || p != want[1] {
			t.Errorf("subjectAndPlace(%q) = %q, %q, want %q, %q", q, s, p, want[0], want[1])
		}
	}
	v := newVocabulary([]sources.Searcher{vocabSource{df: map[string]int{"PostgreSQL": 2700, "postgresql": 2700, "Unicode": 40, "unicode": 40}}})
	for w, want := range map[string]bool{"PostgreSQL": true, "Unicode": false, "Haskell": true} {
		if got := v.domain(t.Context(), w); got != want {
			t.Errorf("domain(%q) = %v, want %v", w, got, want)
		}
	}
}

// The focus leaves out the domain a question names after "in" when the sources are all about it, and, when the
// sources seldom call the name by the kind noun the question adds ("the ANALYZE command"), also weighs a variant
// without that noun: "ANALYZE collects statistics …" is on the question's topic.
func TestFocusVariantsLeaveOutTheDomainAndAKindNoun(t *testing.T) {
	core := research.SubQuestion{Question: "What does the ANALYZE command do in PostgreSQL?", Queries: []string{"ANALYZE command PostgreSQL"}}
	has := func(vs []variant, word string) (any, all bool) {
		term := lexical.Tokenize(word)[0]
		all = len(vs) > 0
		for _, v := range vs {
			in := slices.ContainsFunc(v, func(u []string) bool { return slices.Contains(u, term) })
			any = any || in
			all = all && in
		}
		return any, all
	}
	vocab := func(pair int) *vocabulary {
		return newVocabulary([]sources.Searcher{vocabSource{df: map[string]int{"PostgreSQL": 2700, "postgresql": 2700,
			"ANALYZE": 169, "analyze": 169, "ANALYZE command": pair, "analyze command": pair}}})
	}
	for _, tc := range []struct {
		name              string
		v                 *vocabulary
		domain, kindInAll bool
	}{
		{"the sources seldom say it", vocab(15), false, false},
		{"the sources' own phrase", vocab(150), false, true},
		{"no vocabulary", nil, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := focusVariants(t.Context(), core, tc.v)
			if any, _ := has(vs, "PostgreSQL"); any != tc.domain {
				t.Errorf("variants %q: PostgreSQL in one = %v, want %v", vs, any, tc.domain)
			}
			if _, all := has(vs, "command"); all != tc.kindInAll {
				t.Errorf("variants %q: command in every one = %v, want %v", vs, all, tc.kindInAll)
			}
		})
	}
}

// A word of a translated query comes with its other renderings ("command|order" for 命令): the first decides, by
// the sources' use of it after the name, for the whole word. A word after an auxiliary and the name ("does CREATE
// INDEX create") is the clause's verb, a word the dictionary knows only as an action ("create") no noun, and a
// name the sources are all about ("PostgreSQL") no name a kind is said of.
func TestKindNounsOfATranslatedQuery(t *testing.T) {
	v := newVocabulary([]sources.Searcher{vocabSource{df: map[string]int{"SEQUENCE": 240, "SEQUENCE command": 4, "SEQUENCE order": 90,
		"INDEX": 300, "INDEX create": 2, "PostgreSQL": 2700, "PostgreSQL smallint": 1}}})
	got := kindNouns(t.Context(), "CREATE SEQUENCE command|order found|establish", v)
	if len(got) != 1 || !got["command|order"] {
		t.Errorf("kindNouns = %v, want command|order", got)
	}
	if got := kindNouns(t.Context(), "CREATE SEQUENCE order|command", v); len(got) != 0 {
		t.Errorf("kindNouns = %v, want none: the sources write the first rendering after the name", got)
	}
	// A word the dictionary knows only as an action is no noun; a name the sources are all about is their setting.
	for _, q := range []string{"PostgreSQL one CREATE INDEX create default", "PostgreSQL smallint type"} {
		if got := kindNouns(t.Context(), q, v); len(got) != 0 {
			t.Errorf("kindNouns(%q) = %v, want none", q, got)
		}
	}
	// After an auxiliary and the name, the word is the clause's verb.
	if got := kindNouns(t.Context(), "which one does CREATE SEQUENCE command by default", v); len(got) != 0 {
		t.Errorf("kindNouns = %v, want none after does", got)
	}
}

// The kind noun of a Chinese question is found in its English rendering: "COPY 命令" is "COPY command|order", and
// over sources that seldom write "COPY command" the focus also reads it without the noun.
func TestFocusVariantsLeaveOutAKindNounOfTheRendering(t *testing.T) {
	core := research.SubQuestion{Question: "PostgreSQL 的 COPY 命令有什么作用？", Queries: []string{"COPY 命令 作用"}}
	vocab := func(pair int) *vocabulary {
		return newVocabulary([]sources.Searcher{vocabSource{df: map[string]int{"PostgreSQL": 2700, "COPY": 300, "copy": 300,
			"command": 2000, "order": 400, "effect": 500, "COPY command": pair, "COPY order": 0}}})
	}
	withoutCommand := func(vs []variant) bool { // an English variant (it says "effect") without "command"
		return slices.ContainsFunc(vs, func(v variant) bool {
			return slices.ContainsFunc(v, func(u []string) bool { return slices.Contains(u, "effect") }) &&
				!slices.ContainsFunc(v, func(u []string) bool { return slices.Contains(u, "command") })
		})
	}
	if vs := focusVariants(t.Context(), core, vocab(8)); !withoutCommand(vs) {
		t.Errorf("variants %q: none reads COPY without command", vs)
	}
	if vs := focusVariants(t.Context(), core, vocab(250)); withoutCommand(vs) {
		t.Errorf("variants %q: the sources write \"COPY command\", yet a variant leaves it out", vs)
	}
}

// A rendering counts for an absence only when CC-CEDICT itself has every content word in two or more characters:
// a single character, a word no dictionary has, and a word of the computing supplement alone (状态码, whose
// "status code" is ECDICT's) leave nothing to judge by.
func TestConfidentRendering(t *testing.T) {
	for s, want := range map[string]bool{"数据库": true, "事务隔离": true, "状态码": false, "键": false, "全局变量": false} {
		if got := confidentRendering(s); got != want {
			t.Errorf("confidentRendering(%s) = %v, want %v", s, got, want)
		}
	}
}

// A lower-case word of the subject that no dictionary knows is an identifier ("querystring"); an English word, a
// short one, a word no pooled item uses or the sources' setting is not.
func TestSubjectIdentifiers(t *testing.T) {
	pool := indexPool([]research.Evidence{
		ev("e1", "q1", "file:///querystring.md#L1-L1", "querystring is more performant than URLSearchParams but is not a standardized API.", 0.9),
		ev("e2", "q1", "file:///url.md#L1-L1", "The URLSearchParams interface and the querystring module have a similar purpose.", 0.9),
		ev("e3", "q1", "file:///node.md#L1-L1", "Node.js modules are loaded by the node binary.", 0.9),
	}, nil)
	english := func(w string) bool { return w == "module" || w == "purpose" }
	setting := func(t string) bool { return t == "node" }
	for subject, want := range map[string][][]string{
		"querystring module URLSearchParams": {{"querystr"}},
		"querystring 模块 URLSearchParams":     {{"querystr"}},
		"module purpose":                     nil, // English words
		"node":                               nil, // the setting
		"punycode":                           nil, // no item uses it
	} {
		if got := pool.subjectIdentifiers(subject, english, setting); !slices.EqualFunc(got, want, slices.Equal[[]string]) {
			t.Errorf("subjectIdentifiers(%q) = %v, want %v", subject, got, want)
		}
	}
}

// A question names a symbol as the thing it asks about after "the", in quotes or backticks, or set apart by
// spaces in Chinese; a symbol joining two words ("read / write") or closing the sentence is none.
func TestAskedSymbols(t *testing.T) {
	tests := []struct {
		q    string
		want []string
	}{
		{"What does the ? operator do with a Result value in Rust?", []string{"?"}},
		{"What does the _ variable hold in the Node.js REPL?", []string{"_"}},
		{"What does `//` return for negative numbers?", []string{"//"}},
		{"Python 中 // 运算符的结果是什么？", []string{"//"}},
		{"How do I read / write files in Python?", nil},
		{"Does Rust unwind on panic ?", nil},
		{"Is a - b the same as a + -b?", nil},
	}
	for _, tt := range tests {
		if got := askedSymbols(tt.q); !slices.Equal(got, tt.want) {
			t.Errorf("askedSymbols(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

// A symbol the question names is the subject the report keeps to: an item about the REPL that does not name "_" is
// a neighbour, however many of the question's other words it repeats (node13-repl-underscore in the quality
// benchmark). A symbol no item names requires nothing.
func TestNamedSymbolsAreRequired(t *testing.T) {
	pool := indexPool([]research.Evidence{
		ev("e1", "q1", "file:///repl.md#L1-L1", "The default evaluator assigns the most recently evaluated expression to the special variable _ (underscore).", 0.9),
		ev("e2", "q1", "file:///repl.md#L2-L2", "The NODE_REPL_HISTORY variable holds the path of the REPL history file.", 0.9),
		ev("e3", "q1", "file:///io.md#L1-L1", "Use read / write mode to open the file for both.", 0.9),
	}, nil)
	names := pool.namedSymbols("What does the _ variable hold in the Node.js REPL?")
	if want := [][]string{{"_"}}; !slices.EqualFunc(names, want, slices.Equal[[]string]) {
		t.Fatalf("namedSymbols = %q, want %q", names, want)
	}
	if !pool.hasName(0, names) || pool.hasName(1, names) || pool.hasName(2, names) {
		t.Errorf("hasName(_) = %v %v %v, want true false false", pool.hasName(0, names), pool.hasName(1, names), pool.hasName(2, names))
	}
	if got := pool.namedSymbols("What does the ? operator do?"); got != nil {
		t.Errorf("namedSymbols of a symbol no item names = %q, want none", got)
	}
	if got := pool.namedSymbols("How do I read / write files?"); got != nil {
		t.Errorf("namedSymbols(read / write) = %q, want none: the slash joins two words", got)
	}
}
