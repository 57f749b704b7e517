package llm

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var thinkCases = []struct {
	name              string
	text              string
	separate          bool
	answer, reasoning string
}{
	{"no tags", "The answer is 4.", false, "The answer is 4.", ""},
	{"no tags, white space kept", "  {\"a\":1}\n", false, "  {\"a\":1}\n", ""},
	{"closed block (Qwen3, QwQ)", "<think>\nThe user asks 2+2.\n</think>\n\nThe answer is 4.", false, "The answer is 4.", "The user asks 2+2."},
	{"thinking tags", "<thinking>Plan: add.</thinking>The answer is 4.", false, "The answer is 4.", "Plan: add."},
	{"leading white space before the block", "\n\n<think>x</think>\n{\"ok\":true}", false, "{\"ok\":true}", "x"},
	{"two blocks in a row", "<think>a</think>\n<think>b</think>\nanswer", false, "answer", "a\n\nb"},
	{"empty block (Qwen3 with thinking off)", "<think>\n\n</think>\n\nanswer", false, "answer", ""},
	{"unclosed: cut while thinking", "<think>\nStill working on it, the draft is {\"evidence\":[]}", false, "", "Still working on it, the draft is {\"evidence\":[]}"},
	{"closing tag only (template opened it: R1 distills)", "Okay, the pool has two items.\nDraft: {\"x\":1}\n</think>\n\n{\"x\":2}", false, "{\"x\":2}", "Okay, the pool has two items.\nDraft: {\"x\":1}"},
	{"JSON answer with a closing tag on its own line is the answer's", "{\"a\":\"b\"}\n</think>\n", false, "{\"a\":\"b\"}\n</think>\n", ""},
	{"closing tag only at line end", "Reasoning here.</think>\n\nFinal.", false, "Final.", "Reasoning here."},
	{"closing tag only at the very end", "All reasoning, no answer.\n</think>", false, "", "All reasoning, no answer."},
	{"closing tag inside JSON text is the answer's", `{"quote":"the model writes </think> then answers"}`, false, `{"quote":"the model writes </think> then answers"}`, ""},
	{"closing tag mid-sentence is the answer's", "Models end reasoning with </think> and go on.", false, "Models end reasoning with </think> and go on.", ""},
	{"orphan tag ignored when reasoning came apart", "Answer.\n</think>\nmore", true, "Answer.\n</think>\nmore", ""},
	{"open tag mid-text is the answer's", "Use the <think> tag.\n", false, "Use the <think> tag.\n", ""},
	{"later closing tag after a block is the answer's", "<think>r</think>\nSee </think>\nhere", false, "See </think>\nhere", "r"},
	{"only white space", " \n", false, " \n", ""},
	{"partial tag at the end is text", "<thi", false, "<thi", ""},
	{"CJK answer", "<think>\n用户在问通道。\n</think>\n\n通道是同步的。", false, "通道是同步的。", "用户在问通道。"},
}

func TestSplitThinking(t *testing.T) {
	for _, tc := range thinkCases {
		t.Run(tc.name, func(t *testing.T) {
			a, r := SplitThinking(tc.text, tc.separate)
			if a != tc.answer || r != tc.reasoning {
				t.Fatalf("SplitThinking(%q)\n answer    %q, want %q\n reasoning %q, want %q", tc.text, a, tc.answer, r, tc.reasoning)
			}
		})
	}
}

// Streamed in any pieces — every split point, and one rune at a time — the pieces returned join to the same
// answer as the whole text, and no piece ever shows reasoning or a tag.
func TestThinkSplitterStreamsOnlyTheAnswer(t *testing.T) {
	for _, tc := range thinkCases {
		t.Run(tc.name, func(t *testing.T) {
			for cut := 0; cut <= len(tc.text); cut++ {
				if !utf8.ValidString(tc.text[:cut]) {
					continue
				}
				checkStream(t, tc.text, tc.separate, []string{tc.text[:cut], tc.text[cut:]}, tc.answer, tc.reasoning)
			}
			var runes []string
			for _, r := range tc.text {
				runes = append(runes, string(r))
			}
			checkStream(t, tc.text, tc.separate, runes, tc.answer, tc.reasoning)
		})
	}
}

