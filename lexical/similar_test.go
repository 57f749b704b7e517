package lexical

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestShingleJaccardAndSameClaim(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"identical up to space and case", "A send on a channel  happens first.", "a send on a channel happens first", true},
		{"one word changed in a long sentence",
			"The closing of a channel is synchronized before a receive that returns a zero value because the channel is closed.",
			"The closing of a channel is synchronized before a receive that returns because the channel is closed.", true},
		{"parallel rules with swapped roles",
			"A send on a channel is synchronized before the completion of the corresponding receive from that channel.",
			"A receive from an unbuffered channel is synchronized before the completion of the corresponding send on that channel.", false},
		{"unrelated", "Mutexes protect shared maps.", "Channels synchronize goroutines.", false},
		{"chinese near copy", "通道上的发送操作先行发生于对应的接收完成。", "通道上的发送操作先行发生于对应的接收完成", true},
		{"chinese swapped roles", "发送先行发生于对应的接收完成。", "接收先行发生于对应的发送完成。", false},
	}
	for _, tt := range tests {
		if got := SameClaim(tt.a, tt.b, 0.6); got != tt.same {
			t.Errorf("%s: SameClaim = %v (shingle similarity %.2f), want %v", tt.name, got,
				ShingleJaccard(Tokenize(tt.a), Tokenize(tt.b)), tt.same)
		}
	}
	// Bag-of-words similarity cannot tell the parallel rules apart; that is why SameClaim exists.
	a := Tokenize(tests[2].a)
	b := Tokenize(tests[2].b)
	if Jaccard(a, b) < 0.8 || ShingleJaccard(a, b) >= 0.6 {
		t.Errorf("Jaccard %.2f, ShingleJaccard %.2f: want the first high and the second low", Jaccard(a, b), ShingleJaccard(a, b))
	}
	if got := ShingleJaccard([]string{"go"}, []string{"go"}); got != 1 {
		t.Errorf("one-token texts: %v, want 1", got)
	}
}

func TestJaccardCountsEachTokenOnce(t *testing.T) {
	for _, tt := range []struct {
		a, b []string
		want float64
	}{
		{nil, nil, 1},
		{[]string{"a"}, nil, 0},
		{[]string{"a", "a", "b"}, []string{"b", "c", "c"}, 1.0 / 3},
		{[]string{"x", "y"}, []string{"y", "x", "x"}, 1},
		{[]string{"a", "b", "c", "d"}, []string{"d"}, 0.25},
	} {
		if got := Jaccard(tt.a, tt.b); got != tt.want {
			t.Errorf("Jaccard(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := NewTokenSet(tt.b).Jaccard(NewTokenSet(tt.a)); got != tt.want {
			t.Errorf("TokenSet Jaccard(%v, %v) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
}

// Line marks ignore case, punctuation and spacing, skip short lines, are distinct and sorted, keep the same subset
// of a long text's lines in every text (so a page's marks are found among its print-all page's), and are bounded.
func TestLineMarks(t *testing.T) {
	a := LineMarks("The Owner goes out of scope, and the value is dropped.\nSee also\n")
	b := LineMarks("  the owner GOES out of   scope and the value is dropped \n# Next chapter\n")
	if len(a) != 1 || !slices.Equal(a, b) {
		t.Fatalf("marks %v and %v: want one, the same", a, b)
	}
	if got := LineMarks("one two three four five\n\n"); len(got) != 0 {
		t.Errorf("a five-word line is marked: %v", got)
	}
	if got := LineMarks("所有权规则有以下三条内容\n"); len(got) != 1 {
		t.Errorf("a CJK line of eleven characters: %d marks, want 1", len(got))
	}
	var page, book strings.Builder
	for i := range 200 {
		line := fmt.Sprintf("Rule %d of the page says a distinct thing number %d here.\n", i, i*7)
		page.WriteString(line)
		book.WriteString(line)
		fmt.Fprintf(&book, "Another chapter line %d of the book repeats nothing at all %d.\n", i, i)
	}
	pm, bm := LineMarks(page.String()), LineMarks(book.String())
	if len(pm) == 0 || len(pm) > 200/MarkSample*2 {
		t.Fatalf("a 200-line page keeps %d marks", len(pm))
	}
	if !slices.IsSorted(pm) || len(slices.Compact(slices.Clone(pm))) != len(pm) {
		t.Errorf("marks not sorted and distinct: %v", pm)
	}
	for _, m := range pm {
		if _, ok := slices.BinarySearch(bm, m); !ok {
			t.Fatalf("mark %d of the page is not among the book's", m)
		}
	}
	var huge strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&huge, "line %d of a very long generated file with words\n", i)
	}
	if n := len(LineMarks(huge.String())); n != MaxMarks {
		t.Errorf("a 100,000-line text keeps %d marks, want %d", n, MaxMarks)
	}
}

func FuzzLineMarks(f *testing.F) {
	f.Add("The owner goes out of scope and the value is dropped.\n")
	f.Add("\xff\xfe bad utf8 \x00 and more words here now\n所有权规则有以下三条")
	f.Fuzz(func(t *testing.T, s string) {
		m := LineMarks(s)
		if len(m) > MaxMarks || !slices.IsSorted(m) || len(slices.Compact(slices.Clone(m))) != len(m) {
			t.Fatalf("marks %v", m)
		}
	})
}
