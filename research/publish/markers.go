package publish

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
)

// Models cite in more ways than the one they are asked for: full-width brackets (【e3】, ［e3］), footnotes
// ([^e3]), upper case ([E3]), a source tag after the id ([e3†L10-L12]), doubled brackets ([[e3]]). What names
// evidence ids is rewritten to the one form the integrity check reads ([e3]); a citation-like marker that names
// none (【3†source】, [^2], [source]) is a stray: the sentence carrying it is refused for its citation format, and a
// heading or a table's header row, which is published unchecked, loses it. No stray marker is ever published.

var (
	// bracketRe matches one bracketed span on one line, in ASCII or full-width brackets, with what follows it
	// (a Markdown link's "(" must be left alone).
	bracketRe = regexp.MustCompile(`\[\[([^\[\]\n]{1,80})\]\]|\[([^\[\]\n]{1,80})\]|【([^【】\n]{1,80})】|［([^［］\n]{1,80})］|〔([^〔〕\n]{1,80})〕|〖([^〖〗\n]{1,80})〗`)
	// citeJunkRe is what a model puts around ids: a footnote caret, a source tag after a dagger, a label.
	citeJunkRe = regexp.MustCompile(`(?i)†[^,;，、]*|^\s*\^|^\s*(?:evidence|source|sources|ref|refs|cite|citation|citations|来源|证据|引用)\s*[:：]?\s*`)
	idListRe   = regexp.MustCompile(`(?i)^\s*e\d+(?:\s*(?:[,;，、]|\s)\s*e\d+)*\s*$`)
	idRe       = regexp.MustCompile(`(?i)e\d+`)
	// citeWordRe is a bracket that only names a citation: [source], [citation needed], 【来源】.
	citeWordRe = regexp.MustCompile(`(?i)^\s*(?:sources?|citations?(?:\s+needed)?|refs?|references?|cite|来源|引用|出处|参考)\s*$`)
	digitRe    = regexp.MustCompile(`\d`)
)

// CanonicalMarkers rewrites every citation marker of a draft that names evidence ids to the form "[e3, e7]".
func CanonicalMarkers(markdown string) string {
	if !strings.ContainsAny(markdown, "[【［〔〖") {
		return markdown
	}
	return replaceMarkers(markdown, func(m string, inner string, ascii bool) (string, bool) {
		if ascii && markerRe.MatchString(m) && "["+inner+"]" == m {
			return m, false // already the canonical form (or a bare number, which the check refuses)
		}
		ids, ok := citationIDs(inner)
		if !ok {
			return m, false
		}
		return "[" + strings.Join(ids, ", ") + "]", true
	})
}

// citationIDs returns the evidence ids a marker's inside names, lower-cased, when it holds nothing else than
// ids and the decoration models add.
func citationIDs(inner string) ([]string, bool) {
	rest := citeJunkRe.ReplaceAllString(inner, "")
	if !idListRe.MatchString(rest) {
		return nil, false
	}
	var ids []string
	for _, id := range idRe.FindAllString(rest, -1) {
		ids = append(ids, strings.ToLower(id))
	}
	return ids, len(ids) > 0
}

// ReadsAsCitation reports whether s, published as prose, holds something the integrity check reads as a citation
// marker ("[1, 2, 3]", "[e3]", "【3】"): code quoted in a report keeps its code marks when it does.
func ReadsAsCitation(s string) bool {
	return markerRe.MatchString(s) || len(strayMarkers(s)) > 0
}

// strayMarkers returns the citation-like markers of s that name no evidence id the canonical form can read.
func strayMarkers(s string) []string {
	if !strings.ContainsAny(s, "[【［〔〖") {
		return nil
	}
	var out []string
	replaceMarkers(s, func(m, inner string, ascii bool) (string, bool) {
		if isStray(m, inner, ascii) {
			out = append(out, m)
		}
		return m, false
	})
	return out
}

