// Package extract turns raw bytes (HTML, PDF, plain text) into the plain
// Markdown text that the research agents read and quote. It is shared by the
// web fetcher and the local corpus so both see documents the same way.
package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// Result is the extracted text of one document.
type Result struct {
	Title     string
	Text      string
	Published time.Time
}

// minReadable is the shortest readability output we trust; below it the
// extractor probably picked a caption or a cookie banner, so the whole page
// is converted instead.
const minReadable = 200

// DecodeText converts body to UTF-8 using a BOM, the charset from
// contentType or an HTML <meta> declaration, in that order (the WHATWG
// rules). Without a declaration, a body that is valid UTF-8 is taken as
// UTF-8: the WHATWG fallback (windows-1252) would garble the many UTF-8
// files that simply do not say what they are. A body declared UTF-8, or not
// declared, that is not UTF-8 has its encoding guessed from its bytes
// (mislabelled), as browsers guess.
func DecodeText(body []byte, contentType string) string {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if !certain && name != "utf-8" && utf8.Valid(body) && !declaresCharset(body) {
		name = "utf-8"
	}
	if name == "utf-8" || (!certain && !declaresCharset(body)) { // said or taken to be UTF-8: is it?
		if e, n := mislabelled(body); e != nil {
			enc, name = e, n
		}
	}
	if name == "utf-8" || enc == nil {
		return strings.ToValidUTF8(string(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))), "\uFFFD")
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	return string(out)
}

var metaCharsetRE = regexp.MustCompile(`(?i)<meta[^>]+charset\s*=`)

// declaresCharset reports whether the start of an HTML body names its
// charset in a <meta> element; such a declaration is trusted over guessing.
func declaresCharset(body []byte) bool {
	return metaCharsetRE.Match(body[:min(len(body), 1024)])
}

// NormalizeNewlines converts CRLF and CR line ends to LF so line numbers are
// the same whichever tool counts them.
func NormalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// Readable extracts the main content of a web page (dropping navigation,
// adverts and other page furniture) and renders it as Markdown. htmlText must
// already be UTF-8. When readability finds too little content the whole body
// is converted instead, so short pages are not lost.
func Readable(htmlText string, pageURL *url.URL) (Result, error) {
	doc, err := html.Parse(strings.NewReader(htmlText))
	if err != nil {
		return Result{}, fmt.Errorf("parse HTML: %w", err)
	}
	var res Result
	PruneChrome(doc)
	parser := readability.NewParser()
	article, rerr := parser.ParseDocument(doc, pageURL)
	if rerr == nil && article.Node != nil {
		res.Title = strings.TrimSpace(article.Title())
		if t, err := article.PublishedTime(); err == nil {
			res.Published = t
		}
		md, err := toMarkdown(article.Node, pageURL)
		if err == nil && utf8.RuneCountInString(md) >= minReadable {
			res.Text = md
			return res, nil
		}
	}
	full, err := Whole(htmlText, pageURL)
	if err != nil {
		return Result{}, err
	}
	if res.Title == "" {
		res.Title = full.Title
	}
	res.Text = full.Text
	return res, nil
}

// Whole renders an entire HTML document as Markdown, dropping only scripts,
// styles and page chrome (PruneChrome: navigation, search boxes, pickers,
// breadcrumbs, footers). The corpus uses it because a user's own files are
// content from top to bottom (a long specification must not be cut down to
// its "main" section).
func Whole(htmlText string, pageURL *url.URL) (Result, error) {
	doc, err := html.Parse(strings.NewReader(htmlText))
	if err != nil {
		return Result{}, fmt.Errorf("parse HTML: %w", err)
	}
	title := findTitle(doc)
	PruneChrome(doc)
	md, err := toMarkdown(doc, pageURL)
	if err != nil {
		return Result{}, err
	}
	if title == "" {
		title = goDocTitle(htmlText)
	}
	if title == "" {
		title = FirstHeading(md)
	}
	return Result{Title: title, Text: md}, nil
}

