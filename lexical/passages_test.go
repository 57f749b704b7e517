package lexical

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPassagesSplitLongRunsVerbatim(t *testing.T) {
	long := strings.Repeat("上下文压缩是深度研究的核心机制子Agent在独立的上下文窗口中工作", 20) // no punctuation at all
	text := "Short sentence. " + long + "\n\nTail，with a clause，and more。"
	ps := Passages(text, 60)
	if len(ps) < 10 {
		t.Fatalf("got %d passages, want the long run cut into many", len(ps))
	}
	if ps[0].Text != "Short sentence." {
		t.Errorf("first passage = %q", ps[0].Text)
	}
	var rebuilt strings.Builder
	for i, p := range ps {
		if text[p.Start:p.End] != p.Text {
			t.Fatalf("passage %d does not point into the text", i)
		}
		if n := utf8.RuneCountInString(p.Text); n > 60 {
			t.Errorf("passage %d has %d runes", i, n)
		}
		if i > 0 && p.Start < ps[i-1].End {
			t.Errorf("passage %d overlaps the previous one", i)
		}
		rebuilt.WriteString(p.Text)
	}
	if got := strings.Join(strings.Fields(rebuilt.String()), ""); got != strings.Join(strings.Fields(text), "") {
		t.Error("passages lose text")
	}
}

func TestPassagesPreferClauseBreaks(t *testing.T) {
	text := strings.Repeat("甲", 30) + "，" + strings.Repeat("乙", 30)
	ps := Passages(text, 40)
	if len(ps) != 2 || !strings.HasSuffix(ps[0].Text, "，") {
		t.Fatalf("passages = %q, want a cut after the comma", texts(ps))
	}
	en := strings.Repeat("word ", 30)
	for _, p := range Passages(en, 22) {
		if strings.HasPrefix(p.Text, "ord") || strings.HasSuffix(p.Text, "wor") {
			t.Errorf("cut inside a word: %q", p.Text)
		}
	}
}

func TestLineAt(t *testing.T) {
	text := "a\nb\nc"
	for off, want := range map[int]int{0: 1, 1: 1, 2: 2, 4: 3, 99: 3} {
		if got := LineAt(text, off); got != want {
			t.Errorf("LineAt(%d) = %d, want %d", off, got, want)
		}
	}
}

func texts(ps []Span) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Text)
	}
	return out
}

func TestPassagesSplitTableRowsNotWrappedProse(t *testing.T) {
	text := "维度\tDeepAgent\tClaude Code\n触发时机\t上下文达 85%\t上下文达 95-98%\n\nA wrapped line of prose\ncontinues here.\n▼ Phase 1: truncate\n"
	got := texts(Passages(text, 200))
	want := []string{"维度\tDeepAgent\tClaude Code", "触发时机\t上下文达 85%\t上下文达 95-98%", "A wrapped line of prose\ncontinues here.", "▼ Phase 1: truncate"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Passages = %q, want %q", got, want)
	}
}
