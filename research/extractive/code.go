package extractive

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/sources"
)

// Source code is read through its comments. In a code file the prose is in comments — doc comments on
// declarations, notes inside function bodies, remarks after a struct field — and a sentence of it is spread over
// several lines, each behind a comment marker. The analyst reads a code file as a view: every comment paragraph as
// one line of prose with the markers taken out, a trailing comment together with the code it annotates, and
// before the comments of each declaration a heading naming it. A quote is cut from the view and cited by the
// source lines it came from; grounding compares texts with comment markers dropped (publish.NormalizeQuote,
// whose rules are lexical.CommentWord's), so the prose of a comment is found, verbatim, on exactly those lines.
// Code itself is not quoted, except a line that a trailing comment explains.

// commentSyntax is how one language writes comments.
type commentSyntax struct {
	line      string // the line comment marker: //, # or --
	block     bool   // /* … */
	docString bool   // Python's """ … """ and ''' … '''
}

var (
	cFamily  = commentSyntax{line: "//", block: true}
	hashLine = commentSyntax{line: "#"}
)

// commentSyntaxes are the languages the corpus labels (text/x-<language>) whose comments the view reads.
var commentSyntaxes = map[string]commentSyntax{
	"go": cFamily, "c": cFamily, "c++": cFamily, "java": cFamily, "javascript": cFamily, "typescript": cFamily,
	"rust": cFamily, "kotlin": cFamily, "scala": cFamily, "csharp": cFamily, "swift": cFamily, "php": cFamily,
	"protobuf": cFamily,
	"python":   {line: "#", docString: true},
	"shell":    hashLine, "ruby": hashLine, "yaml": hashLine, "toml": hashLine, "make": hashLine,
	"dockerfile": hashLine, "ini": hashLine,
	"sql": {line: "--", block: true}, "lua": {line: "--"},
}

// codeSyntax returns the comment syntax of a document that is source code, by its content type.
func codeSyntax(doc *sources.Document) (commentSyntax, bool) {
	lang, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(doc.ContentType)), "text/x-")
	if !ok {
		return commentSyntax{}, false
	}
	s, ok := commentSyntaxes[lang]
	return s, ok
}

// viewPart kinds.
const (
	partProse    = iota // a comment paragraph
	partTrailing        // a code line and the comment after it
	partHeading         // the declaration the comments below belong to
	partExample         // an indented line of a comment: a code example
)

// codeView is a source file read as prose. offs maps every byte of text to the byte of the source it came from;
// kind gives, for every byte, the kind of part it belongs to.
type codeView struct {
	text string
	offs []int32
	kind []uint8
}

// source returns the source offset of view offset v (the end of the source for the end of the view).
func (cv *codeView) source(v int, srcLen int) int {
	if v >= len(cv.offs) {
		return srcLen
	}
	return int(cv.offs[v])
}

// viewRange maps the source byte range [lo, hi) to the view: the view bytes that came from inside it.
func (cv *codeView) viewRange(lo, hi int) (int, int) {
	s, e := -1, 0
	for v, o := range cv.offs {
		if int(o) >= lo && int(o) < hi {
			if s < 0 {
				s = v
			}
			e = v + 1
		}
	}
	if s < 0 {
		return 0, 0
	}
	return s, e
}

// srcLine is one line of the source: its byte range and its indentation.
type srcLine struct {
	start, end int
	indent     int
}

