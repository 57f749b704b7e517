package extractive

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/lexical/bilingual"
	"github.com/deepresearch/deepresearch/lexical/synonyms"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

func writeCorpus(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// crossLanguage runs question over a corpus of files and returns the report and the quotes it cites.
func crossLanguage(t *testing.T, files map[string]string, question string) (*research.Report, []research.Evidence) {
	t.Helper()
	ix := buildIndex(t, writeCorpus(t, files))
	rep, err := research.Run(t.Context(), research.Config{Question: question, Roles: New(Config{Searchers: []sources.Searcher{ix}}),
		Fetcher: ix, OutDir: filepath.Join(t.TempDir(), "run")})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]research.Evidence{}
	for _, e := range rep.Evidence {
		byID[e.ID] = e
	}
	var cited []research.Evidence
	for _, c := range rep.Citations {
		for _, id := range c.EvidenceIDs {
			e := byID[id]
			if u, err := url.PathUnescape(e.Source); err == nil {
				e.Source = u // file:///…/%E5%85%89… names 光合作用.md
			}
			cited = append(cited, e)
		}
	}
	return rep, cited
}

// Botany is far from anything the engine was tuned on (and from the hand-written Go glossary the dictionary
// replaced, which had none of these words): a Chinese question must still find the English passage that answers it.
func TestChineseQuestionOverEnglishCorpusAnyDomain(t *testing.T) {
	files := map[string]string{
		"photosynthesis.md": "# Photosynthesis\n\nPhotosynthesis is the process by which green plants convert light energy into chemical energy.\n\n" +
			"## Pigments\n\nChlorophyll absorbs red and blue light most strongly and reflects green light, which is why leaves look green.\n\n" +
			"Carotenoids absorb blue and green light and protect chlorophyll from damage by excess light.\n",
		"volcanoes.md": "# Volcanoes\n\nA volcano is an opening in the crust of a planet through which molten rock escapes.\n\n" +
			"Lava that cools quickly forms basalt, a dark and fine-grained rock.\n",
		"tides.md": "# Tides\n\nTides are caused by the gravitational pull of the moon and the sun on the oceans.\n",
	}
	rep, cited := crossLanguage(t, files, "叶绿素吸收什么光？")
	found := false
	for _, e := range cited {
		if strings.Contains(e.Source, "photosynthesis.md") && strings.Contains(e.Quote, "Chlorophyll absorbs red and blue light") {
			found = true
		}
		if strings.Contains(e.Source, "volcanoes.md") || strings.Contains(e.Source, "tides.md") {
			t.Errorf("cites an unrelated document: %s %q", e.Source, e.Quote)
		}
	}
	if !found {
		t.Fatalf("the report does not cite the sentence that answers the question:\n%s", rep.Markdown)
	}
}

// The reverse: an English question over Chinese documents.
func TestEnglishQuestionOverChineseCorpus(t *testing.T) {
	files := map[string]string{
		"光合作用.md": "# 光合作用\n\n光合作用是绿色植物利用光能，把二氧化碳和水转化为葡萄糖并释放氧气的过程。\n\n" +
			"## 色素\n\n叶绿素主要吸收红光和蓝光，反射绿光，所以叶子看起来是绿色的。\n",
		"火山.md": "# 火山\n\n火山是行星地壳上的开口，熔融的岩石从这里喷出。\n\n冷却很快的熔岩形成玄武岩。\n",
		"潮汐.md": "# 潮汐\n\n潮汐是由月球和太阳对海洋的引力造成的。\n",
	}
	rep, cited := crossLanguage(t, files, "Which light does chlorophyll absorb?")
	found := false
	for _, e := range cited {
		if strings.Contains(e.Source, "光合作用.md") && strings.Contains(e.Quote, "叶绿素主要吸收红光和蓝光") {
			found = true
		}
		if strings.Contains(e.Source, "火山.md") || strings.Contains(e.Source, "潮汐.md") {
			t.Errorf("cites an unrelated document: %s %q", e.Source, e.Quote)
		}
	}
	if !found {
		t.Fatalf("the report does not cite the sentence that answers the question:\n%s", rep.Markdown)
	}
}