func checkStream(t *testing.T, text string, separate bool, pieces []string, answer, reasoning string) {
	t.Helper()
	var s ThinkSplitter
	if separate {
		s.Separate()
	}
	var shown strings.Builder
	for _, p := range pieces {
		shown.WriteString(s.Write(p))
		if !strings.HasPrefix(answer, shown.String()) {
			t.Fatalf("%q in pieces %q: showed %q, which is not a prefix of the answer %q", text, pieces, shown.String(), answer)
		}
	}
	shown.WriteString(s.Close())
	if shown.String() != answer || s.Answer() != answer || s.Reasoning() != reasoning {
		t.Fatalf("%q in pieces %q: showed %q, answer %q, reasoning %q; want %q, %q", text, pieces, shown.String(), s.Answer(), s.Reasoning(), answer, reasoning)
	}
	if s.Write("late") != "" || s.Close() != "" {
		t.Fatal("a closed splitter returned text")
	}
}

// Answers that open as JSON or Markdown stream at once: reasoning prose never opens so.
func TestThinkSplitterStreamsStructuredAnswersAtOnce(t *testing.T) {
	for _, first := range []string{`{"evidence":`, "[1, ", "# Report", "```json"} {
		var s ThinkSplitter
		if got := s.Write("\n" + first); got != "\n"+first {
			t.Errorf("%q held back: %q", first, got)
		}
	}
	var s ThinkSplitter
	if got := s.Write("Okay, the user"); got != "" {
		t.Errorf("prose that may be reasoning shown early: %q", got)
	}
}

// Separate called mid-stream (the first reasoning field arrived after some content) releases held-back text.
func TestThinkSplitterSeparateReleases(t *testing.T) {
	var s ThinkSplitter
	if got := s.Write("Hello "); got != "" {
		t.Fatalf("undecided text shown early: %q", got)
	}
	s.Separate()
	if got := s.Write("world"); got != "Hello world" {
		t.Fatalf("after Separate: %q", got)
	}
}

func TestSplitAnswer(t *testing.T) {
	a, r := SplitAnswer("<think>mine</think>\nok", []Reasoning{{Text: "field"}})
	if a != "ok" || len(r) != 2 || r[0].Text != "field" || r[1].Text != "mine" {
		t.Fatalf("%q %+v", a, r)
	}
	// With reasoning apart, an orphan closing tag is text, and nothing is invented.
	a, r = SplitAnswer("x\n</think>\ny", []Reasoning{{Text: "field"}})
	if a != "x\n</think>\ny" || len(r) != 1 {
		t.Fatalf("%q %+v", a, r)
	}
	a, r = SplitAnswer("plain", nil)
	if a != "plain" || r != nil {
		t.Fatalf("%q %+v", a, r)
	}
}

// FuzzThinkSplitter: for any text and any cut, streaming agrees with the whole text, what is shown is always a
// prefix of the answer, and nothing is lost: the answer and reasoning together hold every non-space byte that is
// not part of a think tag.
func FuzzThinkSplitter(f *testing.F) {
	for _, tc := range thinkCases {
		f.Add(tc.text, len(tc.text)/2, tc.separate)
	}
	f.Fuzz(func(t *testing.T, text string, cut int, separate bool) {
		if cut < 0 || cut > len(text) {
			cut = len(text) / 2
		}
		answer, reasoning := SplitThinking(text, separate)
		checkStream(t, text, separate, []string{text[:cut], text[cut:]}, answer, reasoning)
		strip := func(s string) string {
			for _, tag := range thinkTags {
				s = strings.ReplaceAll(strings.ReplaceAll(s, tag[0], ""), tag[1], "")
			}
			return strings.Join(strings.Fields(s), "")
		}
		if got, want := len(strip(answer))+len(strip(reasoning)), len(strip(text)); got != want {
			t.Fatalf("%q: answer %q + reasoning %q hold %d of the text's %d bytes", text, answer, reasoning, got, want)
		}
	})
}
