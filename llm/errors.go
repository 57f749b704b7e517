package llm

import (
	"errors"
	"fmt"
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

// ErrIncompleteAnswer marks an answer that arrived cut off: a body that ended before its declared length or
// before its JSON closed, or a stream that stopped without the model's finish reason. Trying again may succeed.
var ErrIncompleteAnswer = errors.New("the answer arrived incomplete")

// ContextLengthError means the prompt did not fit the model's window. Compaction hooks on it.
type ContextLengthError struct {
	Provider string
	Message  string
	// Limit is the context window the server stated in its refusal, in its own tokens; 0 when it stated none.
	Limit int
	// Requested is the prompt size the server stated for the refused request, in its own tokens; 0 when it
	// stated none.
	Requested int
	// Sent is the refused request's prompt size counted locally (package llm/tokens); 0 when not counted.
	Sent int
	// Truncated is set when no refusal came but the server silently cut the prompt: the prompt size it
	// reported is far below the local count.
	Truncated bool
}

func (e *ContextLengthError) Error() string {
	return fmt.Sprintf("%s: context length exceeded: %s", e.Provider, e.Message)
}

// IsContextLength reports whether err is (or wraps) a ContextLengthError.
func IsContextLength(err error) bool {
	var c *ContextLengthError
	return errors.As(err, &c)
}

// contextLengthMarkers are the phrases providers use in context-overflow error bodies (OpenAI, Anthropic, vLLM,
// llama.cpp, Ollama, DeepSeek, OpenRouter).
var contextLengthMarkers = []string{
	"context_length_exceeded",
	"maximum context length",
	"context length",
	"prompt is too long",
	"too many tokens",
	"exceeds the context window",
	"input is too long",
	"context window",
	"reduce the length",
	"exceed_context_size", // llama.cpp's error type
	"available context size",
}

// LooksLikeContextLength reports whether an error body describes a context overflow.
func LooksLikeContextLength(body string) bool {
	lb := strings.ToLower(body)
	for _, m := range contextLengthMarkers {
		if strings.Contains(lb, m) {
			return true
		}
	}
	return false
}
