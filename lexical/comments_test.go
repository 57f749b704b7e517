package lexical

import "testing"

func TestCommentMarker(t *testing.T) {
	for _, tc := range []struct {
		word string
		want bool
	}{
		{"//", true}, {"///", true}, {"//!", true}, {"/*", true}, {"/**", true}, {"*/", true}, {"*", true},
		{"#", true}, {"###", true}, {"--", true}, {"---", true}, {`"""`, true}, {`'''`, true}, {"<!--", true}, {"-->", true},
		{"", false}, {"-", false}, {"/", false}, {"**", false}, {"//x", false}, {"http://x", false}, {"a--", false},
		{"C#", false}, {"#1", false}, {"+", false}, {"—", false},
	} {
		if got := CommentMarker(tc.word); got != tc.want {
			t.Errorf("CommentMarker(%q) = %v, want %v", tc.word, got, tc.want)
		}
	}
}

func TestCommentWord(t *testing.T) {
	for _, tc := range []struct {
		word, want string
	}{
		{"word", "word"},
		{"//", ""},
		{"*", ""},
		{"//go:build", "go:build"},
		{"///Docs", "Docs"},
		{"//!Inner", "Inner"},
		{"/**Docs", "Docs"},
		{"/*note*/", "note"},
		{`"""Return`, "Return"},
		{`value."""`, "value."},
		{`'''x'''`, "x"},
		{"done.*/", "done."},
		{"#include", "include"},
		{"##Heading", "Heading"},
		{"#1", "#1"},               // an issue number, not a comment
		{"#!/bin/sh", "#!/bin/sh"}, // a shebang keeps its marks
		{"C#", "C#"},
		{"http://example.com", "http://example.com"},
		{"--verbose", "--verbose"}, // a flag, not a SQL comment
		{"a-->", "a"},
		{"//#include", "include"}, // markers glued to markers go in turn
		{"#*/", ""},               // markers all through
		{"//*/", ""},
		{"中文", "中文"},
		{"#中文", "中文"},
	} {
		s, e := CommentWord(tc.word)
		if got := tc.word[s:e]; got != tc.want {
			t.Errorf("CommentWord(%q) = %q, want %q", tc.word, got, tc.want)
		}
		if s < e {
			if s2, e2 := CommentWord(tc.word[s:e]); s2 != 0 || e2 != e-s {
				t.Errorf("CommentWord(%q) left %q, which still has markers", tc.word, tc.word[s:e])
			}
		}
	}
}