// buildCodeView reads src as prose by the comment syntax syn.
func buildCodeView(src string, syn commentSyntax) *codeView {
	var lines []srcLine
	for off := 0; off <= len(src); {
		nl := strings.IndexByte(src[off:], '\n')
		end := len(src)
		if nl >= 0 {
			end = off + nl
		}
		l := src[off:end]
		lines = append(lines, srcLine{start: off, end: end, indent: len(l) - len(strings.TrimLeft(l, " \t"))})
		if nl < 0 {
			break
		}
		off = end + 1
	}
	b := &viewBuilder{src: src}
	type piece struct{ start, end int } // a comment line's prose, as a byte range of src
	var para []piece
	kind := uint8(partProse)
	flush := func() {
		for k, p := range para {
			if k > 0 {
				b.add(" ", para[k-1].end, kind)
			}
			b.add(src[p.start:p.end], p.start, kind)
		}
		if len(para) > 0 {
			b.add("\n\n", para[len(para)-1].end, kind)
		}
		para, kind = para[:0], partProse
	}
	cls := classifyLines(src, lines, syn)
	heading := -1 // the line of the declaration whose heading was written last
	headFor := func(k int) {
		d := declFor(src, lines, cls, k)
		if d >= 0 && d != heading {
			flush()
			heading = d
			sig := declSignature(src, lines, cls, d)
			b.add("# "+sig, lines[d].start, partHeading)
			if words := identifierWords(sig); words != "" {
				b.add(" "+words, lines[d].end, partHeading)
			}
			b.add("\n\n", lines[d].end, partHeading)
		}
	}
	for k, ln := range lines {
		t := strings.TrimSpace(src[ln.start:ln.end])
		tStart := ln.start + ln.indent
		c := cls[k]
		s, e, cut := c.s, c.e, c.cut // the prose of this line, as a range of src; s < 0: not a comment line
		if c.opens {
			headFor(k)
		}
		if s < 0 {
			flush()
			if trailingComment(t, syn.line) && declaresOutsideBody(src, lines, cls, k, t, syn.line) {
				headFor(k)
				b.add(t, tStart, partTrailing)
				b.add("\n\n", ln.end, partTrailing)
			}
			continue
		}
		s, e = proseOf(src, s, e)
		switch {
		case s >= e: // a blank comment line ends a paragraph
			flush()
		case src[s] == '\t' || strings.HasPrefix(src[s:e], "  ") || startsListItem(src[s:e]):
			// An indented line (a code example in a doc comment) or a list item stands on its own.
			flush()
			if !startsListItem(src[s:e]) {
				kind = partExample
			}
			s, e = trimRange(src, s, e)
			para = append(para, piece{s, e})
			flush()
		default:
			s, e = trimRange(src, s, e)
			para = append(para, piece{s, e})
		}
		if cut {
			flush()
		}
	}
	flush()
	return &codeView{text: b.text.String(), offs: b.offs, kind: b.kind}
}

// lineClass is what one source line is to the view: a comment line's prose range [s, e) of the source (s < 0
// for a line of code), whether the comment ends before the line does (cut: "*/ code"), and whether the line opens
// a comment rather than continuing a block comment or docstring begun above (opens).
type lineClass struct {
	s, e  int
	cut   bool
	opens bool
}

// comment reports whether the line is part of a comment: a line comment, or any line of a block comment or
// docstring — whose lines at the left margin are prose, not the declaration a comment above belongs to.
func (c lineClass) comment() bool { return c.s >= 0 }

