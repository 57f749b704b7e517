package lexical

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestHasWord(t *testing.T) {
	for _, tc := range []struct {
		s, w string
		want bool
	}{
		{"once the callable returns", "the callable", true},
		{"the callables", "the callable", false},
		{"bathe callable", "the callable", false},
		{"sync.mutex", "mutex", true},
		{"a_mutex", "mutex", false},
		{"互斥锁 mutex", "mutex", true},
		{"émutex", "mutex", false},
		{"mutex", "", false},
		{"", "mutex", false},
		{"mutex mutexes mutex", "mutex", true},
		{"mutexes and mutex", "mutex", true},
	} {
		if got := HasWord(tc.s, tc.w); got != tc.want {
			t.Errorf("HasWord(%q, %q) = %v, want %v", tc.s, tc.w, got, tc.want)
		}
	}
}

func FuzzHasWord(f *testing.F) {
	f.Add("once the callable returns", "the callable")
	f.Add("émutex", "mutex")
	f.Fuzz(func(t *testing.T, s, w string) {
		if HasWord(s, w) && w != "" && !strings.Contains(s, w) {
			t.Errorf("HasWord(%q, %q) without w in s", s, w)
		}
	})
}

func TestSymbols(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"What does the ? operator do with a Result value in Rust?", []string{"?"}},
		{"What does the _ variable hold in the Node.js REPL?", []string{"_"}},
		{"assign it to the special variable _ (underscore).", []string{"_"}},
		{"the `//` operator and the `**` one, then // again", []string{"//", "**"}},
		{"A list - with dashes — and • bullets", nil},
		{"Does Rust panic here ?", nil},
		{"Is ? a closing mark ?", []string{"?"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := Symbols(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Symbols(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzSymbols(f *testing.F) {
	f.Add("What does the ? operator do with a Result value in Rust?")
	f.Add("the `//` operator — and « ?? » then _ .")
	f.Fuzz(func(t *testing.T, s string) {
		got := Symbols(s)
		for i, sym := range got {
			if sym == "" || !strings.Contains(s, sym) || strings.ContainsFunc(sym, func(r rune) bool {
				return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsSpace(r)
			}) {
				t.Errorf("Symbols(%q)[%d] = %q: not a symbol of the text", s, i, sym)
			}
			if slices.Contains(got[:i], sym) {
				t.Errorf("Symbols(%q) repeats %q", s, sym)
			}
		}
	})
}

func TestTrimWord(t *testing.T) {
	for in, want := range map[string]string{"(unlike": "unlike", "languages,": "languages", `"LIMIT"`: "LIMIT", "sync.Map.": "sync.Map",
		"`except`": "`except`", "?": "", "": ""} {
		if got := TrimWord(in); got != want {
			t.Errorf("TrimWord(%q) = %q, want %q", in, got, want)
		}
	}
}
