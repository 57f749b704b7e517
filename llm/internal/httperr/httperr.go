// Package httperr turns providers' HTTP error answers into the llm package's error types, so that both adapters
// classify failures the same way: context overflow as *llm.ContextLengthError (compaction hooks on it, retrying is
// pointless), everything else as *llm.APIError carrying the status and the provider's requested wait.
package httperr

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
)

// maxBody bounds how much of an error body is read; error answers are small, and a misbehaving proxy must not make
// us buffer megabytes.
const maxBody = 1 << 20

// Middleware intercepts error statuses before the SDK sees them, so that the adapter gets the raw status, headers
// and body whatever the body's shape (the SDKs only understand their own error envelope). Its type matches both
// SDKs' option.Middleware.
func Middleware(provider string) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if err != nil || resp.StatusCode < 400 {
			return resp, err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		_ = resp.Body.Close()
		return nil, Classify(provider, resp.StatusCode, resp.Header, body, time.Now())
	}
}

// Classify builds the error for an HTTP error answer. Every server's context-overflow answer (the table in
// llm/errors.go, llama.cpp's exceed_context_size_error, TGI's 422) becomes a *llm.ContextLengthError with the
// numbers it states; a 429 never does (rate limits count tokens per minute, not the window).
func Classify(provider string, status int, h http.Header, body []byte, now time.Time) error {
	msg, code := describe(body)
	if status != http.StatusTooManyRequests {
		if cl := contextLength(provider, msg, code, body); cl != nil {
			return cl
		}
	}
	return &llm.APIError{Provider: provider, StatusCode: status, Message: msg, RetryAfter: RetryAfter(h, now)}
}

// contextLength returns the context-length error an error body describes, or nil.
func contextLength(provider, msg, code string, body []byte) *llm.ContextLengthError {
	if code != "context_length_exceeded" && code != "exceed_context_size_error" && !llm.LooksLikeContextLength(string(body)) {
		return nil
	}
	cl := &llm.ContextLengthError{Provider: provider, Message: msg}
	cl.Limit, cl.Requested, cl.Output, _ = llm.ParseContextLength(msg)
	if cl.Limit == 0 && cl.Requested == 0 {
		// The message was clipped, or a proxy nests the server's JSON in it as escaped text.
		cl.Limit, cl.Requested, cl.Output, _ = llm.ParseContextLength(strings.ReplaceAll(string(body), `\"`, `"`))
	}
	// llama.cpp's server states its numbers in fields: {"error":{"type":"exceed_context_size_error",
	// "n_prompt_tokens":1407,"n_ctx":256,…}}.
	var lc struct {
		Error struct {
			NPromptTokens int `json:"n_prompt_tokens"`
			NCtx          int `json:"n_ctx"`
		} `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &lc) == nil {
		if cl.Limit == 0 && lc.Error.NCtx > 0 {
			cl.Limit = lc.Error.NCtx
		}
		if cl.Requested == 0 && lc.Error.NPromptTokens > 0 {
			cl.Requested = lc.Error.NPromptTokens
		}
	}
	return cl
}

// ClassifyStreamError builds the error for an error event that arrived inside a 200 stream. Such events carry no
// HTTP status; the body's code or type decides, and an unknown failure counts as a server error (retryable).
func ClassifyStreamError(provider string, body []byte) error {
	msg, code := describe(body)
	if cl := contextLength(provider, msg, code, body); cl != nil {
		return cl
	}
	status := http.StatusInternalServerError
	if n, err := strconv.Atoi(code); err == nil && n >= 400 && n < 600 {
		status = n
	}
	switch code {
	case "rate_limit_error", "rate_limit_exceeded":
		status = http.StatusTooManyRequests
	case "overloaded_error":
		status = 529
	case "invalid_request_error", "invalid_request", "BadRequestError":
		status = http.StatusBadRequest
	case "authentication_error":
		status = http.StatusUnauthorized
	case "permission_error":
		status = http.StatusForbidden
	}
	return &llm.APIError{Provider: provider, StatusCode: status, Message: msg}
}

// describe extracts a readable message and a machine code from the error envelopes in use: OpenAI's
// {"error":{"message","type","code"}}, Anthropic's {"type":"error","error":{"type","message"}}, and the
// {"message"}, {"detail"} and {"error":"text"} shapes of vLLM, llama.cpp, Ollama and proxies.
func describe(body []byte) (msg, code string) {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
	}
	trimmed := bytes.TrimSpace(body)
	if json.Unmarshal(trimmed, &env) != nil {
		return lexical.Clip(string(trimmed), 1000), ""
	}
	var inner struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	var text string
	switch {
	case len(env.Error) > 0 && json.Unmarshal(env.Error, &inner) == nil:
		msg = inner.Message
		code = rawString(inner.Code)
		if code == "" {
			code = inner.Type
		}
	case len(env.Error) > 0 && json.Unmarshal(env.Error, &text) == nil:
		msg = text
	}
	if msg == "" {
		msg = env.Message
	}
	if msg == "" && len(env.Detail) > 0 {
		if json.Unmarshal(env.Detail, &text) == nil {
			msg = text
		} else {
			msg = string(env.Detail)
		}
	}
	if code == "" {
		code = rawString(env.Code)
	}
	if code == "" && env.Type != "error" {
		code = env.Type
	}
	if msg == "" {
		msg = string(trimmed)
	}
	if code != "" && !strings.Contains(msg, code) {
		msg = code + ": " + msg
	}
	return lexical.Clip(msg, 1000), code
}

// rawString reads a JSON string or number as text.
func rawString(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// RetryAfter reads the provider's requested wait: retry-after-ms (OpenAI, fractional milliseconds), then
// Retry-After in seconds or as an HTTP date. Zero means no usable hint.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
