package corpus

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/internal/testpdf"
)

// goDocDir returns $(go env GOROOT)/doc, which every Go installation has.
func goDocDir(t testing.TB) string {
	t.Helper()
	//lint:ignore SA1019 only a fallback for when the go command cannot be run
	root := runtime.GOROOT()
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		root = strings.TrimSpace(string(out))
	}
	dir := filepath.Join(root, "doc")
	if _, err := os.Stat(filepath.Join(dir, "go_mem.html")); err != nil {
		t.Fatalf("Go documentation not found at %s: %v", dir, err)
	}
	return dir
}

func openIndex(t testing.TB, dir string) *Index {
	t.Helper()
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func TestGoDocRanking(t *testing.T) {
	ix := openIndex(t, t.TempDir())
	docs := goDocDir(t)
	st, err := ix.Add(t.Context(), docs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Added < 5 || len(st.Failed) > 0 {
		t.Fatalf("stats = %+v", st)
	}
	t.Logf("indexed %d docs, %d chunks, %.0f docs/s", st.Added, st.Chunks, st.DocsPerSec)
	tests := []struct {
		query, want string
	}{
		{"happens before", "go_mem.html"},
		{"synchronized before", "go_mem.html"},
		{"composite literals", "go_spec.html"},
		{"pseudo-register frame pointer", "asm.html"},
		{"GODEBUG setting", "godebug.md"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			rs, err := ix.Search(t.Context(), tt.query, 5)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) == 0 {
				t.Fatal("no results")
			}
			for i, r := range rs {
				t.Logf("%d %.3f %s %q", i, r.Score, r.URL, r.Title)
			}
			if !strings.Contains(rs[0].URL, "/"+tt.want+"#L") {
				t.Fatalf("top hit %s, want %s", rs[0].URL, tt.want)
			}
		})
	}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestIncrementalReindex(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.md"), "# Alpha\n\nThe aardvark eats ants at night.\n")
	writeFile(t, filepath.Join(root, "b.txt"), "Bravo: the badger digs burrows.\n")
	writeFile(t, filepath.Join(root, "sub", "c.md"), "# Charlie\n\nThe chameleon changes colour.\n")
	writeFile(t, filepath.Join(root, ".hidden", "d.md"), "hidden dragon\n")
	writeFile(t, filepath.Join(root, "e.exe"), "MZ not a document type\n")
	dir := filepath.Join(t.TempDir(), "idx")

	ix := openIndex(t, dir)
	st, err := ix.Add(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 3 || st.Unchanged != 0 || st.Removed != 0 || st.Updated != 0 {
		t.Fatalf("first add: %+v", st)
	}

	// Nothing changed: everything skipped, nothing re-indexed.
	st, err = ix.Add(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 0 || st.Updated != 0 || st.Unchanged != 3 {
		t.Fatalf("second add: %+v", st)
	}

	// Touch without changing content: skipped by content hash.
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "b.txt"), future, future); err != nil {
		t.Fatal(err)
	}
	// Change one, delete one, add one.
	writeFile(t, filepath.Join(root, "a.md"), "# Alpha\n\nThe albatross glides over the ocean.\n")
	os.Chtimes(filepath.Join(root, "a.md"), future.Add(time.Minute), future.Add(time.Minute))
	if err := os.Remove(filepath.Join(root, "sub", "c.md")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "f.md"), "# Foxtrot\n\nThe fox jumps.\n")
	st, err = ix.Add(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 1 || st.Updated != 1 || st.Unchanged != 1 || st.Removed != 1 {
		t.Fatalf("third add: %+v", st)
	}
	if got := ix.DocCount(); got != 3 {
		t.Fatalf("DocCount = %d, want 3", got)
	}

	search := func(ix *Index, q string) []sources.Result {
		t.Helper()
		rs, err := ix.Search(t.Context(), q, 10)
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	if rs := search(ix, "aardvark"); len(rs) != 0 {
		t.Fatalf("old content still found: %+v", rs)
	}
	if rs := search(ix, "albatross"); len(rs) != 1 || !strings.HasSuffix(rs[0].URL, "/a.md#L1-L3") {
		t.Fatalf("albatross: %+v", rs)
	}
	if rs := search(ix, "chameleon"); len(rs) != 0 {
		t.Fatalf("deleted file still found: %+v", rs)
	}
	if rs := search(ix, "dragon"); len(rs) != 0 {
		t.Fatalf("hidden folder indexed: %+v", rs)
	}

	// The index persists: reopen and find the same things, skip everything.
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix2 := openIndex(t, dir)
	if rs := search(ix2, "fox jumps"); len(rs) != 1 || !strings.Contains(rs[0].URL, "f.md#L") {
		t.Fatalf("after reopen: %+v", rs)
	}
	st, err = ix2.Add(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unchanged != 3 || st.Added+st.Updated+st.Removed != 0 {
		t.Fatalf("after reopen add: %+v", st)
	}
}

func TestAddRejectsBadInputWithoutChanges(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.md"), "# Alpha\n\nalpha text\n")
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root, filepath.Join(root, "missing-dir")); err == nil {
		t.Fatal("want error for missing path")
	}
	if ix.DocCount() != 0 {
		t.Fatalf("a failed Add indexed %d files", ix.DocCount())
	}
	if _, err := ix.Add(t.Context(), filepath.Join(root, "x.exe")); err == nil {
		t.Fatal("want error for missing unsupported file")
	}
	writeFile(t, filepath.Join(root, "bad.pdf"), "%PDF-1.4 this is not really a pdf")
	st, err := ix.Add(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 1 || len(st.Failed) != 1 || !strings.HasSuffix(st.Failed[0].Path, "bad.pdf") {
		t.Fatalf("stats = %+v", st)
	}
}

func TestFetchLineAnchorsMatchText(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&b, "Line %d of the manual.\r\n", i)
		if i%20 == 0 {
			b.WriteString("\r\n")
		}
	}
	b.WriteString("The zebra appears only here.\r\n")
	writeFile(t, filepath.Join(root, "manual.txt"), b.String())
	writeFile(t, filepath.Join(root, "page.html"), `<html><head><title>Page Title</title><script>var x = "scriptword";</script></head>
<body><nav>menu</nav><h1>Heading</h1><p>First paragraph about quokkas.</p><p>Second paragraph.</p></body></html>`)
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"zebra", "quokkas"} {
		rs, err := ix.Search(t.Context(), q, 3)
		if err != nil || len(rs) == 0 {
			t.Fatalf("%s: %v %v", q, rs, err)
		}
		doc, err := ix.Fetch(t.Context(), rs[0].URL)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Hash != sources.HashText(doc.Text) {
			t.Fatal("hash does not match text")
		}
		if strings.Contains(doc.Text, "\r") {
			t.Fatal("CR left in text")
		}
		var start, end int
		_, frag, _ := strings.Cut(rs[0].URL, "#")
		if _, err := fmt.Sscanf(frag, "L%d-L%d", &start, &end); err != nil {
			t.Fatalf("anchor %q: %v", frag, err)
		}
		lines := strings.Split(doc.Text, "\n")
		cited := strings.Join(lines[start-1:end], "\n")
		if !strings.Contains(cited, q) {
			t.Fatalf("lines %d-%d of %s do not contain %q:\n%s", start, end, rs[0].URL, q, cited)
		}
		if !strings.Contains(rs[0].Snippet, q) {
			t.Fatalf("snippet %q lacks %q", rs[0].Snippet, q)
		}
	}
	if rs, _ := ix.Search(t.Context(), "scriptword", 3); len(rs) != 0 {
		t.Fatalf("script content indexed: %+v", rs)
	}
	rs, _ := ix.Search(t.Context(), "quokkas", 1)
	if rs[0].Title != "Page Title" {
		t.Fatalf("title = %q", rs[0].Title)
	}

	outside := filepath.Join(t.TempDir(), "secret.txt")
	writeFile(t, outside, "secret")
	for _, tc := range []struct{ url, want string }{
		{FileURL(outside, 0, 0), "outside the indexed folders"},
		{FileURL(filepath.Join(root, "..", filepath.Base(outside)), 0, 0), "outside the indexed folders"},
		{"file:///etc/passwd", "outside the indexed folders"},
		{FileURL(filepath.Join(root, "nope.txt"), 0, 0), "not in the index"},
		{FileURL(filepath.Join(root, "manual.txt"), 9000, 9001), "outside the document"},
		{"http://example.com/", "only file://"},
	} {
		_, err := ix.Fetch(t.Context(), tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Fetch(%s) error = %v, want %q", tc.url, err, tc.want)
		}
	}
}

