package export

import (
	"regexp"
	"strconv"
	"strings"
)

// The report's Markdown is parsed once into blocks and spans, which the HTML and DOCX writers (and the web viewer,
// through HTML) render. The parser covers what the synthesizer writes: headings, paragraphs, flat lists, block
// quotes, fenced code, rules, and inline code, links, bare URLs, citation groups, bold and italic. Text is kept as
// text: each writer escapes it for its own format.

type blockKind int

const (
	blockPara blockKind = iota
	blockHeading
	blockList
	blockQuote
	blockCode
	blockRule
)

type block struct {
	kind    blockKind
	level   int      // heading level 1–6
	ordered bool     // list
	start   int      // first number of an ordered list
	spans   []span   // heading, paragraph
	items   [][]span // list items
	code    string   // code block
	inner   []block  // quote
}

type spanKind int

const (
	spanText spanKind = iota
	spanCode
	spanLink // text in children, target in href
	spanURL  // a bare URL: text and target are href
	spanCite // numbers in cites
	spanStrong
	spanEm
)

type span struct {
	kind     spanKind
	text     string
	href     string
	cites    []int
	children []span
}

var (
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	ulRE      = regexp.MustCompile(`^\s{0,3}[-*+]\s+(.*)$`)
	olRE      = regexp.MustCompile(`^\s{0,3}(\d{1,9})[.)]\s+(.*)$`)
	hrRE      = regexp.MustCompile(`^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$`)
)

// parseMarkdown splits md into blocks; known says which citation numbers the report has (a bracketed number that
// is not one of them stays text).
func parseMarkdown(md string, known map[int]bool) []block {
	p := mdParser{known: known}
	return p.blocks(strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n"), 0)
}

type mdParser struct{ known map[int]bool }

// maxQuoteDepth bounds nested block quotes ("> > > …"), which recurse.
const maxQuoteDepth = 8

func (p *mdParser) blocks(lines []string, depth int) []block {
	var out []block
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
			out = append(out, block{kind: blockCode, code: strings.Join(code, "\n")})
		case headingRE.MatchString(line):
			m := headingRE.FindStringSubmatch(line)
			out = append(out, block{kind: blockHeading, level: len(m[1]), spans: p.inline(m[2])})
			i++
		case hrRE.MatchString(line):
			out = append(out, block{kind: blockRule})
			i++
		case strings.HasPrefix(trim, ">") && depth < maxQuoteDepth:
			var q []string
			for i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), ">") {
				q = append(q, strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(lines[i]), ">"), " "))
				i++
			}
			out = append(out, block{kind: blockQuote, inner: p.blocks(q, depth+1)})
		case ulRE.MatchString(line) || olRE.MatchString(line):
			var b block
			b, i = p.list(lines, i)
			out = append(out, b)
		default:
			var para []string
			for i < len(lines) {
				l := lines[i]
				t := strings.TrimSpace(l)
				if len(para) > 0 && (t == "" || headingRE.MatchString(l) || strings.HasPrefix(t, "```") || strings.HasPrefix(t, ">") ||
					ulRE.MatchString(l) || olRE.MatchString(l) || hrRE.MatchString(l)) {
					break
				}
				para = append(para, t)
				i++
			}
			out = append(out, block{kind: blockPara, spans: p.inline(strings.Join(para, " "))})
		}
	}
	return out
}

// list parses one flat list starting at lines[i]; continuation lines join the item above.
func (p *mdParser) list(lines []string, i int) (block, int) {
	b := block{kind: blockList, ordered: olRE.MatchString(lines[i]) && !ulRE.MatchString(lines[i]), start: 1}
	if b.ordered {
		b.start, _ = strconv.Atoi(olRE.FindStringSubmatch(lines[i])[1])
	}
	var items []string
	for i < len(lines) {
		l := lines[i]
		t := strings.TrimSpace(l)
		if b.ordered {
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
		b.items = append(b.items, p.inline(it))
	}
	return b, i
}

// inlineRE finds the next inline construct: code span, link, citation group, bare URL, bold, italic. Each is
// bounded in length (a longer one is text): an unclosed "[" or "*" would otherwise keep the search running to the
// end of the paragraph at every construct, quadratic in a long paragraph's length.
var inlineRE = regexp.MustCompile("`[^`]{1,400}`" +
	`|\[([^\]]{1,300})\]\(([^)\s]{1,800})\)` +
	`|\[(\d{1,4}(?:\s{0,2}[,;]\s{0,2}\d{1,4}){0,30})\]` +
	`|\*\*([^*]{1,400})\*\*` +
	`|\*([^*\s][^*]{0,400})\*` +
	`|(?:^|\b)_([^_\s][^_]{0,400})_(?:\b|$)` +
	`|\b((?:https?|file)://[^\s<>"()\[\]]{1,800}[^\s<>"()\[\].,;:!?'’”])`)

var numRE = regexp.MustCompile(`\d+`)

func (p *mdParser) inline(s string) []span {
	var out []span
	text := func(t string) {
		if t == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].kind == spanText {
			out[n-1].text += t
			return
		}
		out = append(out, span{kind: spanText, text: t})
	}
	for s != "" {
		loc := inlineRE.FindStringSubmatchIndex(s)
		if loc == nil {
			text(s)
			break
		}
		text(s[:loc[0]])
		tok := s[loc[0]:loc[1]]
		group := func(k int) string {
			if loc[2*k] < 0 {
				return ""
			}
			return s[loc[2*k]:loc[2*k+1]]
		}
		switch {
		case strings.HasPrefix(tok, "`"):
			out = append(out, span{kind: spanCode, text: strings.Trim(tok, "`")})
		case group(1) != "":
			out = append(out, span{kind: spanLink, href: group(2), children: p.inline(group(1))})
		case group(3) != "":
			var nums []int
			for _, n := range numRE.FindAllString(group(3), -1) {
				k, err := strconv.Atoi(n)
				if err != nil || !p.known[k] {
					nums = nil
					break
				}
				nums = append(nums, k)
			}
			if nums == nil {
				text(tok)
			} else {
				out = append(out, span{kind: spanCite, cites: nums})
			}
		case group(4) != "":
			out = append(out, span{kind: spanStrong, children: p.inline(group(4))})
		case group(5) != "":
			out = append(out, span{kind: spanEm, children: p.inline(group(5))})
		case group(6) != "":
			out = append(out, span{kind: spanEm, children: p.inline(group(6))})
		case group(7) != "":
			out = append(out, span{kind: spanURL, href: group(7)})
		default:
			text(tok)
		}
		s = s[loc[1]:]
	}
	return out
}

// plain is the spans' text as a reader sees it.
func plain(ss []span) string {
	var b strings.Builder
	for _, s := range ss {
		switch s.kind {
		case spanText, spanCode:
			b.WriteString(s.text)
		case spanURL:
			b.WriteString(s.href)
		case spanCite:
			b.WriteString("[")
			for i, n := range s.cites {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(strconv.Itoa(n))
			}
			b.WriteString("]")
		default:
			b.WriteString(plain(s.children))
		}
	}
	return b.String()
}

// leadingCite is the citation number an item of the report's citation list starts with ("[3] “…” — …"), else 0.
func leadingCite(ss []span) int {
	if len(ss) > 0 && ss[0].kind == spanCite && len(ss[0].cites) == 1 {
		return ss[0].cites[0]
	}
	return 0
}
