package lexical

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// HasWord reports whether s holds w as whole words: w is not part of a longer word at either end ("the callable"
// in "once the callable returns", not in "the callables"). Letters, digits and the underscore make words; the
// caller lower-cases both for a match that ignores case.
func HasWord(s, w string) bool {
	if w == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		a, b := i+j, i+j+len(w)
		before, _ := utf8.DecodeLastRuneInString(s[:a])
		after, _ := utf8.DecodeRuneInString(s[b:])
		if (a == 0 || !wordRune(before)) && (b == len(s) || !wordRune(after)) {
			return true
		}
		i = a + 1
	}
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }
