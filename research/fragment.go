package research

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/sources/extract"
)

// A line anchor (#L12-L14) names lines of the text a run read. For a Markdown, text or code file those are the
// file's own lines, but a browser showing a web page or an HTML file knows nothing of them. Browsers do scroll to
// and highlight a text fragment (#:~:text=start,end, the URL Fragment Text Directive), so those sources are also
// linked that way.

// fragmentWords is how many words the start and the end of a long quote's text fragment hold.
const fragmentWords = 4

// TextFragmentURL links source at quote with a text fragment (#:~:text=…) for a browser to scroll to and
// highlight: web pages and local HTML files. A quote too long to name whole is named by its first and last words
// (the start,end form, which highlights everything between them, also across an elided gap). ok is false for
// other sources (PDF files, whose viewers ignore text fragments; text and code files, whose line anchors already
// work) and for a quote with nothing a rendered page would show word for word.
func TextFragmentURL(source, quote string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(source))
	if err != nil {
		return "", false
	}
	// The format registry names what a path's extension holds: a web page is HTML unless it names a PDF (or is
	// arXiv's /pdf/ path); a local file only when it is HTML.
	f, known := extract.Builtin().ByPath(u.Path)
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if known && f.Name == "pdf" || strings.HasPrefix(u.Path, "/pdf/") {
			return "", false
		}
	case "file":
		if !known || f.Layout != extract.LayoutHTML {
			return "", false
		}
	default:
		return "", false
	}
	start, end := fragmentEnds(quote)
	if start == "" {
		return "", false
	}
	dir := "#:~:text=" + fragmentEscape(start)
	if end != "" {
		dir += "," + fragmentEscape(end)
	}
	return publish.StripFragment(strings.TrimSpace(source)) + dir, true
}

var (
	mdLinkRE  = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	mdMarkRE  = regexp.MustCompile("\\*\\*|__|`+")
	mdLeadRE  = regexp.MustCompile(`^\s*(?:#{1,6}\s+|[-*+]\s+|\d{1,9}[.)]\s+|>\s*)+`)
	clauseEnd = "。！？；，、："
)

// fragmentEnds returns the text a fragment starts and ends with (end empty: the start is the whole quote). The
// quote is text extracted from the page, in Markdown: links, emphasis and code marks, heading and list marks are
// not on the rendered page and are dropped; a word still holding markup, a line, a table cell and an elided gap
// break the quote into runs, since a text fragment's start and end must each stand within one block of the page.
func fragmentEnds(quote string) (start, end string) {
	var runs [][]string
	quote = strings.ToValidUTF8(quote, " ")
	for _, frag := range publish.QuoteFragments(quote) {
		// A link is dropped once, before the text is cut into lines and cells: its target may hold a tab or a line
		// break ("[](\t)"), and a piece of it left on a line would be glued to the word after it; dropping links
		// again would make new ones of what nested links leave ("[[]()0]()0").
		frag = mdLinkRE.ReplaceAllString(frag, "$1")
		for _, line := range strings.FieldsFunc(frag, func(r rune) bool { return r == '\n' || r == '\t' || r == '\r' }) {
			line = mdLeadRE.ReplaceAllString(line, "")
			line = mdMarkRE.ReplaceAllString(line, "")
			var run []string
			for _, w := range strings.Fields(line) {
				w = unescapeMarkdown(w)
				if w == "" || strings.ContainsAny(w, "*[]|<>\\{}") {
					if len(run) > 0 {
						runs = append(runs, run)
					}
					run = nil
					continue
				}
				run = append(run, w)
			}
			if len(run) > 0 {
				runs = append(runs, run)
			}
		}
	}
	if len(runs) == 0 {
		return "", ""
	}
	if len(runs) == 1 && len(runs[0]) <= 2*fragmentWords && len(strings.Join(runs[0], " ")) <= 120 {
		return strings.Join(runs[0], " "), ""
	}
	first, last := splitClauses(runs[0]), splitClauses(runs[len(runs)-1])
	if len(runs) == 1 && len(first) == 1 {
		return joinPieces(first), ""
	}
	if len(runs) == 1 && len(first) <= 2*fragmentWords {
		// A long run of few words: clauses of a text without spaces (Chinese, Japanese).
		return joinPieces(first[:1]), joinPieces(first[len(first)-1:])
	}
	n, m := min(fragmentWords, len(first)), min(fragmentWords, len(last))
	return joinPieces(first[:n]), joinPieces(last[len(last)-m:])
}

// piece is a word, or a clause of a long word without spaces; glued pieces follow the one before without a space.
type piece struct {
	text  string
	glued bool
}

func joinPieces(ps []piece) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 && !p.glued {
			b.WriteByte(' ')
		}
		b.WriteString(p.text)
	}
	return b.String()
}

// splitClauses splits a run's words further where a long word without spaces (a Chinese sentence) ends a clause,
// so that the start and end of its fragment fall on word boundaries a browser accepts.
func splitClauses(run []string) []piece {
	var out []piece
	for _, w := range run {
		if utf8.RuneCountInString(w) <= 24 {
			out = append(out, piece{text: w})
			continue
		}
		var cur strings.Builder
		glued := false
		for _, r := range w {
			cur.WriteRune(r)
			if strings.ContainsRune(clauseEnd, r) {
				out = append(out, piece{cur.String(), glued})
				cur.Reset()
				glued = true
			}
		}
		if cur.Len() > 0 {
			out = append(out, piece{cur.String(), glued})
		}
	}
	// The end need not include a clause's final punctuation, which the page may show otherwise.
	if len(out) > 0 {
		l := &out[len(out)-1]
		l.text = strings.TrimRightFunc(l.text, func(r rune) bool { return strings.ContainsRune(clauseEnd, r) })
		if l.text == "" {
			out = out[:len(out)-1]
		}
	}
	return out
}

// unescapeMarkdown drops the backslashes of Markdown escapes (\_ \* \#): the page shows the character alone.
func unescapeMarkdown(w string) string {
	if !strings.Contains(w, `\`) {
		return w
	}
	var b strings.Builder
	esc := false
	for _, r := range w {
		if !esc && r == '\\' {
			esc = true
			continue
		}
		if esc && !unicode.IsPunct(r) && !unicode.IsSymbol(r) {
			b.WriteRune('\\')
		}
		esc = false
		b.WriteRune(r)
	}
	return b.String()
}

// fragmentEscape percent-encodes a text directive's value: everything but ASCII letters, digits and . _ ~ — in
// particular the directive's own syntax (- , &) and every non-ASCII byte.
func fragmentEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
