package research

import (
	"regexp"
	"strings"
	"unicode/utf8"
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

// canonicalMarkers rewrites every citation marker of a draft that names evidence ids to the form "[e3, e7]".
func canonicalMarkers(markdown string) string {
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
	line = markerRe.ReplaceAllString(line, "")
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
		return true // names ids but in a form the check does not read (canonicalMarkers was not applied)
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

// replaceMarkers calls fn on every bracketed span of s that is not the text of a Markdown link or image, and
// replaces it with what fn returns when fn says to.
func replaceMarkers(s string, fn func(m, inner string, ascii bool) (string, bool)) string {
	var b strings.Builder
	last := 0
	for _, loc := range bracketRe.FindAllStringSubmatchIndex(s, -1) {
		a, z := loc[0], loc[1]
		if z < len(s) && s[z] == '(' || a > 0 && s[a-1] == '!' {
			continue // [text](url), ![alt](src)
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

// unfenceReport returns the report a draft wrapped in a code fence: a fenced block of Markdown (no language, or
// markdown, md, text) that cites evidence is the report itself, not code from a source. When the draft's
// citations all stand in one such block, the prose around it (a preamble, a closing remark) is dropped; other
// such blocks lose their fences. A block of code is left as it is, for the check to compare with the quotes.
func unfenceReport(markdown string) string {
	lines := strings.Split(strings.ReplaceAll(markdown, "\r\n", "\n"), "\n")
	type block struct{ open, close int }
	var prose []block
	outside := []string{}
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		fence := fenceOf(t)
		if fence == "" {
			outside = append(outside, lines[i])
			continue
		}
		lang := strings.ToLower(strings.TrimSpace(strings.TrimLeft(t, fence[:1])))
		end := len(lines) // an unclosed fence runs to the end
		for j := i + 1; j < len(lines); j++ {
			u := strings.TrimSpace(lines[j])
			if strings.HasPrefix(u, fence) && strings.Trim(u, fence[:1]) == "" {
				end = j
				break
			}
		}
		body := strings.Join(lines[i+1:min(end, len(lines))], "\n")
		if (lang == "" || lang == "markdown" || lang == "md" || lang == "text" || lang == "txt") && len(citedIDs(canonicalMarkers(body))) > 0 {
			prose = append(prose, block{i, end})
		} else {
			outside = append(outside, lines[i:min(end+1, len(lines))]...)
		}
		i = end
	}
	if len(prose) == 0 {
		return markdown
	}
	if len(prose) == 1 && len(citedIDs(canonicalMarkers(strings.Join(outside, "\n")))) == 0 {
		p := prose[0]
		return strings.Join(lines[p.open+1:min(p.close, len(lines))], "\n")
	}
	drop := map[int]bool{}
	for _, p := range prose {
		drop[p.open], drop[p.close] = true, true
	}
	var out []string
	for i, l := range lines {
		if !drop[i] {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
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
