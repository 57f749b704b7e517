package export

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources/corpus"
	"github.com/deepresearch/deepresearch/sources/extract"
)

// sampleReport is a report as the synthesizer renders one: a web source, a local HTML file and a Markdown file,
// a Sources list and a citation list with text-fragment and stored-text links — and text from hostile sources.
func sampleReport(t testing.TB, zh bool) *research.Report {
	dir := t.TempDir()
	q := "How do LSM trees handle deletes?"
	body := "Deletes write a **tombstone** [1]. Compaction drops it later [2, 3]; see `compaction` and [7].\n\n" +
		"A <script>alert(1)</script> [bad](javascript:alert(1)) link.\n"
	lang := "en"
	if zh {
		q = "LSM 树如何处理删除？"
		body = "删除操作写入墓碑标记 [1]。合并过程会在之后清除它 [2, 3]。\n\n**加粗的中文** 与 *斜体*。\n"
		lang = "zh"
	}
	ev := []research.Evidence{
		{ID: "e1", Quote: "A delete writes a tombstone, which hides older values until compaction removes both.", Source: "https://example.com/lsm", Title: "LSM & trees"},
		{ID: "e2", Quote: "Compaction discards tombstones once no older value remains.", Source: "file:///docs/compaction.html#L12-L12", Title: "Compaction"},
		{ID: "e3", Quote: "tombstones are dropped", Source: "file:///docs/notes.md#L3-L3"},
	}
	md := "# " + q + "\n\n" + body + "\n## Sources\n\n" +
		"1. [LSM & trees](https://example.com/lsm) — cited as [1]\n" +
		"2. [Compaction](file:///docs/compaction.html) — cited as [2]\n" +
		"3. [notes.md](file:///docs/notes.md) — cited as [3]\n\n## Citations\n\n"
	for i, e := range ev {
		line := "- [" + string(rune('1'+i)) + "] “" + e.Quote + "” — " + e.Source + " (" + e.ID + ")"
		if u, ok := research.TextFragmentURL(e.Source, e.Quote); ok {
			line += " · [at the quote](" + u + ")"
		}
		if i == 1 {
			line += " · [text read, lines 12–12](docs/abc123.txt#L12-L12)"
		}
		md += line + "\n"
	}
	return &research.Report{RunID: "20261201-abc", Question: q, Language: lang, Engine: "extractive", Markdown: md,
		Citations: []research.Citation{{N: 1, EvidenceIDs: []string{"e1"}}, {N: 2, EvidenceIDs: []string{"e2"}}, {N: 3, EvidenceIDs: []string{"e3"}}},
		Evidence:  ev, Dir: dir, Created: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Finished: time.Date(2026, 12, 1, 10, 5, 0, 0, time.UTC),
		Sources: []research.SourceRef{{URL: "https://example.com/lsm", Title: "LSM & trees"}, {URL: "file:///docs/compaction.html"}, {URL: "file:///docs/notes.md"}}}
}

func TestRegistry(t *testing.T) {
	rep := sampleReport(t, false)
	seen := map[string]bool{}
	for _, f := range Formats() {
		if f.Ext() == "" || f.ContentType() == "" || f.Describe() == "" || seen[f.Ext()] {
			t.Errorf("format %s: ext %q, type %q, description %q (each unique and set)", f, f.Ext(), f.ContentType(), f.Describe())
		}
		seen[f.Ext()] = true
		if g, err := Parse(" " + strings.ToUpper(string(f)) + " "); err != nil || g != f {
			t.Errorf("Parse(%s) = %s, %v", f, g, err)
		}
		if f == PDFFile {
			continue // TestPDF prints one
		}
		b, err := Render(t.Context(), rep, f, nil)
		if err != nil || len(b) == 0 {
			t.Errorf("Render %s: %d bytes, %v", f, len(b), err)
		}
		if !f.Binary() && !bytes.Contains(b, []byte("example.com/lsm")) {
			t.Errorf("%s does not name the first source:\n%s", f, b)
		}
	}
	if f, err := Parse("markdown"); err != nil || f != Markdown {
		t.Errorf("Parse(markdown) = %s, %v", f, err)
	}
	if _, err := Parse("endnote"); err == nil || !strings.Contains(err.Error(), "docx") {
		t.Errorf("Parse(endnote): %v, want an error listing the formats", err)
	}
	if _, err := Render(t.Context(), rep, "endnote", nil); err == nil {
		t.Error("Render of an unknown format succeeded")
	}
}