func TestPDFInCorpus(t *testing.T) {
	root := t.TempDir()
	pdf := testpdf.Build(
		[]string{"Annual report 2024", "Revenue grew in every region."},
		[]string{"Appendix", "The narwhal tusk is a tooth."},
	)
	if err := os.WriteFile(filepath.Join(root, "report.pdf"), pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, t.TempDir())
	st, err := ix.Add(t.Context(), root)
	if err != nil || st.Added != 1 || len(st.Failed) != 0 {
		t.Fatalf("stats %+v, err %v", st, err)
	}
	rs, err := ix.Search(t.Context(), "narwhal tooth", 3)
	if err != nil || len(rs) != 1 {
		t.Fatalf("%+v %v", rs, err)
	}
	doc, err := ix.Fetch(t.Context(), rs[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	if doc.ContentType != "application/pdf" || !strings.Contains(doc.Text, "The narwhal tusk is a tooth.") || !strings.Contains(doc.Text, "Revenue grew") {
		t.Fatalf("doc = %+v", doc)
	}
}

func TestCJK(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "memory.md"), "# 内存模型\n\nGo 内存模型规定了在何种条件下，一个协程对变量的读取能够观察到另一个协程对同一变量的写入。\n同步之前发生的关系是理解并发程序的关键。\n")
	writeFile(t, filepath.Join(root, "weather.md"), "# 天气预报\n\n明天北京有小雨，气温下降，请注意添加衣物。\n")
	writeFile(t, filepath.Join(root, "cooking.md"), "# 烹饪\n\n红烧肉需要小火慢炖两个小时，糖色要炒得恰到好处。\n")
	writeFile(t, filepath.Join(root, "ja.md"), "# 東京\n\n東京タワーは観光客に人気のある場所です。\n")
	writeFile(t, filepath.Join(root, "english.md"), "# Memory\n\nThe memory model describes goroutines.\n")
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ q, want string }{
		{"内存模型", "memory.md"},
		{"协程的读取和写入", "memory.md"},
		{"北京天气", "weather.md"},
		{"红烧肉怎么做", "cooking.md"},
		{"東京タワー", "ja.md"},
		{"memory model goroutine", "english.md"},
	} {
		rs, err := ix.Search(t.Context(), tc.q, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 || !strings.Contains(rs[0].URL, "/"+tc.want+"#L") {
			t.Errorf("%s: got %+v, want %s first", tc.q, rs, tc.want)
		}
	}
	// Bigram indexing must not match unrelated text sharing one character.
	rs, err := ix.Search(t.Context(), "模型", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 {
		t.Errorf("模型: got %d results, want only memory.md: %+v", len(rs), rs)
	}
}

func TestChunkIDsStable(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "paragraph %d has some words to fill the chunk up to its size\n", i)
		if i%7 == 0 {
			b.WriteString("\n")
		}
	}
	a, c := chunkText(b.String(), markdownBoundary), chunkText(b.String(), markdownBoundary)
	if len(a) < 3 || fmt.Sprint(a) != fmt.Sprint(c) {
		t.Fatalf("chunks unstable or too few: %d", len(a))
	}
	lines := splitLines(b.String())
	prevEnd := 0
	for _, ch := range a {
		if ch.start <= prevEnd || ch.end < ch.start {
			t.Fatalf("overlapping or inverted chunk %d-%d after %d", ch.start, ch.end, prevEnd)
		}
		if ch.text != strings.Join(lines[ch.start-1:ch.end], "\n") {
			t.Fatalf("chunk %d-%d text does not match its lines", ch.start, ch.end)
		}
		if len(ch.text) > maxChars+200 {
			t.Fatalf("chunk too long: %d", len(ch.text))
		}
		prevEnd = ch.end
	}
}

