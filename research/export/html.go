package export

import (
	"fmt"
	"html"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
)

// Links says where the HTML of a report links to. The zero value suits a file on its own: citation markers link to
// the items of the report's citation list, links keep their targets.
type Links struct {
	// Cite is the target of citation n's marker; nil: "#cite-n", its item in the citation list.
	Cite func(n int) string
	// Href is the target of a link of the report — a source's URL, its text-fragment link, an anchor into the text
	// the run kept (docs/<sha>.txt#L3-L4, relative to the run folder); cite is the number of the citation-list
	// item the link stands in, 0 elsewhere. "" shows the target as text instead. nil: DefaultHref.
	Href func(href string, cite int) string
}

// DefaultHref keeps http, https and mailto links and file:// URLs as they are, and makes a link into the run
// folder (docs/…) a file:// URL under dir; anything else (javascript:, data:, a relative path out of the folder)
// is no link.
func DefaultHref(dir string) func(string, int) string {
	return func(href string, _ int) string {
		if SafeHref(href) || strings.HasPrefix(strings.ToLower(href), "file://") {
			return href
		}
		if dir != "" && filepath.IsAbs(dir) && strings.HasPrefix(href, research.DocsDir+"/") && !strings.Contains(href, "..") {
			u := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(dir, filepath.FromSlash(stripHash(href))))}
			if i := strings.IndexByte(href, '#'); i >= 0 {
				u.Fragment = href[i+1:]
			}
			return u.String()
		}
		return ""
	}
}

// SafeHref reports whether a link target from report text may be a link in a page: http(s) and mailto only, since
// report text derives from untrusted sources.
func SafeHref(h string) bool {
	l := strings.ToLower(h)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "mailto:")
}

func stripHash(s string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		return s[:i]
	}
	return s
}

// ReportHTML renders the report's Markdown as an HTML fragment (no <html> or <body>): headings, paragraphs,
// lists, quotes and code, citation markers linked as l says, each with its quote as a tooltip. All text is
// escaped and only the targets l.Href allows become links.
func ReportHTML(rep *research.Report, l Links) string {
	if l.Cite == nil {
		l.Cite = func(n int) string { return fmt.Sprintf("#cite-%d", n) }
	}
	if l.Href == nil {
		l.Href = DefaultHref(rep.Dir)
	}
	r := htmlRenderer{links: l, tips: citeTips(rep)}
	known := map[int]bool{}
	for n := range r.tips {
		known[n] = true
	}
	r.blocks(parseMarkdown(rep.Markdown, known))
	return r.b.String()
}

// citeTips gives each citation number its first quote and source name.
func citeTips(rep *research.Report) map[int]string {
	ev := map[string]research.Evidence{}
	for _, e := range rep.Evidence {
		ev[e.ID] = e
	}
	tips := map[int]string{}
	for _, c := range rep.Citations {
		tip := ""
		if len(c.EvidenceIDs) > 0 {
			if e, ok := ev[c.EvidenceIDs[0]]; ok {
				name := e.Title
				if name == "" {
					name = e.Source
				}
				tip = lexical.Clip(lexical.NormalizeSpace(e.Quote), 220) + " — " + name
			}
		}
		tips[c.N] = tip
	}
	return tips
}

type htmlRenderer struct {
	links Links
	tips  map[int]string
	b     strings.Builder
}

func (r *htmlRenderer) blocks(bs []block) {
	for _, b := range bs {
		switch b.kind {
		case blockCode:
			r.b.WriteString("<pre><code>" + html.EscapeString(b.code) + "</code></pre>\n")
		case blockHeading:
			fmt.Fprintf(&r.b, "<h%d>%s</h%d>\n", b.level, r.spans(b.spans, 0), b.level)
		case blockRule:
			r.b.WriteString("<hr>\n")
		case blockQuote:
			r.b.WriteString("<blockquote>")
			r.blocks(b.inner)
			r.b.WriteString("</blockquote>\n")
		case blockList:
			tag := "ul"
			switch {
			case b.ordered && b.start != 1:
				tag = "ol"
				fmt.Fprintf(&r.b, "<ol start=\"%d\">\n", b.start)
			case b.ordered:
				tag = "ol"
				r.b.WriteString("<ol>\n")
			default:
				r.b.WriteString("<ul>\n")
			}
			for _, it := range b.items {
				if n := leadingCite(it); n > 0 {
					fmt.Fprintf(&r.b, "<li id=\"cite-%d\">%s</li>\n", n, r.spans(it, n))
				} else {
					r.b.WriteString("<li>" + r.spans(it, 0) + "</li>\n")
				}
			}
			r.b.WriteString("</" + tag + ">\n")
		default:
			r.b.WriteString("<p>" + r.spans(b.spans, 0) + "</p>\n")
		}
	}
}

