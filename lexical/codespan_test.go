package lexical

import (
	"slices"
	"strings"
	"testing"
)

func TestCodeSpans(t *testing.T) {
	tests := []struct {
		in   string
		want []string // the spans' code
	}{
		{"a `b` c `d`", []string{"b", "d"}},
		{"``a ` b`` c", []string{"a ` b"}},
		{"` unclosed and `closed`", []string{" unclosed and "}},
		{"x``y`z``", []string{"y`z"}},
		{"``` only ``", nil},
		{"run ```sh deploy \"何时？\"``` now", []string{"sh deploy \"何时？\""}},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, c := range CodeSpans(tt.in) {
			got = append(got, tt.in[c.Code[0]:c.Code[1]])
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("CodeSpans(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzCodeSpans checks that spans are ordered, do not overlap and are delimited by equal runs of backticks that
// are whole runs.
func FuzzCodeSpans(f *testing.F) {
	for _, s := range []string{"a `b` c", "``a ` b``", "` unclosed", "```", "x``y`z``"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prev := 0
		for _, c := range CodeSpans(s) {
			if c.Start < prev || !(c.Start < c.Code[0] && c.Code[0] <= c.Code[1] && c.Code[1] < c.End && c.End <= len(s)) {
				t.Fatalf("CodeSpans(%q): bad span %+v after %d", s, c, prev)
			}
			open, close := s[c.Start:c.Code[0]], s[c.Code[1]:c.End]
			if open != close || strings.Trim(open, "`") != "" ||
				c.Start > 0 && s[c.Start-1] == '`' || c.End < len(s) && s[c.End] == '`' {
				t.Fatalf("CodeSpans(%q): span %+v not delimited by equal whole runs", s, c)
			}
			prev = c.End
		}
	})
}

func TestOutsideCode(t *testing.T) {
	for in, want := range map[string]string{
		"writing expressions as `{expression}`.": "writing expressions as C.",
		"use ``a ` b`` or `c | d | e | f`":       "use C or C",
		"no code here; none":                     "no code here; none",
		"an unclosed `brace {":                   "an unclosed `brace {",
		"":                                       "",
		"```sh\nmake {all}\n``` then `x := 1` and so": "C then C and so",
	} {
		if got := OutsideCode(in, "C"); got != want {
			t.Errorf("OutsideCode(%q) = %q, want %q", in, got, want)
		}
	}
}