// TestStandaloneHTML: one file with nothing to fetch, every citation marker linked to its item of the citation
// list, every source and anchor a link, nothing from the report's text able to run.
func TestStandaloneHTML(t *testing.T) {
	rep := sampleReport(t, false)
	page := string(StandaloneHTML(rep))
	for _, want := range []string{
		`<html lang="en">`, `<meta charset="utf-8">`, `default-src 'none'`,
		`<a class="cite" href="#cite-1"`, `<li id="cite-1">`, `<li id="cite-3">`,
		`<a href="https://example.com/lsm" rel="noopener noreferrer" target="_blank">LSM &amp; trees</a>`,
		`href="https://example.com/lsm#:~:text=A%20delete%20writes%20a,until%20compaction%20removes%20both."`,
		`href="file:///docs/compaction.html#:~:text=Compaction%20discards%20tombstones%20once%20no%20older%20value%20remains."`,
		`href="file:///docs/notes.md#L3-L3"`,
		`href="file://` + filepath.ToSlash(rep.Dir) + `/docs/abc123.txt#L12-L12"`,
		"and [7]", "&lt;script&gt;",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	for _, bad := range []string{"<script", `href="javascript:`, "<link", "@import", "src=\"http", "url(http"} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
	// Every href is a link the file can follow by itself or a source's address.
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		h := m[1]
		if !strings.HasPrefix(h, "#cite-") && !strings.HasPrefix(h, "https://") && !strings.HasPrefix(h, "file://") {
			t.Errorf("unexpected href %q", h)
		}
	}
}

// TestDOCXReadBack reads the DOCX back with the corpus's own reader (as `index` would) and checks the footnotes
// part: one footnote per citation marker, each with its quote and a hyperlink opening the source at the quote.
func TestDOCXReadBack(t *testing.T) {
	for _, zh := range []bool{false, true} {
		rep := sampleReport(t, zh)
		b, err := DOCX(rep)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "report.docx")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		ix, err := corpus.OpenWith(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		st, err := ix.Add(t.Context(), dir)
		if err != nil || st.Added != 1 || len(st.Failed) != 0 {
			t.Fatalf("index the DOCX: %+v, %v", st, err)
		}
		doc, err := ix.Fetch(t.Context(), (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String())
		if err != nil {
			t.Fatal(err)
		}
		ix.Close()
		wantTitle, wantBody := "How do LSM trees handle deletes?", "Deletes write a tombstone. Compaction drops it later; see compaction and [7]."
		if zh {
			wantTitle, wantBody = "LSM 树如何处理删除？", "删除操作写入墓碑标记。合并过程会在之后清除它。"
		}
		for _, want := range []string{"# " + wantTitle, wantBody, "## Sources", "LSM & trees — cited as [1]"} {
			if !strings.Contains(doc.Text, want) {
				t.Errorf("zh=%v: the corpus reader's text lacks %q:\n%s", zh, want, doc.Text)
			}
		}
		if doc.Title != wantTitle {
			t.Errorf("zh=%v: title %q, want %q", zh, doc.Title, wantTitle)
		}
		if strings.Contains(doc.Text, "## Citations") {
			t.Errorf("zh=%v: the citation list is in the body; the footnotes are that list:\n%s", zh, doc.Text)
		}
		notes, links := docxFootnotes(t, b)
		if len(notes) != 3 {
			t.Fatalf("zh=%v: %d footnotes, want 3 (one per marker): %q", zh, len(notes), notes)
		}
		for i, e := range rep.Evidence {
			if !strings.Contains(notes[i], e.Quote) {
				t.Errorf("footnote %d %q lacks the quote %q", i+1, notes[i], e.Quote)
			}
		}
		want, _ := research.TextFragmentURL(rep.Evidence[0].Source, rep.Evidence[0].Quote)
		if !contains(links, want) || !contains(links, "file:///docs/notes.md#L3-L3") {
			t.Errorf("footnote links %q lack %q and the Markdown file's line anchor", links, want)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// docxFootnotes returns the text of each numbered footnote and the targets of the footnotes' hyperlinks.
func docxFootnotes(t *testing.T, b []byte) (notes, links []string) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	part := func(name string) []byte {
		f, err := zr.Open(name)
		if err != nil {
			t.Fatalf("no %s: %v", name, err)
		}
		defer f.Close()
		data, _ := io.ReadAll(f)
		return data
	}
	var fn struct {
		Notes []struct {
			ID   int      `xml:"id,attr"`
			Type string   `xml:"type,attr"`
			Text []string `xml:"p>r>t"`
			Link []struct {
				Text []string `xml:"r>t"`
			} `xml:"p>hyperlink"`
		} `xml:"footnote"`
	}
	if err := xml.Unmarshal(part("word/footnotes.xml"), &fn); err != nil {
		t.Fatal(err)
	}
	for _, n := range fn.Notes {
		if n.Type == "" {
			notes = append(notes, strings.Join(n.Text, ""))
		}
	}
	var rels struct {
		R []struct {
			Target string `xml:"Target,attr"`
			Mode   string `xml:"TargetMode,attr"`
		} `xml:"Relationship"`
	}
	if err := xml.Unmarshal(part("word/_rels/footnotes.xml.rels"), &rels); err != nil {
		t.Fatal(err)
	}
	for _, r := range rels.R {
		links = append(links, r.Target)
	}
	var doc struct {
		Refs []struct {
			ID int `xml:"id,attr"`
		} `xml:"body>p>r>footnoteReference"`
	}
	if err := xml.Unmarshal(part("word/document.xml"), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Refs) != len(notes) {
		t.Errorf("%d footnote references in the body, %d footnotes", len(doc.Refs), len(notes))
	}
	return notes, links
}

// wellFormedDOCX is rep as DOCX, failing the test unless every member of the container is well-formed XML.
func wellFormedDOCX(t testing.TB, rep *research.Report) []byte {
	t.Helper()
	b, err := DOCX(rep)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(r)
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s is not well-formed XML: %v", f.Name, err)
			}
		}
		r.Close()
	}
	return b
}