func TestDefaultDir(t *testing.T) {
	a, b := DefaultDir("/some/root"), DefaultDir("/some/root/")
	if a != b {
		t.Fatalf("DefaultDir differs for the same folder: %s vs %s", a, b)
	}
	if a == DefaultDir("/other/root") {
		t.Fatal("different roots share an index dir")
	}
	if !strings.Contains(a, filepath.Join("deepresearch", "corpus")) {
		t.Fatalf("DefaultDir = %s", a)
	}
}

// BenchmarkIndex10k indexes 10,000 small Markdown documents and reports
// documents per second.
func BenchmarkIndex10k(b *testing.B) {
	root := b.TempDir()
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu goroutine channel memory model happens before synchronization")
	for i := range 10000 {
		var sb strings.Builder
		fmt.Fprintf(&sb, "# Document %d\n\n", i)
		for j := range 60 {
			sb.WriteString(words[(i*7+j*13)%len(words)])
			if j%12 == 11 {
				sb.WriteString(".\n")
			} else {
				sb.WriteString(" ")
			}
		}
		writeFile(b, filepath.Join(root, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("doc%05d.md", i)), sb.String())
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		ix := openIndex(b, b.TempDir())
		b.StartTimer()
		st, err := ix.Add(context.Background(), root)
		if err != nil {
			b.Fatal(err)
		}
		if st.Added != 10000 {
			b.Fatalf("added %d", st.Added)
		}
		b.ReportMetric(st.DocsPerSec, "docs/s")
		fmt.Printf("indexed %d docs (%d chunks) in %s: %.0f docs/s on GOMAXPROCS=%d\n",
			st.Added, st.Chunks, st.Elapsed.Round(time.Millisecond), st.DocsPerSec, runtime.GOMAXPROCS(0))
		b.StopTimer()
		ix.Close()
		b.StartTimer()
	}
}

