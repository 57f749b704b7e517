package export

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"time"

	"github.com/deepresearch/deepresearch/research"
)

// A DOCX is a zip of XML parts (Office Open XML, ECMA-376). The report needs a handful of them — paragraphs,
// heading styles, hyperlinks and footnotes — which archive/zip and encoding/xml write directly; a general
// document library would add far more than it saves here.
//
// Each citation marker of the text becomes a footnote reference; the footnote quotes the evidence and links its
// source at the quote (a text fragment for web pages and HTML files) or at its lines. The report's own citation
// list is left out: the footnotes are that list.

const (
	nsW   = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	nsR   = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
	relHL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink"
)

// DOCX renders the report as a Word document with footnoted citations.
func DOCX(rep *research.Report) ([]byte, error) {
	d := &docxWriter{rep: rep, body: &docxPart{}, notes: &docxPart{}, ev: map[string]research.Evidence{}, cites: map[int][]string{}}
	for _, e := range rep.Evidence {
		d.ev[e.ID] = e
	}
	known := map[int]bool{}
	for _, c := range rep.Citations {
		d.cites[c.N] = c.EvidenceIDs
		known[c.N] = true
	}
	d.lang = "en-US"
	if strings.HasPrefix(rep.Language, "zh") {
		d.lang = "zh-CN"
	}
	bs := parseMarkdown(rep.Markdown, known)
	for i := 0; i < len(bs); i++ {
		// The citation list (a heading and a list whose items all start with their number) is what the
		// footnotes say.
		if bs[i].kind == blockHeading && i+1 < len(bs) && isCitationList(bs[i+1]) {
			i++
			continue
		}
		if isCitationList(bs[i]) {
			continue
		}
		d.block(bs[i], "")
	}
	return d.zip()
}

func isCitationList(b block) bool {
	if b.kind != blockList || len(b.items) == 0 {
		return false
	}
	for _, it := range b.items {
		if leadingCite(it) == 0 {
			return false
		}
	}
	return true
}

type docxPart struct {
	b    strings.Builder
	rels []string // hyperlink targets, rId = "rIdL<index+1>"
}

func (p *docxPart) rel(target string) string {
	p.rels = append(p.rels, target)
	return fmt.Sprintf("rIdL%d", len(p.rels))
}

type docxWriter struct {
	rep   *research.Report
	body  *docxPart
	notes *docxPart
	ev    map[string]research.Evidence
	cites map[int][]string
	lang  string
	note  int // footnotes written
}

// esc escapes text for XML; characters XML cannot hold (control characters) become U+FFFD.
func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func run(p *docxPart, text, props string) {
	if text == "" {
		return
	}
	p.b.WriteString("<w:r>")
	if props != "" {
		p.b.WriteString("<w:rPr>" + props + "</w:rPr>")
	}
	p.b.WriteString(`<w:t xml:space="preserve">` + esc(text) + "</w:t></w:r>")
}

func (d *docxWriter) para(p *docxPart, style string, write func()) {
	p.b.WriteString("<w:p>")
	if style != "" {
		p.b.WriteString(`<w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>`)
	}
	write()
	p.b.WriteString("</w:p>")
}

func (d *docxWriter) block(b block, style string) {
	switch b.kind {
	case blockHeading:
		d.para(d.body, fmt.Sprintf("Heading%d", b.level), func() { d.spans(d.body, b.spans, "", true) })
	case blockCode:
		for _, line := range strings.Split(b.code, "\n") {
			d.para(d.body, "Code", func() { run(d.body, line, "") })
		}
	case blockRule:
		d.para(d.body, "", func() {})
	case blockQuote:
		for _, in := range b.inner {
			d.block(in, "Quote")
		}
	case blockList:
		for i, it := range b.items {
			mark := "• "
			if b.ordered {
				mark = fmt.Sprintf("%d. ", b.start+i)
			}
			// A source entry ("[Title](url) — cited as [1], [2]") names its citations; they are not footnotes.
			notes := len(it) == 0 || it[0].kind != spanLink
			d.para(d.body, "ListParagraph", func() {
				run(d.body, mark, "")
				d.spans(d.body, it, "", notes)
			})
		}
	default:
		d.para(d.body, style, func() { d.spans(d.body, b.spans, "", true) })
	}
}

