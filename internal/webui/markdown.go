package webui

import (
	"fmt"
	"html"
	"html/template"
	"regexp"
	"strconv"
	"strings"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
)

// renderReport turns the report's Markdown into HTML whose citation markers link to the cited quotes. The
// renderer covers what the synthesizer writes (headings, paragraphs, lists, quotes, code, emphasis, links); all
// text is escaped, and only http(s) and mailto links become anchors, because report text derives from
// untrusted sources.
func renderReport(rep *research.Report, base string) template.HTML {
	cites := map[int]string{}
	ev := map[string]research.Evidence{}
	for _, e := range rep.Evidence {
		ev[e.ID] = e
	}
	for _, c := range rep.Citations {
		tip := ""
		if len(c.EvidenceIDs) > 0 {
			if e, ok := ev[c.EvidenceIDs[0]]; ok {
				tip = lexical.Clip(lexical.NormalizeSpace(e.Quote), 220) + " — " + sourceName(e)
			}
		}
		cites[c.N] = tip
	}
	r := &mdRenderer{cites: cites, base: base}
	return template.HTML(r.render(rep.Markdown))
}

type mdRenderer struct {
	cites map[int]string
	base  string
	b     strings.Builder
}

var (
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	ulRE      = regexp.MustCompile(`^\s{0,3}[-*+]\s+(.*)$`)
	olRE      = regexp.MustCompile(`^\s{0,3}(\d{1,9})[.)]\s+(.*)$`)
	hrRE      = regexp.MustCompile(`^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$`)
)

func (r *mdRenderer) render(md string) string {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); {
		line := lines[i]
		trim := strings.TrimSpace(line)
		switch {
		case trim == "":
			i++
		case strings.HasPrefix(trim, "```"):
			i++
			var code []string
			for i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```") {
				code = append(code, lines[i])
				i++
			}
			i++
			r.b.WriteString("<pre><code>" + html.EscapeString(strings.Join(code, "\n")) + "</code></pre>\n")
		case headingRE.MatchString(line):
			m := headingRE.FindStringSubmatch(line)
			lvl := len(m[1])
			fmt.Fprintf(&r.b, "<h%d>%s</h%d>\n", lvl, r.inline(m[2]), lvl)
			i++
		case hrRE.MatchString(line):
			r.b.WriteString("<hr>\n")
			i++
		case strings.HasPrefix(trim, ">"):
			var q []string
			for i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), ">") {
				q = append(q, strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(lines[i]), ">"), " "))
				i++
			}
			sub := &mdRenderer{cites: r.cites, base: r.base}
			r.b.WriteString("<blockquote>" + sub.render(strings.Join(q, "\n")) + "</blockquote>\n")
		case ulRE.MatchString(line) || olRE.MatchString(line):
			i = r.list(lines, i)
		default:
			var para []string
			for i < len(lines) {
				l := lines[i]
				t := strings.TrimSpace(l)
				if t == "" || headingRE.MatchString(l) || strings.HasPrefix(t, "```") || strings.HasPrefix(t, ">") ||
					ulRE.MatchString(l) || olRE.MatchString(l) || hrRE.MatchString(l) {
					break
				}
				para = append(para, t)
				i++
			}
			r.b.WriteString("<p>" + r.inline(strings.Join(para, " ")) + "</p>\n")
		}
	}
	return r.b.String()
}

