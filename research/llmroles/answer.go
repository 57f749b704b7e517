package llmroles

import (
	"regexp"
	"strings"

	"github.com/deepresearch/deepresearch/research/publish"
)

// This file reads a text answer for what it is: a draft that has fallen into a loop. (The report inside whatever
// wraps it is publish.UnwrapReport's.)

var fenceOpenRe = regexp.MustCompile("^(`{3,}|~{3,})\\s*([A-Za-z0-9_+-]*)\\s*$")

// Degeneration: a model that falls into a loop repeats one paragraph (or line, or phrase) until the output
// limit stops it. Such a draft is not continued, its repeats are removed before anything judges it, and the
// stop is counted.

const (
	// minLoopRepeats is the fewest repeated sentences that make a loop: a report may repeat a sentence or two.
	minLoopRepeats = 6
	// loopShare is the share of a text's sentence occurrences that, repeating an earlier one, make a loop.
	loopShare = 0.4
	// minLoopPeriod and maxLoopPeriod bound the length in bytes of a block the tail of a text repeats, and
	// loopPeriods is how many times in a row it must stand there.
	minLoopPeriod = 12
	maxLoopPeriod = 4096
	loopPeriods   = 4
)

// degenerate reports whether a text has fallen into a loop: at least minLoopRepeats of its sentences (prose,
// list items, table rows and code lines, each counted where it stands) repeat an earlier one and they are
// loopShare of all, or its tail is one block repeated loopPeriods times in a row — a loop without sentences.
func degenerate(text string) bool {
	total, repeats := 0, 0
	seen := map[string]bool{}
	for _, s := range units(text) {
		total++
		if seen[s] {
			repeats++
		}
		seen[s] = true
	}
	if repeats >= minLoopRepeats && float64(repeats) >= loopShare*float64(total) {
		return true
	}
	return repeatedTail(text)
}

// units are the sentences of a text's lines, normalised for comparison (case and spacing aside); headings and
// fence markers are left out.
func units(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "```") || strings.HasPrefix(l, "|---") || strings.HasPrefix(l, "| ---") {
			continue
		}
		for _, s := range publish.SplitSentences(l) {
			if k := sentenceKey(s); k != "" {
				out = append(out, k)
			}
		}
	}
	return out
}

func sentenceKey(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// repeatedTail reports whether the text ends in one block of minLoopPeriod to maxLoopPeriod bytes repeated
// loopPeriods times in a row (surrounding white space aside).
func repeatedTail(text string) bool {
	t := strings.TrimRight(text, " \t\n")
	n := len(t)
	for p := minLoopPeriod; p <= maxLoopPeriod && p*loopPeriods <= n; p++ {
		block := t[n-p:]
		k := 1
		for k < loopPeriods && t[n-(k+1)*p:n-k*p] == block {
			k++
		}
		if k == loopPeriods && strings.TrimSpace(block) != "" {
			return true
		}
	}
	return false
}

// dropRepeats removes every sentence of a draft's prose and list items that repeats an earlier one (case and
// spacing aside), and lines left empty by it; headings, tables and code blocks stand as written. It returns the
// draft and how many sentences it removed.
func dropRepeats(md string) (string, int) {
	seen := map[string]bool{}
	removed := 0
	lines := strings.Split(md, "\n")
	out := make([]string, 0, len(lines))
	fence := ""
	for _, line := range lines {
		l := strings.TrimSpace(line)
		if m := fenceOpenRe.FindStringSubmatch(l); m != nil {
			switch {
			case fence == "":
				fence = m[1]
			case m[2] == "" && strings.HasPrefix(m[1], fence[:1]) && len(m[1]) >= len(fence):
				fence = ""
			}
			out = append(out, line)
			continue
		}
		if fence != "" || l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "|") {
			out = append(out, line)
			continue
		}
		kept, n := dropRepeatedSentences(line, seen)
		removed += n
		if n > 0 && strings.TrimSpace(kept) == "" {
			continue
		}
		if n > 0 && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(kept), "-*+>0123456789.)")) == "" {
			continue // a list item or quote line with nothing left in it
		}
		out = append(out, kept)
	}
	if removed == 0 {
		return md, 0
	}
	kept := collapseBlank(strings.Join(out, "\n"))
	if strings.HasSuffix(md, "\n") {
		kept = strings.TrimRight(kept, "\n") + "\n"
	}
	return kept, removed
}

// dropRepeatedSentences cuts out of one line the sentences already in seen, keeping the rest of the line as
// written, and adds the others to seen.
func dropRepeatedSentences(line string, seen map[string]bool) (string, int) {
	var b strings.Builder
	removed, at := 0, 0
	for _, s := range publish.SplitSentences(line) {
		i := strings.Index(line[at:], s)
		if i < 0 {
			continue // not found as written (normalised by the splitter): left in place
		}
		start, end := at+i, at+i+len(s)
		k := sentenceKey(strings.TrimLeft(s, "-*+> "))
		if seen[k] {
			b.WriteString(line[at:start])
			removed++
			if end < len(line) && line[end] == ' ' {
				end++ // the space that separated it from the next sentence
			}
			at = end
			continue
		}
		seen[k] = true
		b.WriteString(line[at:end])
		at = end
	}
	b.WriteString(line[at:])
	if removed == 0 {
		return line, 0
	}
	return strings.TrimRight(b.String(), " "), removed
}

var blankRunRe = regexp.MustCompile(`\n{3,}`)

func collapseBlank(s string) string { return blankRunRe.ReplaceAllString(s, "\n\n") }
