package publish

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
)

// markerRe matches a citation marker on one line: evidence ids ("[e3]", "[e3, e7]") and, so that they can be refused,
// bare numbers ("[3]") that a model may write instead.
var markerRe = regexp.MustCompile(`\[[^\S\n]*(e?\d+(?:[^\S\n]*[,;，、][^\S\n]*e?\d+)*)[^\S\n]*\]`)

var markerSplitRe = regexp.MustCompile(`\s*[,;，、]\s*`)

// markerIndexes returns the citation markers of s as markerRe.FindAllStringSubmatchIndex does, leaving out those
// inside a code span of their line (inLineCode): "`[1, 2, 3]`" in a quoted sentence is a list in code, not three
// citations.
func markerIndexes(s string) [][]int {
	ms := markerRe.FindAllStringSubmatchIndex(s, -1)
	if len(ms) == 0 || !strings.Contains(s, "`") {
		return ms
	}
	return slices.DeleteFunc(ms, func(m []int) bool { return inLineCode(s, m[0], m[1]) })
}

// mapMarkers replaces each citation marker of s outside code spans (markerIndexes) with what fn returns for it,
// given the marker and its inside.
func mapMarkers(s string, fn func(marker, inner string) string) string {
	ms := markerIndexes(s)
	if len(ms) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(s[last:m[0]])
		b.WriteString(fn(s[m[0]:m[1]], s[m[2]:m[3]]))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// dropMarkers is s with each citation marker outside code spans replaced by with.
func dropMarkers(s, with string) string {
	return mapMarkers(s, func(string, string) string { return with })
}

// parseMarker returns the ids inside one marker's brackets, and the tokens that are not evidence ids.
func parseMarker(inner string) (ids, bad []string) {
	for _, tok := range markerSplitRe.Split(strings.TrimSpace(inner), -1) {
		if strings.HasPrefix(tok, "e") {
			ids = append(ids, tok)
		} else if tok != "" {
			bad = append(bad, tok)
		}
	}
	return ids, bad
}

// CitedIDs returns the evidence ids cited in s, in order, each once.
func CitedIDs(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range markerIndexes(s) {
		ids, _ := parseMarker(s[m[2]:m[3]])
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// IntegrityProblem is one sentence the integrity check refuses.
type IntegrityProblem struct {
	Sentence string `json:"sentence"`
	Reason   string `json:"reason"`
}

func (p IntegrityProblem) String() string {
	return fmt.Sprintf("%s — in: %q", p.Reason, lexical.Clip(p.Sentence, 200))
}

// EvidenceCheck tells the integrity check whether an evidence id may be cited; a non-nil error says why not.
type EvidenceCheck func(id string) error

// Checker is the whole integrity rule for a draft. Evidence is required; the rest is optional.
type Checker struct {
	Evidence EvidenceCheck
	// Quote returns an evidence item's quote and its source's title; nil skips the support check.
	Quote func(id string) (quote, title string, ok bool)
	// Question is the research question: names it uses need no quote.
	Question string
	// Judged holds the verdicts of a SupportJudge by sentence: a reason for each sentence judged unsupported.
	Judged map[string]string
	// Approved holds the sentences a SupportJudge judged supported.
	Approved map[string]bool
	// RequireVerdict makes the check fail closed: a sentence that passes every deterministic check and cites
	// quotes it does not repeat word for word is published only with a positive verdict in Approved. Remove and
	// Prune drop the others (cause "unjudged"), or keep them marked with UnjudgedMark when it is set; Check does
	// not report them, since a new draft cannot give the judge's missing answer.
	RequireVerdict bool
	// Unjudged gives, by sentence, why the judge gave no verdict on it.
	Unjudged map[string]string
	// UnjudgedMark, when set, keeps sentences without a required verdict, with this mark appended.
	UnjudgedMark string
	// memo, when set, keeps each sentence's deterministic verdict (everything but Judged), so that the passes
	// over one draft — the judge's claims, the check, the removal — and the next draft's repeated sentences
	// check each sentence once. Only for a Checker whose Evidence and Quote answer the same for its lifetime.
	memo *sentenceMemo
}

// sentenceMemo is a Checker's memory of the sentences it has checked; safe for concurrent use.
type sentenceMemo struct {
	mu sync.Mutex
	m  map[string]sentenceVerdict
}

// Causes of a removal, as Removal.Cause gives them and the report counts them.
const (
	// CauseUnsupported: the quotes it cites do not support it (facts missing, the words not there, a splice of
	// fragments, the judge's refusal), it cites rejected or ungrounded evidence, or it cites nothing.
	CauseUnsupported = "unsupported"
	// CauseUnjudged: a judge is configured and gave no verdict on it, after being asked again.
	CauseUnjudged = "unjudged"
	// CauseCitationFormat: it cites something that is not an evidence id of the pool ("[3]", "[e999]", "【3†source】").
	CauseCitationFormat = "citation format"
	// CauseDuplicate: the same unit stands earlier in the draft.
	CauseDuplicate = "duplicate"
	// CauseInstruction: it addresses the reader or the model (see InstructionLike).
	CauseInstruction = "instruction"
)

// Removal is one unit of a draft the integrity check did not publish, and why.
type Removal struct {
	Text   string `json:"text"`
	Cause  string `json:"cause"`
	Reason string `json:"reason,omitempty"`
}

// causeRank orders causes when a unit has several: the one named is the most specific.
var causeRank = map[string]int{CauseUnsupported: 1, CauseCitationFormat: 2, CauseInstruction: 3}

// ErrNoEvidence is an EvidenceCheck's answer (errors.Is) for an id the pool does not hold: the check counts it
// as a citation-format problem, any other error as an unsupported citation.
var ErrNoEvidence = errors.New("no such evidence in the pool")

// sentenceVerdict is the deterministic part of a sentence's check.
type sentenceVerdict struct {
	problems []string
	cause    string
	// verbatim: every cited quote's words are there and the sentence says nothing else — it repeats a quote
	// (a list of quotes), which needs no judge.
	verbatim bool
	// judgeable: the sentence cites quotes and passed the deterministic checks, so a SupportJudge's verdict
	// on it (under key) counts.
	judgeable bool
	key       string
}

// WithMemo returns c remembering each sentence's deterministic verdict (see Checker.memo).
func (c Checker) WithMemo() Checker {
	c.memo = &sentenceMemo{m: map[string]sentenceVerdict{}}
	return c
}

// CheckIntegrity returns every problem of a draft: citations of evidence that is unknown, rejected or
// ungrounded; bare-number citations; and sentences of the body with no citation at all. Headings, a
// synthesizer's own sources section, and lead-in sentences ending in a colon need no citation.
func CheckIntegrity(markdown string, check EvidenceCheck) []IntegrityProblem {
	return Checker{Evidence: check}.Check(markdown)
}

// RemoveUnsupported drops every sentence CheckIntegrity would refuse and returns the remaining Markdown and the
// removed sentences.
func RemoveUnsupported(markdown string, check EvidenceCheck) (string, []string) {
	return Checker{Evidence: check}.Remove(markdown)
}

// Check returns every problem of a draft: those of CheckIntegrity and, when c.Quote is set, every sentence, list
// item, table row or code block the quotes it cites do not support (see the support check in support.go).
func (c Checker) Check(markdown string) []IntegrityProblem {
	var problems []IntegrityProblem
	quotes := c.draftQuotes(markdown)
	WalkDraft(markdown, func(s string) bool {
		if p := c.problems(s, quotes); len(p) > 0 {
			problems = append(problems, IntegrityProblem{Sentence: s, Reason: strings.Join(p, "; ")})
		}
		return true
	})
	return problems
}

// Remove drops every unit Check would refuse and returns the remaining Markdown and the removed units.
func (c Checker) Remove(markdown string) (string, []string) {
	out, removed := c.Prune(markdown)
	texts := make([]string, len(removed))
	for i, rm := range removed {
		texts[i] = rm.Text
	}
	return out, texts
}

// Prune is Remove with the cause of every removal. It also drops a unit that repeats one kept before it
// (CauseDuplicate) and, when the Checker requires verdicts, a unit without one (CauseUnjudged) unless
// UnjudgedMark keeps it marked.
func (c Checker) Prune(markdown string) (string, []Removal) {
	var removed []Removal
	quotes := c.draftQuotes(markdown)
	seen := map[string]bool{}
	out := walkDraftEdit(markdown, func(s string) (string, bool) {
		problems, cause, unjudged := c.verdict(s, quotes)
		if len(problems) > 0 {
			removed = append(removed, Removal{Text: s, Cause: cause, Reason: strings.Join(problems, "; ")})
			return "", false
		}
		if key := unitKey(s); key != "" {
			if seen[key] {
				removed = append(removed, Removal{Text: s, Cause: CauseDuplicate, Reason: "it repeats a sentence published before it"})
				return "", false
			}
			seen[key] = true
		}
		if unjudged {
			if c.UnjudgedMark != "" {
				return markUnit(s, c.UnjudgedMark), true
			}
			why := c.Unjudged[supportKey(s)]
			if why == "" {
				why = "the judge gave no verdict on it"
			}
			removed = append(removed, Removal{Text: s, Cause: CauseUnjudged, Reason: why})
			return "", false
		}
		return s, true
	})
	return out, removed
}

// unitKey is what makes two units the same for the duplicate rule: their words, citations and case aside; ""
// for a unit too short to count (a lone marker, a dash).
func unitKey(s string) string {
	k := strings.ToLower(lexical.NormalizeSpace(stripMarkup(dropMarkers(s, " "))))
	k = strings.TrimRight(k, " .。!！?？;；:：")
	if utf8.RuneCountInString(k) < 8 {
		return ""
	}
	return k
}

// StripMarkers removes the citation markers from text (canonicalise first, CanonicalMarkers, to remove the
// shapes models write too): what the prose says without them.
func StripMarkers(text string) string { return dropMarkers(text, "") }

// supportKey is a sentence as the judge is asked about it, and as Judged, Approved and Unjudged hold it.
func supportKey(s string) string {
	k := strings.TrimSpace(dropMarkers(s, ""))
	return spaceBeforeStopRe.ReplaceAllString(k, "$1")
}

// spaceBeforeStopRe is the space a removed marker leaves before the full stop ("… glazing [e1]." → "… glazing .").
var spaceBeforeStopRe = regexp.MustCompile(`[^\S\n]+([.,;:!?。，；：！？])`)

// markUnit appends mark to a unit: inside the last cell of a table row, after anything else.
func markUnit(s, mark string) string {
	t := strings.TrimRight(s, " \t")
	if strings.HasPrefix(strings.TrimSpace(t), "|") && strings.HasSuffix(t, "|") {
		return strings.TrimRight(strings.TrimSuffix(t, "|"), " ") + " " + mark + " |"
	}
	return t + " " + mark
}

// draftQuotes returns the quotes of every citable item the draft cites: what its code blocks may be made of.
func (c Checker) draftQuotes(markdown string) []string {
	if c.Quote == nil {
		return nil
	}
	var out []string
	for _, id := range CitedIDs(markdown) {
		if c.Evidence(id) != nil {
			continue
		}
		if q, _, ok := c.Quote(id); ok {
			out = append(out, q)
		}
	}
	return out
}

// SupportClaims lists the units of a draft that pass every deterministic check and cite evidence: what a
// SupportJudge is asked about.
func (c Checker) SupportClaims(markdown string) []SupportClaim {
	var claims []SupportClaim
	quotes := c.draftQuotes(markdown)
	seen := map[string]bool{}
	WalkDraft(markdown, func(s string) bool {
		if isCodeBlock(s) || c.Quote == nil {
			return true
		}
		if problems, _, _ := c.verdict(s, quotes); len(problems) > 0 {
			return true
		}
		if v := c.sentence(s); !v.judgeable || v.verbatim {
			return true // nothing to judge: it cites nothing, or repeats its quote
		}
		// A unit repeated in the draft is asked about once; the repeats are removed.
		if key := unitKey(s); key != "" {
			if seen[key] {
				return true
			}
			seen[key] = true
		}
		ids := CitedIDs(s)
		if len(ids) == 0 {
			return true
		}
		cl := SupportClaim{ID: fmt.Sprintf("s%d", len(claims)+1), Sentence: supportKey(s)}
		for _, id := range ids {
			if q, _, ok := c.Quote(id); ok {
				cl.Quotes = append(cl.Quotes, q)
			}
		}
		claims = append(claims, cl)
		return true
	})
	return claims
}

// isCodeBlock reports a unit that is a fenced code block: its fence opens a line of its own and the block holds at
// least that line and another. A sentence of a paragraph that starts with backticks ("；```[e0]" cut after the
// "；") is text, and its citations are checked.
func isCodeBlock(s string) bool {
	t := strings.TrimSpace(s)
	return (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) && strings.Contains(t, "\n")
}

func (c Checker) problems(s string, draftQuotes []string) []string {
	p, _, _ := c.verdict(s, draftQuotes)
	return p
}

// verdict returns the problems of one unit and their cause, and whether it lacks a verdict the Checker requires.
func (c Checker) verdict(s string, draftQuotes []string) (problems []string, cause string, unjudged bool) {
	if isCodeBlock(s) {
		if c.Quote == nil {
			return nil, "", false
		}
		if p := codeProblem(s, draftQuotes); p != "" {
			return []string{p}, CauseUnsupported, false
		}
		return nil, "", false
	}
	v := c.sentence(s)
	if !v.judgeable {
		return v.problems, v.cause, false
	}
	if reason, judged := c.Judged[v.key]; judged {
		return []string{"unsupported by the quotes it cites: " + reason}, CauseUnsupported, false
	}
	return nil, "", c.RequireVerdict && !v.verbatim && !c.Approved[v.key]
}

// sentence returns the deterministic verdict on one sentence, from the memo when there is one.
func (c Checker) sentence(s string) sentenceVerdict {
	if c.memo == nil {
		return c.checkSentence(s)
	}
	c.memo.mu.Lock()
	v, ok := c.memo.m[s]
	c.memo.mu.Unlock()
	if ok {
		return v
	}
	v = c.checkSentence(s)
	c.memo.mu.Lock()
	c.memo.m[s] = v
	c.memo.mu.Unlock()
	return v
}

func (c Checker) checkSentence(s string) sentenceVerdict {
	var problems []string
	cause := ""
	because := func(c string) {
		if causeRank[c] > causeRank[cause] {
			cause = c
		}
	}
	ms := markerIndexes(s)
	base := supportBase{question: c.Question}
	var titles []string
	for _, m := range strayMarkers(s) {
		problems = append(problems, fmt.Sprintf("cites %s, which is not an evidence id (cite like [e3])", m))
		because(CauseCitationFormat)
	}
	for _, m := range ms {
		ids, bad := parseMarker(s[m[2]:m[3]])
		for _, b := range bad {
			problems = append(problems, fmt.Sprintf("cites [%s], which is not an evidence id (cite like [e3])", b))
			because(CauseCitationFormat)
		}
		for _, id := range ids {
			if err := c.Evidence(id); err != nil {
				problems = append(problems, fmt.Sprintf("cites %s: %v", id, err))
				if errors.Is(err, ErrNoEvidence) {
					because(CauseCitationFormat)
				} else {
					because(CauseUnsupported)
				}
				continue
			}
			if c.Quote != nil {
				if q, title, ok := c.Quote(id); ok {
					base.quotes = append(base.quotes, q)
					titles = append(titles, title)
				}
			}
		}
	}
	if len(ms) == 0 && needsCitation(s) {
		problems = append(problems, "factual sentence without a citation")
		because(CauseUnsupported)
	}
	if why := InstructionLike(dropMarkers(s, " ")); why != "" {
		problems = append(problems, "it "+why+", which a report never does")
		because(CauseInstruction)
	}
	if len(problems) > 0 || c.Quote == nil || len(base.quotes) == 0 {
		return sentenceVerdict{problems: problems, cause: cause}
	}
	if repeatsQuote(s, base.quotes) {
		return sentenceVerdict{judgeable: true, key: supportKey(s), verbatim: true}
	}
	base.titles = strings.Join(titles, "\n")
	if p := supportProblem(s, base); p != "" {
		return sentenceVerdict{problems: []string{p}, cause: CauseUnsupported}
	}
	return sentenceVerdict{judgeable: true, key: supportKey(s)}
}

// repeatsQuote reports whether a sentence, its markup and citations aside, is word for word in one of its quotes
// or in a fragment of one: it says nothing its quote does not, and needs neither the support check nor a judge.
// A whole quote that holds an ellipsis of its source's own ("a try…except that …") is repeated, not spliced.
func repeatsQuote(s string, quotes []string) bool {
	t := strings.ToLower(NormalizeQuote(stripMarkup(dropMarkers(s, " "))))
	t = strings.TrimSpace(strings.TrimRight(t, " .。"))
	if utf8.RuneCountInString(t) < MinQuoteRunes {
		return false
	}
	for _, q := range quotes {
		for _, f := range append(QuoteFragments(q), q) {
			// A link counts as its text, which is what the sentence repeats.
			if strings.Contains(strings.ToLower(NormalizeQuote(stripMarkup(mdLinkRe.ReplaceAllString(f, "$1")))), t) {
				return true
			}
		}
	}
	return false
}

// needsCitation decides whether an uncited sentence is a problem: anything with words in it, except a lead-in
// ending in a colon.
func needsCitation(s string) bool {
	t := strings.TrimSpace(stripMarkup(s))
	if t == "" {
		return false
	}
	if strings.HasSuffix(t, ":") || strings.HasSuffix(t, "：") {
		return false
	}
	letters := 0
	for _, r := range t {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			letters++
		}
	}
	return letters >= 3
}

var markupRe = regexp.MustCompile("[*_`>#|]+")

func stripMarkup(s string) string { return markupRe.ReplaceAllString(s, "") }

var (
	headingRe     = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*)$`)
	listRe        = regexp.MustCompile(`^(\s*(?:[-*+]|\d+[.)])\s+)(.*)$`)
	tableSepRe    = regexp.MustCompile(`^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$`)
	ruleRe        = regexp.MustCompile(`^\s*([-*_])(\s*([-*_]))+\s*$`)
	sourcesHeadRe = regexp.MustCompile(`(?i)^(sources|references|bibliography|works cited|citations|来源|参考|参考文献|参考资料|引用)\b`)
)

// WalkDraft visits every sentence of the body of a Markdown draft and rebuilds the draft keeping only the
// sentences keep approves. Paragraphs are re-flowed onto one line; list items and table rows whose sentences are
// all dropped disappear; a section the synthesizer titled "Sources" or "References" is dropped (the renderer
// writes its own from the citation map).
func WalkDraft(markdown string, keep func(sentence string) bool) string {
	return walkDraftEdit(markdown, func(s string) (string, bool) { return s, keep(s) })
}

// walkDraftEdit is WalkDraft with units that may be rewritten: edit returns the unit to publish, and whether to
// publish it at all.
func walkDraftEdit(markdown string, check func(unit string) (string, bool)) string {
	lines := strings.Split(strings.ReplaceAll(markdown, "\r\n", "\n"), "\n")
	var out []string
	// The headings published, and whether a unit under each (before the next heading) was kept or dropped: a
	// heading all of whose units were dropped would stand over nothing.
	type heading struct {
		at, level     int
		kept, dropped bool
	}
	var heads []heading
	edit := func(unit string) (string, bool) {
		t, ok := check(unit)
		if len(heads) > 0 {
			h := &heads[len(heads)-1]
			h.kept, h.dropped = h.kept || ok, h.dropped || !ok
		}
		return t, ok
	}
	var para []string
	inFence := false
	var block []string // the open code block's lines
	skipLevel := 0     // > 0 while inside a dropped sources section of this heading level
	tableRow := 0
	flush := func() {
		if len(para) == 0 {
			return
		}
		text := strings.Join(para, " ")
		para = nil
		if kept := keepSentences(text, edit); kept != "" {
			out = append(out, kept)
		}
	}
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			flush()
			block = append(block, line)
			if inFence {
				// A code block is one unit: kept or dropped whole.
				if skipLevel == 0 {
					if kept, ok := edit(strings.Join(block, "\n")); ok {
						out = append(out, kept)
					}
				}
				block = nil
			}
			inFence = !inFence
			continue
		}
		if inFence {
			block = append(block, line)
			continue
		}
		if m := headingRe.FindStringSubmatch(line); m != nil {
			flush()
			level := len(m[1])
			if skipLevel > 0 && level > skipLevel {
				continue
			}
			skipLevel = 0
			if sourcesHeadRe.MatchString(strings.TrimSpace(stripMarkup(m[2]))) {
				skipLevel = level
				continue
			}
			// A heading names a part of the report; it states nothing, so it cites nothing.
			heads = append(heads, heading{at: len(out), level: level})
			out = append(out, strings.TrimRight(stripMarkers(line), " \t"))
			continue
		}
		if skipLevel > 0 {
			continue
		}
		switch {
		case trimmed == "":
			flush()
			tableRow = 0
			out = append(out, "")
		case ruleRe.MatchString(trimmed):
			flush()
			out = append(out, line)
		case strings.HasPrefix(trimmed, "|"):
			flush()
			tableRow++
			if (tableRow == 1 && len(CitedIDs(trimmed)) == 0) || tableSepRe.MatchString(trimmed) {
				out = append(out, stripMarkers(line)) // a header row that cites nothing and the separator carry no facts
				if len(heads) > 0 {
					heads[len(heads)-1].kept = true
				}
				continue
			}
			if kept, ok := edit(trimmed); ok {
				if kept == trimmed {
					kept = line
				}
				out = append(out, kept)
			}
		default:
			if m := listRe.FindStringSubmatch(line); m != nil {
				flush()
				if kept := keepSentences(m[2], edit); kept != "" {
					out = append(out, m[1]+kept)
				}
				continue
			}
			if strings.HasPrefix(trimmed, ">") {
				flush()
				body := strings.TrimSpace(strings.TrimPrefix(trimmed, ">"))
				if kept := keepSentences(body, edit); kept != "" {
					out = append(out, "> "+kept)
				}
				continue
			}
			para = append(para, trimmed)
		}
	}
	flush()
	if inFence && skipLevel == 0 {
		if kept, ok := edit(strings.Join(block, "\n")); ok {
			out = append(out, kept) // a block the draft never closed
		}
	}
	// A heading whose every unit was dropped, with no subsection after it, goes with them. A heading that stood
	// over nothing in the draft ("## … — no grounded evidence found") says something itself and stays.
	for i, h := range heads {
		sub := i+1 < len(heads) && heads[i+1].level > h.level
		if h.dropped && !h.kept && !sub {
			out[h.at] = ""
		}
	}
	return collapseBlankLines(strings.Join(out, "\n"))
}

func keepSentences(text string, edit func(string) (string, bool)) string {
	var kept []string
	for _, s := range SplitSentences(text) {
		if t, ok := edit(s); ok {
			kept = append(kept, t)
		}
	}
	return joinSentences(kept)
}

// joinSentences puts sentences back together: a space between Latin sentences, none after CJK punctuation.
func joinSentences(ss []string) string {
	var b strings.Builder
	for i, s := range ss {
		if i > 0 {
			prev := ss[i-1]
			r := lastRune(prev)
			if !isCJKish(r) {
				b.WriteByte(' ')
			}
		}
		b.WriteString(s)
	}
	return b.String()
}

// lastRune returns the last rune of s, or 0 when s is empty.
func lastRune(s string) rune {
	if s == "" {
		return 0
	}
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// SplitSentences splits a paragraph into sentences. A citation marker that follows the full stop ("… end. [e3]")
// stays with the sentence it follows, and no sentence ends inside code (a `span` or a fence flattened into the
// paragraph: "run ```sh deepresearch run "何时？"``` first" is one sentence) or inside a quotation in curly or
// corner quotes (“A. B.” [e1] is quoted whole: cut at its full stop, its second sentence would be left with a
// stray closing quote, and the first without its citation). It is linear in the paragraph's length: a
// synthesizer may write a whole section as one paragraph of hundreds of cited sentences.
func SplitSentences(text string) []string {
	text = strings.TrimSpace(text)
	if !utf8.ValidString(text) {
		text = string([]rune(text)) // each invalid byte reads as U+FFFD, as a rune conversion has it
	}
	var out []string
	start := 0
	code := unbroken(text)
	for i := 0; i < len(text); {
		if len(code) > 0 && i == code[0][0] {
			i, code = code[0][1], code[1:] // the code span or quotation, whatever it holds
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		stop := i
		i += size
		cjkEnd := r == '。' || r == '！' || r == '？' || r == '；'
		latinEnd := r == '.' || r == '!' || r == '?'
		if !cjkEnd && !latinEnd {
			continue
		}
		j := i
		for j < len(text) {
			c, n := utf8.DecodeRuneInString(text[j:])
			if !strings.ContainsRune(`"'”’)）」』`, c) {
				break
			}
			j += n
		}
		// Markers right after the stop belong to this sentence.
		k := j
		for {
			for k < len(text) && text[k] == ' ' {
				k++
			}
			if loc := markerAtStartRe.FindStringIndex(text[k:]); loc != nil {
				k += loc[1]
				j = k
				continue
			}
			break
		}
		if latinEnd {
			if j < len(text) && text[j] != ' ' {
				continue // "1.5", "e.g.x", "example.com"
			}
			n := j
			for n < len(text) && text[n] == ' ' {
				n++
			}
			if c, _ := utf8.DecodeRuneInString(text[n:]); n < len(text) && unicode.IsLower(c) {
				continue // "e.g. the"
			}
			if r == '.' && stop > start && isAbbrev(text[start:stop]) {
				continue
			}
		}
		if s := strings.TrimSpace(text[start:j]); s != "" {
			out = append(out, s)
		}
		start = j
	}
	if rest := strings.TrimSpace(text[start:]); rest != "" {
		if len(out) > 0 && markerOnly(rest) {
			out[len(out)-1] += " " + rest
		} else {
			out = append(out, rest)
		}
	}
	return out
}