// classifyLines reads the comment syntax of every line of src: line comments, /* … */ blocks and docstrings
// spanning lines.
func classifyLines(src string, lines []srcLine, syn commentSyntax) []lineClass {
	cls := make([]lineClass, len(lines))
	inBlock, inDoc := false, ""
	for k, ln := range lines {
		t := strings.TrimSpace(src[ln.start:ln.end])
		tStart := ln.start + ln.indent
		c := lineClass{s: -1}
		// A comment that ends before its line does ("*/ code") ends its paragraph there: the prose goes on only
		// where nothing but comment stands between.
		switch {
		case inBlock:
			c.s, c.e = tStart, tStart+len(t)
			if i := strings.Index(t, "*/"); i >= 0 {
				inBlock = false
				c.e = tStart + i + 2
				c.cut = strings.TrimSpace(t[i+2:]) != ""
			}
		case inDoc != "":
			c.s, c.e = tStart, tStart+len(t)
			if i := strings.Index(t, inDoc); i >= 0 {
				inDoc = ""
				c.e = tStart + i + 3
				c.cut = strings.TrimSpace(t[i+3:]) != ""
			}
		case syn.docString && (strings.HasPrefix(t, `"""`) || strings.HasPrefix(t, `'''`)):
			c.s, c.e, c.opens = tStart, tStart+len(t), true
			if i := strings.Index(t[3:], t[:3]); i < 0 {
				inDoc = t[:3]
			} else {
				c.e = tStart + 3 + i + 3
				c.cut = strings.TrimSpace(t[3+i+3:]) != ""
			}
		case syn.block && strings.HasPrefix(t, "/*"):
			c.s, c.e, c.opens = tStart, tStart+len(t), true
			if i := strings.Index(t[2:], "*/"); i >= 0 {
				c.e = tStart + 2 + i + 2
				c.cut = strings.TrimSpace(t[2+i+2:]) != ""
			} else {
				inBlock = true
			}
		case isLineComment(t, syn.line):
			c.s, c.e, c.opens = tStart, tStart+len(t), true
		}
		cls[k] = c
	}
	return cls
}

// viewBuilder accumulates the view text with its source offsets.
type viewBuilder struct {
	src  string
	text strings.Builder
	offs []int32
	kind []uint8
}

// add appends s; when s is a slice of the source starting at offset at, each byte maps to its own source byte,
// otherwise (separators, headings' extra words) every byte maps to at.
func (b *viewBuilder) add(s string, at int, kind uint8) {
	own := at+len(s) <= len(b.src) && b.src[at:at+len(s)] == s
	for i := range len(s) {
		o := at
		if own {
			o = at + i
		}
		b.offs = append(b.offs, int32(o))
		b.kind = append(b.kind, kind)
	}
	b.text.WriteString(s)
}

// isLineComment reports whether the trimmed line t is a line comment: it starts with the marker, standing alone
// as a word ("// text", "//", "///", "# text"); a marker glued to a word is a directive or code ("//go:build",
// "#include", "--flag").
func isLineComment(t, marker string) bool {
	if marker == "" || !strings.HasPrefix(t, marker) {
		return false
	}
	w, _, _ := strings.Cut(t, " ")
	w, _, _ = strings.Cut(w, "\t")
	return lexical.CommentMarker(w)
}

// proseOf narrows the comment line src[s:e] to its prose: the markers at its start and end (the words
// lexical.CommentWord takes out, so the prose is what grounding compares) are dropped.
func proseOf(src string, s, e int) (int, int) {
	s, e = trimRange(src, s, e)
	// Leading marker words, or a marker glued to the first word.
	for s < e {
		w := src[s:e]
		if i := strings.IndexFunc(w, unicode.IsSpace); i >= 0 {
			w = w[:i]
		}
		if w == "" {
			break // white space after a marker: an indented line
		}
		ws, we := lexical.CommentWord(w)
		if ws == we {
			s += len(w)
			// Keep the white space after the marker but one: an indented line after "//" is a code example.
			if s < e && src[s] == ' ' {
				s++
			}
			continue
		}
		s += ws
		break
	}
	// Trailing marker words ("*/", `"""`) or a marker glued to the last word.
	for e > s {
		t := strings.TrimRightFunc(src[s:e], unicode.IsSpace)
		e = s + len(t)
		i := strings.LastIndexFunc(t, unicode.IsSpace) + 1
		w := t[i:]
		ws, we := lexical.CommentWord(w)
		if we == len(w) && ws == 0 {
			break
		}
		if ws == we {
			e = s + i
			continue
		}
		e = s + i + we
		break
	}
	return s, e
}

func trimRange(src string, s, e int) (int, int) {
	for s < e && (src[s] == ' ' || src[s] == '\t' || src[s] == '\r') {
		s++
	}
	for e > s && (src[e-1] == ' ' || src[e-1] == '\t' || src[e-1] == '\r') {
		e--
	}
	return s, e
}