func (r *htmlRenderer) spans(ss []span, cite int) string {
	var out strings.Builder
	for _, s := range ss {
		switch s.kind {
		case spanText:
			out.WriteString(html.EscapeString(s.text))
		case spanCode:
			out.WriteString("<code>" + html.EscapeString(s.text) + "</code>")
		case spanLink, spanURL:
			text := html.EscapeString(s.href)
			if s.kind == spanLink {
				text = r.spans(s.children, cite)
			}
			if href := r.links.Href(s.href, cite); href != "" {
				fmt.Fprintf(&out, `<a href="%s" rel="noopener noreferrer" target="_blank">%s</a>`, html.EscapeString(href), text)
			} else if s.kind == spanLink {
				out.WriteString(text + ` <span class="anchor">(` + html.EscapeString(s.href) + ")</span>")
			} else {
				out.WriteString(`<span class="anchor">` + text + "</span>")
			}
		case spanCite:
			parts := make([]string, len(s.cites))
			for i, k := range s.cites {
				parts[i] = fmt.Sprintf(`<a class="cite" href="%s" title="%s" data-n="%d">%d</a>`,
					html.EscapeString(r.links.Cite(k)), html.EscapeString(r.tips[k]), k, k)
			}
			out.WriteString(`<sup class="cites">[` + strings.Join(parts, ", ") + `]</sup>`)
		case spanStrong:
			out.WriteString("<strong>" + r.spans(s.children, cite) + "</strong>")
		case spanEm:
			out.WriteString("<em>" + r.spans(s.children, cite) + "</em>")
		}
	}
	return out.String()
}

// standaloneCSS styles the exported file: everything inline, system fonts only (with the CJK faces of common
// systems), readable on a phone, in dark mode and in print. Printing — and so the PDF export — keeps the fonts'
// own weights: a bold face synthesised for a CJK font without one becomes, in Chromium's PDF, a Type 3 font without
// a text map, whose characters no PDF reader can extract.
const standaloneCSS = `
:root{color-scheme:light dark;--fg:#1d1d1f;--bg:#fff;--muted:#667;--line:#dde;--code:#f4f4f7;--link:#0b57d0}
@media (prefers-color-scheme:dark){:root{--fg:#e8e8ea;--bg:#16161a;--muted:#a0a0aa;--line:#33343a;--code:#222328;--link:#8ab4f8}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:46rem;padding:1.5rem 1rem 3rem;color:var(--fg);background:var(--bg);
font:16px/1.6 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC","PingFang SC","Microsoft YaHei","WenQuanYi Micro Hei",sans-serif;overflow-wrap:anywhere}
h1{font-size:1.6rem;line-height:1.25}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid var(--line)}h3{font-size:1.05rem}
a{color:var(--link)}pre{background:var(--code);padding:.75rem;overflow-x:auto;border-radius:4px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Noto Sans Mono CJK SC",monospace;font-size:.9em;background:var(--code);padding:0 .2em;border-radius:3px}
pre code{padding:0;background:none}blockquote{margin:0;padding-left:1rem;border-left:3px solid var(--line);color:var(--muted)}
sup.cites{font-size:.75em;line-height:0}sup.cites a{text-decoration:none}
li:target{background:color-mix(in srgb,var(--link) 15%,transparent)}
.anchor{color:var(--muted);font-size:.9em}
header.meta{color:var(--muted);font-size:.85rem;border-bottom:1px solid var(--line);margin-bottom:1rem;padding-bottom:.5rem}
@media print{*{font-synthesis:none}body{max-width:none;padding:0;font-size:11pt}a{color:inherit}pre{white-space:pre-wrap}}
`

// StandaloneHTML is the report as one self-contained HTML file: styles inline, no scripts, and a content security
// policy that forbids the page any fetch, so it opens the same offline, from a mail attachment or a USB stick.
func StandaloneHTML(rep *research.Report) []byte {
	var b strings.Builder
	lang := rep.Language
	if lang == "" {
		lang = "en"
	}
	title := rep.Question
	if title == "" {
		title = "Research report " + rep.RunID
	}
	b.WriteString("<!DOCTYPE html>\n<html lang=\"" + html.EscapeString(lang) + "\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">` + "\n")
	b.WriteString(`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n")
	b.WriteString(`<meta name="generator" content="deepresearch">` + "\n")
	b.WriteString("<title>" + html.EscapeString(title) + "</title>\n<style>" + standaloneCSS + "</style>\n</head>\n<body>\n")
	when := rep.Finished
	if when.IsZero() {
		when = rep.Created
	}
	meta := []string{"deepresearch run " + rep.RunID}
	if !when.IsZero() {
		meta = append(meta, when.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if rep.Engine != "" {
		meta = append(meta, rep.Engine)
	}
	b.WriteString(`<header class="meta">` + html.EscapeString(strings.Join(meta, " · ")) + "</header>\n<main>\n")
	b.WriteString(ReportHTML(rep, Links{}))
	b.WriteString("</main>\n</body>\n</html>\n")
	return []byte(b.String())
}
