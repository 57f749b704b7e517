package publish

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
)

// The support check: a citation proves that the cited evidence exists and is grounded; it does not prove that the
// sentence says what the quote says. Every published unit of a draft (a sentence of prose, a list item, a table
// row, a code block) is therefore also checked against the quotes it cites:
//
//  1. hard facts — numbers, URLs, quoted strings, inline code and names (capitalised or dotted words past a
//     sentence's first word) — must each occur in a cited quote (names may also come from a cited source's title
//     or the research question);
//  2. the remaining content words must be covered by the cited quotes (a lexical check on stemmed terms), when
//     the sentence and the quotes are in the same script;
//  3. when a model is configured, what passes both is judged in one batched call on the verifier tier (see
//     SupportJudge): sentence against quotes, supported or not.
//
// A fenced code block has no citation of its own: every line of it must occur in a quote the draft cites.

// minCoverage is the share of a sentence's content terms its quotes must contain.
const minCoverage = 0.5

// SupportClaim is one published unit and the quotes it cites, for a SupportJudge.
type SupportClaim struct {
	ID       string   `json:"id"`
	Sentence string   `json:"sentence"`
	Quotes   []string `json:"quotes"`
}

// SupportVerdict is a SupportJudge's answer for one claim.
type SupportVerdict struct {
	ID        string `json:"id"`
	Supported bool   `json:"supported"`
	Reason    string `json:"reason,omitempty"`
}

// SupportJudge is implemented by a Verifier that can judge, in one call, whether sentences say only what their
// quotes say. Claims it leaves out of its answer count as supported.
type SupportJudge interface {
	JudgeSupport(ctx context.Context, language string, claims []SupportClaim) ([]SupportVerdict, error)
}

// supportBase is what a sentence may draw on: its cited quotes, the titles of their sources, the question.
type supportBase struct {
	quotes   []string
	titles   string
	question string
}

var (
	codeSpanRe  = regexp.MustCompile("`([^`]+)`")
	mdLinkRe    = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]+)\)`)
	urlRe       = regexp.MustCompile(`(?i)\b(?:https?|ftp|file)://[^\s<>()\[\]"'` + "`" + `]+`)
	domainRe    = regexp.MustCompile(`(?i)\b(?:[a-z0-9-]+\.)+(?:com|org|net|dev|io|gov|edu|info|ai|co)(?:/[^\s<>()\[\]"']*)?`)
	quotedRe    = regexp.MustCompile(`"([^"]{3,})"|“([^”]{3,})”|「([^」]{2,})」|『([^』]{2,})』`)
	emphasisRe  = regexp.MustCompile("[*_`]+")
	numberRe    = regexp.MustCompile(`\d+(?:[.,:]\d+)*`)
	clauseRe    = regexp.MustCompile(`[:;|(\n"“「]|[.!?]\s`)
	nameTokenRe = regexp.MustCompile(`[\p{L}\p{N}_][\p{L}\p{N}_.\-/]*`)
)

