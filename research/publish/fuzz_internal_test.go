package publish

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzIntegrity feeds arbitrary drafts (model output) to citation parsing and the integrity check: no panic,
// and what RemoveUnsupported keeps cites, outside code blocks, no evidence the check refuses.
func FuzzIntegrity(f *testing.F) {
	for _, s := range []string{
		"Bees dance [e1]. Ants march [e9].\n\n## Sources\n",
		"# Title\n\nA claim [e1, e2]. Another [3]. Uncited sentence.\n- item [e2]\n| a | b |\n|---|---|\n| x [e1] | y |\n",
		"中文句子[e1]。没有引用的句子。\n", "```\ncode [e7]\n```\nText [e1；e2]", "[e1][e2][e", "[ e1 ,e2 ]", "",
		"Lead-in:\n1. first [e1]\n2. second [e404]\n", "list((1, 2, 3)) yields `[1, 2, 3]` [e1]. Code `[e9]` alone.", "Disagree: “A. B.” [e1]; versus “C.” [e2]. 「甲。乙」[e3]。",
	} {
		f.Add(s)
	}
	check := func(id string) error {
		if id == "e1" || id == "e2" {
			return nil
		}
		return errors.New("unknown evidence " + id)
	}
	f.Fuzz(func(t *testing.T, md string) {
		_ = CheckIntegrity(md, check)
		// The sentences are the paragraph cut, nothing lost, added or reordered (white space aside).
		squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if utf8.ValidString(md) && squeeze(strings.Join(SplitSentences(md), "")) != squeeze(md) {
			t.Fatalf("SplitSentences(%q) = %q: not the text cut", md, SplitSentences(md))
		}
		kept, _ := RemoveUnsupported(md, check)
		for _, id := range CitedIDs(outsideCode(kept)) {
			if check(id) != nil {
				t.Fatalf("RemoveUnsupported(%q) kept a citation of %s:\n%s", md, id, kept)
			}
		}
	})
}

// outsideCode drops fenced code blocks, whose brackets are code, not citations.
func outsideCode(md string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// FuzzGrounded feeds arbitrary source texts and quotes to the quote-grounding matcher: no panic, a quote is
// grounded in any text that contains it with different spacing, and a quote shorter than MinQuoteRunes never is.
func FuzzGrounded(f *testing.F) {
	for _, p := range [][2]string{
		{"The waggle dance encodes direction.", "waggle dance encodes"},
		{"line one\nline   two", "one line two"},
		{"蜜蜂通过摇摆舞\n传递方向。", "摇摆舞传递方向"},
		{"short", "short"},
		{"", ""},
		{"a\u00a0b\tc  d e f g h", "a b c d e f"},
		{"The kiln heats its chamber. Two roof fans push the air.", "The kiln heats its chamber … push the air"},
	} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, text, quote string) {
		got := Grounded(text, quote)
		if got && len([]rune(NormalizeQuote(quote))) < MinQuoteRunes {
			t.Fatalf("Grounded(%q, %q): a quote shorter than %d characters was accepted", text, quote, MinQuoteRunes)
		}
		if got != GroundedIn(NormalizeQuote(text), quote) {
			t.Fatalf("Grounded and GroundedIn disagree on (%q, %q)", text, quote)
		}
		// An elided quote is grounded only by its fragments, each in the text: never by what stands between them.
		if fs := QuoteFragments(quote); got && len(fs) > 1 && !strings.Contains(NormalizeQuote(text), NormalizeQuote(quote)) {
			for _, f := range fs {
				if !Grounded(text, f) {
					t.Fatalf("Grounded(%q, %q) with fragment %q not in the text", text, quote, f)
				}
			}
		}
		// The quote itself, with its words spread over lines, inside a longer text, is grounded.
		if Grounded(quote, quote) {
			spread := "Intro words. " + strings.Join(strings.Fields(quote), "\n  ") + " trailing words."
			if !Grounded(spread, quote) {
				t.Fatalf("quote %q is not grounded in %q", quote, spread)
			}
		}
	})
}
