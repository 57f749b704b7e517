package lexical

import "unicode/utf8"

// Clip shortens s to at most n runes, marking a cut with "…"; it never cuts inside a rune, so the result is valid
// UTF-8 whenever s is. n <= 0 yields "" (or "…" when s is not empty). Callers that show one line first collapse
// white space with NormalizeSpace.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return "…"
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}
