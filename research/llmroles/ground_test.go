package llmroles

import (
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/research/publish"
)

const groundDoc = "The Treaty of Westphalia was signed in 1648.  It ended the “Thirty Years’ War” in the Holy Roman Empire —\nand the Eighty Years' War between Spain and the Dutch Republic.\n\n" +
	"Historians disagree about its long-term effects on state sovereignty. Some regard it as the birth of the modern state system.\n" +
	"量子计算机利用量子比特进行计算，目前仍处于早期阶段。"

func TestSnapQuote(t *testing.T) {
	tests := []struct {
		name  string
		quote string
		want  string // "" means the quote must be dropped
	}{
		{"exact", "The Treaty of Westphalia was signed in 1648.", "The Treaty of Westphalia was signed in 1648."},
		{"whitespace changed", "signed in 1648. It ended", "signed in 1648.  It ended"},
		{"straight quotes for curly", `It ended the "Thirty Years' War" in the Holy Roman Empire`, "It ended the “Thirty Years’ War” in the Holy Roman Empire"},
		{"dash and line break", "Holy Roman Empire - and the Eighty Years' War", "Holy Roman Empire —\nand the Eighty Years' War"},
		{"wrapped in quote marks", `"Historians disagree about its long-term effects on state sovereignty."`, "Historians disagree about its long-term effects on state sovereignty."},
		// An elided quote keeps its fragments, never the text between them.
		{"ellipsis keeps fragments", "The Treaty of Westphalia was signed in 1648 ... between Spain and the Dutch Republic", "The Treaty of Westphalia was signed in 1648 … between Spain and the Dutch Republic"},
		{"each fragment snapped on its own", `the treaty of westphalia was signed in 1648 […] It ended the "Thirty Years' War" in the Holy`, "The Treaty of Westphalia was signed in 1648 … It ended the “Thirty Years’ War” in the Holy"},
		{"a fragment too short to ground is left out", "Historians disagree about its long-term effects … the … birth of the modern state system", "Historians disagree about its long-term effects … birth of the modern state system"},
		{"a fabricated fragment drops the quote", "The Treaty of Westphalia was signed in 1648 … and created the United Nations", ""},
		{"case and punctuation", "historians disagree about its long term effects on state sovereignty", "Historians disagree about its long-term effects on state sovereignty"},
		{"one word changed", "Some regard it as the origin of the modern state system.", "Some regard it as the birth of the modern state system"},
		{"chinese full-width punctuation swapped", "量子计算机利用量子比特进行计算,目前仍处于早期阶段", "量子计算机利用量子比特进行计算，目前仍处于早期阶段"},
		{"cut mid-word at the end", "Historians disagree about its long-term effects on state sover", "Historians disagree about its long-term effects on state sovereignty"},
		{"cut mid-word at the start", "storians disagree about its long-term effects", "Historians disagree about its long-term effects"},
		{"fuzzy match never ends inside a word", "Some regard it as the birth of the modern state sys.", "Some regard it as the birth of the modern state system"},
		{"fabricated", "The treaty created the United Nations in 1945.", ""},
		{"too loose a paraphrase", "Scholars argue about what the treaty meant for sovereign states later on.", ""},
		{"empty", "  ", ""},
		{"ellipsis fragments out of order", "the Dutch Republic … The Treaty of Westphalia", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := snapQuote(groundDoc, tt.quote)
			if tt.want == "" {
				if ok {
					t.Fatalf("snapQuote(%q) = %q, want it dropped", tt.quote, got)
				}
				return
			}
			if !ok {
				t.Fatalf("snapQuote(%q) dropped it, want %q", tt.quote, tt.want)
			}
			if got != tt.want {
				t.Errorf("snapQuote(%q)\n got  %q\n want %q", tt.quote, got, tt.want)
			}
			for _, f := range strings.Split(got, publish.FragmentSeparator) {
				if !strings.Contains(groundDoc, f) {
					t.Errorf("fragment %q of the snapped quote is not verbatim in the document", f)
				}
			}
			if !grounded(groundDoc, got) {
				t.Errorf("snapped quote %q is not grounded", got)
			}
		})
	}
}

func TestSplitWindows(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		b.WriteString(strings.Repeat("word ", 20))
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	text := b.String()
	c := tokens.Approx{}
	ws := splitWindows(text, 300, c)
	if len(ws) < 2 {
		t.Fatalf("got %d windows, want several", len(ws))
	}
	for i, w := range ws {
		if n := c.Count(w); n > 300 {
			t.Errorf("window %d has %d tokens, budget 300", i, n)
		}
	}
	// Every line of the text must be in some window: nothing is lost at the cuts.
	for _, line := range strings.SplitAfter(text, "\n") {
		found := false
		for _, w := range ws {
			if strings.Contains(w, line) {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("line %q is in no window", line)
		}
	}
	one := strings.Repeat("很长的一句话没有换行。", 200)
	ws = splitWindows(one, 100, c)
	if strings.Join(ws, "") != one {
		t.Fatalf("hard split lost text")
	}
	for _, w := range ws {
		if c.Count(w) > 100 {
			t.Fatalf("hard-split window over budget: %d", c.Count(w))
		}
	}
}

func TestDetectLanguage(t *testing.T) {
	tests := []struct{ q, model, want string }{
		{"What is the state of quantum computing?", "en", "en"},
		{"量子计算的现状如何？", "en", "zh"},
		{"量子计算的现状如何？", "zh-CN", "zh"},
		{"OpenAI 的 GPT-5 与 Claude 相比有哪些优势？", "", "zh"},
		{"Quel est l'état de l'informatique quantique ?", "fr", "fr"},
		{"Quel est l'état de l'informatique quantique ?", "French", "fr"},
		{"量子コンピュータの現状は？", "zh", "ja"},
		{"Как работает квантовый компьютер?", "uk", "uk"},
		{"Как работает квантовый компьютер?", "en", "ru"},
		{"Plain question", "garbage!!", "en"},
	}
	for _, tt := range tests {
		if got := detectLanguage(tt.q, tt.model); got != tt.want {
			t.Errorf("detectLanguage(%q, %q) = %q, want %q", tt.q, tt.model, got, tt.want)
		}
	}
}
