package lexical

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"上下文工程", 2, "上下…"},
		{"上下文工程", 5, "上下文工程"},
		{"a上b", 2, "a上…"},
		{"abc", 0, "…"},
		{"", 0, ""},
		{"abc", -1, "…"},
		{"e\u0301x", 1, "e…"}, // a combining mark is its own rune
	}
	for _, tc := range tests {
		got := Clip(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q is not valid UTF-8", tc.in, tc.n, got)
		}
	}
}

func FuzzClip(f *testing.F) {
	f.Add("上下文工程 context", 3)
	f.Add("abc", 0)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if !utf8.ValidString(s) || n > 1<<16 {
			return
		}
		got := Clip(s, n)
		if !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q is not valid UTF-8", s, n, got)
		}
		if r := utf8.RuneCountInString(got); r > max(n, 0)+1 {
			t.Fatalf("Clip(%q, %d) has %d runes", s, n, r)
		}
	})
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 100000: "100,000",
		-9223372036854775808: "-9,223,372,036,854,775,808"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// Language is the one detector: the script settles CJK, Cyrillic and Arabic; Latin text is "en".
func TestLanguage(t *testing.T) {
	for text, want := range map[string]string{
		"What is the state of quantum computing?":       "en",
		"Quel est l'état de l'informatique quantique ?": "en",
		"量子计算的现状如何？":                                    "zh",
		"OpenAI 的 GPT-5 与 Claude 相比有哪些优势？":              "zh",
		"量子コンピュータの現状は？":                                 "ja",
		"양자 컴퓨터의 현황은?":                                  "ko",
		"Как работает квантовый компьютер?":             "ru",
		"Как работает Kubernetes?":                      "ru",
		"كيف يعمل الحاسوب الكمومي؟":                     "ar",
		"": "en",
	} {
		if got := Language(text); got != want {
			t.Errorf("Language(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestKeywords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"What does the Go memory model guarantee about channels?", "go memory model guarantee channels"},
		{"How do LSM-trees handle deletes in v2.1?", "lsm-trees handle deletes v2.1"},
		{"Raft 共识算法 是什么?", "raft 共识算法 是什么"},
		{"the the THE a", ""},
		{"x y z 7", "7"},
		{"deletes... deletes.", "deletes"},
	} {
		if got := strings.Join(Keywords(tc.in), " "); got != tc.want {
			t.Errorf("Keywords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