func TestSearchWhileAdding(t *testing.T) {
	root := t.TempDir()
	for i := range 200 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("n%03d.md", i)), fmt.Sprintf("# Note %d\n\nThe pangolin note number %d.\n", i, i))
	}
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), filepath.Join(root, "n000.md")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ix.Add(t.Context(), root)
		done <- err
	}()
	for range 20 {
		if _, err := ix.Search(t.Context(), "pangolin", 5); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rs, err := ix.Search(t.Context(), "pangolin", 500)
	if err != nil || len(rs) != 200 {
		t.Fatalf("%d results, %v", len(rs), err)
	}
}

func TestCancelledAddKeepsProgress(t *testing.T) {
	root := t.TempDir()
	for i := range 50 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("n%02d.txt", i)), fmt.Sprintf("okapi %d\n", i))
	}
	dir := t.TempDir()
	ix := openIndex(t, dir)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	st, err := ix.Add(ctx, root)
	if err == nil {
		t.Fatalf("err = %v", err)
	}
	if st.Added != ix.DocCount() {
		t.Fatalf("stats say %d added, index holds %d", st.Added, ix.DocCount())
	}
	st, err = ix.Add(t.Context(), root)
	if err != nil || ix.DocCount() != 50 || st.Added+st.Unchanged != 50 {
		t.Fatalf("resume: %+v, %v, %d docs", st, err, ix.DocCount())
	}
}

func TestOldLayoutIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, legacyManifest), `{"version":1,"roots":["/x"],"files":{"/x/a.md":{"text_sha256":"00"}}}`)
	writeFile(t, filepath.Join(dir, "text", "00", "00.txt"), "old")
	ix := openIndex(t, dir)
	if ix.DocCount() != 0 || len(ix.Roots()) != 0 {
		t.Fatalf("stale manifest kept: %d docs, roots %v", ix.DocCount(), ix.Roots())
	}
	if _, err := os.Stat(filepath.Join(dir, "text")); err == nil {
		t.Fatal("old text directory kept")
	}
}

// A block of code longer than a chunk — a Python class, a long function — is cut where a paragraph opens (a method,
// a group of statements after a blank line), not in the middle of a statement; a block with no blank line is
// still cut at the limit; every line is in exactly one chunk, in order.
func TestLongBlocksSplitAtParagraphs(t *testing.T) {
	var class strings.Builder
	class.WriteString("class Decoder(object):\n    \"\"\"Simple JSON decoder.\"\"\"\n")
	for m := range 12 {
		fmt.Fprintf(&class, "\n    def method_%d(self, s):\n        \"\"\"Decode part %d of s.\"\"\"\n", m, m)
		for l := range 9 {
			fmt.Fprintf(&class, "        value_%d = self.parse_%d(s, %d)  # step %d of the decoding\n", l, l, m, l)
		}
		class.WriteString("        return value_0\n")
	}
	long := strings.Repeat("x = compute(x) + 1  # a statement with no blank line between\n", 200)
	for _, tc := range []struct {
		name, text string
		at         boundary
		starts     func(line string) bool // every chunk after the first starts so
	}{
		{"python class", class.String(), codeBoundary, func(l string) bool { return strings.HasPrefix(l, "    def method_") }},
		{"no blank line", long, codeBoundary, func(l string) bool { return strings.HasPrefix(l, "x = compute") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := splitLines(tc.text)
			chunks := chunkText(tc.text, tc.at)
			if len(chunks) < 2 {
				t.Fatalf("%d chunks", len(chunks))
			}
			next := 1
			for i, c := range chunks {
				if c.start < next || c.end < c.start || c.end-c.start+1 > maxLines || len(c.text) > maxChars+200 {
					t.Fatalf("chunk %d: lines %d-%d (%d chars) after line %d", i, c.start, c.end, len(c.text), next-1)
				}
				for _, l := range lines[next-1 : c.start-1] {
					if strings.TrimSpace(l) != "" {
						t.Fatalf("line %q is in no chunk", l)
					}
				}
				if i > 0 && !tc.starts(lines[c.start-1]) {
					t.Errorf("chunk %d starts mid-block: %q", i, lines[c.start-1])
				}
				next = c.end + 1
			}
		})
	}
}