func (d *docxWriter) spans(p *docxPart, ss []span, props string, notes bool) {
	for i, s := range ss {
		switch s.kind {
		case spanText:
			if notes && p == d.body && i+1 < len(ss) && ss[i+1].kind == spanCite {
				s.text = strings.TrimRight(s.text, " ") // "tombstone [1]." reads "tombstone¹."
			}
			run(p, s.text, props)
		case spanCode:
			run(p, s.text, props+`<w:rStyle w:val="CodeChar"/>`)
		case spanStrong:
			d.spans(p, s.children, props+"<w:b/>", notes)
		case spanEm:
			d.spans(p, s.children, props+"<w:i/>", notes)
		case spanLink, spanURL:
			text := s.href
			if s.kind == spanLink {
				text = plain(s.children)
			}
			d.link(p, s.href, text, props)
		case spanCite:
			if !notes || p == d.notes {
				run(p, plain([]span{s}), props)
				continue
			}
			for _, n := range s.cites {
				d.footnote(n)
			}
		}
	}
}

// link writes a hyperlink to target when it is one a document may open (http, https, mailto, file), else its
// text alone.
func (d *docxWriter) link(p *docxPart, target, text, props string) {
	t := DefaultHref(d.rep.Dir)(target, 0)
	if t == "" {
		run(p, text, props)
		return
	}
	p.b.WriteString(`<w:hyperlink r:id="` + p.rel(t) + `">`)
	run(p, text, props+`<w:rStyle w:val="Hyperlink"/>`)
	p.b.WriteString("</w:hyperlink>")
}

// footnote writes a reference to a new footnote for citation n in the body, and the footnote itself: each
// evidence item's quote, its source and a link that opens the source at the quote.
func (d *docxWriter) footnote(n int) {
	d.note++
	id := d.note
	fmt.Fprintf(&d.body.b, `<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteReference w:id="%d"/></w:r>`, id)
	fmt.Fprintf(&d.notes.b, `<w:footnote w:id="%d"><w:p><w:pPr><w:pStyle w:val="FootnoteText"/></w:pPr>`, id)
	d.notes.b.WriteString(`<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteRef/></w:r>`)
	run(d.notes, fmt.Sprintf(" [%d] ", n), "")
	for i, eid := range d.cites[n] {
		e, ok := d.ev[eid]
		if !ok {
			continue
		}
		if i > 0 {
			run(d.notes, "; ", "")
		}
		run(d.notes, "“"+oneLine(e.Quote)+"” — ", "")
		name := e.Title
		if name == "" {
			name = stripHash(e.Source)
		}
		target := e.Source
		if u, ok := research.TextFragmentURL(e.Source, e.Quote); ok {
			target = u
		}
		d.link(d.notes, target, name, "")
	}
	d.notes.b.WriteString("</w:p></w:footnote>")
}

func rels(p *docxPart, fixed string) string {
	var b strings.Builder
	b.WriteString(xml.Header + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + fixed)
	for i, t := range p.rels {
		fmt.Fprintf(&b, `<Relationship Id="rIdL%d" Type="%s" Target="%s" TargetMode="External"/>`, i+1, relHL, esc(t))
	}
	b.WriteString("</Relationships>")
	return b.String()
}

