package lexical

import "testing"

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
