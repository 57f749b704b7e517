package llm

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// APIError is a provider's error answer, classified so that retry and compaction can act on it.
type APIError struct {
	Provider   string
	StatusCode int
	Message    string
	// RetryAfter is the provider's requested wait, zero when it gave none.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.StatusCode, e.Message)
}

// Retryable reports whether trying again may succeed: rate limits, overload and server errors.
func (e *APIError) Retryable() bool {
	return e.StatusCode == 408 || e.StatusCode == 409 || e.StatusCode == 429 || e.StatusCode >= 500
}

// IsAuth reports whether err is (or wraps) a provider's refusal of the credentials (HTTP 401 or 403): no retry
// can fix it, only another key.
func IsAuth(err error) bool {
	var e *APIError
	return errors.As(err, &e) && (e.StatusCode == 401 || e.StatusCode == 403)
}

// ErrIncompleteAnswer marks an answer that arrived cut off: a body that ended before its declared length or
// before its JSON closed, or a stream that stopped without the model's finish reason. Trying again may succeed.
var ErrIncompleteAnswer = errors.New("the answer arrived incomplete")

// ContextLengthError means the prompt did not fit the model's window: the server refused it, or read only part of
// it (silent truncation). Compaction and the research roles' shrinking hook on it; it is never retried unchanged.
type ContextLengthError struct {
	Provider string
	Message  string
	// Limit is the window the server stated (for a truncation: the prompt tokens it actually read); 0 unknown.
	Limit int
	// Requested is the prompt size the server stated, in its own tokens (for a truncation: the local count of
	// what was sent); 0 unknown.
	Requested int
	// Output is the answer length the refused request asked for (max_tokens), which servers that count prompt
	// and answer against one window (vLLM, TGI, Anthropic, OpenRouter) add to the prompt; 0 unknown.
	Output int
	// Sent is the refused request's prompt counted here with llm/tokens, filled by the adapter, so that a caller
	// can make the next request measurably smaller than this one; 0 unknown.
	Sent int
	// Truncated says the server answered but read far fewer prompt tokens than were sent: it cut the prompt to
	// fit a smaller window (Ollama's num_ctx) instead of refusing it. The answer was dropped.
	Truncated bool
	// Usage is what the refused call consumed, for a truncated one (the server did the work); zero otherwise.
	Usage Usage
}

func (e *ContextLengthError) Error() string {
	if e.Truncated {
		return fmt.Sprintf("%s: the prompt was truncated: the server read %d of the %d prompt tokens sent, so its context "+
			"window is smaller than the prompt (Ollama's num_ctx, for example); the answer was dropped: %s",
			e.Provider, e.Limit, e.Requested, e.Message)
	}
	var nums []string
	if e.Limit > 0 {
		nums = append(nums, fmt.Sprintf("window %d tokens", e.Limit))
	}
	if e.Requested > 0 {
		nums = append(nums, fmt.Sprintf("prompt %d tokens", e.Requested))
	}
	if e.Sent > 0 {
		nums = append(nums, fmt.Sprintf("%d counted here", e.Sent))
	}
	if len(nums) == 0 {
		return fmt.Sprintf("%s: context length exceeded: %s", e.Provider, e.Message)
	}
	return fmt.Sprintf("%s: context length exceeded (%s): %s", e.Provider, strings.Join(nums, ", "), e.Message)
}

// PromptBudget is the prompt size, in the units of the local count (Sent), that the next attempt should stay
// under for it to fit: the server's window less the answer it was asked for, converted by the ratio of the local
// count to the server's count of the same prompt when both are known; without a window, three quarters of what
// was sent. 0 when nothing is known. A caller shrinking to it still checks that its request actually got smaller
// than Sent.
func (e *ContextLengthError) PromptBudget() int {
	room := e.Limit
	if !e.Truncated && e.Output > 0 && e.Output < room {
		room -= e.Output
	}
	switch {
	case room > 0 && e.Sent > 0 && e.Requested > 0 && !e.Truncated:
		budget := int(int64(room) * int64(e.Sent) / int64(e.Requested))
		return min(budget, e.Sent-1)
	case room > 0 && e.Sent > 0:
		return min(room, e.Sent-1)
	case room > 0:
		return room
	case e.Sent > 0:
		return e.Sent * 3 / 4
	}
	return 0
}

// IsContextLength reports whether err is (or wraps) a ContextLengthError.
func IsContextLength(err error) bool {
	var c *ContextLengthError
	return errors.As(err, &c)
}