// A Chinese question is cut at the words the dictionary knows as question words (谁, 何时, 哪里 are in no list
// here) and at grammar characters (是 "to be", 它 "it"); a preposition ends a phrase only where the dictionary
// reads it as a word of its own (对 in 对延迟, not in 对象; 把 in 把日志文件, not in 把握).
func TestSplitChineseQuestionByDictionary(t *testing.T) {
	for q, want := range map[string][]string{
		"负载均衡器何时丢弃空闲连接？":        {"负载均衡器", "丢弃空闲连接"},
		"谁负责签发证书？":              {"负责签发证书"},
		"哪里保存日志文件？":             {"保存日志文件"},
		"对象存储对延迟有什么影响？":         {"对象存储", "延迟"},
		"冷却塔是怎样工作的？它耗水吗？":       {"冷却塔", "工作", "耗水"},
		"现在的光刻机能达到什么精度？":        {"现在", "光刻机", "达到", "精度"},
		"在 Kubernetes 中如何滚动更新？": {"Kubernetes 中", "滚动更新"},
		// The object marker 把 and the passive 被 end a phrase; 把握 and 被动 are words.
		"如何把日志文件压缩？": {"日志文件压缩"},
		"文件被删除后会怎样？": {"文件", "删除后"},
		"如何把握发布时机？":  {"把握发布时机"},
		"被动连接有什么缺点？": {"被动连接", "缺点"},
	} {
		ph, _ := splitPhrases(q)
		var got []string
		for _, p := range ph {
			got = append(got, p.Text)
		}
		if strings.Join(got, "/") != strings.Join(want, "/") {
			t.Errorf("splitPhrases(%q) = %q, want %q", q, got, want)
		}
	}
}

// The renderings of a translated word are chosen by the sources: over an English corpus that writes about
// columns, 列 is "column" (the dictionary alone says "to arrange"). Without a vocabulary the dictionary's choice
// stands.
func TestRenderingsChosenByTheSources(t *testing.T) {
	en := buildIndex(t, writeCorpus(t, map[string]string{
		"tables.md": "# Tables\n\nA table has columns. Each column has a name and a data type.\n\n" +
			"A column can carry a default value. Adding a column to a table is cheap.\n",
		"rows.md": "# Rows\n\nA row holds one value for each column of the table.\n",
	}))
	if got := translateFor(newVocabulary([]sources.Searcher{en}), "列"); !strings.Contains(got, "column") {
		t.Errorf("translateFor(列) over a corpus about columns = %q, want column", got)
	}
	if got := translateFor(nil, "列"); strings.Contains(got, "column") {
		t.Errorf("translateFor(nil, 列) = %q: the test needs a dictionary whose first choice is not column", got)
	}
}

// Two words the dictionary renders one by one are rendered together by the phrases of the sources, counted by the
// real index: over a manual that writes "foreign key", 外键 (外 "outside" + 键 "key") is searched, and focused on
// in the report, as "foreign key"; over one that never pairs them, as the characters' own best renderings.
func TestPhrasesChosenByTheSources(t *testing.T) {
	manual := buildIndex(t, writeCorpus(t, map[string]string{
		"constraints.md": "# Constraints\n\nA foreign key constraint names the referenced table.\n",
		"deleting.md":    "# Deleting\n\nDeleting a referenced row fails while a foreign key points at it.\n",
		"cascade.md":     "# Cascade\n\nWith ON DELETE CASCADE the foreign key deletes the referencing rows too.\n",
		"keys.md":        "# Keys\n\nEach key is unique. The outside world never sees a key.\n",
		"views.md":       "# Views\n\nA view is seen from outside the schema; its key is its query.\n",
	}))
	plain := translateFor(nil, "外键")
	if strings.Contains(plain, "foreign") {
		t.Fatalf("translateFor(nil, 外键) = %q: the test needs a dictionary that does not choose foreign", plain)
	}
	v := newVocabulary([]sources.Searcher{manual})
	got := translateFor(v, "外键")
	if !strings.HasPrefix(got, "foreign") || !strings.HasSuffix(got, " key") {
		t.Errorf("translateFor(外键) over a manual of foreign keys = %q, want foreign first", got)
	}
	core := research.SubQuestion{ID: "q1", Question: "外键是什么？", Queries: []string{"外键"}}
	found := false
	for _, va := range focusVariants(t.Context(), core, v) {
		for _, u := range va {
			found = found || slices.Contains(u, "foreign")
		}
	}
	if !found {
		t.Errorf("focusVariants(外键) over the manual = %v, want the phrase's rendering foreign", focusVariants(t.Context(), core, v))
	}
	apart := buildIndex(t, writeCorpus(t, map[string]string{
		"door.md":  "# Door\n\nA key opens the door. Foreign visitors come from outside.\n",
		"ring.md":  "# Ring\n\nOutside the ring, a key; foreign coins.\n",
		"coins.md": "# Coins\n\nThe key is outside; the coins are foreign.\n",
	}))
	if got := translateFor(newVocabulary([]sources.Searcher{apart}), "外键"); strings.HasPrefix(got, "foreign|") && !strings.HasPrefix(plain, "foreign") {
		t.Errorf("translateFor(外键) over documents that never write the phrase = %q: a pairing they do not use was chosen", got)
	}
}

