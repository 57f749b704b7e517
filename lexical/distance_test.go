package lexical

import "testing"

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"provider", "provider", 0}, {"provder", "provider", 1}, {"prvoider", "provider", 2},
		{"", "web", 3}, {"kitten", "sitting", 3}, {"证据", "证据链", 1},
	} {
		if got := EditDistance([]rune(tc.a), []rune(tc.b)); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
