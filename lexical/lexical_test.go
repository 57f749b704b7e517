package lexical

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"The channels are synchronizing", []string{"channel", "synchron"}},
		{"Happens before", []string{"happen", "befor"}},
		{"内存模型", []string{"内", "内存", "存", "存模", "模", "模型", "型"}},
		{"Go的内存", []string{"go", "的内", "内", "内存", "存"}},
		{"version 1.26", []string{"version", "1", "26"}},
		// A possessive or reflexive pronoun is no word of a topic ("an older edition than mine"); "mining" is.
		{"an older edition than mine, the code itself", []string{"older", "edit", "code"}},
		{"data mining", []string{"data", "mine"}},
	}
	for _, tt := range tests {
		if got := Tokenize(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"One. Two! Three? Four", []string{"One.", "Two!", "Three?", "Four"}},
		{"Use e.g. this. Then 3.14 is pi.", []string{"Use e.g. this.", "Then 3.14 is pi."}},
		{"第一句。第二句！第三句？", []string{"第一句。", "第二句！", "第三句？"}},
		{"Heading\n\nParagraph one.\n- item", []string{"Heading", "Paragraph one.", "- item"}},
		{"He said \"stop.\" Then left.", []string{"He said \"stop.\"", "Then left."}},
		// Initials, also after a hyphen; abbreviations; a version number at the end is a real end.
		{"The model was presented by Hans-J. Boehm and J. R. Smith in 2008. It stands.", []string{"The model was presented by Hans-J. Boehm and J. R. Smith in 2008.", "It stands."}},
		{"It costs approx. ten calls, cf. the table. Done.", []string{"It costs approx. ten calls, cf. the table.", "Done."}},
		{"Added in Go 1.21. Later releases keep it.", []string{"Added in Go 1.21.", "Later releases keep it."}},
		// No sentence ends inside a code span.
		{"Call `f.Close(). Then` twice. Next.", []string{"Call `f.Close(). Then` twice.", "Next."}},
		{"设置 `a.b. c` 之后。再说。", []string{"设置 `a.b. c` 之后。", "再说。"}},
		// No sentence ends inside a Markdown link's destination or title; the link's end can end one.
		{`Types: GIN, and the extension [bloom](bloom.html "F.7. bloom"). Next.`, []string{`Types: GIN, and the extension [bloom](bloom.html "F.7. bloom").`, "Next."}},
		{"See [the spec](https://x.org/a_(b). c). Then go.", []string{"See [the spec](https://x.org/a_(b). c).", "Then go."}},
		// A parenthesis not after "]" is prose, and an unclosed link ends at the line.
		{"It (mostly. Works) fine. Yes.", []string{"It (mostly.", "Works) fine.", "Yes."}},
		{"A [b](c. d\n\nNew one. Two.", []string{"A [b](c. d", "New one.", "Two."}},
	}
	for _, tt := range tests {
		var got []string
		for _, s := range Sentences(tt.in) {
			if tt.in[s.Start:s.End] != s.Text {
				t.Fatalf("span %d-%d does not point at %q", s.Start, s.End, s.Text)
			}
			got = append(got, s.Text)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Sentences(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestChunksCoverTextAndBoundSize(t *testing.T) {
	text := strings.Repeat("alpha beta gamma\n", 300) + strings.Repeat("x", 5000) + "\nend\n"
	chunks := Chunks(text, 1000)
	var rebuilt strings.Builder
	for i, c := range chunks {
		if len(c.Text) > 1000 {
			t.Errorf("chunk %d has %d bytes", i, len(c.Text))
		}
		if c.FirstLine > c.LastLine {
			t.Errorf("chunk %d lines %d-%d", i, c.FirstLine, c.LastLine)
		}
		rebuilt.WriteString(c.Text)
	}
	if rebuilt.String() != text {
		t.Error("chunks do not reassemble the text")
	}
	if last := chunks[len(chunks)-1]; last.LastLine != 302 {
		t.Errorf("last chunk ends at line %d, want 302", last.LastLine)
	}
}

func TestBM25RanksRelevantFirst(t *testing.T) {
	docs := []string{
		"The garbage collector reclaims memory.",
		"A send on a channel happens before the corresponding receive completes.",
		"Modules declare dependencies in go.mod.",
		"通道上的发送操作先行发生于对应的接收完成。",
	}
	var toks [][]string
	for _, d := range docs {
		toks = append(toks, Tokenize(d))
	}
	m := NewBM25(toks)
	if top := Top(m.Scores(Tokenize("channel send happens before")), 1); len(top) != 1 || top[0].Index != 1 {
		t.Errorf("English top = %v, want doc 1", top)
	}
	if top := Top(m.Scores(Tokenize("通道发送")), 1); len(top) != 1 || top[0].Index != 3 {
		t.Errorf("Chinese top = %v, want doc 3", top)
	}
}

func TestMMRPrefersDiversity(t *testing.T) {
	rel := []float64{1.0, 0.99, 0.5}
	sim := func(i, j int) float64 {
		if (i == 0 && j == 1) || (i == 1 && j == 0) {
			return 1
		}
		return 0
	}
	if got := MMR(rel, sim, 2, 0.5); !slices.Equal(got, []int{0, 2}) {
		t.Errorf("MMR = %v, want [0 2]", got)
	}
	if got := MMR(rel, sim, 2, 1.0); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("MMR(lambda=1) = %v, want [0 1]", got)
	}
}

func TestNearDuplicateAndLanguage(t *testing.T) {
	if !NearDuplicate("Channels  synchronize goroutines.", "channels synchronize goroutines", 0.8) {
		t.Error("whitespace/case variants should be duplicates")
	}
	if NearDuplicate("Channels synchronize goroutines.", "Mutexes protect shared maps.", 0.8) {
		t.Error("different claims reported as duplicates")
	}
	for in, want := range map[string]string{"What is the Go memory model?": "en", "Go 的内存模型保证什么？": "zh", "メモリモデルとは": "ja", "메모리 모델": "ko"} {
		if got := Language(in); got != want {
			t.Errorf("Language(%q) = %s, want %s", in, got, want)
		}
	}
}

// FuzzSentences checks that sentences are in order, point into the text, are trimmed and leave nothing but white
// space between them, whatever the text holds (code spans, links, unbalanced brackets, invalid UTF-8).
func FuzzSentences(f *testing.F) {
	for _, s := range []string{"One. Two!", "Call `f.Close(). Then` x.", `[a](b "F.7. c"). D.`, "A [b](c. d\n\nE.", "第一句。第二句", "(((]("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		prev := 0
		for _, s := range Sentences(text) {
			if s.Start < prev || s.End <= s.Start || s.End > len(text) || text[s.Start:s.End] != s.Text {
				t.Fatalf("bad span %d-%d after %d in %q", s.Start, s.End, prev, text)
			}
			if strings.TrimSpace(text[prev:s.Start]) != "" || strings.TrimSpace(s.Text) != s.Text {
				t.Fatalf("span %q is untrimmed or skips text %q", s.Text, text[prev:s.Start])
			}
			prev = s.End
		}
		if strings.TrimSpace(text[prev:]) != "" {
			t.Fatalf("text after the last sentence is lost: %q", text[prev:])
		}
	})
}

// IDF is highest for a term no document uses, falls as more use it, and stays positive for a term all use.
func TestIDF(t *testing.T) {
	prev := IDF(0, 100)
	if want := math.Log(1 + 100.5/0.5); math.Abs(prev-want) > 1e-12 {
		t.Errorf("IDF(0, 100) = %v, want %v", prev, want)
	}
	for _, df := range []float64{1, 10, 50, 99, 100} {
		got := IDF(df, 100)
		if got >= prev || got <= 0 {
			t.Errorf("IDF(%v, 100) = %v after %v: want positive and falling", df, got, prev)
		}
		prev = got
	}
}
