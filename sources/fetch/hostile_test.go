package fetch

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/deepresearch/deepresearch/sources/internal/testpdf"
)

// TestHostileBodies: a page that lies about its type or carries a malformed PDF gets a clear error for that
// URL; nothing binary is returned as text, nothing hangs.
func TestHostileBodies(t *testing.T) {
	elf := append([]byte("\x7fELF\x02\x01\x01\x00"), bytes.Repeat([]byte{0, 1, 2, 3}, 4096)...)
	loop := testpdf.Raw("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R] /Count 1 >>")
	bodies := map[string]struct {
		ctype string
		body  []byte
		want  string
	}{
		"/binary.txt":  {"text/plain; charset=utf-8", elf, "holds binary data"},
		"/binary.html": {"text/html", elf, "holds binary data"},
		"/binary.json": {"application/json", elf, "holds binary data"},
		"/loop.pdf":    {"application/pdf", loop, "nested more than"},
		"/loop":        {"text/plain", loop, "nested more than"}, // sniffed as PDF whatever the label
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		b := bodies[r.URL.Path]
		w.Header().Set("Content-Type", b.ctype)
		w.Write(b.body)
	})
	f := newFetcher(t, Config{AllowLoopback: true})
	for p, b := range bodies {
		doc, err := f.Fetch(t.Context(), srv.URL+p)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: doc = %v, err = %v; want an error mentioning %q", p, doc, err, b.want)
		}
	}
}

// TestMislabelledCharsets: pages whose bytes are in a legacy encoding but whose Content-Type says UTF-8 (or says
// nothing) are decoded by guessing from the bytes, as browsers do, instead of coming out as replacement
// characters; a UTF-8 page with one stray byte stays UTF-8.
func TestMislabelledCharsets(t *testing.T) {
	ja := "メモリモデルは、あるゴルーチンでの変数の読み取りが、別のゴルーチンでの同じ変数への書き込みによって生成された値を観測できることが保証される条件を規定します。データ競合のあるプログラムの動作は未定義です。"
	ko := "메모리 모델은 한 고루틴에서 변수를 읽을 때 다른 고루틴에서 같은 변수에 쓴 값을 관찰할 수 있음이 보장되는 조건을 지정합니다. 데이터 경쟁이 있는 프로그램의 동작은 정의되지 않습니다."
	zh := "内存模型规定了在什么条件下，一个协程对变量的读取能够观察到另一个协程对同一变量的写入所产生的值。存在数据竞争的程序，其行为是未定义的。"
	fr := "Le modèle mémoire précise à quelles conditions la lecture d'une variable dans une goroutine peut observer la valeur écrite dans la même variable par une autre goroutine. Un programme où règne une course aux données a un comportement indéfini; même les opérations élémentaires ne sont pas garanties."
	page := func(title, text string) string {
		return "<html><head><title>" + title + "</title></head><body><article><h1>" + title + "</h1><p>" + text +
			"</p><p>" + text + "</p></article></body></html>"
	}
	pages := map[string]struct {
		enc   encoding.Encoding
		ctype string
		text  string
	}{
		"/shift-jis":    {japanese.ShiftJIS, "text/html; charset=utf-8", ja},
		"/euc-kr":       {korean.EUCKR, "text/html; charset=UTF-8", ko},
		"/gb18030":      {simplifiedchinese.GB18030, "text/html; charset=utf-8", zh},
		"/gbk":          {simplifiedchinese.GBK, "text/html", zh}, // no charset at all
		"/windows-1252": {charmap.Windows1252, "text/html; charset=utf-8", fr},
	}
	bodies := map[string][]byte{}
	for p, pg := range pages {
		b, err := pg.enc.NewEncoder().Bytes([]byte(page("Model", pg.text)))
		if err != nil {
			t.Fatal(p, err)
		}
		bodies[p] = b
	}
	// UTF-8 with one stray byte among hundreds of characters.
	bodies["/utf-8-stray"] = []byte(strings.Replace(page("模型 model", zh+ja), "。", "。\xff", 1))
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if pg, ok := pages[r.URL.Path]; ok {
			w.Header().Set("Content-Type", pg.ctype)
		} else {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		w.Write(bodies[r.URL.Path])
	})
	f := newFetcher(t, Config{AllowLoopback: true})
	for p, pg := range pages {
		doc, err := f.Fetch(t.Context(), srv.URL+p)
		if err != nil {
			t.Fatal(p, err)
		}
		if !strings.Contains(doc.Text, pg.text) || strings.ContainsRune(doc.Text, utf8.RuneError) {
			t.Errorf("%s decoded wrongly:\n%s", p, doc.Text)
		}
	}
	doc, err := f.Fetch(t.Context(), srv.URL+"/utf-8-stray")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.Text, ja) || strings.Count(doc.Text, "\uFFFD") != 1 { // the stray byte
		t.Errorf("UTF-8 with a stray byte:\n%s", doc.Text)
	}
}
