package termsafe_test

import (
	"bytes"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/base/termsafe"
)

func TestText(t *testing.T) {
	tests := []struct {
		name, in, text, line string
	}{
		{"plain", "Go 1.22 · 中文 · émoji 👍🏽", "Go 1.22 · 中文 · émoji 👍🏽", "Go 1.22 · 中文 · émoji 👍🏽"},
		{"newline and tab", "a\tb\nc", "a\tb\nc", `a\u0009b\u000ac`},
		{"crlf kept, lone cr escaped", "a\r\nb\rc", "a\r\nb\\u000dc", `a\u000d\u000ab\u000dc`},
		{"OSC 52 clipboard", "x\x1b]52;c;ZWNobyBwd25lZA==\x07y", `x\u001b]52;c;ZWNobyBwd25lZA==\u0007y`, `x\u001b]52;c;ZWNobyBwd25lZA==\u0007y`},
		{"OSC 0 title", "\x1b]0;owned\x1b\\", `\u001b]0;owned\u001b\`, `\u001b]0;owned\u001b\`},
		{"CSI 2J", "\x1b[2J\x1b[H", `\u001b[2J\u001b[H`, `\u001b[2J\u001b[H`},
		{"C1 CSI and DEL", "a\u009b2Jb\x7f", `a\u009b2Jb\u007f`, `a\u009b2Jb\u007f`},
		{"NUL", "a\x00b", `a\u0000b`, `a\u0000b`},
		{"bidi override", "invoice\u202eexe.txt", `invoice\u202eexe.txt`, `invoice\u202eexe.txt`},
		{"bidi isolates", "\u2066a\u2069\u2067b\u2068", `\u2066a\u2069\u2067b\u2068`, `\u2066a\u2069\u2067b\u2068`},
		{"zero width and bom", "a\u200bb\ufeff", `a\u200bb\ufeff`, `a\u200bb\ufeff`},
		{"tag characters", "a\U000E0041", `a\udb40\udc41`, `a\udb40\udc41`},
		{"joiners kept", "👩\u200d💻 می\u200cخواهم", "👩\u200d💻 می\u200cخواهم", "👩\u200d💻 می\u200cخواهم"},
		{"line separator", "a\u2028b", `a\u2028b`, `a\u2028b`},
		{"invalid utf-8", "a\xffb\xc3", `a\xffb\xc3`, `a\xffb\xc3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := termsafe.Text(tt.in); got != tt.text {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
			}
			if got := termsafe.Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
			}
			if termsafe.Safe(tt.in) != (tt.in == tt.text) {
				t.Errorf("Safe(%q) = %v", tt.in, termsafe.Safe(tt.in))
			}
		})
	}
}

func TestWriterHoldsSplitSequences(t *testing.T) {
	in := "中文 a\r\nb 👍🏽 \x1b[2J end"
	for split := 0; split <= len(in); split++ {
		var out bytes.Buffer
		w := termsafe.NewWriter(&out)
		if _, err := w.Write([]byte(in[:split])); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(in[split:])); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got, want := out.String(), termsafe.Text(in); got != want {
			t.Fatalf("split at %d: %q, want %q", split, got, want)
		}
	}
	var out bytes.Buffer
	w := termsafe.NewWriter(&out)
	w.Write([]byte("x\xe4\xb8")) // a sequence that never completes
	w.Flush()
	if got := out.String(); got != `x\xe4\xb8` {
		t.Fatalf("incomplete tail: %q", got)
	}
	if termsafe.Unwrap(w) != &out {
		t.Fatal("Unwrap does not return the writer underneath")
	}
}

// printable says whether a sanitised string can still drive a terminal: no control but newline and tab, no
// format character but the joiners, valid UTF-8.
func printable(s string, multiline bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
			if !multiline {
				return false
			}
		case r == '\r':
			if !multiline || i+1 >= len(s) || s[i+1] != '\n' {
				return false
			}
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0), r == 0x2028 || r == 0x2029:
			return false
		case r == 0x200c || r == 0x200d:
		case unicode.Is(unicode.Cf, r):
			return false
		}
	}
	return true
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]52;c;AAAA\x07", "\x1b[2J", "\u202eabc", "a\r\nb\r", "\xff\xfe", "\U000E0001x", "中文\u200d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text, line := termsafe.Text(s), termsafe.Line(s)
		if !printable(text, true) || !printable(line, false) {
			t.Fatalf("%q: Text %q or Line %q still holds a control", s, text, line)
		}
		if termsafe.Text(text) != text {
			t.Fatalf("Text is not idempotent on %q", s)
		}
		if termsafe.Safe(s) != (text == s) {
			t.Fatalf("Safe(%q) disagrees with Text", s)
		}
		// Escaping never loses a printable character: those of s appear in text in order.
		if utf8.ValidString(s) && !subsequence(keep(s), []rune(text)) {
			t.Fatalf("%q lost printable text: %q", s, text)
		}
		var out bytes.Buffer
		w := termsafe.NewWriter(&out)
		half := len(s) / 2
		w.Write([]byte(s[:half]))
		w.Write([]byte(s[half:]))
		w.Flush()
		if !printable(out.String(), true) {
			t.Fatalf("Writer let a control through for %q: %q", s, out.String())
		}
	})
}

func keep(s string) []rune {
	var out []rune
	for i, r := range s {
		if printable(string(r), true) || (r == '\r' && printable(s[i:min(i+2, len(s))], true)) {
			out = append(out, r)
		}
	}
	return out
}

func subsequence(sub, of []rune) bool {
	i := 0
	for _, r := range of {
		if i < len(sub) && sub[i] == r {
			i++
		}
	}
	return i == len(sub)
}
