package lexical

import "strings"

// CodeSpan is one Markdown code span of a text: Start and End bound it with its backtick delimiters, Code the text
// between them (byte offsets).
type CodeSpan struct {
	Start, End int
	Code       [2]int
}

// CodeSpans finds the Markdown code spans of s by CommonMark's rule: a run of n backticks opens a span that the
// next run of exactly n backticks closes; a run no such run follows is literal text. A fenced block flattened into
// one line ("```sh … ```") is a span too. It is linear in the length of s: a run length found unclosed once is
// never searched for again, as no later run of that length has a closing one either.
func CodeSpans(s string) []CodeSpan {
	var out []CodeSpan
	unclosed := map[int]bool{}
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '`')
		if k < 0 {
			break
		}
		open := i + k
		n := backtickRun(s, open)
		i = open + n
		if unclosed[n] {
			continue
		}
		close := closingRun(s, i, n)
		if close < 0 {
			unclosed[n] = true
			continue
		}
		out = append(out, CodeSpan{Start: open, End: close + n, Code: [2]int{i, close}})
		i = close + n
	}
	return out
}

// backtickRun is the length of the run of backticks at s[i:].
func backtickRun(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

// closingRun returns the start of the first run of exactly n backticks at or after from, or -1 when there is none.
func closingRun(s string, from, n int) int {
	for from < len(s) {
		k := strings.IndexByte(s[from:], '`')
		if k < 0 {
			return -1
		}
		k += from
		m := backtickRun(s, k)
		if m == n {
			return k
		}
		from = k + m
	}
	return -1
}

// OutsideCode is s with each code span (CodeSpans) replaced by mark: the prose around the code, for checks that
// must not read the code's own symbols ("`{expression}`" in a sentence is no brace of a code line).
func OutsideCode(s, mark string) string {
	spans := CodeSpans(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, c := range spans {
		b.WriteString(s[last:c.Start])
		b.WriteString(mark)
		last = c.End
	}
	b.WriteString(s[last:])
	return b.String()
}