// TestDOCXHostile: text no XML may hold (control characters, a NUL, invalid UTF-8) and markup-like text give a
// document the XML decoder and the corpus reader still read.
func TestDOCXHostile(t *testing.T) {
	rep := sampleReport(t, false)
	rep.Markdown = "# T\x00itle \x1b[31m\n\n<w:p>]]></w:t> & \xff\xfe text [1]\n\n" + strings.Repeat("> ", 500) + "deep\n"
	rep.Evidence[0].Quote = "quote with \x07 bell and </w:t> markup"
	b := wellFormedDOCX(t, rep)
	notes, _ := docxFootnotes(t, b)
	if len(notes) != 1 || !strings.Contains(notes[0], "</w:t> markup") {
		t.Errorf("footnotes %q", notes)
	}
}

// TestPDF prints the report with Chromium and reads it back with the PDF extractor the corpus and the fetcher
// use: the Chinese text, bold and italic included, comes back as characters.
func TestPDF(t *testing.T) {
	chrome, err := FindChromium()
	if err != nil {
		t.Fatal(err) // the export's proof needs the browser; scripts/install-test-deps installs it
	}
	{ // one print (a few seconds): a Chinese report quoting English sources
		zh := true
		rep := sampleReport(t, zh)
		b, err := PDF(t.Context(), rep, chrome)
		if err != nil {
			t.Fatal(err)
		}
		text, err := extract.PDF(t.Context(), b)
		if err != nil {
			t.Fatal(err)
		}
		flat := strings.Join(strings.Fields(text), "")
		wants := []string{"HowdoLSMtreeshandledeletes?", "tombstone", "Compactiondiscardstombstones"}
		if zh {
			wants = []string{"LSM树如何处理删除？", "删除操作写入墓碑标记", "加粗的中文", "斜体", "合并过程会在之后清除它", "Compactiondiscardstombstones"}
		}
		for _, want := range wants {
			if !strings.Contains(flat, want) {
				t.Errorf("zh=%v: the PDF's text lacks %q:\n%s", zh, want, text)
			}
		}
	}
}

// TestPDFWithoutChromium: no browser gives the error that says what to install, and a browser that fails or
// writes no PDF is reported, not taken for a PDF.
func TestPDFWithoutChromium(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CHROMIUM", "")
	if _, err := PDF(t.Context(), sampleReport(t, false), ""); err != ErrNoChromium {
		t.Fatalf("no browser: %v", err)
	}
	dir := t.TempDir()
	for name, script := range map[string]string{
		"fails":          "#!/bin/sh\necho 'cannot open display' >&2\nexit 3\n",
		"writes-garbage": "#!/bin/sh\nfor a in \"$@\"; do case $a in --print-to-pdf=*) echo nope > \"${a#--print-to-pdf=}\";; esac; done\n",
		"writes-nothing": "#!/bin/sh\nexit 0\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("CHROMIUM", p)
		_, err := PDF(t.Context(), sampleReport(t, false), "")
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if name == "fails" && !strings.Contains(err.Error(), "cannot open display") {
			t.Errorf("%s: %v, want the browser's message", name, err)
		}
	}
}

func TestAbsoluteLinks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run 1")
	md := "a [text read](docs/ab.txt#L3-L4) b [up](docs/../../x) c [web](https://x.org/docs/y) d (docs/plain)"
	got := AbsoluteLinks(md, dir)
	want := "a [text read](" + (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(dir, "docs", "ab.txt")), Fragment: "L3-L4"}).String() +
		") b [up](docs/../../x) c [web](https://x.org/docs/y) d (docs/plain)"
	if got != want {
		t.Errorf("AbsoluteLinks:\n got %s\nwant %s", got, want)
	}
	if AbsoluteLinks(md, "relative/dir") != md {
		t.Error("a relative folder changed the links")
	}
}
