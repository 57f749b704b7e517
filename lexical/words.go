package lexical

import (
	"slices"
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

// TrimWord returns a whitespace-separated word of a sentence without the punctuation and quotes around it
// ("(unlike", "languages,", "\"LIMIT\"" → "unlike", "languages", "LIMIT").
func TrimWord(w string) string { return strings.Trim(w, ",.;:!?()[]\"'") }

// Symbols are the operators and other symbols text names on their own ("the ? operator", "the special variable _",
// "the `//` operator"): its whitespace-separated words that are symbols (SymbolWord), in order and without
// repeats. A sentence's closing mark written apart ("… in Rust ?") is no symbol. Tokenize drops such words; a
// question about an operator is about them.
func Symbols(text string) []string {
	var out []string
	fields := strings.Fields(text)
	for i, f := range fields {
		s, ok := SymbolWord(f)
		if !ok || i == len(fields)-1 && strings.Trim(s, ".?!。？！") == "" {
			continue
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// SymbolWord reports a word made only of punctuation and symbols once its quotes and backticks are trimmed, and
// returns it trimmed ("?" of "`?`"). A dash or bullet alone is prose punctuation, not a symbol.
func SymbolWord(w string) (string, bool) {
	w = strings.Trim(w, "`'\"“”‘’«»")
	if w == "" || strings.Trim(w, "-–—•·") == "" {
		return "", false
	}
	for _, r := range w {
		if !unicode.IsPunct(r) && !unicode.IsSymbol(r) {
			return "", false
		}
	}
	return w, true
}