func toMarkdown(n *html.Node, pageURL *url.URL) (string, error) {
	var opts []converter.ConvertOptionFunc
	if pageURL != nil && pageURL.Host != "" {
		opts = append(opts, converter.WithDomain(pageURL.Scheme+"://"+pageURL.Host))
	}
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin(table.WithCellPaddingBehavior(table.CellPaddingBehaviorNone))))
	out, err := conv.ConvertNode(n, opts...)
	if err != nil {
		return "", fmt.Errorf("convert HTML to Markdown: %w", err)
	}
	return strings.TrimSpace(tableRows(NormalizeNewlines(string(out)))) + "\n", nil
}

// listSeparator is the comment the Markdown converter puts between two adjacent lists (so that a Markdown reader
// does not join them); in the text read it is a line of markup, not content, and is dropped.
const listSeparator = "<!--THE END-->"

var tableRuleRE = regexp.MustCompile(`^\|(?:\s*:?-+:?\s*\|)+\s*$`)

// tableRows rewrites the Markdown tables of md as the corpus writes the tables of office documents: one line per
// row, its cells separated by tabs, the header row first and no rule line under it. A row is then one line the
// reader takes as a unit and spells out with its column headers. Lines inside fenced code are left alone; the
// converter's list separators outside them are dropped.
func tableRows(md string) string {
	lines := strings.Split(md, "\n")
	out := lines[:0]
	fenced := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
		}
		if !fenced && strings.TrimSpace(l) == listSeparator {
			continue
		}
		if fenced || !isPipeRow(l) || i+1 >= len(lines) || !tableRuleRE.MatchString(strings.TrimSpace(lines[i+1])) {
			out = append(out, l)
			continue
		}
		out = append(out, pipeCells(l))
		i++ // the rule under the header
		for i+1 < len(lines) && isPipeRow(lines[i+1]) {
			i++
			out = append(out, pipeCells(lines[i]))
		}
	}
	return strings.Join(out, "\n")
}

func isPipeRow(l string) bool {
	t := strings.TrimSpace(l)
	return len(t) >= 2 && t[0] == '|' && t[len(t)-1] == '|'
}

// pipeCells turns "| a | b \| c |" into "a\tb | c"; an empty cell stays an empty field.
func pipeCells(l string) string {
	t := strings.TrimSpace(l)
	t = t[1 : len(t)-1]
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t) && t[i+1] == '|':
			cell.WriteByte('|')
			i++
		case t[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(t[i])
		}
	}
	cells = append(cells, strings.TrimSpace(cell.String()))
	return strings.Join(cells, "\t")
}

func findTitle(n *html.Node) string {
	if n.Type == html.ElementNode && n.Data == "title" {
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return strings.Join(strings.Fields(b.String()), " ")
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := findTitle(c); t != "" {
			return t
		}
	}
	return ""
}

// goDocTitle reads the JSON metadata comment that opens the Go project's own
// HTML documents (<!--{ "Title": "The Go Memory Model" }-->). Such files have
// no <title> element, and their first heading is "Introduction".
var goDocTitleRE = regexp.MustCompile(`\A\s*<!--\{[^}]*?"Title":\s*"([^"]+)"`)

func goDocTitle(htmlText string) string {
	if m := goDocTitleRE.FindStringSubmatch(htmlText); m != nil {
		return m[1]
	}
	return ""
}

var (
	headingRE     = regexp.MustCompile(`(?m)^#{1,3}\s+(.+?)\s*#*\s*$`)
	headingAttrRE = regexp.MustCompile(`\s*\{#[^}]*\}\s*$`)
	frontTitleRE  = regexp.MustCompile(`(?m)^title:\s*["']?(.+?)["']?\s*$`)
)

// FirstHeading returns the title of a Markdown document: the title in YAML
// front matter, else the text of the first heading (levels 1–3), else "".
func FirstHeading(md string) string {
	if rest, ok := strings.CutPrefix(md, "---\n"); ok {
		if front, _, ok := strings.Cut(rest, "\n---"); ok {
			if m := frontTitleRE.FindStringSubmatch(front); m != nil {
				return strings.TrimSpace(m[1])
			}
		}
	}
	if m := headingRE.FindStringSubmatch(md); m != nil {
		return strings.TrimSpace(headingAttrRE.ReplaceAllString(m[1], ""))
	}
	return ""
}