func startsListItem(s string) bool {
	return listItemRE.MatchString(s)
}

// trailingComment finds a comment after code on the trimmed line t ("children map[canceler]struct{} // set to
// nil by the first cancel call"): the marker must stand alone, after white space, outside a string, and the
// comment must say enough (three words) to be evidence.
func trailingComment(t, marker string) bool {
	if marker == "" {
		return false
	}
	i := strings.Index(t, " "+marker+" ")
	if i < 0 {
		i = strings.Index(t, "\t"+marker+" ")
	}
	if i <= 0 || strings.Count(t[:i], `"`)%2 == 1 || strings.Count(t[:i], "`")%2 == 1 {
		return false
	}
	return len(lexical.Tokenize(t[i+len(marker)+1:])) >= 3
}

// declFor returns the line of the declaration the comment on line k belongs to: for a comment at the left margin,
// the code line right after its comment block (a doc comment); for an indented one, the member declared right
// after its comment block (a method's doc comment), or else the innermost declaration it is inside — of the code lines enclosing it (each less indented than the one before), the first that declares a
// function, method or class (declarationLine), or else the one at the left margin (the function or type it is
// inside). -1 when there is none.
func declFor(src string, lines []srcLine, cls []lineClass, k int) int {
	isCode := func(j int) bool { return codeLine(src, lines, cls, j) }
	if lines[k].indent == 0 {
		for j := k + 1; j < len(lines); j++ {
			t := strings.TrimSpace(src[lines[j].start:lines[j].end])
			if t == "" && !cls[j].comment() { // a blank line in a block comment goes on with it
				break
			}
			if isCode(j) {
				if lines[j].indent == 0 {
					return j
				}
				break
			}
		}
		return -1
	}
	// An indented doc comment: the member declared right below it ("/** Runs the program. */ async run() {").
	for j := k + 1; j < len(lines); j++ {
		if strings.TrimSpace(src[lines[j].start:lines[j].end]) == "" && !cls[j].comment() {
			break
		}
		if isCode(j) {
			if lines[j].indent == lines[k].indent && declarationLine(strings.TrimSpace(src[lines[j].start:lines[j].end])) {
				return j
			}
			break
		}
	}
	limit := lines[k].indent
	for j := k - 1; j >= 0; j-- {
		if lines[j].indent >= limit || !isCode(j) {
			continue
		}
		if lines[j].indent == 0 || declarationLine(strings.TrimSpace(src[lines[j].start:lines[j].end])) {
			return j
		}
		limit = lines[j].indent
	}
	return -1
}

// codeLine reports whether line j is code that may be a declaration: not blank, not a comment (nor a line inside
// a block comment or docstring), not only brackets ("{", "});").
func codeLine(src string, lines []srcLine, cls []lineClass, j int) bool {
	if cls != nil && cls[j].comment() {
		return false
	}
	t := strings.TrimSpace(src[lines[j].start:lines[j].end])
	return t != "" && !strings.HasPrefix(t, "//") && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "/*") &&
		!strings.HasPrefix(t, "*") && !strings.HasPrefix(t, "--") && !strings.HasPrefix(t, `"""`) &&
		strings.Trim(t, "{})];, \t") != ""
}