// supportProblem returns why sentence is not supported by base, or "" when it is.
func supportProblem(sentence string, base supportBase) string {
	// The quotes as they stand: an elided quote is its fragments, kept apart so that no fact is read across the
	// gap between two of them.
	var frags []string
	for _, q := range base.quotes {
		frags = append(frags, QuoteFragments(q)...)
	}
	quotes := NormalizeQuote(strings.Join(frags, fragmentGap))
	// Extracted text keeps Markdown emphasis (*k*th) and links; facts are looked for with and without them, a
	// link read as its text (a top-level [`"type"`](packages.html#type) field: a top-level "type" field).
	plain := quotes
	if strings.Contains(plain, "](") {
		plain = mdLinkRe.ReplaceAllString(plain, "$1")
	}
	if strings.ContainsAny(plain, "*_`") {
		plain = emphasisRe.ReplaceAllString(plain, "")
	}
	lowQuotes := strings.ToLower(quotes + "\n" + plain)
	s := dropMarkers(sentence, " ")
	var missing []string
	squeezed := squeeze(lowQuotes)
	need := func(kind, v string, in string) {
		v = strings.TrimSpace(v)
		if v != "" && !strings.Contains(in, strings.ToLower(NormalizeQuote(v))) && !strings.Contains(squeezed, squeeze(strings.ToLower(v))) {
			missing = append(missing, fmt.Sprintf("%s %q", kind, v))
		}
	}
	// Links: the URL is a fact, the link text is prose. (Each pattern runs only on text holding what it needs.)
	if strings.Contains(s, "](") {
		for _, m := range mdLinkRe.FindAllStringSubmatch(s, -1) {
			need("URL", strings.TrimRight(m[2], ".,;:"), lowQuotes)
		}
		s = mdLinkRe.ReplaceAllString(s, "$1")
	}
	if strings.Contains(s, "://") {
		for _, u := range urlRe.FindAllString(s, -1) {
			need("URL", strings.TrimRight(u, ".,;:!?"), lowQuotes)
		}
		s = urlRe.ReplaceAllString(s, " ")
	}
	for _, d := range domainRe.FindAllString(s, -1) {
		need("address", strings.TrimRight(d, ".,;:!?"), lowQuotes)
	}
	s = domainRe.ReplaceAllString(s, " ")
	if strings.Contains(s, "`") {
		for _, m := range codeSpanRe.FindAllStringSubmatch(s, -1) {
			need("code", m[1], lowQuotes)
		}
		s = codeSpanRe.ReplaceAllString(s, " $1 ")
	}
	if strings.ContainsAny(s, "\"“「『") {
		for _, m := range quotedRe.FindAllStringSubmatch(s, -1) {
			for _, g := range m[1:] {
				if g != "" {
					need("quoted text", g, lowQuotes)
				}
			}
		}
	}
	for _, n := range numberRe.FindAllString(s, -1) {
		if !hasNumber(quotes, n) {
			missing = append(missing, fmt.Sprintf("number %s", n))
		}
	}
	nameBase := lowQuotes + "\n" + strings.ToLower(base.titles) + "\n" + strings.ToLower(base.question)
	squeezedNames := squeeze(nameBase)
	for _, n := range names(s) {
		// Extracted text may space what the sentence joins ("k + C th" for k+Cth): a name found with white
		// space ignored counts, and so does one whose parts are there in the same order.
		if !lexical.HasWord(nameBase, strings.ToLower(n)) && !strings.Contains(squeezedNames, squeeze(strings.ToLower(n))) {
			missing = append(missing, fmt.Sprintf("name %q", n))
		}
	}
	if len(missing) > 0 {
		return "not in the quotes it cites: " + strings.Join(dedupe(missing), ", ")
	}
	if p := spliceProblem(stripMarkup(s), base); p != "" {
		return p
	}
	// Content words, when sentence and quotes are written in the same script.
	prose := stripMarkup(s)
	if lexical.Language(prose) != lexical.Language(quotes) {
		return ""
	}
	terms := lexical.Tokenize(prose)
	have := map[string]bool{}
	for _, t := range lexical.Tokenize(quotes + "\n" + base.titles) {
		have[t] = true
	}
	total, covered := 0, 0
	var absent []string
	for _, t := range dedupe(terms) {
		if isDigits(t) {
			continue
		}
		total++
		if have[t] {
			covered++
		} else {
			absent = append(absent, t)
		}
	}
	if total >= 3 && float64(covered) < minCoverage*float64(total) {
		return fmt.Sprintf("the quotes it cites do not say this (%d of %d content words found; missing: %s)",
			covered, total, strings.Join(absent[:min(len(absent), 6)], ", "))
	}
	return ""
}

// fragmentGap joins quotes and fragments for the checks: a line of its own, with a byte no text holds, so that
// neither a substring nor white space squeezed out ever reaches across it.
const fragmentGap = "\n\x00\n"

