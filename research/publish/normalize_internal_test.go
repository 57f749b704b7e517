package publish

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
)

// TestNormalizeQuoteComments: comment markers are layout, as white space is.
func TestNormalizeQuoteComments(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"go doc comment", "// A cancelCtx can be canceled. When canceled, it also cancels any children\n// that implement canceler.",
			"A cancelCtx can be canceled. When canceled, it also cancels any children that implement canceler."},
		{"indented comment", "\t// In normal mode waiters are queued in FIFO order, but a woken up waiter\n\t// does not own the mutex",
			"In normal mode waiters are queued in FIFO order, but a woken up waiter does not own the mutex"},
		{"blank comment line", "// first paragraph.\n//\n// second one.", "first paragraph. second one."},
		{"trailing comment", "children map[canceler]struct{} // set to nil by the first cancel call",
			"children map[canceler]struct{} set to nil by the first cancel call"},
		{"block comment", "/**\n * Returns the value.\n * Never null.\n */", "Returns the value. Never null."},
		{"glued block comment", "/*Returns the value.*/ x", "Returns the value. x"},
		{"python", "    # Drop the cache\n    # before the next round.", "Drop the cache before the next round."},
		{"docstring", `    """Return the sum of a and b.` + "\n\n    Both are ints.\n    \"\"\"", "Return the sum of a and b. Both are ints."},
		{"sql", "-- Rows older than a day\n-- are purged.", "Rows older than a day are purged."},
		{"rust inner doc", "//! Crate docs.\n/// Item docs.", "Crate docs. Item docs."},
		{"joined on one line", "first words // second words", "first words second words"},
		{"prose dashes", "an advantage -- they are running", "an advantage they are running"},
		{"markdown heading and list", "# Title\n\n* item one\n* item two", "Title item one item two"},
		{"directive", "//go:build linux", "go:build linux"},
		{"url", "see http://example.com/a//b for more", "see http://example.com/a//b for more"},
		{"issue number and shebang", "fixes #12\n#!/bin/sh", "fixes #12 #!/bin/sh"},
		{"chinese comment", "// 当上下文被取消时，\n// 它的所有子上下文也被取消。", "当上下文被取消时，它的所有子上下文也被取消。"},
		{"chinese beside latin", "中文 Go 代码", "中文Go代码"},
		{"only markers", "// \n//\n/* */", ""},
		{"no markers", "  plain   text\twith\n spaces ", "plain text with spaces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NormalizeQuote(tc.in)
			if got != tc.want {
				t.Errorf("NormalizeQuote(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again := NormalizeQuote(got); again != got {
				t.Errorf("not idempotent: %q → %q", got, again)
			}
		})
	}
}

// TestGroundedComment: the prose of a comment grounds; the integrity check places it on the comment's lines.
func TestGroundedComment(t *testing.T) {
	text := "package context\n\n// A cancelCtx can be canceled. When canceled, it also cancels any children\n// that implement canceler.\ntype cancelCtx struct {\n\tchildren map[canceler]struct{} // set to nil by the first cancel call\n}\n"
	for _, tc := range []struct {
		quote       string
		first, last int
		ok          bool
	}{
		{"When canceled, it also cancels any children that implement canceler.", 3, 4, true},
		{"// When canceled, it also cancels any children\n// that implement canceler.", 3, 4, true},
		{"children map[canceler]struct{} // set to nil by the first cancel call", 6, 6, true},
		{"set to nil by the first cancel call", 6, 6, true},
		{"When canceled, it also cancels all children", 0, 0, false},
		{"implement canceler. type cancelCtx", 4, 5, true}, // words in order across a comment's end still are the text
	} {
		if got := Grounded(text, tc.quote); got != tc.ok {
			t.Errorf("Grounded(%q) = %v, want %v", tc.quote, got, tc.ok)
		}
		a, b, ok := NewNormIndex(text).QuoteLines(text, tc.quote)
		if a != tc.first || b != tc.last || ok != tc.ok {
			t.Errorf("QuoteLines(%q) = %d, %d, %v; want %d, %d, %v", tc.quote, a, b, ok, tc.first, tc.last, tc.ok)
		}
		if ok && !QuoteInLines(text, WithLines("file:///x.go", a, b), tc.quote) {
			t.Errorf("quote %q is not within the lines it was placed on", tc.quote)
		}
	}
}

// FuzzNormalizeQuote checks the quote normaliser on arbitrary texts: it is idempotent, its offsets point at the
// bytes each character came from, no comment marker survives it, and the normal form of any run of whole lines
// is a substring of the normal form of the whole text (so a quote cut from a few lines of a comment is found in
// the document, whatever surrounds those lines).
func FuzzNormalizeQuote(f *testing.F) {
	f.Add("// A cancelCtx can be canceled.\n// When canceled, it also cancels any children\n// that implement canceler.", 1, 2)
	f.Add("/**\n * Javadoc.\n */\nint x; // trailing", 0, 3)
	f.Add("中文 //注释\n# 第二行\n\t\"\"\"docstring\"\"\"", 1, 1)
	f.Fuzz(func(t *testing.T, text string, a, b int) {
		if !utf8.ValidString(text) {
			return
		}
		norm, offs := normalize(text, true)
		if norm != NormalizeQuote(text) {
			t.Fatalf("with offsets %q, without %q", norm, NormalizeQuote(text))
		}
		if again := NormalizeQuote(norm); again != norm {
			t.Fatalf("not idempotent: %q → %q → %q", text, norm, again)
		}
		if len(offs) != len(norm) {
			t.Fatalf("%d offsets for %d bytes", len(offs), len(norm))
		}
		for k := range norm {
			if k > 0 && offs[k] < offs[k-1] || int(offs[k]) >= len(text) {
				t.Fatalf("offset %d of %q is %d", k, norm, offs[k])
			}
			want, _ := utf8.DecodeRuneInString(norm[k:])
			got, _ := utf8.DecodeRuneInString(text[offs[k]:])
			if want == ' ' && !unicode.IsSpace(got) && !lexical.CommentMarker(word(text, int(offs[k]))) && !strings.ContainsAny(string(got), `*/"'-`) {
				t.Fatalf("space %d of %q comes from %q", k, norm, got)
			}
			if want != ' ' && utf8.RuneStart(norm[k]) && got != want {
				t.Fatalf("character %d of %q is %q, comes from %q", k, norm, want, got)
			}
		}
		if strings.HasPrefix(norm, " ") || strings.HasSuffix(norm, " ") || strings.Contains(norm, "  ") || strings.ContainsFunc(norm, func(r rune) bool { return r != ' ' && unicode.IsSpace(r) }) {
			t.Fatalf("white space left in %q", norm)
		}
		for _, w := range strings.Fields(norm) {
			if lexical.CommentMarker(w) {
				t.Fatalf("marker %q left in %q", w, norm)
			}
		}
		lines := strings.Split(text, "\n")
		if a < 0 || b < a || b >= len(lines) {
			return
		}
		part := NormalizeQuote(strings.Join(lines[a:b+1], "\n"))
		if !strings.Contains(norm, part) {
			t.Fatalf("lines %d-%d normalise to %q, not in %q", a, b, part, norm)
		}
	})
}

// word returns the word of text (a run without white space) that contains byte offset i.
func word(text string, i int) string {
	s, e := i, i
	for s > 0 && !unicode.IsSpace(rune(text[s-1])) {
		s--
	}
	for e < len(text) && !unicode.IsSpace(rune(text[e])) {
		e++
	}
	return text[s:e]
}