// A compound synonym offers its head: WordNet has "male parent" for "father", and over a manual that writes
// "parent table" the dictionary's 父 "father" beside 表 "table" becomes "parent" (the documents never write "father
// table"). The thesaurus gives only the head, never the compound or the word itself.
func TestCompoundSynonymOffersItsHead(t *testing.T) {
	related := relatedWords(synonyms.Embedded())
	rs := related("father")
	if !slices.Contains(rs, "parent") {
		t.Fatalf("related(father) = %q, want the head of \"male parent\"", rs)
	}
	if slices.ContainsFunc(rs, func(r string) bool { return strings.Contains(r, " ") || r == "father" }) {
		t.Errorf("related(father) = %q: a compound or the word itself", rs)
	}
	manual := buildIndex(t, writeCorpus(t, map[string]string{
		"inherit.md":  "# Inheritance\n\nAll check constraints on a parent table are inherited by its child tables.\n",
		"alter.md":    "# ALTER TABLE\n\nThe parent table must already exist; the child table gets its columns.\n",
		"tables.md":   "# Tables\n\nA table has columns. Each table has a name.\n",
		"children.md": "# Partitions\n\nA partition is a child table of the parent table.\n",
	}))
	if got := translateFor(newVocabulary([]sources.Searcher{manual}), "父表"); !strings.Contains(got, "parent") {
		t.Errorf("translateFor(父表) over a manual of parent tables = %q, want parent", got)
	}
}

// An English question gets a Chinese rendering of its first query only where it can find something: over English
// documents the rendering could match only the words it leaves in English, and its hits would be noise.
func TestChineseRenderingOnlyOverChineseSources(t *testing.T) {
	const q = "interrupted run"
	zh := translateZH(q)
	if zh == "" || !hasCJK(zh) {
		t.Fatalf("translateZH(%q) = %q: the test needs a Chinese rendering", q, zh)
	}
	var words []string
	for _, f := range strings.Fields(zh) {
		for _, w := range strings.Split(f, bilingual.Alternatives) {
			if hasCJK(w) {
				words = append(words, w)
			}
		}
	}
	english := buildIndex(t, writeCorpus(t, map[string]string{
		"resume.md": "# Resume\n\nAn interrupted run continues where it stopped.\n",
		"runs.md":   "# Runs\n\nEach run keeps its folder.\n",
	}))
	chinese := buildIndex(t, writeCorpus(t, map[string]string{
		"resume.md": "# 继续\n\n" + words[0] + "的 run 从停下的地方继续。\n",
		"runs.md":   "# 运行\n\n每个运行都有自己的文件夹。\n",
	}))
	for _, tt := range []struct {
		name string
		v    *vocabulary
		want string
	}{
		{"English documents", newVocabulary([]sources.Searcher{english}), ""},
		{"Chinese documents", newVocabulary([]sources.Searcher{chinese}), zh},
		{"both", newVocabulary([]sources.Searcher{english, chinese}), zh},
		{"no vocabulary (the web)", nil, zh},
		{"sources that cannot count", newVocabulary([]sources.Searcher{fakeSearcher{name: "web"}}), zh},
	} {
		if got := searchableZH(tt.v, q); got != tt.want {
			t.Errorf("%s: searchableZH(%q) = %q, want %q", tt.name, q, got, tt.want)
		}
	}
	plan, err := New(Config{Searchers: []sources.Searcher{english}}).Planner.Plan(t.Context(), "How do I continue an interrupted run?")
	if err != nil {
		t.Fatal(err)
	}
	for _, sq := range plan.SubQuestions {
		for _, x := range sq.Queries {
			if hasCJK(x) {
				t.Errorf("over English documents the plan searches %q (sub-question %q)", x, sq.Question)
			}
		}
	}
}

// An English question over Chinese documents is searched and judged in the words the documents write, not only the
// dictionary's first choice: "port" is 港口 (a harbour) in the dictionary, 端口 in a software guide, and the guide's
// answer is found and cited, the harbour page never.
func TestEnglishQuestionInTheSourcesChineseWords(t *testing.T) {
	files := map[string]string{
		"服务.md": "# 服务\n\n服务默认在端口 8080 上监听请求。\n\n端口被占用时，服务启动失败，错误信息说明是哪个端口。\n\n" +
			"用 --addr 可以换一个端口。\n",
		"日志.md": "# 日志\n\n日志写到标准错误，端口和地址都会记下来。\n",
		"港口.md": "# 港口\n\n这个港口是世界上最繁忙的集装箱港口之一，每年有上万艘船停靠。\n",
	}
	if plain := translateZH("port"); strings.Contains(plain, "端口") {
		t.Fatalf("translateZH(port) = %q: the test needs a dictionary whose first choice is not 端口", plain)
	}
	ix := buildIndex(t, writeCorpus(t, files))
	if got := usedZH(newVocabulary([]sources.Searcher{ix}), "port"); !strings.Contains(got, "端口") {
		t.Errorf("usedZH(port) over the guide = %q, want 端口", got)
	}
	rep, cited := crossLanguage(t, files, "What happens when the port is occupied?")
	found := false
	for _, e := range cited {
		if strings.Contains(e.Quote, "端口被占用时") {
			found = true
		}
		if strings.Contains(e.Source, "港口.md") {
			t.Errorf("cites the harbour page: %q", e.Quote)
		}
	}
	if !found {
		t.Fatalf("the report does not cite the sentence that answers the question:\n%s", rep.Markdown)
	}
}