// spliceProblem refuses a sentence that draws on two fragments of one elided quote: each of them supplies words
// the sentence uses that nothing else it may draw on holds. What the source says between the fragments is not
// quoted, so whether what one fragment says applies to what the other names cannot be checked ("The absorber …
// cost 2,400 euros"). A sentence must be supported by fragments as they stand: by one of them, with the other
// quotes it cites.
func spliceProblem(prose string, base supportBase) string {
	var terms []string
	for _, t := range dedupe(lexical.Tokenize(prose)) {
		if utf8.RuneCountInString(t) > 1 || !lexical.IsCJK(firstRuneOf(t)) {
			terms = append(terms, t) // single CJK characters are too common to tell fragments apart
		}
	}
	if len(terms) == 0 {
		return ""
	}
	for k, q := range base.quotes {
		frags := QuoteFragments(q)
		if len(frags) < 2 {
			continue
		}
		// What the sentence may take from elsewhere: the other quotes, the titles, the question.
		elsewhere := map[string]bool{}
		for j, o := range base.quotes {
			if j != k {
				for _, t := range lexical.Tokenize(o) {
					elsewhere[t] = true
				}
			}
		}
		for _, t := range lexical.Tokenize(base.titles + "\n" + base.question) {
			elsewhere[t] = true
		}
		sets := make([]map[string]bool, len(frags))
		for i, f := range frags {
			sets[i] = map[string]bool{}
			for _, t := range lexical.Tokenize(f) {
				sets[i][t] = true
			}
		}
		var drawn []int
		for i := range frags {
			for _, t := range terms {
				if !sets[i][t] || elsewhere[t] {
					continue
				}
				only := true
				for j := range frags {
					if j != i && sets[j][t] {
						only = false
						break
					}
				}
				if only {
					drawn = append(drawn, i)
					break
				}
			}
		}
		if len(drawn) >= 2 {
			return fmt.Sprintf("joins fragments of an elided quote (%q … %q): what the source says between them is not quoted",
				lexical.Clip(frags[drawn[0]], 60), lexical.Clip(frags[drawn[1]], 60))
		}
	}
	return ""
}

// codeProblem returns why a fenced code block is not quoted from the cited evidence, or "".
func codeProblem(block string, quotes []string) string {
	all := NormalizeQuote(strings.Join(quotes, "\n"))
	lines := strings.Split(block, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || ((i == 0 || i == len(lines)-1) && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"))) {
			continue
		}
		if !strings.Contains(all, NormalizeQuote(t)) {
			return fmt.Sprintf("code block line %q is in no quote the report cites", lexical.Clip(t, 80))
		}
	}
	return ""
}

// hasNumber reports whether text holds n as a number of its own (not inside a longer number); thousands
// separators are ignored.
func hasNumber(text, n string) bool {
	for _, cand := range []string{n, strings.ReplaceAll(n, ",", "")} {
		for i := 0; ; {
			j := strings.Index(text[i:], cand)
			if j < 0 {
				break
			}
			a, b := i+j, i+j+len(cand)
			before := a == 0 || !isDigitByte(text[a-1])
			after := b == len(text) || !isDigitByte(text[b]) && !(text[b] == '.' && b+1 < len(text) && isDigitByte(text[b+1]))
			if before && after {
				return true
			}
			i = a + 1
		}
	}
	return false
}

// squeeze removes white space, so that text extracted with spaces between inline elements still matches.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

func isDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

func firstRuneOf(s string) rune {
	for _, r := range s {
		return r
	}
	return 0
}

// names returns the words of s that name something: a Latin word past the start of a clause that holds a
// capital letter (Go, DeepMind, HTTP) or joins parts with a dot (sync.Mutex). The first word of a sentence, of a
// table cell or after a colon is capitalised by grammar, not by meaning.
func names(s string) []string {
	var out []string
	for _, clause := range clauseRe.Split(s, -1) {
		words := nameTokenRe.FindAllString(clause, -1)
		for i, w := range words {
			w = strings.Trim(w, ".-/")
			if w == "" || w == "I" || lexical.IsCJK(firstRuneOf(w)) {
				continue
			}
			dotted := strings.Contains(w, ".") && !isNumberLike(w)
			capital := false
			for k, r := range w {
				if k > 0 || i > 0 {
					capital = capital || unicode.IsUpper(r)
				}
			}
			if i == 0 && !dotted && !hasInnerCapital(w) {
				continue
			}
			if capital || dotted {
				out = append(out, w)
			}
		}
	}
	return out
}

func hasInnerCapital(w string) bool {
	for k, r := range w {
		if k > 0 && unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

func isNumberLike(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) && r != '.' && r != ',' {
			return false
		}
	}
	return true
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