// list renders one flat list starting at lines[i]; continuation lines join the item above.
func (r *mdRenderer) list(lines []string, i int) int {
	ordered := olRE.MatchString(lines[i]) && !ulRE.MatchString(lines[i])
	tag := "ul"
	if ordered {
		tag = "ol"
		if m := olRE.FindStringSubmatch(lines[i]); m[1] != "1" {
			n, _ := strconv.Atoi(m[1])
			fmt.Fprintf(&r.b, "<ol start=\"%d\">\n", n)
		} else {
			r.b.WriteString("<ol>\n")
		}
	} else {
		r.b.WriteString("<ul>\n")
	}
	var items []string
	for i < len(lines) {
		l := lines[i]
		t := strings.TrimSpace(l)
		if ordered {
			if m := olRE.FindStringSubmatch(l); m != nil {
				items = append(items, m[2])
				i++
				continue
			}
		} else if m := ulRE.FindStringSubmatch(l); m != nil {
			items = append(items, m[1])
			i++
			continue
		}
		if t == "" || len(items) == 0 || !strings.HasPrefix(l, " ") {
			break
		}
		items[len(items)-1] += " " + t
		i++
	}
	for _, it := range items {
		r.b.WriteString("<li>" + r.inline(it) + "</li>\n")
	}
	r.b.WriteString("</" + tag + ">\n")
	return i
}

// inlineRE finds the next inline construct: code span, link, citation group, bold, italic.
var inlineRE = regexp.MustCompile("`[^`]+`" +
	`|\[([^\]]+)\]\(([^)\s]+)\)` +
	`|\[(\d+(?:\s*[,;]\s*\d+)*)\]` +
	`|\*\*([^*]+)\*\*` +
	`|\*([^*\s][^*]*)\*` +
	`|(?:^|\b)_([^_\s][^_]*)_(?:\b|$)`)

func (r *mdRenderer) inline(s string) string {
	var out strings.Builder
	for s != "" {
		loc := inlineRE.FindStringSubmatchIndex(s)
		if loc == nil {
			out.WriteString(html.EscapeString(s))
			break
		}
		out.WriteString(html.EscapeString(s[:loc[0]]))
		tok := s[loc[0]:loc[1]]
		group := func(k int) string {
			if loc[2*k] < 0 {
				return ""
			}
			return s[loc[2*k]:loc[2*k+1]]
		}
		switch {
		case strings.HasPrefix(tok, "`"):
			out.WriteString("<code>" + html.EscapeString(strings.Trim(tok, "`")) + "</code>")
		case group(1) != "":
			text, href := group(1), group(2)
			if safeHref(href) {
				fmt.Fprintf(&out, `<a href="%s" rel="noopener noreferrer" target="_blank">%s</a>`, html.EscapeString(href), r.inline(text))
			} else {
				out.WriteString(r.inline(text) + " <span class=\"anchor\">(" + html.EscapeString(href) + ")</span>")
			}
		case group(3) != "":
			out.WriteString(r.citations(tok, group(3)))
		case group(4) != "":
			out.WriteString("<strong>" + r.inline(group(4)) + "</strong>")
		case group(5) != "":
			out.WriteString("<em>" + r.inline(group(5)) + "</em>")
		case group(6) != "":
			out.WriteString("<em>" + r.inline(group(6)) + "</em>")
		default:
			out.WriteString(html.EscapeString(tok))
		}
		s = s[loc[1]:]
	}
	return out.String()
}

var numRE = regexp.MustCompile(`\d+`)

// citations renders "[1, 3]" as links to each cited quote; a bracketed number that is not a citation of this
// report stays plain text.
func (r *mdRenderer) citations(tok, inner string) string {
	nums := numRE.FindAllString(inner, -1)
	for _, n := range nums {
		k, _ := strconv.Atoi(n)
		if _, ok := r.cites[k]; !ok {
			return html.EscapeString(tok)
		}
	}
	parts := make([]string, len(nums))
	for i, n := range nums {
		k, _ := strconv.Atoi(n)
		parts[i] = fmt.Sprintf(`<a class="cite" href="%s/cite/%d" title="%s" data-n="%d">%d</a>`,
			html.EscapeString(r.base), k, html.EscapeString(r.cites[k]), k, k)
	}
	return `<sup class="cites">[` + strings.Join(parts, ", ") + `]</sup>`
}

func safeHref(h string) bool {
	l := strings.ToLower(h)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "mailto:")
}