// contextPattern is one server's context-overflow wording, with the groups that hold its numbers.
type contextPattern struct {
	server string
	re     *regexp.Regexp
	// limit, requested and output are the 1-based groups holding the window, the prompt size and the answer
	// length asked for (0: not in the message); extra is a group added to requested (OpenRouter's tool input).
	limit, requested, output, extra int
}

// numRe is digits, possibly grouped with commas.
const numRe = `(\d[\d,]*)`

// contextPatterns are the context-overflow messages the servers deepresearch talks to actually send, most specific
// first; the tests quote each. A message none of them parses but a marker recognises is still a
// ContextLengthError, without numbers.
var contextPatterns = []contextPattern{
	// OpenAI (and DeepSeek): "This model's maximum context length is 8192 tokens. However, your messages resulted
	// in 9000 tokens. Please reduce the length of the messages."
	{"openai", regexp.MustCompile(`maximum context length is ` + numRe + ` tokens\. However, your messages resulted in ` + numRe + ` tokens`), 1, 2, 0, 0},
	// OpenAI's and older vLLM's: "… However, you requested 5060 tokens (4036 in the messages, 1024 in the completion)."
	{"openai/vllm", regexp.MustCompile(`maximum context length is ` + numRe + ` tokens[.,] [Hh]owever,? you requested ` + numRe + ` tokens \(` + numRe + ` in (?:the messages|your prompt)[,;] ` + numRe + ` (?:in|for) the completion\)`), 1, 3, 4, 0},
	// vLLM: "This model's maximum context length is 8192 tokens. However, you requested 64 output tokens and your
	// prompt contains (at least) 10000 input tokens, for a total of 10064 tokens."
	{"vllm", regexp.MustCompile(`maximum context length is ` + numRe + ` tokens\. However, you requested ` + numRe + ` output tokens and your prompt contains (?:at least )?` + numRe + ` input tokens`), 1, 3, 2, 0},
	// vLLM: "'max_tokens' or 'max_completion_tokens' is too large: 16384. This model's maximum context length is
	// 262144 tokens and your request has 246773 input tokens (16384 > 262144 - 246773)."
	{"vllm", regexp.MustCompile(`is too large: ` + numRe + `\. This model's maximum context length is ` + numRe + ` tokens and your request has ` + numRe + ` input tokens`), 2, 3, 1, 0},
	// vLLM: "The prompt (total length 25938) is too long to fit into the model (context length 4096)."
	{"vllm", regexp.MustCompile(`prompt \(total length ` + numRe + `\) is too long to fit into the model \(context length ` + numRe + `\)`), 2, 1, 0, 0},
	// vLLM: "The decoder prompt (length 5000) is longer than the maximum model length of 4096."
	{"vllm", regexp.MustCompile(`prompt \(length ` + numRe + `\) is longer than the maximum model length of ` + numRe), 2, 1, 0, 0},
	// TGI (HTTP 422): "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: 3474
	// `inputs` tokens and 60 `max_new_tokens`"
	{"tgi", regexp.MustCompile("`inputs` tokens " + `\+ ` + "`max_new_tokens` must be <= " + numRe + `\. Given: ` + numRe + " `inputs` tokens and " + numRe + " `max_new_tokens`"), 1, 2, 3, 0},
	// TGI: "Input validation error: `inputs` must have less than 1024 tokens. Given: 1168"
	{"tgi", regexp.MustCompile("`inputs` must have less than " + numRe + ` tokens\. Given: ` + numRe), 1, 2, 0, 0},
	// LM Studio: "Trying to keep the first 14538 tokens when context the overflows. However, the model is loaded
	// with context length of only 2048 tokens, which is not enough."
	{"lmstudio", regexp.MustCompile(`Trying to keep the first ` + numRe + ` tokens when context the overflows\. However, the model is loaded with context length of only ` + numRe + ` tokens`), 2, 1, 0, 0},
	// OpenRouter: "This endpoint's maximum context length is 65536 tokens. However, you requested about 92208
	// tokens (60833 of text input, 10042 of tool input, 21333 in the output)."
	{"openrouter", regexp.MustCompile(`endpoint's maximum context length is ` + numRe + ` tokens\. However, you requested about ` + numRe + ` tokens \(` + numRe + ` of text input(?:, ` + numRe + ` of tool input)?(?:, ` + numRe + ` in the output)?\)`), 1, 3, 5, 4},
	// Anthropic: "prompt is too long: 208310 tokens > 200000 maximum"
	{"anthropic", regexp.MustCompile(`prompt is too long: ` + numRe + ` tokens > ` + numRe + ` maximum`), 2, 1, 0, 0},
	// Anthropic: "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input
	// length or `max_tokens` and try again"
	{"anthropic", regexp.MustCompile("input length and `max_tokens` exceed context limit: " + numRe + ` \+ ` + numRe + ` > ` + numRe), 3, 1, 2, 0},
	// Mistral: "Prompt contains 300000 tokens, too large for model with 131072 maximum context length"
	{"mistral", regexp.MustCompile(`Prompt contains ` + numRe + ` tokens.*too large for model with ` + numRe + ` maximum context length`), 2, 1, 0, 0},
	// SGLang: "The input (35247 tokens) is longer than the model's context length (32768 tokens)."
	{"sglang", regexp.MustCompile(`input \(` + numRe + ` tokens\) is longer than the model's context length \(` + numRe + ` tokens\)`), 2, 1, 0, 0},
	// Kimi (Moonshot): "Your request exceeded model token limit: 262144 (requested: 300000)"
	{"moonshot", regexp.MustCompile(`exceeded model token limit: ` + numRe + ` \(requested: ` + numRe + `\)`), 1, 2, 0, 0},
	// Qwen (DashScope): "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 30720]"
	{"dashscope", regexp.MustCompile(`Range of input length should be \[1, ` + numRe + `\]`), 1, 0, 0, 0},
	// llama.cpp's server states its numbers in fields of the error (n_ctx, n_prompt_tokens): see httperr. Ollama
	// ("the prompt is longer than the context length currently available to the model", "the input length
	// exceeds the context length", "prompt too long; exceeded max context length by 4096 tokens") and OpenAI's
	// newer "Your input exceeds the context window of this model" state no window: the markers catch them.
}