func (d *docxWriter) zip() ([]byte, error) {
	created := d.rep.Created
	if created.IsZero() {
		created = time.Now()
	}
	title := d.rep.Question
	parts := []struct{ name, body string }{
		{"[Content_Types].xml", xml.Header + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>` +
			`<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>` +
			`<Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/>` +
			`<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>` +
			`</Types>`},
		{"_rels/.rels", xml.Header + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>` +
			`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>` +
			`</Relationships>`},
		{"docProps/core.xml", xml.Header + `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ` +
			`xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
			`<dc:title>` + esc(oneLine(title)) + `</dc:title><dc:creator>deepresearch</dc:creator>` +
			`<dc:identifier>` + esc(d.rep.RunID) + `</dc:identifier>` +
			`<dcterms:created xsi:type="dcterms:W3CDTF">` + created.UTC().Format(time.RFC3339) + `</dcterms:created>` +
			`</cp:coreProperties>`},
		{"word/_rels/document.xml.rels", rels(d.body,
			`<Relationship Id="rIdStyles" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>`+
				`<Relationship Id="rIdNotes" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/>`)},
		{"word/_rels/footnotes.xml.rels", rels(d.notes, "")},
		{"word/document.xml", xml.Header + `<w:document xmlns:w="` + nsW + `" xmlns:r="` + nsR + `"><w:body>` + d.body.b.String() +
			`<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr>` +
			`</w:body></w:document>`},
		{"word/footnotes.xml", xml.Header + `<w:footnotes xmlns:w="` + nsW + `" xmlns:r="` + nsR + `">` +
			`<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>` +
			`<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:footnote>` +
			d.notes.b.String() + `</w:footnotes>`},
		{"word/styles.xml", docxStyles(d.lang)},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: p.name, Method: zip.Deflate, Modified: created.UTC()})
		if err != nil {
			return nil, fmt.Errorf("export: DOCX %s: %w", p.name, err)
		}
		if _, err := w.Write([]byte(p.body)); err != nil {
			return nil, fmt.Errorf("export: DOCX %s: %w", p.name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("export: DOCX: %w", err)
	}
	return buf.Bytes(), nil
}

func docxStyles(lang string) string {
	var b strings.Builder
	b.WriteString(xml.Header + `<w:styles xmlns:w="` + nsW + `">`)
	b.WriteString(`<w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii="Calibri" w:hAnsi="Calibri" w:eastAsia="Microsoft YaHei" w:cs="Calibri"/>` +
		`<w:sz w:val="22"/><w:lang w:val="en-US" w:eastAsia="` + lang + `"/></w:rPr></w:rPrDefault>` +
		`<w:pPrDefault><w:pPr><w:spacing w:after="120" w:line="276" w:lineRule="auto"/></w:pPr></w:pPrDefault></w:docDefaults>`)
	b.WriteString(`<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>`)
	sizes := []int{36, 30, 26, 24, 22, 22}
	for i, sz := range sizes {
		fmt.Fprintf(&b, `<w:style w:type="paragraph" w:styleId="Heading%d"><w:name w:val="heading %d"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/>`+
			`<w:pPr><w:keepNext/><w:spacing w:before="240" w:after="120"/><w:outlineLvl w:val="%d"/></w:pPr><w:rPr><w:b/><w:sz w:val="%d"/></w:rPr></w:style>`, i+1, i+1, i, sz)
	}
	b.WriteString(`<w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/><w:basedOn w:val="Normal"/><w:pPr><w:ind w:left="360"/></w:pPr></w:style>`)
	b.WriteString(`<w:style w:type="paragraph" w:styleId="Quote"><w:name w:val="Quote"/><w:basedOn w:val="Normal"/><w:pPr><w:ind w:left="720"/></w:pPr><w:rPr><w:i/></w:rPr></w:style>`)
	b.WriteString(`<w:style w:type="paragraph" w:styleId="Code"><w:name w:val="Code"/><w:basedOn w:val="Normal"/><w:pPr><w:spacing w:after="0"/></w:pPr>` +
		`<w:rPr><w:rFonts w:ascii="Consolas" w:hAnsi="Consolas"/><w:sz w:val="18"/></w:rPr></w:style>`)
	b.WriteString(`<w:style w:type="character" w:styleId="CodeChar"><w:name w:val="Code Char"/><w:rPr><w:rFonts w:ascii="Consolas" w:hAnsi="Consolas"/></w:rPr></w:style>`)
	b.WriteString(`<w:style w:type="character" w:styleId="Hyperlink"><w:name w:val="Hyperlink"/><w:rPr><w:color w:val="0563C1"/><w:u w:val="single"/></w:rPr></w:style>`)
	b.WriteString(`<w:style w:type="paragraph" w:styleId="FootnoteText"><w:name w:val="footnote text"/><w:basedOn w:val="Normal"/><w:pPr><w:spacing w:after="0"/></w:pPr><w:rPr><w:sz w:val="18"/></w:rPr></w:style>`)
	b.WriteString(`<w:style w:type="character" w:styleId="FootnoteReference"><w:name w:val="footnote reference"/><w:rPr><w:vertAlign w:val="superscript"/></w:rPr></w:style>`)
	b.WriteString(`</w:styles>`)
	return b.String()
}
