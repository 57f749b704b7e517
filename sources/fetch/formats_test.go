package fetch

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/deepresearch/deepresearch/sources/extract"
	"github.com/deepresearch/deepresearch/sources/internal/testzip"
)

func docxFixture(t *testing.T, words string) []byte {
	return testzip.Build(
		[2]string{"[Content_Types].xml", `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`},
		[2]string{"word/document.xml", `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			`<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Pangolin report</w:t></w:r></w:p>` +
			`<w:p><w:r><w:t>` + words + `</w:t></w:r></w:p></w:body></w:document>`})
}

func epubFixture(t *testing.T, words string) []byte {
	return testzip.Build(
		[2]string{"mimetype", "application/epub+zip"},
		[2]string{"META-INF/container.xml", `<container><rootfiles><rootfile full-path="c.opf"/></rootfiles></container>`},
		[2]string{"c.opf", `<package><metadata><title>Quoll book</title></metadata><manifest><item id="c1" href="ch.xhtml"/></manifest><spine><itemref idref="c1"/></spine></package>`},
		[2]string{"ch.xhtml", "<html><body><h1>Chapter one</h1><p>" + words + "</p></body></html>"})
}

func xlsxFixture(t *testing.T, words string) []byte {
	t.Helper()
	xf := excelize.NewFile()
	xf.SetCellValue("Sheet1", "A1", "animal")
	xf.SetCellValue("Sheet1", "A2", words)
	buf, err := xf.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const notebookFixture = `{"nbformat": 4, "nbformat_minor": 5, "metadata": {"language_info": {"name": "python"}},
 "cells": [{"cell_type": "markdown", "source": ["# Tenrec notebook\n", "The tenrec is spiny."]},
           {"cell_type": "code", "source": "print('tenrec')", "outputs": [{"text": "OUTPUT ONLY"}]}]}`

// Every document format the corpus reads is read from the web too: with its own media type, with a generic
// or missing one (the bytes or the URL's extension decide), and with a wrong one (the bytes decide).
func TestFetchReadsTheCorpusFormats(t *testing.T) {
	docs := map[string]struct {
		body  []byte
		mime  string
		words string
	}{
		"/report.docx": {docxFixture(t, "The pangolin rolls into a ball."), "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "pangolin rolls into a ball"},
		"/book.epub":   {epubFixture(t, "The quoll hunts at night."), "application/epub+zip", "quoll hunts at night"},
		"/sheet.xlsx":  {xlsxFixture(t, "wombat"), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "wombat"},
		"/nb.ipynb":    {[]byte(notebookFixture), "application/x-ipynb+json", "tenrec is spiny"},
	}
	label := map[string]string{} // path → Content-Type to send ("-": none at all)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		d, ok := docs["/"+strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[1]]
		if !ok {
			http.NotFound(w, r)
			return
		}
		switch ct := label[r.URL.Path]; ct {
		case "-":
			w.Header()["Content-Type"] = nil // no label, and no sniffing by the server
		default:
			w.Header().Set("Content-Type", ct)
		}
		w.Write(d.body)
	})
	f := newFetcher(t, Config{AllowLoopback: true})
	for p, d := range docs {
		for _, lab := range []string{d.mime, "application/octet-stream", "-", "text/html; charset=utf-8", "text/plain"} {
			u := "/" + strings.ReplaceAll(lab, "/", "_") + p
			label[u] = lab
			doc, err := f.Fetch(t.Context(), srv.URL+u)
			if err != nil {
				t.Errorf("%s labelled %q: %v", p, lab, err)
				continue
			}
			fm, _ := extract.Builtin().ByPath(p)
			if !strings.Contains(doc.Text, d.words) || doc.ContentType != fm.ContentType() || doc.Hash == "" {
				t.Errorf("%s labelled %q: content type %q, text %q", p, lab, doc.ContentType, doc.Text)
			}
			if strings.Contains(doc.Text, "OUTPUT ONLY") {
				t.Errorf("%s: a notebook's outputs were read", p)
			}
		}
	}
	// Titles come from the document where it names one.
	label["/x/book.epub"] = "application/epub+zip"
	if doc, err := f.Fetch(t.Context(), srv.URL+"/x/book.epub"); err != nil || doc.Title != "Quoll book" {
		t.Errorf("EPUB title: %+v %v", doc, err)
	}
}

// Hostile documents get a clear error, read within bounds: a zip bomb stops at the member limit without
// inflating the rest, a truncated container is not a container, a body cut by the size limit is refused, and
// binary bytes behind a text format's label are refused.
func TestFetchRefusesHostileDocuments(t *testing.T) {
	// 128 MiB of zeros in one member, a few hundred KiB compressed.
	var bomb bytes.Buffer
	zw := zip.NewWriter(&bomb)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	w, err := zw.Create("word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range 128 {
		w.Write(zeros)
	}
	zw.Close()
	docx := docxFixture(t, "The pangolin rolls into a ball.")
	bodies := map[string]struct {
		body []byte
		mime string
	}{
		"/bomb.docx":      {bomb.Bytes(), "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		"/truncated.docx": {docx[:len(docx)/2], "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		"/cut.docx":       {append(docx, bytes.Repeat([]byte{0}, 2<<20)...), "application/octet-stream"},
		"/binary.ipynb":   {append([]byte("{\"nbformat\":4,\x00\x01\x02"), bytes.Repeat([]byte{1, 2, 3, 0}, 1000)...), "application/x-ipynb+json"},
		"/junk.epub":      {[]byte("this is no zip container at all"), "application/epub+zip"},
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		b := bodies[r.URL.Path]
		w.Header().Set("Content-Type", b.mime)
		w.Write(b.body)
	})
	f := newFetcher(t, Config{AllowLoopback: true, MaxBytes: 2 << 20})
	for p, want := range map[string]string{
		"/bomb.docx":      "more than 32 MiB uncompressed",
		"/truncated.docx": "not a valid zip container",
		"/cut.docx":       "larger than the 2097152-byte limit",
		"/binary.ipynb":   "holds binary data",
		"/junk.epub":      "not a valid zip container",
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := f.Fetch(t.Context(), srv.URL+p)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming the URL and %q", p, err, want)
		}
		// Inflating the whole bomb would allocate 128 MiB and more; the member limit stops it at 32 MiB, read
		// into one buffer of that size.
		if grown := after.TotalAlloc - before.TotalAlloc; grown > 48<<20 {
			t.Errorf("%s: %d MiB allocated", p, grown>>20)
		} else if p == "/bomb.docx" {
			t.Logf("%s: %d MiB allocated", p, grown>>20)
		}
	}
}
