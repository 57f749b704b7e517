package bilingual

import (
	"bytes"
	"compress/gzip"
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

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := Load(cedictGz); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzSegment(f *testing.F) {
	d := dict(f)
	for _, s := range []string{"数据库事务的隔离级别", "Go 的 sync.Map", "😀𪚥a.b-c", "\xff数据", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		segs := d.Segment(s)
		// Segments are non-empty pieces of s, in order, without white space.
		rest := s
		for _, seg := range segs {
			if seg.Text == "" || strings.ContainsAny(seg.Text, " \t\n") {
				t.Fatalf("bad segment %q of %q", seg.Text, s)
			}
			i := strings.Index(rest, seg.Text)
			if i < 0 {
				t.Fatalf("segment %q not in order in %q", seg.Text, s)
			}
			rest = rest[i+len(seg.Text):]
		}
		d.ToEnglish(s)
		d.ToChinese(s)
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