// stripMarkers removes every citation marker, canonical or stray, from a line that is published unchecked.
func stripMarkers(line string) string {
	line = dropMarkers(line, "")
	if !strings.ContainsAny(line, "[【［〔〖") {
		return line
	}
	return replaceMarkers(line, func(m, inner string, ascii bool) (string, bool) {
		if isStray(m, inner, ascii) {
			return "", true
		}
		return m, false
	})
}

func isStray(m, inner string, ascii bool) bool {
	if ascii && markerRe.MatchString(m) && "["+inner+"]" == m {
		return false // an id or a bare number: the check reads those itself
	}
	if _, ok := citationIDs(inner); ok {
		return true // names ids but in a form the check does not read (CanonicalMarkers was not applied)
	}
	t := strings.TrimSpace(inner)
	if citeWordRe.MatchString(t) {
		return true
	}
	if strings.Contains(t, "†") || strings.HasPrefix(t, "^") {
		return true
	}
	// A full-width bracket round a number is a citation; round words it is punctuation (【注意】).
	return !ascii && digitRe.MatchString(t) && utf8.RuneCountInString(t) <= 24
}

// inLineCode reports whether s[a:z], which lies on one line, is inside a code span of that line. Spans are read
// line by line: a backtick left open on one line never hides the citations of another.
func inLineCode(s string, a, z int) bool {
	start := strings.LastIndexByte(s[:a], '\n') + 1
	end := len(s)
	if k := strings.IndexByte(s[z:], '\n'); k >= 0 {
		end = z + k
	}
	return slices.ContainsFunc(lexical.CodeSpans(s[start:end]), func(c lexical.CodeSpan) bool {
		return c.Start <= a-start && z-start <= c.End
	})
}

