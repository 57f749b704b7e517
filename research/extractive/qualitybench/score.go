package qualitybench

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/extract"
)

// citedEvidence returns the report's cited evidence items, each once, in citation order.
func citedEvidence(rep *research.Report) []research.Evidence {
	byID := map[string]research.Evidence{}
	for _, e := range rep.Evidence {
		byID[e.ID] = e
	}
	seen := map[string]bool{}
	var out []research.Evidence
	for _, c := range rep.Citations {
		for _, id := range c.EvidenceIDs {
			if e, ok := byID[id]; ok && !seen[id] {
				seen[id] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// RelevantCitations counts the report's cited evidence items that come from the relevant documents: a document
// is named by its file name ("go_mem.html"), and "name#heading" accepts only quotes under a Markdown heading
// (the nearest one above the quote) that contains heading, ignoring case.
func RelevantCitations(ctx context.Context, rep *research.Report, f sources.Fetcher, relevant []string) int {
	n := 0
	for _, e := range citedEvidence(rep) {
		name := fileName(e.Source)
		for _, r := range relevant {
			file, heading, _ := strings.Cut(r, "#")
			if file != name {
				continue
			}
			if heading == "" || underHeading(ctx, f, e, heading) {
				n++
				break
			}
		}
	}
	return n
}

func fileName(source string) string {
	u, err := url.Parse(source)
	if err != nil {
		return ""
	}
	return path.Base(u.Path)
}

func underHeading(ctx context.Context, f sources.Fetcher, e research.Evidence, heading string) bool {
	doc, err := f.Fetch(ctx, e.Source)
	if err != nil {
		return false
	}
	i := strings.Index(doc.Text, e.Quote)
	if i < 0 {
		return false
	}
	lines := strings.Split(doc.Text[:i], "\n")
	for k := len(lines) - 1; k >= 0; k-- {
		if l := strings.TrimSpace(lines[k]); strings.HasPrefix(l, "#") {
			return strings.Contains(strings.ToLower(l), strings.ToLower(heading))
		}
	}
	return false
}

var (
	markerRE    = regexp.MustCompile(`\s*\[\d+(?:\s*,\s*\d+)*\]`)
	gluedCiteRE = regexp.MustCompile(`\][.!?]\p{L}`) // Latin text only: after "。" Chinese takes no space

	terminalEnds = ".!?;。！？；…)）\"'”’」』`*"
)

// Fragments lists the report's cited sentences that are not whole sentences, each as "reason: text":
//
//   - the quote ends in a colon: it introduces something (a list) that is not quoted;
//   - the quote was cut: it ends without terminal punctuation where its sentence goes on in the source, or it
//     starts in lower case in the middle of a sentence;
//   - the sentence has no verb-like word (an English sentence with neither an auxiliary nor a word ending in -s
//     or -ed; a Chinese one of fewer than four characters);
//   - a report sentence of Latin script starts in lower case where its quote does not: the report split the
//     quote's sentence (a Chinese sentence may open with a command's name: "index 会报告 …");
//   - a citation marker is glued to the next sentence ("[2].This").
func Fragments(ctx context.Context, rep *research.Report, f sources.Fetcher) []string {
	var out []string
	quotes := map[string]string{}
	for _, e := range rep.Evidence {
		quotes[e.ID] = strings.TrimLeft(strings.TrimSpace(e.Quote), "`*_[")
	}
	// A quote that starts in lower case is flagged by itself; a report sentence that does, from a quote that
	// does not, is a piece the report cut out of the quote's sentence.
	quoteStartsLower := func(ids []string) bool {
		for _, id := range ids {
			if r, _ := utf8.DecodeRuneInString(quotes[id]); unicode.IsLower(r) {
				return true
			}
		}
		return false
	}
	for _, e := range citedEvidence(rep) {
		q := strings.TrimSpace(e.Quote)
		if strings.HasSuffix(q, ":") || strings.HasSuffix(q, "：") {
			out = append(out, "ends in a colon: "+clip(q))
			continue
		}
		if startsMidSentence(q) {
			out = append(out, "starts mid-sentence: "+clip(q))
			continue
		}
		if doc, err := f.Fetch(ctx, e.Source); err == nil && cutInSource(doc.Text, q) {
			out = append(out, "cut mid-sentence: "+clip(q))
		}
	}
	for _, c := range rep.CitationMap {
		if len(c.EvidenceIDs) == 0 {
			continue
		}
		s := strings.TrimSpace(markerRE.ReplaceAllString(c.Text, ""))
		if !lexical.HasVerb(s) {
			out = append(out, "no verb: "+clip(s))
		}
		if startsMidSentence(s) && !strings.ContainsFunc(s, lexical.IsCJK) && !quoteStartsLower(c.EvidenceIDs) {
			out = append(out, "split inside its quote: "+clip(s))
		}
	}
	if m := gluedCiteRE.FindAllString(rep.Markdown, -1); len(m) > 0 {
		out = append(out, fmt.Sprintf("citation glued to the next sentence: %q", m))
	}
	return out
}

// cutInSource reports a quote that ends without terminal punctuation while its sentence goes on in text: the
// next character on the line, or on the next line of a hard-wrapped paragraph, is a letter or digit.
func cutInSource(text, quote string) bool {
	last, _ := utf8.DecodeLastRuneInString(quote)
	if strings.ContainsRune(terminalEnds, last) || strings.Contains(quote, "\t") {
		return false
	}
	i := strings.Index(text, quote)
	if i < 0 {
		// The prose of a code comment, quoted without its markers: looked for as grounding looks for it, where
		// what follows the quote on the next line, past its comment marker, counts as going on.
		text, quote = publish.NormalizeQuote(text), publish.NormalizeQuote(quote)
		if i = strings.Index(text, quote); i < 0 || quote == "" {
			return false
		}
	}
	rest := strings.TrimPrefix(strings.TrimLeft(text[i+len(quote):], " \t"), "\n")
	r, _ := utf8.DecodeRuneInString(rest)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Repeats lists the claims the report cites more than once: the same evidence item in two places, or two
// cited items that make the same statement (lexical.SameClaim).
func Repeats(rep *research.Report) []string {
	var out []string
	// A quote of two sentences is cited in both, one after the other; a repeat is the same item cited again after
	// something else.
	count := map[string]int{}
	var prev []string
	for _, c := range rep.CitationMap {
		for _, id := range c.EvidenceIDs {
			if slices.Contains(prev, id) {
				continue
			}
			count[id]++
			if count[id] == 2 {
				out = append(out, "cited twice: "+clip(markerRE.ReplaceAllString(c.Text, "")))
			}
		}
		prev = c.EvidenceIDs
	}
	ev := citedEvidence(rep)
	for i := range ev {
		for j := i + 1; j < len(ev); j++ {
			if lexical.SameClaim(ev[i].Claim, ev[j].Claim, 0.6) {
				out = append(out, "same claim as another citation: "+clip(ev[j].Claim))
			}
		}
	}
	return out
}

var notCoveredRE = map[string]*regexp.Regexp{
	"en": regexp.MustCompile(`(?i)\bnot covered\b|\bdo(es)? not cover\b`),
	"zh": regexp.MustCompile(`未涵盖|没有涵盖|不涵盖`),
}

// SaysNotCovered reports a line of the report, in the report's language, saying the sources do not cover (part
// of) the question.
func SaysNotCovered(markdown, lang string) bool {
	re, ok := notCoveredRE[lang]
	if !ok {
		re = notCoveredRE["en"]
	}
	return re.MatchString(markdown)
}

func clip(s string) string {
	if utf8.RuneCountInString(s) <= 120 {
		return s
	}
	return string([]rune(s)[:117]) + "…"
}

// startsWithCodeName reports a quote that starts with a name spelled as in code ("propagateCancel arranges …",
// "sync.Pool is …"): a Go doc comment starts with the name it documents, lower case or not.
// codeWithRemark reports a quote that is a line of code with the comment after it ("children
// map[canceler]struct{} // set to nil by the first cancel call"): a declaration and its remark, which starts where
// the code does.
func codeWithRemark(q string) bool {
	for _, marker := range []string{" // ", " # ", " -- "} {
		// Code shows by its punctuation, or by the columns gofmt aligns declarations in ("cause    error").
		if code, _, ok := strings.Cut(q, marker); ok && (strings.ContainsAny(code, "{}[]()*.=") || strings.Contains(strings.TrimSpace(code), "  ")) {
			return true
		}
	}
	return false
}

// startsMidSentence reports a text that starts in lower case without being a name in code ("propagateCancel
// arranges …") or code with its remark: the tail of a sentence.
func startsMidSentence(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLower(r) && !startsWithCodeName(s) && !codeWithRemark(s)
}

func startsWithCodeName(q string) bool {
	first, _, _ := strings.Cut(q, " ")
	for i, r := range first {
		if i > 0 && (unicode.IsUpper(r) || r == '_' || r == '.' && i < len(first)-1) {
			return true
		}
	}
	return false
}

var (
	// chromeRE are phrases of page furniture that documentation generators and web sites put around the content:
	// search boxes and their hints, edition and version banners, edit links, skip links, pagers, cookie notices,
	// footers.
	chromeRE = regexp.MustCompile(`(?i)\bpress\s+\S{1,6}(?:\s+or\s+\S{1,6})?\s+to\s+search\b|\btype to search\b|\bsearch (?:the )?docs\b|` +
		`\bnew(?:er)? (?:edition|version) of (?:this|the) (?:page|book|document)|\bno longer distributed\b|\bcurrent version of the book\b|` +
		`\bedit (?:this page|on github)\b|\bskip to (?:main )?content\b|\btable of contents\b|\b(?:previous|next) (?:page|chapter)\b|` +
		`\bwe use cookies\b|\baccept (?:all )?cookies\b|\ball rights reserved\b|\bwas this page helpful\b|\blast updated\b|\bpermalink to this\b`)
	commentLineRE = regexp.MustCompile(`^\s*(?://|/\*|\*|#(?:\s|$)|--|;;)`)
	fenceRE       = regexp.MustCompile("^\\s*(?:```|~~~)")
)

// Furniture lists the report's cited sentences that are page furniture and not findings, each as
// "reason: text": navigation and other chrome (a search hint, an edition banner, an edit link, a pager, a cookie
// notice: chromeRE), the caption of a listing or figure on its own, or a comment taken out of a code block of a
// document (the quote stands on a commented line inside a fenced block, and is not the whole block).
func Furniture(ctx context.Context, rep *research.Report, f sources.Fetcher) []string {
	var out []string
	for _, c := range rep.CitationMap {
		if len(c.EvidenceIDs) == 0 {
			continue
		}
		s := strings.TrimSpace(markerRE.ReplaceAllString(c.Text, ""))
		switch {
		case chromeRE.MatchString(s):
			out = append(out, "navigation: "+clip(s))
		case lexical.IsCaption(s):
			out = append(out, "caption: "+clip(s))
		case strings.Contains(s, "<!--"):
			// An HTML comment in a Markdown source ("<!-- YAML added: v0.7.8 -->") is markup no reader sees.
			out = append(out, "markup: "+clip(s))
		}
	}
	for _, e := range citedEvidence(rep) {
		if strings.Contains(e.Quote, "```") || isSourceFile(e.Source) {
			continue
		}
		doc, err := f.Fetch(ctx, e.Source)
		if err != nil {
			continue
		}
		if inCodeComment(doc.Text, e.Quote) {
			out = append(out, "comment out of its code: "+clip(e.Quote))
		}
	}
	return out
}

// isSourceFile reports a source code file, whose comments are its prose: one the format registry reads as code.
func isSourceFile(source string) bool {
	fm, ok := extract.Builtin().ByPath(fileName(source))
	return ok && (fm.Layout == extract.LayoutCode || fm.Layout == extract.LayoutGo)
}

// inCodeComment reports a quote whose first line stands on a commented line inside a fenced code block of text.
func inCodeComment(text, quote string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(quote), "\n")
	if first == "" {
		return false
	}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if fenceRE.MatchString(line) {
			fenced = !fenced
			continue
		}
		if fenced && strings.Contains(line, first) {
			if commentLineRE.MatchString(line) {
				return true
			}
			if i := strings.Index(line, "//"); i >= 0 && i < strings.Index(line, first) {
				return true
			}
		}
	}
	return false
}
