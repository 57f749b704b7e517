package bilingual

import (
	"bytes"
	"compress/gzip"
	"hash/crc32"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func dict(t testing.TB) *Dict {
	t.Helper()
	d, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func texts(segs []Segment) []string {
	var out []string
	for _, s := range segs {
		out = append(out, s.Text)
	}
	return out
}

func TestEmbeddedDictionary(t *testing.T) {
	d := dict(t)
	if len(d.words) < 100000 {
		t.Fatalf("%d headwords; CC-CEDICT has over 100,000", len(d.words))
	}
	// Simplified and traditional headwords both resolve, to the same senses.
	for _, w := range []string{"数据库", "數據庫", "光合作用", "死锁", "死鎖"} {
		if !d.Known(w) {
			t.Errorf("%s is not a headword", w)
		}
	}
	if a, _ := d.English("数据库"); !slices.Equal(a, func() []Term { b, _ := d.English("數據庫"); return b }()) {
		t.Errorf("simplified and traditional renderings differ")
	}
}

func TestSegment(t *testing.T) {
	d := dict(t)
	for in, want := range map[string][]string{
		"数据库事务的隔离级别":                {"数据库", "事务", "的", "隔离", "级别"},
		"负载均衡器如何处理健康检查":             {"负载均衡", "器", "如何", "处理", "健康检查"},
		"光合作用需要什么":                  {"光合作用", "需要", "什么"},
		"Go 的 sync.Map 和 HTTP/2 协议": {"Go", "的", "sync.Map", "和", "HTTP/2", "协议"},
		"用pip3安装numpy包":             {"用", "pip3", "安装", "numpy", "包"},
		"𪚥𪚥 是什么？":                   {"𪚥", "𪚥", "是", "什么"}, // a character CC-CEDICT lacks is a word of its own
		"😀 emoji 🚀 数据库!!!":          {"emoji", "数据库"},
		"":                          nil,
		"  ，。？":                     nil,
		"trailing-dash- and .dot.":  {"trailing-dash", "and", "dot"},
	} {
		if got := texts(d.Segment(in)); !slices.Equal(got, want) {
			t.Errorf("Segment(%q) = %q, want %q", in, got, want)
		}
	}
	segs := d.Segment("吗的了")
	for _, s := range segs {
		if !s.CJK || !s.Known || !s.Function {
			t.Errorf("%+v: a particle is a known function word", s)
		}
	}
}

// Words of domains the old hand-written glossary (Go programming) never had.
func TestToEnglishAnyVocabulary(t *testing.T) {
	d := dict(t)
	for in, want := range map[string][]string{
		"光合作用":     {"photosynthesis"},
		"数据库事务":    {"database", "transaction"},
		"负载均衡":     {"load", "balancing"},
		"死锁":       {"deadlock"},
		"哈希 索引":    {"hash", "index"},
		"信噪比":      {"signal", "noise"},
		"叶绿素吸收红光吗": {"chlorophyll", "absorb"},
	} {
		got, n := d.ToEnglish(in)
		if n == 0 {
			t.Errorf("ToEnglish(%q) rendered nothing", in)
			continue
		}
		for _, w := range want {
			if !slices.Contains(strings.FieldsFunc(got, func(r rune) bool { return r == ' ' || r == '|' }), w) {
				t.Errorf("ToEnglish(%q) = %q, lacks %q", in, got, w)
			}
		}
	}
}

func TestToEnglishPartialAndFunctionWords(t *testing.T) {
	d := dict(t)
	// Function words render as nothing: a question made of them alone is not translated.
	if got, n := d.ToEnglish("的了吗呢"); got != "" || n != 0 {
		t.Errorf("particles rendered as %q (%d)", got, n)
	}
	// A word the dictionary lacks keeps its spelling; the rest still renders.
	got, n := d.ToEnglish("𪚥𪚥 光合作用 Kubernetes")
	if n != 1 || !strings.Contains(got, "photosynthesis") || !strings.Contains(got, "𪚥") || !strings.Contains(got, "Kubernetes") {
		t.Errorf("partial rendering %q (%d)", got, n)
	}
	// No Chinese at all: nothing to render.
	if got, n := d.ToEnglish("sync.Map Go"); got != "" || n != 0 {
		t.Errorf("Latin-only text rendered as %q", got)
	}
	// Particles carry no sense: CC-CEDICT's "(question particle …)" is markup, not a rendering.
	if terms, known := d.English("吗"); !known || len(terms) != 0 {
		t.Errorf("吗 → %v (known %v)", terms, known)
	}
	// Weights are ordered and in (0, 1]; a single character weighs at most 0.5.
	for _, w := range []string{"数据库", "通道", "锁", "模型"} {
		terms, _ := d.English(w)
		if len(terms) == 0 {
			t.Errorf("%s has no rendering", w)
		}
		for i, x := range terms {
			if x.Weight <= 0 || x.Weight > 1 || i > 0 && x.Weight > terms[i-1].Weight {
				t.Errorf("%s: weights out of order or range: %v", w, terms)
			}
			if utf8.RuneCountInString(w) == 1 && x.Weight > 0.5 {
				t.Errorf("%s: single character weighs %v", w, x.Weight)
			}
		}
	}
}

func TestToChinese(t *testing.T) {
	d := dict(t)
	for in, want := range map[string]string{
		"photosynthesis":               "光合作用",
		"How is the database indexed?": "数据库",
		"deadlock between two threads": "死锁",
		"chlorophyll in leaves":        "叶绿素",
		"signal-to-noise ratio":        "信噪比",
	} {
		got, n := d.ToChinese(in)
		if n == 0 || !strings.Contains(got, want) {
			t.Errorf("ToChinese(%q) = %q (%d), want %s in it", in, got, n, want)
		}
	}
	// Names of code stay as written; stop words alone render nothing.
	if got, _ := d.ToChinese("sync.Map database"); !strings.Contains(got, "sync.Map") {
		t.Errorf("code name lost: %q", got)
	}
	if got, n := d.ToChinese("the of and what"); got != "" || n != 0 {
		t.Errorf("stop words rendered as %q", got)
	}
}

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func TestLoadRefusesBadData(t *testing.T) {
	for name, data := range map[string][]byte{
		"not gzip":       []byte("数据库\t\t\tdatabase\n"),
		"empty":          gz(t, ""),
		"malformed line": gz(t, "数据库 database\n"),
		"no headword":    gz(t, "\t\t\tdatabase\n"),
		"bad utf-8":      gz(t, "\xff\xfe\t\t\tx\n"),
		"truncated":      gz(t, strings.Repeat("数据库\t\t\tdatabase\n", 100))[:40],
	} {
		if _, err := Load(data); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	d, err := Load(gz(t, "数据库\t數據庫\t\tdatabase\n的\t\tf\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := d.ToEnglish("數據庫的"); got != "database" {
		t.Errorf("small dictionary: %q", got)
	}
}

// Hostile questions: very long, mixed scripts, rare characters, emoji. Each finishes (a test timeout would catch a
// blow-up: segmentation is linear) and renders no more than a bounded amount per input word.
func TestHostileInput(t *testing.T) {
	d := dict(t)
	for name, in := range map[string]string{
		"huge Chinese":   strings.Repeat("数据库事务的隔离级别如何保证一致性", 2000),
		"huge one word":  strings.Repeat("的", 30000),
		"rare and emoji": strings.Repeat("𪚥😀\u200d\U000E0001𠀀", 5000),
		"mixed":          strings.Repeat("Go的sync.Map和HTTP/2协议😀", 2000),
		"invalid utf-8":  strings.Repeat("数据\xff\xfe库", 2000),
	} {
		segs := d.Segment(in)
		en, _ := d.ToEnglish(in)
		zh, _ := d.ToChinese(in)
		if len(segs) > utf8.RuneCountInString(in) {
			t.Errorf("%s: %d segments of %d runes", name, len(segs), utf8.RuneCountInString(in))
		}
		if len(en) > 40*len(segs)+1 || len(zh) > 40*len(segs)+1 {
			t.Errorf("%s: renderings of %d and %d bytes for %d segments", name, len(en), len(zh), len(segs))
		}
	}
}

func BenchmarkToEnglish(b *testing.B) {
	d := dict(b)
	q := "负载均衡器如何处理健康检查，数据库事务的隔离级别有哪些？"
	for b.Loop() {
		d.ToEnglish(q)
	}
}

// BenchmarkCompoundSenses times counting, once per dictionary, the content senses of grammar words that their
// compounds attest, and reports how many words have one.
func BenchmarkCompoundSenses(b *testing.B) {
	words := 0
	for range b.N {
		b.StopTimer()
		d, err := Load(cedictGz)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		words = len(d.compoundSenses())
	}
	b.ReportMetric(float64(words), "words")
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := Load(cedictGz); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzSegment(f *testing.F) {
	d := dict(f)
	for _, s := range []string{"数据库事务的隔离级别", "Go 的 sync.Map", "😀𪚥a.b-c", "\xff数据", "", "执行任意的 Python 语句", "取消一个"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		segs := d.Segment(s)
		// Segments are non-empty pieces of s at their offsets, in order, without white space.
		end := 0
		for _, seg := range segs {
			if seg.Text == "" || strings.ContainsAny(seg.Text, " \t\n") {
				t.Fatalf("bad segment %q of %q", seg.Text, s)
			}
			if seg.Start < end || seg.Start+len(seg.Text) > len(s) || s[seg.Start:seg.Start+len(seg.Text)] != seg.Text {
				t.Fatalf("segment %q at %d is not in order in %q", seg.Text, seg.Start, s)
			}
			end = seg.Start + len(seg.Text)
		}
		d.ToEnglish(s)
		d.ToChinese(s)
		// Documents that answer anything, negative counts included, for words and phrases alike: the rendering
		// has no empty alternative and renders no more Chinese words than there are.
		hostile := func(w string) int { return int(crc32.ChecksumIEEE([]byte(s+w))%7) - 2 }
		// And a thesaurus that answers anything: empty words, phrases, marks, other scripts, the word itself.
		odd := func(w string) []string { return []string{"", w, "a b", Alternatives, "键", s, w + "x", "primary"} }
		for _, related := range []Related{nil, odd} {
			got, n := d.ToEnglishBy(s, hostile, related)
			if strings.Contains(got, Alternatives+Alternatives) || strings.HasPrefix(got, Alternatives) || n > len(segs) || (got == "") != (n == 0) {
				t.Fatalf("ToEnglishBy(%q) = %q, %d over %d segments", s, got, n, len(segs))
			}
		}
	})
}

// ToEnglishUsing keeps the renderings the documents use, the best one when they use none, and every one with no
// vocabulary.
func TestToEnglishUsing(t *testing.T) {
	d := dict(t)
	all, n := d.ToEnglish("集合")
	if n != 1 || !strings.Contains(all, Alternatives) {
		t.Fatalf("ToEnglish(集合) = %q, %d: the test needs several renderings", all, n)
	}
	alts := strings.Split(all, Alternatives)
	last := alts[len(alts)-1]
	if got, _ := d.ToEnglishUsing("集合 Python", func(w string) bool { return w == last }); got != last+" Python" {
		t.Errorf("only %q used: %q", last, got)
	}
	if got, _ := d.ToEnglishUsing("集合", func(string) bool { return false }); got != alts[0] {
		t.Errorf("none used: %q, want %q", got, alts[0])
	}
	if got, _ := d.ToEnglishUsing("集合", nil); got != all {
		t.Errorf("nil vocabulary: %q, want %q", got, all)
	}
}

// A single character one of whose senses is only function words is grammar in a question: 中 in 约束中 ("in the
// constraint") is not rendered "Chinese", 后 ("after") not "empress"; a character without such a sense, and a
// word of two characters, keep their renderings.
func TestGrammaticalCharacters(t *testing.T) {
	d := dict(t)
	for _, c := range []string{"中", "后", "会"} {
		if terms, known := d.English(c); !known || len(terms) != 0 {
			t.Errorf("English(%s) = %v, %v; want a known function word", c, terms, known)
		}
	}
	for _, c := range []string{"锁", "键", "约束", "中文"} {
		if terms, _ := d.English(c); len(terms) == 0 {
			t.Errorf("English(%s) has no rendering", c)
		}
	}
	got, _ := d.ToEnglish("唯一约束中")
	if strings.Contains(got, "chinese") || !strings.Contains(got, "constrain") {
		t.Errorf("ToEnglish(唯一约束中) = %q", got)
	}
}

// counts is a fixture of the documents searched: how many passages use each word; a word not listed is unused.
func counts(m map[string]int) Usage {
	return func(w string) int { return m[w] }
}

// EnglishBy chooses among all of a word's senses by the documents searched: over documents that use "column"
// far more than the language at large does, 列 is "column", though the dictionary lists "to arrange" first; over
// documents that use "arrange" and not "column" it is "arrange". A rendering the documents never use is dropped;
// with none used the dictionary's best stays alone; when the documents cannot tell, the choice is English's.
func TestEnglishByCorpus(t *testing.T) {
	d := dict(t)
	plain, _ := d.English("列")
	if len(plain) == 0 || plain[0].Text == "column" {
		t.Fatalf("English(列) = %v: the test needs a dictionary whose first choice is not column", plain)
	}
	db, _ := d.EnglishBy("列", counts(map[string]int{"column": 900, "row": 700, "arrange": 4, "line": 60}))
	if len(db) == 0 || db[0].Text != "column" {
		t.Errorf("EnglishBy(列) over a database manual = %v, want column first", db)
	}
	for _, tm := range db {
		if tm.Text != "column" && tm.Text != "row" && tm.Text != "arrange" && tm.Text != "line" {
			t.Errorf("EnglishBy(列) kept %q, which the documents never use", tm.Text)
		}
	}
	other, _ := d.EnglishBy("列", counts(map[string]int{"arrange": 30, "line": 2}))
	if len(other) == 0 || other[0].Text != "arrange" {
		t.Errorf("EnglishBy(列) over documents without columns = %v, want arrange first", other)
	}
	if none, _ := d.EnglishBy("列", counts(nil)); len(none) != 1 || none[0].Text != plain[0].Text {
		t.Errorf("EnglishBy(列) used by none = %v, want the dictionary's best alone (%s)", none, plain[0].Text)
	}
	if unknown, _ := d.EnglishBy("列", func(string) int { return -1 }); !slices.Equal(unknown, plain) {
		t.Errorf("EnglishBy(列) unknown = %v, want English's %v", unknown, plain)
	}
	// The whole question: a word the documents use well beyond the language ("tuple") keeps its place.
	got, n := d.ToEnglishBy("Python 中元组和列表的区别", counts(map[string]int{"tuple": 50, "list": 400, "difference": 30}), nil)
	if n == 0 || !strings.Contains(got, "tuple") || strings.Contains(got, "ghost") {
		t.Errorf("ToEnglishBy = %q, want tuple and no ghost festival (中元)", got)
	}
}

// A word of two or more characters whose first sense is only English function words is grammar in a question:
// 什么 ("what"), 如何 ("how"), 可以 ("can") render nothing, not "something", "way" or "possible"; content words
// keep theirs.
func TestGrammaticalWords(t *testing.T) {
	d := dict(t)
	for _, w := range []string{"什么", "如何", "可以", "怎样"} {
		if terms, known := d.English(w); !known || len(terms) != 0 {
			t.Errorf("English(%s) = %v, %v; want a known word with no rendering", w, terms, known)
		}
	}
	for _, w := range []string{"区别", "列表", "元组", "不同"} {
		if terms, _ := d.English(w); len(terms) == 0 {
			t.Errorf("English(%s) has no rendering", w)
		}
	}
	if got, _ := d.ToEnglish("可以用什么如何"); got != "" {
		t.Errorf("ToEnglish of question words = %q, want nothing", got)
	}
}

// Segmentation reads a headword of grammar characters ending in a particle as those characters (中的 is "in …'s",
// not "to hit the target"), keeps one that is grammar itself (什么), and between cuts of equal length prefers the
// one whose lone character is grammar (中 元组, not 中元 组).
func TestSegmentGrammar(t *testing.T) {
	d := dict(t)
	if !d.Known("中的") || !d.Known("中元") {
		t.Fatal("the test needs 中的 and 中元 as headwords")
	}
	for in, want := range map[string][]string{
		"约束中的值":     {"约束", "中", "的", "值"},
		"Python中元组": {"Python", "中", "元组"},
		"列表中的元素是什么": {"列表", "中", "的", "元素", "是", "什么"},
		"目的":        {"目的"}, // 目 is no grammar character: the word stays
	} {
		if got := texts(d.Segment(in)); !slices.Equal(got, want) {
			t.Errorf("Segment(%q) = %q, want %q", in, got, want)
		}
	}
	for _, s := range d.Segment("中的") {
		if !s.Function {
			t.Errorf("%+v: grammar in a question", s)
		}
	}
}

// ChineseBy chooses among the headwords of an English word by the Chinese documents searched: "interrupt" over
// documents that write 中断 is 中断, which the dictionary alone ranks below 打岔; a word too general for the
// dictionary alone ("continue", many headwords) is rendered only by the documents, and stays English when they
// use none of its headwords.
func TestChineseByCorpus(t *testing.T) {
	d := dict(t)
	plain := d.Chinese("interrupt")
	if len(plain) == 0 || plain[0].Text == "中断" {
		t.Fatalf("Chinese(interrupt) = %v: the test needs a dictionary whose first choice is not 中断", plain)
	}
	docs := counts(map[string]int{"中断": 12, "继续": 30, "运行": 80})
	if got := d.ChineseBy("interrupt", docs); len(got) == 0 || got[0].Text != "中断" {
		t.Errorf("ChineseBy(interrupt) = %v, want 中断", got)
	}
	if got := d.Chinese("continue"); len(got) != 0 {
		t.Fatalf("Chinese(continue) = %v: the test needs a word too general for the dictionary alone", got)
	}
	if got := d.ChineseBy("continue", docs); len(got) == 0 || got[0].Text != "继续" {
		t.Errorf("ChineseBy(continue) = %v, want 继续", got)
	}
	if got := d.ChineseBy("continue", counts(nil)); len(got) != 0 {
		t.Errorf("ChineseBy(continue) used by none = %v, want none", got)
	}
	got, n := d.ToChineseBy("continue an interrupted run", docs)
	if n < 2 || !strings.Contains(got, "继续") || !strings.Contains(got, "中断") {
		t.Errorf("ToChineseBy = %q (%d)", got, n)
	}
	if got, _ := d.ToChineseBy("continue an interrupted run", nil); strings.Contains(got, "继续") {
		t.Errorf("ToChineseBy without documents = %q: a general word rendered by the dictionary alone", got)
	}
}

// A question word is a headword whose first sense is an English question word (with at most "ones", "way",
// "kind" beside it); a grammatical word one whose first sense is only function words. Content words are neither.
func TestQuestionAndGrammarWords(t *testing.T) {
	d := dict(t)
	for _, w := range []string{"什么", "如何", "为什么", "是否", "哪些", "何时", "谁", "哪里", "什么样"} {
		if !d.Interrogative(w) {
			t.Errorf("%s is a question word", w)
		}
	}
	for _, w := range []string{"时间", "方法", "可以", "数据库", "𪚥"} {
		if d.Interrogative(w) {
			t.Errorf("%s is no question word", w)
		}
	}
	for _, w := range []string{"是", "它", "能", "可以"} {
		if !d.Grammatical(w) {
			t.Errorf("%s is grammar", w)
		}
	}
	for _, w := range []string{"中", "锁", "区别", "𪚥"} {
		if d.Grammatical(w) {
			t.Errorf("%s is not grammar by its first sense", w)
		}
	}
}

// Adjacent words are rendered together by the phrases the documents use: over a database manual that writes
// "foreign key", 外键 (which the dictionary cuts into 外 "outside" and 键 "key") is "foreign key" first, the
// character's own best rendering after it as the second of its two (so a partial match still searches); written apart
// (外 键, 外，键) the words are not a phrase and keep their own best renderings; documents that use no pairing,
// that cannot tell, or that answer nonsense leave the words as their single renderings would be.
func TestToEnglishByPhrases(t *testing.T) {
	d := dict(t)
	if segs := d.Segment("外键"); len(segs) != 2 {
		t.Fatalf("Segment(外键) = %v: the test needs a dictionary without the compound", segs)
	}
	plain, _ := d.English("外")
	if len(plain) == 0 || plain[0].Text == "foreign" {
		t.Fatalf("English(外) = %v: the test needs a dictionary whose first choice is not foreign", plain)
	}
	manual := map[string]int{"foreign": 300, "key": 900, "outside": 40, "addition": 30, "foreign key": 110, "outside key": 0}
	use := counts(manual)
	got, n := d.ToEnglishBy("外键", use, nil)
	if !strings.HasPrefix(got, "foreign|") || !strings.HasSuffix(got, " key") || strings.Count(got, "|") != 1 || n != 2 {
		t.Errorf("ToEnglishBy(外键) over a database manual = %q, %d; want \"foreign|… key\", 2", got, n)
	}
	var asked []string
	logged := func(w string) int {
		asked = append(asked, w)
		return manual[w]
	}
	for _, apart := range []string{"外 键", "外，键", "外 Go 键"} {
		asked = nil
		got, _ := d.ToEnglishBy(apart, logged, nil)
		if strings.HasPrefix(got, "foreign ") {
			t.Errorf("ToEnglishBy(%q) = %q: words written apart were paired", apart, got)
		}
		for _, w := range asked {
			if strings.Contains(w, " ") {
				t.Errorf("ToEnglishBy(%q) asked about the phrase %q", apart, w)
			}
		}
	}
	alone := map[string]int{}
	for k, v := range manual {
		if !strings.Contains(k, " ") {
			alone[k] = v
		}
	}
	single, _ := d.ToEnglishBy("外 键", counts(alone), nil)
	for name, u := range map[string]Usage{
		"no phrase used": counts(alone),
		"negative":       func(w string) int { return map[bool]int{true: -5, false: alone[w]}[strings.Contains(w, " ")] },
	} {
		if got, _ := d.ToEnglishBy("外键", u, nil); got != single {
			t.Errorf("%s: ToEnglishBy(外键) = %q, want the words' own renderings %q", name, got, single)
		}
	}
	if unknown, _ := d.ToEnglishBy("外键", func(string) int { return -1 }, nil); unknown != func() string { s, _ := d.ToEnglish("外键"); return s }() {
		t.Errorf("documents that cannot tell: ToEnglishBy(外键) = %q, want ToEnglish's", unknown)
	}
	// Each pairing is asked once per pair of words, at most maxPaired × maxPaired of them.
	asked = nil
	d.ToEnglishBy("外键", logged, nil)
	phrases := 0
	for _, w := range asked {
		if strings.Contains(w, " ") {
			phrases++
		}
	}
	if phrases == 0 || phrases > maxPaired*maxPaired {
		t.Errorf("ToEnglishBy(外键) asked %d phrases, want 1 to %d", phrases, maxPaired*maxPaired)
	}
}

// A pairing the documents use settles a word's sense: beside 孤儿 in a book that speaks of "the orphan rule", 规则
// is "rule" alone, not also its other senses "regular" and "fixed" that the book uses elsewhere ("regular
// methods"); the dictionary's best rendering stays beside the paired one when they differ.
func TestToEnglishByPairingSettlesTheSense(t *testing.T) {
	d := dict(t)
	book := counts(map[string]int{"orphan": 4, "rule": 300, "regular": 200, "fixed": 150, "orderly": 3, "regulation": 2, "orphan rule": 4})
	got, _ := d.ToEnglishBy("孤儿规则", book, nil)
	if got != "orphan rule" {
		t.Errorf("ToEnglishBy(孤儿规则) over a book of the orphan rule = %q, want \"orphan rule\"", got)
	}
	alone, _ := d.ToEnglishBy("规则", book, nil)
	if !strings.Contains(alone, "regular") {
		t.Errorf("ToEnglishBy(规则) with nothing to pair = %q: the test needs its other senses kept", alone)
	}
	// A pairing found only through a synonym settles nothing: "see … limits" in a manual's cross references pairs a
	// synonym of 检查 ("examine" → "see") with 约束's "limit", and 约束 still searches "constraint".
	manual := counts(map[string]int{"constraint": 500, "restrict": 100, "limit": 800, "constrain": 5, "restriction": 60,
		"inspect": 10, "examine": 30, "inspection": 5, "see": 900, "see limit": 7})
	related := func(w string) []string { return map[string][]string{"examine": {"see", "analyze"}}[w] }
	got, _ = d.ToEnglishBy("检查约束", manual, related)
	if !strings.HasPrefix(got, "see|") || !strings.Contains(got, "constraint") {
		t.Errorf("ToEnglishBy(检查约束) paired through a synonym = %q, want \"see|…\" with 约束's \"constraint\" kept", got)
	}
}

// Two adjacent words whose renderings the documents write as one English word more often than as two are rendered
// as that word: 表空间 over a manual of tablespaces is "tablespace". Written as two words more often, or not at
// all, they stay two; the word after a joined pair is rendered on its own; and a word is never joined twice.
func TestToEnglishByClosedCompounds(t *testing.T) {
	d := dict(t)
	if segs := d.Segment("表空间"); len(segs) != 2 {
		t.Fatalf("Segment(表空间) = %v: the test needs a dictionary without the compound", segs)
	}
	base := map[string]int{"table": 500, "space": 80, "show": 40, "scope": 10, "limit": 90}
	with := func(extra map[string]int) Usage {
		m := maps.Clone(base)
		maps.Copy(m, extra)
		return counts(m)
	}
	for _, tt := range []struct {
		name, text string
		use        Usage
		want       func(string) bool
	}{
		{"closed more used", "表空间", with(map[string]int{"tablespace": 50, "table space": 3}),
			func(s string) bool { return s == "tablespace" }},
		{"open more used", "表空间", with(map[string]int{"tablespace": 3, "table space": 50}),
			func(s string) bool { return !strings.Contains(s, "tablespace") && strings.Contains(s, "table") }},
		{"neither used", "表空间", with(nil),
			func(s string) bool { return !strings.Contains(s, "tablespace") && strings.Contains(s, "space") }},
		{"a word after the pair", "表空间限制", with(map[string]int{"tablespace": 50}),
			func(s string) bool { return strings.HasPrefix(s, "tablespace ") && strings.Contains(s, "limit") }},
		{"joined once", "表空间表", with(map[string]int{"tablespace": 50, "spacetable": 60}),
			func(s string) bool { return strings.HasPrefix(s, "tablespace ") && !strings.Contains(s, "spacetable") }},
		{"apart", "表 空间", with(map[string]int{"tablespace": 50}),
			func(s string) bool { return !strings.Contains(s, "tablespace") }},
	} {
		if got, n := d.ToEnglishBy(tt.text, tt.use, nil); !tt.want(got) || n == 0 {
			t.Errorf("%s: ToEnglishBy(%s) = %q, %d", tt.name, tt.text, got, n)
		}
	}
}

func TestSenseWord(t *testing.T) {
	d, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		en   string
		want bool
	}{
		{"verify", true}, {"Verify ", true}, {"evidence", true}, {"tuple", true},
		{"verifier", false}, {"verifi", false}, {"", false},
	} {
		if got := d.SenseWord(tt.en); got != tt.want {
			t.Errorf("SenseWord(%q) = %v, want %v", tt.en, got, tt.want)
		}
	}
}

// Where no pairing of two words' own renderings is a phrase the documents use, a synonym of one rendering may be:
// the dictionary renders 主 "owner", "master", "main" …, and over a database manual that writes "primary key" the
// synonym "primary" of "main" becomes 主's first rendering before 键 "key". Without a thesaurus, with one that
// knows no such synonym, or with words written apart, the renderings stay the dictionary's; the phrases asked are
// bounded.
func TestToEnglishByRelatedPhrases(t *testing.T) {
	d := dict(t)
	if segs := d.Segment("主键"); len(segs) != 2 {
		t.Fatalf("Segment(主键) = %v: the test needs a dictionary without the compound", segs)
	}
	manual := map[string]int{"primary key": 120, "primary": 300, "key": 900, "main": 40, "owner": 30, "master": 12, "host": 60}
	var asked []string
	use := func(w string) int {
		asked = append(asked, w)
		return manual[w]
	}
	wordnet := map[string][]string{"main": {"chief", "primary", "principal", "master"}, "key": {"cay", "Florida key"}}
	related := func(w string) []string { return wordnet[w] }
	plain, _ := d.ToEnglishBy("主键", use, nil)
	if strings.Contains(plain, "primary") {
		t.Fatalf("ToEnglishBy(主键) without a thesaurus = %q: the test needs a dictionary without primary for 主", plain)
	}
	asked = nil
	got, n := d.ToEnglishBy("主键", use, related)
	if !strings.HasPrefix(got, "primary|") || !strings.HasSuffix(got, " key") || n != 2 {
		t.Errorf("ToEnglishBy(主键) with synonyms over a database manual = %q, %d; want \"primary|… key\", 2", got, n)
	}
	bound := maxPaired*maxPaired + 2*maxRelatedRenderings*maxRelated*maxRelatedRenderings
	phrases := 0
	for _, w := range asked {
		if strings.Contains(w, " ") {
			phrases++
		}
	}
	if phrases > bound {
		t.Errorf("ToEnglishBy(主键) asked %d phrases, want at most %d", phrases, bound)
	}
	for name, r := range map[string]Related{
		"no synonym":  func(string) []string { return nil },
		"unused ones": func(string) []string { return []string{"chief", "principal"} },
		"odd answers": func(w string) []string { return []string{"", w, "primary key", "|", "键"} },
	} {
		if got, _ := d.ToEnglishBy("主键", use, r); got != plain {
			t.Errorf("%s: ToEnglishBy(主键) = %q, want the dictionary's renderings %q", name, got, plain)
		}
	}
	apart, _ := d.ToEnglishBy("主 键", use, related)
	if strings.HasPrefix(apart, "primary") {
		t.Errorf("ToEnglishBy(主 键) = %q: words written apart were paired through a synonym", apart)
	}
}

// A compound of two characters that share a sense has it, though the dictionary lists others for the compound
// (检查 is "inspection, to examine" in CC-CEDICT, 检 and 查 are both "to check"): the documents' "check" is then
// searched, below the compound's own senses when the documents use neither. Characters that share nothing add
// nothing.
func TestSynonymousCompoundSharesItsCharactersSense(t *testing.T) {
	d, err := Load(gz(t, "检\t檢\t\tto check\tto examine\tto inspect\n查\t\t\tto research\tto check\tto investigate\n"+
		"检查\t檢查\t\tinspection\tto examine\n退\t\t\tto retreat\tto withdraw\n出\t\t\tto go out\tto come out\n"+
		"退出\t\t\tto withdraw\tto abort\tto quit\n"))
	if err != nil {
		t.Fatal(err)
	}
	texts := func(ts []Term) []string {
		var out []string
		for _, x := range ts {
			out = append(out, x.Text)
		}
		return out
	}
	plain, _ := d.English("检查")
	if got := texts(plain); len(got) == 0 || got[0] != "inspection" {
		t.Errorf("English(检查) = %v, want its own first sense first", got)
	}
	used, _ := d.EnglishBy("檢查", counts(map[string]int{"check": 800, "constraint": 300}))
	if got := texts(used); !slices.Equal(got, []string{"check"}) {
		t.Errorf("EnglishBy(檢查) over a manual that writes check = %v, want [check]", got)
	}
	if got := d.sharedSenses("检查"); len(got) != 1 || got[0][0] != "check" {
		t.Errorf("sharedSenses(检查) = %v, want check alone (查 is not \"to examine\" here)", got)
	}
	for _, w := range []string{"退出", "检", "检查员", "铁查"} {
		if got := d.sharedSenses(w); len(got) != 0 {
			t.Errorf("sharedSenses(%s) = %v, want none", w, got)
		}
	}
	quit, _ := d.EnglishBy("退出", counts(map[string]int{"exit": 500, "out": 900}))
	if got := texts(quit); slices.Contains(got, "out") || slices.Contains(got, "exit") {
		t.Errorf("EnglishBy(退出) = %v: characters that share no sense lent one", got)
	}
}

// The embedded dictionary carries ECDICT's computing renderings where CC-CEDICT has none: 状态码 is a headword
// rendered "status code", and over documents that write "exit", 退出 (CC-CEDICT: "to withdraw; to quit") is
// "exit" among its renderings. They render Chinese into English only: no English word finds a headword of the supplement alone,
// and the supplement's words are no sense words.
func TestComputingSupplement(t *testing.T) {
	d := dict(t)
	if !d.Known("状态码") {
		t.Fatal("状态码 is no headword: the embedded dictionary lacks the computing supplement")
	}
	if got, _ := d.ToEnglish("状态码"); !strings.Contains(got, "status") || !strings.Contains(got, "code") {
		t.Errorf("ToEnglish(状态码) = %q, want status code", got)
	}
	if ts, _ := d.English("退出"); len(ts) == 0 || ts[0].Text == "exit" {
		t.Errorf("English(退出) = %v: CC-CEDICT's own sense comes first where the documents cannot tell", ts)
	}
	nodeDocs := counts(map[string]int{"exit": 400, "quit": 3, "abort": 20, "withdraw": 0, "log": 90})
	if ts, _ := d.EnglishBy("退出", nodeDocs); !slices.ContainsFunc(ts, func(t Term) bool { return t.Text == "exit" }) {
		t.Errorf("EnglishBy(退出) over documents that write exit = %v, want exit among them", ts)
	}
	for _, en := range []string{"status code", "global variable", "exit"} {
		for _, term := range d.Chinese(en) {
			if w := d.words[term.Text]; w == nil || w.supplement {
				t.Errorf("Chinese(%q) gives %s, a headword of the supplement alone", en, term.Text)
			}
		}
	}
	if d.SenseWord("verifier") {
		t.Error("verifier, a word of the supplement alone, is a sense word")
	}
	for _, w := range d.words {
		if !w.supplement {
			continue
		}
		for _, s := range w.senses {
			if !supplementary(s) {
				t.Fatalf("%s: sense %q of a supplement headword is not marked", w.text, s)
			}
		}
	}
}

// A synonym is sought for the dictionary's own renderings, not for the supplement's: 普通 is "common, ordinary"
// in CC-CEDICT and "normal" in ECDICT's computing terms, and WordNet's "rule" for "normal" would pair with "view"
// in a database manual that writes "view rules"; "plain" for "common" still may.
func TestNoSynonymOfASuppliedRendering(t *testing.T) {
	d := dict(t)
	if w := d.words["普通"]; w == nil || !slices.Contains(w.senses, SupplementMark+"normal") || !slices.Contains(w.senses, "common") {
		t.Fatalf("普通 = %+v: the test needs common from CC-CEDICT and normal from the supplement", w)
	}
	use := counts(map[string]int{"normal": 200, "common": 60, "ordinary": 5, "view": 900, "rule view": 80, "plain view": 30, "rule": 400, "plain": 40})
	supplied := func(string) []string { return []string{"rule"} }
	if got, _ := d.ToEnglishBy("普通视图", use, func(w string) []string {
		if w == "normal" {
			return supplied(w)
		}
		return nil
	}); strings.Contains(got, "rule") {
		t.Errorf("ToEnglishBy(普通视图) = %q: a synonym of the supplement's normal was paired", got)
	}
	if got, _ := d.ToEnglishBy("普通视图", use, func(w string) []string {
		if w == "common" {
			return []string{"plain"}
		}
		return nil
	}); !strings.Contains(got, "plain") {
		t.Errorf("ToEnglishBy(普通视图) = %q: the synonym plain of the dictionary's own common was not paired", got)
	}
}

// Noun tells a word the dictionary writes on its own as a sense ("command", "clause") from one it knows only after
// "to" ("to create"), and from one it never writes.
func TestNoun(t *testing.T) {
	d := dict(t)
	for en, want := range map[string]bool{"command": true, "Clause": true, "type": true, "create": false, "smallint": false, "": false} {
		if got := d.Noun(en); got != want {
			t.Errorf("Noun(%q) = %v, want %v", en, got, want)
		}
	}
}

// A word of two or more characters that is grammar in a question (its first sense is function words) is rendered
// only by a content sense its compounds attest, and only when the documents use that rendering before the word it
// modifies as a collocation: 任意的 Python 语句 over a FAQ that writes "arbitrary Python" is "arbitrary Python"; with
// no such phrase, with the phrase at chance (a rendering used everywhere), or without documents, 任意 ("any") is
// grammar; and 可以 ("can"), whose "possible" no compound uses, stays grammar whatever the documents write.
func TestToEnglishByConditionalGrammar(t *testing.T) {
	d := dict(t)
	const q = "执行任意的 Python 语句"
	if got, _ := d.ToEnglish(q); strings.Contains(got, "arbitrary") {
		t.Fatalf("ToEnglish(%s) = %q: without documents 任意 is grammar", q, got)
	}
	if terms, known := d.English("任意"); !known || len(terms) != 0 {
		t.Errorf("English(任意) = %v, %v; want a known word with no rendering", terms, known)
	}
	faq := map[string]int{"execute": 40, "arbitrary": 38, "random": 10, "python": 900, "statement": 200,
		"possible": 300, "run": 200, "arbitrary python": 3, "possible execute": 40, "possible python": 40}
	if got, _ := d.ToEnglishBy(q, counts(faq), nil); !strings.Contains(got, " arbitrary Python ") {
		t.Errorf("ToEnglishBy(%s) over a FAQ that writes \"arbitrary Python\" = %q, want \"… arbitrary Python …\"", q, got)
	}
	for name, change := range map[string]map[string]int{
		"no phrase":        {"arbitrary python": 0},
		"phrase at chance": {"arbitrary": 5000},
	} {
		use := maps.Clone(faq)
		maps.Copy(use, change)
		if got, _ := d.ToEnglishBy(q, counts(use), nil); strings.Contains(got, "arbitrary") || strings.Contains(got, "random") {
			t.Errorf("%s: ToEnglishBy(%s) = %q: 任意 should be grammar", name, q, got)
		}
	}
	// A text cut before the head (a sub-question's subject): the word before stands in for it.
	cut := maps.Clone(faq)
	cut["execute arbitrary"] = 2
	if got, _ := d.ToEnglishBy("执行任意", counts(cut), nil); !strings.HasPrefix(got, "execute") || !strings.HasSuffix(got, " arbitrary") {
		t.Errorf("ToEnglishBy(执行任意) over a FAQ that writes \"execute arbitrary\" = %q, want \"execute… arbitrary\"", got)
	}
	// The word after is the head: a phrase with the word before does not settle a word that has one (取消一个
	// context is not "call one" because source code calls one thing or another).
	src := counts(map[string]int{"cancel": 300, "call": 900, "one": 94, "context": 800, "call one": 7})
	if got, _ := d.ToEnglishBy("取消一个 context", src, nil); strings.Contains(got, "one") || !strings.HasPrefix(got, "cancel") {
		t.Errorf("ToEnglishBy(取消一个 context) = %q, want 一个 as grammar and 取消 as \"cancel…\"", got)
	}
	for _, w := range []string{"可以", "如果", "只能"} {
		if got, _ := d.ToEnglishBy(w+"执行 Python", counts(faq), nil); strings.Count(got, " ") != 1 {
			t.Errorf("ToEnglishBy(%s执行 Python) = %q: %s should be grammar", w, got, w)
		}
	}
	att := d.compoundSenses()
	if !att[d.words["任意"]]["arbitrari"] {
		t.Errorf("compoundSenses(任意) = %v, want the stem of \"arbitrary\"", att[d.words["任意"]])
	}
	for _, w := range []string{"可以", "如果", "什么"} {
		if len(att[d.words[w]]) != 0 {
			t.Errorf("compoundSenses(%s) = %v, want none", w, att[d.words[w]])
		}
	}
}

// A pairing of a word's own renderings outranks one found through a synonym, however much more the documents use
// the synonym's: 执行 between 里 (whose senses include the unit of length) and 脚本 is "execute" from "execute
// script" first, then "test" from "unit test", which pairs 里's "unit" with a synonym of "run".
func TestToEnglishByOwnPairingBeforeSynonyms(t *testing.T) {
	d := dict(t)
	faq := counts(map[string]int{"execute": 40, "script": 300, "unit": 30, "inside": 60, "test": 90, "run": 200,
		"implement": 30, "execute script": 2, "unit test": 7})
	related := func(w string) []string { return map[string][]string{"run": {"test", "trial"}}[w] }
	got, _ := d.ToEnglishBy("里执行脚本", faq, related)
	if f := strings.Fields(got); len(f) != 3 || !strings.HasPrefix(f[1], "execute|test") {
		t.Errorf("ToEnglishBy(里执行脚本) = %q, want 执行 rendered \"execute|test…\"", got)
	}
	plain, _ := d.ToEnglishBy("里执行", faq, related)
	if f := strings.Fields(plain); len(f) != 2 || !strings.HasPrefix(f[1], "test") {
		t.Errorf("ToEnglishBy(里执行) = %q: the test needs the synonym's pairing found when nothing else pairs", plain)
	}
}

// A localizer after a Latin word makes a place of it ("Rust 里": in Rust) and renders as nothing; the same
// character inside a Chinese word or before one keeps its senses (里面 "inside").
func TestToEnglishByLocalizerAfterALatinWord(t *testing.T) {
	d := dict(t)
	for q, unwanted := range map[string]string{"Rust 里用 use 引入函数": "lining", "Node.js 里开启了 keepAlive": "lining"} {
		got, n := d.ToEnglishBy(q, nil, nil)
		if n == 0 || strings.Contains(got, unwanted) {
			t.Errorf("ToEnglishBy(%q) = %q (%d): the localizer rendered as a noun", q, got, n)
		}
	}
	if got, _ := d.ToEnglishBy("文件里面", nil, nil); !strings.Contains(got, "inside") {
		t.Errorf("ToEnglishBy(文件里面) = %q, want inside", got)
	}
}
