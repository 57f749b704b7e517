package extractive

import (
	"strings"
	"testing"
)

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"A `String` is a wrapper over a `Vec<u8>`.", "A String is a wrapper over a Vec<u8>."},
		{"Use `RefCell<T>` and **not** <b>this</b>.", "Use RefCell<T> and not this."},
		{"Call `f(*args)` or ``a ` b`` with `x ** y`.", "Call f(*args) or a ` b with x ** y."},
		{"- [`Vec<T>`](vec.html \"Vec\") grows.", "Vec<T> grows."},
		{"An unclosed ` tick and *emphasis*.", "An unclosed tick and emphasis."},
		{"| a | `b|c` |", "a | b | c"},
		{`map\[any]any &amp; more`, "map[any]any & more"},
	}
	for _, tt := range tests {
		if got := plainText(tt.in); got != tt.want {
			t.Errorf("plainText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzCodeSpan checks that a code span found is delimited by equal backtick runs and that the three parts make up
// the input.
func FuzzCodeSpan(f *testing.F) {
	for _, s := range []string{"a `b` c", "``a ` b``", "` unclosed", "```", "x``y`z``"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		before, code, after, ok := codeSpan(s)
		if !ok {
			return
		}
		n := len(s) - len(before) - len(code) - len(after)
		if n <= 0 || n%2 != 0 || !strings.HasPrefix(s, before) || !strings.HasSuffix(s, after) {
			t.Fatalf("codeSpan(%q) = %q, %q, %q", s, before, code, after)
		}
		delim := strings.Repeat("`", n/2)
		if s != before+delim+code+delim+after || strings.HasSuffix(before, "`") || strings.HasPrefix(after, "`") {
			t.Fatalf("codeSpan(%q) = %q, %q, %q: not delimited by equal runs", s, before, code, after)
		}
		plainText(s)
	})
}
