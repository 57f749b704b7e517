package llm

import "testing"

// An eager splitter (a chat display) shows prose as it comes, even prose a lone closing tag later turns into
// reasoning; what it settles as the answer is exactly what a strict one settles.
func TestThinkSplitterEager(t *testing.T) {
	for _, tc := range []struct {
		pieces                 []string
		firstShown             string
		answer, reasoning, all string
	}{
		{[]string{"Thinking", " about bees."}, "Thinking", "Thinking about bees.", "", "Thinking about bees."},
		{[]string{"Let me see.", "\n</think>\n\nBees dance."}, "Let me see.", "Bees dance.", "Let me see.", "Let me see.Bees dance."},
		{[]string{"<think>hidden</think>", "Shown."}, "", "Shown.", "hidden", "Shown."},
		{[]string{"a </thi", "nk> b"}, "a ", "a </think> b", "", "a </think> b"},
	} {
		var s ThinkSplitter
		s.Eager = true
		var shown string
		for i, p := range tc.pieces {
			got := s.Write(p)
			if i == 0 && got != tc.firstShown {
				t.Errorf("%q: first write shows %q, want %q", tc.pieces, got, tc.firstShown)
			}
			shown += got
		}
		shown += s.Close()
		var strict ThinkSplitter
		for _, p := range tc.pieces {
			strict.Write(p)
		}
		strict.Close()
		if s.Answer() != strict.Answer() || s.Reasoning() != strict.Reasoning() {
			t.Errorf("%q: eager settles %q/%q, strict %q/%q", tc.pieces, s.Answer(), s.Reasoning(), strict.Answer(), strict.Reasoning())
		}
		if s.Answer() != tc.answer || s.Reasoning() != tc.reasoning || shown != tc.all {
			t.Errorf("%q: answer %q reasoning %q shown %q; want %q %q %q", tc.pieces, s.Answer(), s.Reasoning(), shown, tc.answer, tc.reasoning, tc.all)
		}
	}
}
