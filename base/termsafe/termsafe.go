// Package termsafe makes text that came from outside — fetched pages, corpus files and their names, questions,
// model output — safe to print on a terminal. A terminal obeys control sequences in what it prints: OSC 52
// writes the clipboard, OSC 0 sets the window title, CSI 2J clears the screen, a carriage return overwrites
// the line; bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069) reorder what is shown, and other
// invisible format characters hide text. The printer shows each of them as a visible escape instead:
//
//   - a C0 control, DEL or a C1 control as \u001b, \u007f, \u009b (JSON's own escapes, so JSON output means the
//     same after printing); Text keeps newline, tab and the carriage return of a
//     CR LF, Line escapes them too;
//   - a format character (Unicode category Cf: bidi controls, zero-width spaces, the byte-order mark, tag
//     characters) and the line and paragraph separators U+2028, U+2029 likewise (\u202e; past U+FFFF as a JSON
//     surrogate pair), except the zero-width joiner and non-joiner, which scripts and emoji need;
//   - a byte that is not UTF-8 as \xNN.
//
// Writer applies the same to everything written through it.
//
// Like every package under base/, it is importable by other modules but carries no compatibility promise.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Text returns s with every control character but newline and tab, every invisible format character and every
// invalid byte shown as an escape.
func Text(s string) string { return clean(s, true) }

// Line returns s as Text does, with newline, carriage return and tab escaped too: for a file name, a title or a
// question printed on one line.
func Line(s string) string { return clean(s, false) }

// Safe reports whether Text(s) == s.
func Safe(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return false
			}
		}
		if escaped(r, true) && !crlf(s, i, true) {
			return false
		}
	}
	return true
}

// escaped says whether the rune r is shown as an escape.
func escaped(r rune, multiline bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !multiline
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r == 0x200c || r == 0x200d: // zero-width non-joiner and joiner: needed by scripts and emoji
		return false
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

func clean(s string, multiline bool) string {
	// Fast path: most text has nothing to escape.
	ok := true
	for i, r := range s {
		if (r == utf8.RuneError && isBadByte(s, i)) || (escaped(r, multiline) && !crlf(s, i, multiline)) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i, r := range s {
		switch {
		case r == utf8.RuneError && isBadByte(s, i):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case escaped(r, multiline) && !crlf(s, i, multiline):
			writeEscape(&b, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// crlf reports a carriage return that ends a line (CR LF), kept in multi-line text; a lone one, which would
// overwrite the line, is escaped.
func crlf(s string, i int, multiline bool) bool {
	return multiline && s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n'
}

func isBadByte(s string, i int) bool {
	_, n := utf8.DecodeRuneInString(s[i:])
	return n == 1
}

func writeEscape(b *strings.Builder, r rune) {
	if r > 0xffff {
		r1, r2 := utf16.EncodeRune(r)
		fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
		return
	}
	fmt.Fprintf(b, `\u%04x`, r)
}

// Writer writes everything through Text. A UTF-8 sequence split across two writes is held until the rest comes;
// Flush writes what is held (as escapes, when it never completes).
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

// NewWriter returns a Writer that writes sanitised text to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Unwrap returns the writer underneath, for the callers that draw on a terminal with their own escapes and
// sanitise what they draw themselves (the progress display).
func (w *Writer) Unwrap() io.Writer { return w.w }

// Write sanitises p and writes it; it reports len(p) when the whole text was written.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	buf := p
	if len(w.pending) > 0 {
		buf = append(w.pending, p...)
		w.pending = nil
	}
	// Hold an incomplete sequence at the end (at most 3 bytes) for the next write.
	cut := len(buf)
	for k := 1; k <= 3 && k <= len(buf); k++ {
		c := buf[len(buf)-k]
		if c < 0x80 {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(buf[len(buf)-k:]) {
				cut = len(buf) - k
			}
			break
		}
	}
	if cut == len(buf) && cut > 0 && buf[cut-1] == '\r' {
		cut-- // a CR LF may be split too
	}
	if cut < len(buf) {
		w.pending = append([]byte(nil), buf[cut:]...)
	}
	if _, err := io.WriteString(w.w, Text(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a held incomplete sequence.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	s := Text(string(w.pending))
	w.pending = nil
	_, err := io.WriteString(w.w, s)
	return err
}

// Unwrap returns the writer beneath a Writer, or w itself.
func Unwrap(w io.Writer) io.Writer {
	if t, ok := w.(*Writer); ok {
		return t.w
	}
	return w
}
