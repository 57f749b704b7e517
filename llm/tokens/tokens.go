// Package tokens counts tokens before a call is made: exactly for OpenAI-family encodings (embedded, offline) and
// by the usual four-characters-a-token estimate for everything else.
package tokens

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"

	"github.com/deepresearch/deepresearch/llm"
)

// Counter counts the tokens of a text. Implementations are safe for concurrent use.
type Counter interface {
	Count(text string) int
}

// Approx estimates four characters a token for Latin text and one token a character for CJK text, which is
// closer to what BPE tokenizers do with Chinese than a flat bytes/4.
type Approx struct{}

// Count implements Counter.
func (Approx) Count(text string) int {
	if text == "" {
		return 0
	}
	latin, wide := 0, 0
	for _, r := range text {
		if r >= 0x2E80 && utf8.RuneLen(r) >= 3 {
			wide++
		} else {
			latin++
		}
	}
	return (latin+3)/4 + wide
}

type tiktoken struct{ codec tokenizer.Codec }

func (t tiktoken) Count(text string) int {
	n, err := t.codec.Count(text)
	if err != nil {
		return Approx{}.Count(text)
	}
	return n
}

// ForModel returns the best counter for a model name: o200k for GPT-4o/4.1/5 and o-series, cl100k for older GPT
// models, the estimate otherwise.
func ForModel(model string) Counter {
	m := strings.ToLower(model)
	var enc tokenizer.Encoding
	switch {
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "gpt-4.1"), strings.HasPrefix(m, "gpt-5"),
		strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"), strings.HasPrefix(m, "gpt-oss"):
		enc = tokenizer.O200kBase
	case strings.HasPrefix(m, "gpt-4"), strings.HasPrefix(m, "gpt-3.5"), strings.Contains(m, "text-embedding"):
		enc = tokenizer.Cl100kBase
	default:
		return Approx{}
	}
	codec, err := tokenizer.Get(enc)
	if err != nil {
		return Approx{}
	}
	return tiktoken{codec: codec}
}

// perMessageOverhead approximates the role and framing tokens providers add to each message.
const perMessageOverhead = 4

// CountMessage counts one message: text, reasoning, tool-call names and arguments.
func CountMessage(c Counter, m llm.Message) int {
	n := perMessageOverhead + c.Count(m.Content)
	for _, r := range m.Reasoning {
		n += c.Count(r.Text) + c.Count(r.Redacted)
	}
	for _, tc := range m.ToolCalls {
		n += c.Count(tc.Name) + c.Count(tc.Arguments) + 3
	}
	return n
}

// CountMessages counts a message list.
func CountMessages(c Counter, ms []llm.Message) int {
	n := 0
	for _, m := range ms {
		n += CountMessage(c, m)
	}
	return n
}

// CountTools counts the schema tokens of tool definitions.
func CountTools(c Counter, tools []llm.ToolSpec) int {
	n := 0
	for _, t := range tools {
		n += c.Count(t.Name) + c.Count(t.Description) + c.Count(string(t.Schema)) + 8
	}
	return n
}

// CountRequest counts everything a request puts in the prompt.
func CountRequest(c Counter, req *llm.Request) int {
	return CountMessages(c, req.Messages) + CountTools(c, req.Tools)
}

// CountAnswer counts what a model wrote: the answer, its reasoning and its tool calls.
func CountAnswer(c Counter, m llm.Message) int {
	return CountMessage(c, m) - perMessageOverhead
}

// Account is the bookkeeping every adapter does on an answered call, in one place. When the server reported no
// usage (reported is false: many local servers and proxies omit it, in streams too), the request and the answer
// (reasoning included, as it is billed) are counted with c and the usage is marked Estimated, so that the ledger
// and the fuses still see the call. When it did, a reported prompt far below the local count is a silent
// truncation (llm.CheckTruncation): the answer is dropped and a *llm.ContextLengthError returned.
func Account(c Counter, provider string, req *llm.Request, resp *llm.Response, reported bool) (*llm.Response, error) {
	if !reported {
		resp.Usage = llm.Usage{InputTokens: CountRequest(c, req), OutputTokens: CountAnswer(c, resp.Message), Estimated: true}
		return resp, nil
	}
	// A prompt whose bytes are fewer than twice the reported tokens cannot count as more than twice them either
	// (no counter makes more tokens than bytes), so most calls skip counting.
	if got := resp.Usage.PromptTokens(); got > 0 && 2*got < requestBytes(req) {
		if err := llm.CheckTruncation(provider, resp.Usage, CountRequest(c, req)); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// Refused fills in what a refused call's context-length error lacks: the prompt counted here (Sent) and the answer
// length asked for (Output), so that the caller can shrink below what was refused. Other errors pass unchanged.
func Refused(c Counter, req *llm.Request, err error) error {
	var cl *llm.ContextLengthError
	if errors.As(err, &cl) {
		if cl.Sent == 0 {
			cl.Sent = CountRequest(c, req)
		}
		if cl.Output == 0 {
			cl.Output = req.MaxTokens
		}
	}
	return err
}

func requestBytes(req *llm.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content) + 16
		for _, r := range m.Reasoning {
			n += len(r.Text) + len(r.Redacted)
		}
		for _, tc := range m.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments) + 12
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema) + 32
	}
	return n
}
