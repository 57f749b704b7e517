package tokens

import (
	"encoding/json"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
)

// Known counts from OpenAI's cookbook ("How to count tokens with tiktoken"): "tiktoken is great!" is six tokens in
// cl100k_base, and "hello world" two in both encodings.
func TestTiktokenKnownCounts(t *testing.T) {
	for _, tc := range []struct {
		model, text string
		want        int
	}{
		{"gpt-4", "tiktoken is great!", 6},
		{"gpt-3.5-turbo", "hello world", 2},
		{"gpt-4o", "hello world", 2},
		{"gpt-4o-mini", "tiktoken is great!", 6},
	} {
		c := ForModel(tc.model)
		if _, ok := c.(tiktoken); !ok {
			t.Fatalf("%s: got %T, want the tiktoken counter", tc.model, c)
		}
		if got := c.Count(tc.text); got != tc.want {
			t.Errorf("%s %q: %d tokens, want %d", tc.model, tc.text, got, tc.want)
		}
	}
}

func TestEncodingsDiffer(t *testing.T) {
	// o200k has far more CJK merges than cl100k, so the same Chinese text costs fewer tokens.
	text := "深度研究智能体需要可靠的引用和可验证的证据。"
	cl, o := ForModel("gpt-4").Count(text), ForModel("gpt-5").Count(text)
	if o >= cl {
		t.Errorf("o200k %d tokens, cl100k %d: expected o200k to be cheaper for Chinese", o, cl)
	}
}

func TestForModelFallsBackToApprox(t *testing.T) {
	for _, m := range []string{"claude-sonnet-4-5", "deepseek-v4-flash", "qwen3:8b", ""} {
		if _, ok := ForModel(m).(Approx); !ok {
			t.Errorf("%q: got %T, want Approx", m, ForModel(m))
		}
	}
}

func TestApprox(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 3},        // 11 Latin characters, four a token, rounded up
		{"你好世界", 4},               // one a CJK character
		{"abcd你好", 3},             // 1 + 2
		{"こんにちは", 5},              // kana count as wide
		{"데이터", 3},                // so does Hangul
		{"naïve café", 3},         // accented Latin stays Latin
		{"研究 research 报告", 4 + 3}, // 4 wide + 10 Latin (incl. spaces) → 3
	} {
		if got := (Approx{}).Count(tc.text); got != tc.want {
			t.Errorf("Approx(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestCountRequest(t *testing.T) {
	c := Approx{}
	msg := llm.Message{Role: llm.RoleAssistant, Content: "abcdefgh", // 2
		Reasoning: []llm.Reasoning{{Text: "abcd"}},               // 1
		ToolCalls: []llm.ToolCall{{Name: "ls", Arguments: `{}`}}} // 1 + 1 + 3
	if got, want := CountMessage(c, msg), perMessageOverhead+2+1+5; got != want {
		t.Errorf("CountMessage = %d, want %d", got, want)
	}
	tool := llm.ToolSpec{Name: "read", Description: "Read", Schema: json.RawMessage(`{"a":1}`)} // 1 + 1 + 2 + 8
	req := &llm.Request{Messages: []llm.Message{msg, msg}, Tools: []llm.ToolSpec{tool}}
	if got, want := CountRequest(c, req), 2*(perMessageOverhead+8)+12; got != want {
		t.Errorf("CountRequest = %d, want %d", got, want)
	}
}