var (
	// declKeywordRE: a line that starts with a declaring keyword, after modifiers ("export default async function",
	// "public static void main(", "pub fn", "def", "class").
	declKeywordRE = regexp.MustCompile(`^(?:(?:export|default|public|private|protected|static|final|abstract|async|pub(?:\([a-z]+\))?|override|virtual|inline|extern)\s+)*(?:func|function\*?|def|class|fn|impl|trait|struct|enum|interface|module|namespace|object)\b`)
	// declAssignRE: a name bound to a function or class ("const f = (a) => {", "onload: function (e) {",
	// "\"runtime.wasmExit\": (sp) => {", "Go = class {").
	declAssignRE = regexp.MustCompile(`^(?:(?:export\s+)?(?:const|let|var)\s+)?[\w$.]+|^"[^"]+"|^'[^']+'`)
	declValueRE  = regexp.MustCompile(`^\s*[:=]\s*(?:async\s+)?(?:function\b|class\b|\([^()]*\)\s*=>|[\w$]+\s*=>)`)
	// declMethodRE: a method with its body ("async run(instance) {", "constructor() {", "String toString() {").
	declMethodRE = regexp.MustCompile(`^(?:(?:async|static|get|set|public|private|protected|final|override|[\w<>\[\]]+)\s+)*([\w$]+)\s*\([^;]*\)\s*(?:throws [\w, .]+)?\{$`)
)

// declarationLine reports whether the trimmed code line t declares a function, method or class, so that the
// comments in its body are headed by it rather than by the outermost block they are in (a module wrapper, an
// object literal, a class).
func declarationLine(t string) bool {
	if declKeywordRE.MatchString(t) {
		return true
	}
	if m := declAssignRE.FindString(t); m != "" && declValueRE.MatchString(t[len(m):]) {
		return true
	}
	first, _, _ := strings.Cut(t, " ")
	if m := declMethodRE.FindStringSubmatch(t); m != nil && !statementWord(m[1]) && !statementWord(first) {
		return true
	}
	return false
}

// statementWord reports a word that starts a statement with a block ("if (…) {", "catch (e) {"), not a method.
func statementWord(w string) bool {
	switch w {
	case "catch", "try", "finally", "foreach", "synchronized", "using", "lock", "with", "do", "elif", "except", "when",
		"unless", "until", "match", "loop":
		return true
	}
	return controlWords[w]
}

// typeOnlyRE is a line that is nothing but a return type and its qualifiers ("static void", "int *"): C and its
// kin often put it on the line above the function's name.
var typeOnlyRE = regexp.MustCompile(`^[A-Za-z_][\w]*(?:\s+[A-Za-z_][\w]*)*[\s*]*$`)

// declSignature is the heading of the declaration on line d: the line without its opening bracket, with the
// return type of a C-style definition written on the line above or below the name put together with it ("void"
// then "x_cgo_yield()" → "void x_cgo_yield()").
func declSignature(src string, lines []srcLine, cls []lineClass, d int) string {
	line := func(j int) string { return strings.TrimSpace(src[lines[j].start:lines[j].end]) }
	sig := line(d)
	switch {
	case typeOnlyRE.MatchString(sig) && !controlWords[sig] && d+1 < len(lines) && codeLine(src, lines, cls, d+1) &&
		lines[d+1].indent == lines[d].indent && strings.Contains(line(d+1), "("):
		sig += " " + line(d+1)
	case strings.Contains(sig, "(") && d > 0 && codeLine(src, lines, cls, d-1) && lines[d-1].indent == lines[d].indent &&
		typeOnlyRE.MatchString(line(d-1)) && !controlWords[line(d-1)]:
		sig = line(d-1) + " " + sig
	}
	return strings.TrimRight(sig, "{(= \t")
}

// identifierWords spells the identifiers of a declaration in words, split as camelWords splits them: "func
// propagateCancel(parent Context, child canceler)" → "propagate cancel", so that a question about propagating
// cancellation finds it; "class HTTPServer" → "http server". An identifier of one word adds nothing.
func identifierWords(sig string) string {
	var out []string
	for _, f := range strings.FieldsFunc(sig, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if words := camelWords(f); len(words) > 1 {
			out = append(out, strings.ToLower(strings.Join(words, " ")))
		}
	}
	return strings.Join(out, " ")
}

