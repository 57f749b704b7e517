package corpus

import (
	"strings"
)

// Chunking limits. A chunk closes at a paragraph break or before a heading
// once it holds targetChars, and at maxChars or maxLines in any case: at the
// last line that opens a paragraph, when there is one past half the target,
// else where the limit falls.
// Boundaries depend only on the text, so an unchanged file always yields the
// same chunk ids.
const (
	targetChars = 1200
	maxChars    = 3000
	maxLines    = 80
)

type chunk struct {
	start, end int // 1-based, inclusive line numbers in the document text
	text       string
}

// splitLines splits text into lines without the line ends; a final newline
// does not start an extra empty line.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// boundary reports whether line i of lines is a good place to start a new
// chunk once the current one is big enough.
type boundary func(lines []string, i int) bool

// markdownBoundary: a blank line or a Markdown heading (also used for plain
// text, HTML and PDF text).
func markdownBoundary(lines []string, i int) bool {
	return strings.TrimSpace(lines[i]) == "" || strings.HasPrefix(lines[i], "#")
}

// codeBoundary: a top-level block of source code — a line that starts in
// column 0 after a blank line, and does not close a block. A comment right
// above a declaration starts the block, so it stays with its declaration.
func codeBoundary(lines []string, i int) bool {
	l := lines[i]
	if i == 0 || l == "" || strings.TrimSpace(lines[i-1]) != "" {
		return false
	}
	switch l[0] {
	case ' ', '\t', '}', ')', ']':
		return false
	}
	return true
}

func chunkText(text string, at boundary) []chunk {
	return chunkLines(splitLines(text), at)
}

func chunkLines(lines []string, at boundary) []chunk {
	var out []chunk
	start, size := 0, 0
	flush := func(end int) { // end exclusive, 0-based
		if end <= start {
			return
		}
		body := strings.Join(lines[start:end], "\n")
		if strings.TrimSpace(body) != "" {
			// Leading/trailing blank lines are kept out of the anchor so
			// the cited range starts and ends on text.
			s, e := start, end-1
			for strings.TrimSpace(lines[s]) == "" {
				s++
			}
			for strings.TrimSpace(lines[e]) == "" {
				e--
			}
			out = append(out, chunk{start: s + 1, end: e + 1, text: strings.Join(lines[s:e+1], "\n")})
		}
		start, size = end, 0
	}
	// soft is the last line since start that opens a paragraph (a line after a blank one: a method of a long
	// class, a group of statements), with sizeAt the chunk's size before it; at the hard limit the chunk ends
	// there rather than mid-paragraph, if that leaves it half its target at least.
	soft, sizeAt := -1, 0
	for i, line := range lines {
		if size >= targetChars && at(lines, i) {
			flush(i)
			soft = -1
		}
		if i > start && strings.TrimSpace(lines[i-1]) == "" && strings.TrimSpace(line) != "" {
			soft, sizeAt = i, size
		}
		size += len(line) + 1
		if size >= maxChars || i+1-start >= maxLines {
			if soft > start && sizeAt >= targetChars/2 {
				rest := size - sizeAt
				flush(soft)
				size = rest
			} else {
				flush(i + 1)
			}
			soft = -1
		}
	}
	flush(len(lines))
	return out
}