// unbroken returns the byte ranges of text no sentence ends inside, in order: its code spans, and its quotations
// in “curly” or 「corner」 quotes that close (outside code). An opening quote that never closes is text. Linear in
// the text's length: each kind of closing quote is looked for once past the last one found.
func unbroken(text string) [][2]int {
	var out [][2]int
	code := lexical.CodeSpans(text)
	closers := [2]string{"”", "」"}
	next := [2]int{-2, -2} // per kind, the next closing quote at or after where it was last looked for; -1: none
	for i := 0; i < len(text); {
		if len(code) > 0 && i == code[0].Start {
			out = append(out, [2]int{code[0].Start, code[0].End})
			i, code = code[0].End, code[1:]
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		k := -1
		switch r {
		case '“':
			k = 0
		case '「':
			k = 1
		}
		if k < 0 {
			i += size
			continue
		}
		if next[k] == -2 || next[k] >= 0 && next[k] < i+size {
			next[k] = -1
			if j := strings.Index(text[i+size:], closers[k]); j >= 0 {
				next[k] = i + size + j
			}
		}
		if next[k] < 0 || len(code) > 0 && code[0].Start < next[k] {
			i += size // unclosed, or closed only past code: not a quotation to keep whole
			continue
		}
		j := next[k] + len(closers[k])
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}

// markerAtStartRe matches a citation marker at the start of a string only.
var markerAtStartRe = regexp.MustCompile(`^(?:` + markerRe.String() + `)`)

func markerOnly(s string) bool {
	return strings.TrimSpace(dropMarkers(s, "")) == ""
}

var abbrevs = map[string]bool{"e.g": true, "i.e": true, "etc": true, "vs": true, "mr": true, "mrs": true,
	"dr": true, "prof": true, "fig": true, "no": true, "cf": true, "al": true, "st": true, "jr": true, "sr": true}

func isAbbrev(before string) bool {
	i := len(before)
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(before[:i])
		if !unicode.IsLetter(r) && r != '.' {
			break
		}
		i -= n
	}
	w := strings.ToLower(before[i:])
	if abbrevs[w] {
		return true
	}
	// Single capital initial ("J. Smith").
	last, _ := utf8.DecodeLastRuneInString(before)
	return utf8.RuneCountInString(w) == 1 && unicode.IsUpper(last)
}

func collapseBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	blank := true // drop leading blanks
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			if blank {
				continue
			}
			blank = true
			out = append(out, "")
			continue
		}
		blank = false
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