// contextLengthMarkers are the phrases of context-overflow error bodies that carry no parseable numbers, or whose
// numbers come in fields (llama.cpp's exceed_context_size_error), and of proxies that wrap another server's
// message (LiteLLM's ContextWindowExceededError).
var contextLengthMarkers = []string{
	"context_length_exceeded",
	"maximum context length",
	"context length",
	"prompt is too long",
	"too many tokens",
	"exceeds the context window",
	"input exceeds the context window",
	"input is too long",
	"context window",
	"reduce the length",
	"exceed_context_size", // llama.cpp's error type
	"available context size",
	"contextwindowexceedederror", // LiteLLM
	"exceed context limit",
	"too large for model with",
	"range of input length should be",
	"exceeded model token limit",
	"inputs` tokens + `max_new_tokens` must be",
	"`inputs` must have less than",
	"prompt too long",
	"longer than the maximum model length",
}

// LooksLikeContextLength reports whether an error body describes a context overflow.
func LooksLikeContextLength(body string) bool {
	lb := strings.ToLower(body)
	for _, m := range contextLengthMarkers {
		if strings.Contains(lb, m) {
			return true
		}
	}
	for _, p := range contextPatterns {
		if p.re.MatchString(body) {
			return true
		}
	}
	return false
}

// ParseContextLength reads the numbers a context-overflow message states: the window, the prompt size and the
// answer length asked for (each 0 when the message does not say). server names the table row that matched ("" for
// none). A proxy's message that wraps another server's (LiteLLM's) parses as the inner one.
func ParseContextLength(message string) (limit, requested, output int, server string) {
	for _, p := range contextPatterns {
		m := p.re.FindStringSubmatch(message)
		if m == nil {
			continue
		}
		group := func(i int) int {
			if i <= 0 || i >= len(m) {
				return 0
			}
			v, _ := strconv.Atoi(strings.ReplaceAll(m[i], ",", ""))
			return v
		}
		return group(p.limit), group(p.requested) + group(p.extra), group(p.output), p.server
	}
	return 0, 0, 0, ""
}

// truncationFloor is the smallest prompt (counted here) whose truncation is worth treating as one: below it, the
// difference between the local count and a server's tokenizer can be larger than any window.
const truncationFloor = 2000

// CheckTruncation is the silent-truncation check every adapter runs on an answered call: reported is the usage
// the server reported and sent the request's prompt counted here with llm/tokens. A reported prompt under half of
// what was sent, for a prompt large enough to matter, means the server cut the prompt to fit a smaller window
// (Ollama with a small num_ctx does, and answers as if nothing happened); the result is a *ContextLengthError with
// Truncated set, Requested the local count and Limit what the server read, carrying the usage. Estimated usage
// (the server reported none) is never a truncation.
func CheckTruncation(provider string, reported Usage, sent int) error {
	got := reported.PromptTokens()
	if reported.Estimated || got <= 0 || sent <= truncationFloor || got*2 >= sent {
		return nil
	}
	return &ContextLengthError{Provider: provider, Message: "reported prompt_tokens far below the prompt sent",
		Limit: got, Requested: sent, Sent: sent, Truncated: true, Usage: reported}
}