// partOf returns the kind of view part span sp lies in.
func (cv *codeView) partOf(sp lexical.Span) uint8 {
	if sp.Start >= len(cv.kind) {
		return partHeading
	}
	return cv.kind[sp.Start]
}

// usable reports whether a passage of the view can stand as evidence: a sentence of a comment (one starting in
// lower case only at the start of its paragraph, where it names a declaration: "propagateCancel arranges …"),
// or a trailing comment with its line; never a heading or a code example.
func (cv *codeView) usable(sp lexical.Span, plain string, tokens []string) bool {
	switch cv.partOf(sp) {
	case partTrailing:
		return true
	case partProse:
	default:
		return false
	}
	if len(tokens) < 3 {
		return false
	}
	size, letters, total := 0, 0, 0
	for _, r := range plain {
		if lexical.IsCJK(r) {
			size += 2
		} else {
			size++
		}
		if !unicode.IsSpace(r) {
			total++
			if unicode.IsLetter(r) {
				letters++
			}
		}
	}
	if size < minPassage-4 || total == 0 || float64(letters)/float64(total) < 0.6 || isDiagram(plain) {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(plain); unicode.IsLower(r) {
		// A sentence may start with the name of a declaration ("propagateCancel arranges …"); otherwise a lower-case
		// start is a note, not a sentence ("parent is already canceled"), or the tail of a sentence cut short.
		first, _, _ := strings.Cut(plain, " ")
		return (sp.Start == 0 || cv.text[sp.Start-1] == '\n') && codeIdentifier(first)
	}
	return true
}

// claim spells out a trailing comment as a sentence about the code it annotates: "`children
// map[canceler]struct{}`: set to nil by the first cancel call." "" for other parts.
func (cv *codeView) claim(sp lexical.Span) string {
	if cv.partOf(sp) != partTrailing {
		return ""
	}
	for _, m := range []string{" // ", " # ", " -- ", "\t// ", "\t# ", "\t-- "} {
		if code, comment, ok := strings.Cut(sp.Text, m); ok {
			comment = strings.TrimSpace(comment)
			if last, _ := utf8.DecodeLastRuneInString(comment); !strings.ContainsRune(".!?。", last) {
				comment += "."
			}
			return "`" + strings.TrimSpace(code) + "`: " + comment
		}
	}
	return ""
}

// lines returns the source lines the quote text[qs:qe] of a document stands on: for a code view, the lines its
// prose came from.
func (ix *docIndex) lines(src string, qs, qe int) (first, last int) {
	if ix.view == nil {
		return lexical.LineAt(src, qs), lexical.LineAt(src, qe)
	}
	return lexical.LineAt(src, ix.view.source(qs, len(src))), lexical.LineAt(src, ix.view.source(max(qs, qe-1), len(src)))
}

// opensComment reports whether passage i of a code view begins a comment paragraph: there "This function …" and
// "It …" refer to the declaration the comment is on, not to a sentence before.
func (ix *docIndex) opensComment(i int) bool {
	sp := ix.spans[i]
	return ix.view != nil && ix.view.partOf(sp) == partProse && (sp.Start == 0 || ix.text[sp.Start-1] == '\n')
}

// declCoverage is, for a passage of a code view, how much of the query the comments of its declaration cover
// together (0 for other documents): a comment inside a function body ("Drop victim caches from all pools.") is
// about what the function does, which its other comments say ("This function is called … at the beginning of a
// garbage collection."). memo holds the coverage of each declaration for one query.
func (ix *docIndex) declCoverage(a *Analyst, variants []variant, i int, memo map[int]float64) float64 {
	if ix.view == nil {
		return 0
	}
	h := ix.declOf(i)
	if c, ok := memo[h]; ok {
		return c
	}
	var all []string
	for j := range ix.spans {
		if ix.usable[j] && ix.declOf(j) == h {
			all = append(all, ix.own[j]...)
		}
	}
	c := a.coverageOf(ix, variants, nil, append(all, ix.head[i]...))
	memo[h] = c
	return c
}

// declOf returns the index of the heading passage i stands under (-1 before the first).
func (ix *docIndex) declOf(i int) int {
	h := -1
	for k, hd := range ix.heads {
		if hd.Start > ix.spans[i].Start {
			break
		}
		h = k
	}
	return h
}

// headings keeps, of the headings found in the view, those it wrote: a short comment standing alone between
// blank lines ("Implemented in runtime") is prose, not the heading of a plain-text document.
func (cv *codeView) headings(hs []lexical.Span) []lexical.Span {
	var out []lexical.Span
	for _, h := range hs {
		if h.Start < len(cv.kind) && cv.kind[h.Start] == partHeading {
			out = append(out, h)
		}
	}
	return out
}

// codeIdentifier reports whether word is spelled as a name in code rather than a word of prose: camelCase,
// snake_case or dotted ("propagateCancel", "run_once", "sync.Pool").
func codeIdentifier(word string) bool {
	for i, r := range word {
		if i > 0 && (unicode.IsUpper(r) || r == '_' || r == '.' && i < len(word)-1) {
			return true
		}
	}
	return false
}

// controlWords start statements, not declarations.
var controlWords = map[string]bool{"return": true, "if": true, "for": true, "else": true, "switch": true, "case": true,
	"default": true, "go": true, "defer": true, "break": true, "continue": true, "goto": true, "select": true,
	"while": true, "raise": true, "yield": true, "throw": true, "}": true}

// declaresOutsideBody reports whether the code line k (trimmed: t) with a trailing comment declares something —
// a struct field, a constant, a variable at package level — rather than being a statement inside a function
// body, whose comment is a note on one step.
func declaresOutsideBody(src string, lines []srcLine, cls []lineClass, k int, t, marker string) bool {
	code := t
	if i := strings.Index(t, " "+marker+" "); i >= 0 {
		code = t[:i]
	} else if i := strings.Index(t, "\t"+marker+" "); i >= 0 {
		code = t[:i]
	}
	code = strings.TrimSpace(code)
	first, _, _ := strings.Cut(code, " ")
	if controlWords[first] || strings.Contains(code, ":=") || strings.HasSuffix(code, "{") {
		return false
	}
	if lines[k].indent == 0 {
		return true
	}
	d := declFor(src, lines, cls, k)
	if d < 0 {
		return true
	}
	decl := strings.TrimSpace(src[lines[d].start:lines[d].end])
	for _, body := range []string{"func ", "def ", "function ", "fn ", "pub fn ", "async def ", "async function "} {
		if strings.HasPrefix(decl, body) {
			return false
		}
	}
	return true
}

// exampleContext is the code-example rule of a code view: a comment paragraph right after code examples speaks of
// them ("func Syscall(…)", "func RawSyscall(…)", then "The first and second are the standard ones; they differ
// only in how many arguments can be passed to the kernel. The third …"), so the examples' text counts among the
// terms of every passage of that paragraph, as a section heading's does. It is fed the passages of a view in
// order.
type exampleContext struct {
	text    []string // the examples just read
	pending bool     // examples were read and no paragraph has followed yet
	active  string   // the examples the current paragraph speaks of
}

// of returns the example text passage sp (plain: its text) speaks of, or "".
func (ec *exampleContext) of(cv *codeView, text string, sp lexical.Span, plain string) string {
	opens := sp.Start == 0 || text[sp.Start-1] == '\n'
	switch cv.partOf(sp) {
	case partExample:
		if !ec.pending {
			ec.text = ec.text[:0]
		}
		ec.text = append(ec.text, plain)
		ec.pending, ec.active = true, ""
		return ""
	case partProse:
		if opens {
			ec.active = ""
			if ec.pending {
				ec.active = strings.Join(ec.text, " ")
			}
			ec.pending = false
		}
		return ec.active
	}
	ec.pending, ec.active = false, ""
	return ""
}
