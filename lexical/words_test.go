package lexical

import (
	"strings"
	"testing"
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
