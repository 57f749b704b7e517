package extractive

import "testing"

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
