package lexical

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Comment markers are layout, not words: "// When canceled, it also cancels any children" says "When canceled, it
// also cancels any children", and a sentence of a doc comment spread over three "// " lines is one sentence.
// Quote grounding compares text with its markers dropped (publish.NormalizeQuote), and the extractive engine reads
// comments as prose with the same markers removed, so both sides agree on what a marker is: the rules are here,
// in one place, and they look at one word (a run of non-space characters) at a time, never at its position.

// CommentMarker reports whether word, a run of characters without white space, is nothing but a comment marker
// of a common language: // /// //! /* /** */ (C, Go, Java, JavaScript, Rust …), a lone * (the margin of a block
// comment), # ## … (Python, shell, YAML, TOML), -- --- (SQL, Lua), """ ”' (Python docstrings), <!-- --> (HTML).
func CommentMarker(word string) bool {
	switch word {
	case "//", "///", "//!", "/*", "/**", "/*!", "*/", "**/", "*", `"""`, `'''`, "<!--", "-->":
		return true
	}
	return len(word) > 0 && (strings.Trim(word, "#") == "" || len(word) >= 2 && strings.Trim(word, "-") == "")
}

// CommentWord returns the part word[start:end] of word (a run of characters without white space) that is not a
// comment marker: all of it for most words, nothing (start == end) for a marker (CommentMarker), and what is
// left of a word with markers glued to its start ("//go:build", `"""Return`, "#include", "/**Docs") or end
// ("done.*/", `value."""`). The part left is itself free of markers: CommentWord of it is all of it.
func CommentWord(word string) (start, end int) {
	start, end = 0, len(word)
	for {
		w := word[start:end]
		if CommentMarker(w) {
			return start, start
		}
		pre, suf := commentAffixes(w)
		switch {
		case pre == 0 && suf == 0:
			return start, end
		case pre+suf >= len(w): // markers all through ("//*/", `""""""`)
			return start, start
		}
		start, end = start+pre, end-suf
	}
}

// commentAffixes returns how many bytes of word are a comment marker glued to its start and to its end; they
// may overlap.
func commentAffixes(word string) (prefix, suffix int) {
	switch {
	case strings.HasPrefix(word, "///"), strings.HasPrefix(word, "//!"), strings.HasPrefix(word, "/**"), strings.HasPrefix(word, "/*!"),
		strings.HasPrefix(word, `"""`), strings.HasPrefix(word, `'''`):
		prefix = 3
	case strings.HasPrefix(word, "//"), strings.HasPrefix(word, "/*"):
		prefix = 2
	case strings.HasPrefix(word, "#"):
		// "#include", "## Heading": the hashes before a letter; "#1" and "#!/bin/sh" keep theirs.
		n := len(word) - len(strings.TrimLeft(word, "#"))
		if r, _ := utf8.DecodeRuneInString(word[n:]); unicode.IsLetter(r) {
			prefix = n
		}
	}
	rest := word[prefix:]
	for _, s := range []string{"*/", `"""`, `'''`, "-->"} {
		if strings.HasSuffix(rest, s) {
			suffix = len(s)
			break
		}
	}
	return prefix, suffix
}