// replaceMarkers calls fn on every bracketed span of s that is not the text of a Markdown link or image, and
// replaces it with what fn returns when fn says to.
func replaceMarkers(s string, fn func(m, inner string, ascii bool) (string, bool)) string {
	var b strings.Builder
	last := 0
	code := strings.Contains(s, "`")
	for _, loc := range bracketRe.FindAllStringSubmatchIndex(s, -1) {
		a, z := loc[0], loc[1]
		if z < len(s) && s[z] == '(' || a > 0 && s[a-1] == '!' {
			continue // [text](url), ![alt](src)
		}
		if code && inLineCode(s, a, z) {
			continue // code: `[1, 2, 3]`, `【x】`
		}
		inner, ascii := "", false
		for g := 1; g < len(loc)/2; g++ {
			if loc[2*g] >= 0 {
				inner, ascii = s[loc[2*g]:loc[2*g+1]], g <= 2
				break
			}
		}
		rep, ok := fn(s[a:z], inner, ascii)
		if !ok {
			continue
		}
		b.WriteString(s[last:a])
		b.WriteString(rep)
		last = z
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// UnwrapReport returns the report a model's draft holds, the one way every role set's draft is unwrapped. A
// model asked for Markdown often wraps it in a ```markdown (or ```md, ```text, bare ```, ~~~) fence, with a
// line of preamble before it and an offer of more after it: a fenced block of prose that looks like a report
// (a heading or a citation) while what stands outside it does not is the report, and the prose around it is
// dropped. Inside it the fences the report itself opens (```go … ```) are matched, so a code block of the
// report does not end it, and a fence never closed (a cut-off answer) runs to the end. Otherwise fenced prose
// blocks that cite evidence lose their fences (they are the report's text, not code from a source), a block of
// code is left as it is, for the check to compare with the quotes, and an uncited preamble before the title
// is dropped.
func UnwrapReport(draft string) string {
	lines := strings.Split(strings.ReplaceAll(draft, "\r\n", "\n"), "\n")
	var cited []int // the opening lines of fenced prose blocks that cite evidence
	closes := map[int]int{}
	for i := 0; i < len(lines); i++ {
		fence, info, ok := fenceLine(lines[i])
		if !ok {
			continue
		}
		if !proseInfo(info) {
			i = skipFence(lines, i, fence) // a code block of the draft itself
			continue
		}
		end := closeFence(lines, i, fence)
		body := strings.Join(lines[i+1:end], "\n")
		outside := strings.Join(lines[:i], "\n")
		if end < len(lines) {
			outside += "\n" + strings.Join(lines[end+1:], "\n")
		}
		if looksLikeReport(body) && !looksLikeReport(outside) {
			return strings.TrimSpace(body)
		}
		if citesEvidence(body) {
			cited = append(cited, i)
			closes[i] = end
		}
		i = end
	}
	if len(cited) == 0 {
		return dropPreamble(draft)
	}
	drop := map[int]bool{}
	for _, open := range cited {
		drop[open], drop[closes[open]] = true, true
	}
	out := make([]string, 0, len(lines))
	for i, l := range lines {
		if !drop[i] {
			out = append(out, l)
		}
	}
	return dropPreamble(strings.Join(out, "\n"))
}

// fenceLine reads a line that opens or closes a fence: its marker (``` or ~~~, as long as written) and the
// first word of its info string (the language), ok false for any other line.
func fenceLine(line string) (fence, info string, ok bool) {
	t := strings.TrimSpace(line)
	fence = fenceOf(t)
	if fence == "" {
		return "", "", false
	}
	rest := strings.TrimSpace(t[len(fence):])
	if fence[0] == '`' && strings.Contains(rest, "`") {
		return "", "", false // inline code, not a fence (CommonMark)
	}
	if f := strings.Fields(rest); len(f) > 0 {
		info = strings.ToLower(f[0])
	}
	return fence, info, true
}

// proseInfo reports whether a fence's info string labels prose: none, markdown, md, text.
func proseInfo(info string) bool {
	switch info {
	case "", "markdown", "md", "text", "txt":
		return true
	}
	return false
}

// closeFence returns the line that closes the prose fence opened at line open with marker: the first bare fence
// of at least its length that closes no fence opened inside it; len(lines) when the draft never closes it.
func closeFence(lines []string, open int, marker string) int {
	depth := 0
	for j := open + 1; j < len(lines); j++ {
		m, info, ok := fenceLine(lines[j])
		if !ok || m[0] != marker[0] {
			continue
		}
		switch {
		case info != "":
			depth++ // a fence the report opens inside the wrapper
		case depth > 0:
			depth--
		case len(m) >= len(marker):
			return j
		}
	}
	return len(lines)
}

// skipFence returns the line closing the code block opened at line open (len(lines)-1 when never closed).
func skipFence(lines []string, open int, marker string) int {
	for j := open + 1; j < len(lines); j++ {
		if m, info, ok := fenceLine(lines[j]); ok && info == "" && m[0] == marker[0] && len(m) >= len(marker) {
			return j
		}
	}
	return len(lines) - 1
}

var (
	headingLineRe = regexp.MustCompile(`(?m)^#{1,6}\s+\S`)
	titleLineRe   = regexp.MustCompile(`(?m)^#\s+\S`)
)

// citesEvidence reports whether text cites evidence, in any form a model writes a marker ([e3], 【e3】, …).
func citesEvidence(text string) bool { return len(CitedIDs(CanonicalMarkers(text))) > 0 }

// looksLikeReport reports whether text has what a report has and a wrapper's prose has not: a heading or a
// citation.
func looksLikeReport(text string) bool { return headingLineRe.MatchString(text) || citesEvidence(text) }

// dropPreamble drops the lines before a draft's title (its first # heading) when they cite nothing and open no
// fence: a line of preamble ("Here is the report:") is not part of the report.
func dropPreamble(t string) string {
	loc := titleLineRe.FindStringIndex(t)
	if loc == nil || loc[0] == 0 {
		return t
	}
	if before := t[:loc[0]]; strings.TrimSpace(before) != "" && !citesEvidence(before) && !strings.Contains(before, "```") && !strings.Contains(before, "~~~") {
		return t[loc[0]:]
	}
	return t
}

// fenceOf returns the fence a trimmed line opens (``` or ~~~, as long as written), or "".
func fenceOf(t string) string {
	for _, c := range []string{"`", "~"} {
		n := 0
		for n < len(t) && t[n:n+1] == c {
			n++
		}
		if n >= 3 {
			return t[:n]
		}
	}
	return ""
}