// Renumber replaces evidence-id markers with citation numbers in order of first use and returns the numbers'
// evidence ids (index n-1 holds number n's id).
func Renumber(markdown string) (string, []string) {
	num := map[string]int{}
	var order []string
	out := mapMarkers(markdown, func(_, inner string) string {
		ids, _ := parseMarker(inner)
		var ns []int
		seen := map[int]bool{}
		for _, id := range ids {
			n, ok := num[id]
			if !ok {
				order = append(order, id)
				n = len(order)
				num[id] = n
			}
			if !seen[n] {
				seen[n] = true
				ns = append(ns, n)
			}
		}
		sort.Ints(ns)
		parts := make([]string, len(ns))
		for i, n := range ns {
			parts[i] = strconv.Itoa(n)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	})
	return out, order
}

// RenumberWith rewrites evidence-id markers with an existing numbering.
func RenumberWith(s string, num map[string]int) (string, bool) {
	ok := true
	out := mapMarkers(s, func(_, inner string) string {
		ids, _ := parseMarker(inner)
		var parts []string
		for _, id := range ids {
			n, found := num[id]
			if !found {
				ok = false
				continue
			}
			parts = append(parts, fmt.Sprint(n))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	})
	return out, ok
}

// JudgeStats counts what the support judge said about the published draft's sentences.
type JudgeStats struct {
	// Judged counts the sentences with a verdict: Supported plus Refused.
	Judged    int `json:"judged"`
	Supported int `json:"supported"`
	Refused   int `json:"refused"`
	// Unjudged counts the sentences still without a verdict after the judge was asked again; Why counts them
	// by reason.
	Unjudged int            `json:"unjudged"`
	Why      map[string]int `json:"why,omitempty"`
	// Kept: the unjudged sentences were kept, marked, instead of removed (--unjudged keep).
	Kept bool `json:"kept,omitempty"`
}

// Tally counts the judge's verdicts on the units of a draft that needed one.
func (c Checker) Tally(markdown string) JudgeStats {
	var t JudgeStats
	seen := map[string]bool{}
	WalkDraft(markdown, func(s string) bool {
		if isCodeBlock(s) {
			return true
		}
		v := c.sentence(s)
		if !v.judgeable || v.verbatim || seen[v.key] {
			return true
		}
		seen[v.key] = true
		_, refused := c.Judged[v.key]
		switch {
		case refused:
			t.Judged++
			t.Refused++
		case c.Approved[v.key]:
			t.Judged++
			t.Supported++
		case c.RequireVerdict:
			t.Unjudged++
			why := c.Unjudged[v.key]
			if why == "" {
				why = "not asked"
			}
			if t.Why == nil {
				t.Why = map[string]int{}
			}
			t.Why[why]++
		}
		return true
	})
	return t
}
