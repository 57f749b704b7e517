package publish

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuoteLines(t *testing.T) {
	text := "# Title\n\nThe first line of prose.\nA quote that spans\n  two lines, with  odd   spacing.\n\n这是中文的句子，\n跨越两行。\nThe first line of prose.\n"
	for _, tc := range []struct {
		quote       string
		first, last int
		ok          bool
	}{
		{"The first line of prose.", 3, 3, true}, // the first occurrence
		{"A quote that spans two lines, with odd spacing.", 4, 5, true},
		{"spans two lines", 4, 5, true},
		{"这是中文的句子，跨越两行。", 7, 8, true},
		{"not in the text at all", 0, 0, false},
		{"short", 0, 0, false},
	} {
		ix := NewNormIndex(text)
		a, b, ok := ix.QuoteLines(text, tc.quote)
		if a != tc.first || b != tc.last || ok != tc.ok {
			t.Errorf("QuoteLines(%q) = %d, %d, %v; want %d, %d, %v", tc.quote, a, b, ok, tc.first, tc.last, tc.ok)
		}
	}
}

// FuzzNormIndex: the index's text is NormalizeQuote's, and every quote cut from the text is placed on lines
// that hold it.
func FuzzNormIndex(f *testing.F) {
	f.Add("one two\nthree  four\n\nfive six seven eight nine", 4, 30)
	f.Add("中文 文本\n第二 行的内容比较长一些。\n  end of text here", 2, 20)
	f.Add("\t\n  leading space\r\nand CRLF lines\r\nthird line of it", 0, 40)
	f.Fuzz(func(t *testing.T, text string, from, n int) {
		if !utf8.ValidString(text) {
			return
		}
		ix := NewNormIndex(text)
		if ix.Norm != NormalizeQuote(text) {
			t.Fatalf("index text %q, NormalizeQuote %q", ix.Norm, NormalizeQuote(text))
		}
		if len(ix.offs) != len(ix.Norm) {
			t.Fatalf("%d offsets for %d bytes", len(ix.offs), len(ix.Norm))
		}
		r := []rune(text)
		if from < 0 || n <= 0 || from+n > len(r) {
			return
		}
		quote := string(r[from : from+n])
		a, b, ok := ix.QuoteLines(text, quote)
		if !ok {
			if GroundedIn(ix.Norm, quote) {
				t.Fatalf("grounded quote %q not placed", quote)
			}
			return
		}
		if !QuoteInLines(text, WithLines("file:///x", a, b), quote) {
			t.Fatalf("quote %q placed on lines %d-%d that do not hold it", quote, a, b)
		}
		if lines := strings.Count(text, "\n") + 1; a < 1 || b > lines || b < a {
			t.Fatalf("lines %d-%d of %d", a, b, lines)
		}
	})
}
