package httperr

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/llm"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "12"}, 12 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"ms wins", map[string]string{"Retry-After-Ms": "250", "Retry-After": "12"}, 250 * time.Millisecond},
		{"http date", map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"negative", map[string]string{"Retry-After": "-3"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			if got := RetryAfter(h, now); got != tc.want {
				t.Errorf("RetryAfter = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name          string
		status        int
		body          string
		contextLength bool
		msgHas        string
	}{
		{"openai overflow", 400, `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`, true, "maximum context length"},
		{"anthropic overflow", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`, true, "prompt is too long"},
		{"llama.cpp overflow", 400, `{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}`, true, "available context size"},
		{"anthropic overloaded", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, false, "overloaded_error: Overloaded"},
		{"plain text", 502, `Bad Gateway`, false, "Bad Gateway"},
		{"detail", 422, `{"detail":"model not found"}`, false, "model not found"},
		{"string error", 404, `{"error":"model 'x' not found"}`, false, "model 'x' not found"},
		{"rate limit mentioning tokens", 429, `{"error":{"message":"Rate limit reached on tokens per min. Please reduce the length of the messages.","code":"rate_limit_exceeded"}}`, false, "Rate limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Classify("p", tc.status, http.Header{}, []byte(tc.body), now)
			var cl *llm.ContextLengthError
			var api *llm.APIError
			switch {
			case tc.contextLength:
				if !errors.As(err, &cl) {
					t.Fatalf("got %T %v, want ContextLengthError", err, err)
				}
			case !errors.As(err, &api) || api.StatusCode != tc.status:
				t.Fatalf("got %T %v, want APIError %d", err, err, tc.status)
			}
			if !strings.Contains(err.Error(), tc.msgHas) {
				t.Errorf("message %q lacks %q", err.Error(), tc.msgHas)
			}
		})
	}
}

func TestClassifyStreamError(t *testing.T) {
	for _, tc := range []struct {
		body      string
		status    int
		retryable bool
	}{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, 529, true},
		{`{"error":{"message":"boom","code":"503"}}`, 503, true},
		{`{"error":{"message":"bad","type":"invalid_request_error"}}`, 400, false},
		{`not json`, 500, true},
	} {
		err := ClassifyStreamError("p", []byte(tc.body))
		var api *llm.APIError
		if !errors.As(err, &api) || api.StatusCode != tc.status || api.Retryable() != tc.retryable {
			t.Errorf("%s: got %v", tc.body, err)
		}
	}
	if !llm.IsContextLength(ClassifyStreamError("p", []byte(`{"error":{"message":"x","code":"context_length_exceeded"}}`))) {
		t.Error("context overflow inside a stream not recognised")
	}
}

func TestMessageClipped(t *testing.T) {
	err := Classify("p", 500, http.Header{}, []byte(strings.Repeat("x", 5000)), time.Now())
	if len(err.Error()) > 1100 {
		t.Errorf("error message not clipped: %d bytes", len(err.Error()))
	}
}

// TestContextLengthTable quotes each server's documented or reported context-overflow answer, in the body and
// with the status it comes with, and checks that it is classified as a context-length error with the numbers it
// states (0 where it states none). The wording is the servers', as their docs and issue trackers show it.
func TestContextLengthTable(t *testing.T) {
	for _, tc := range []struct {
		server                   string
		status                   int
		body                     string
		limit, requested, output int
	}{
		{"OpenAI", 400, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, 8192, 9000, 0},
		{"OpenAI (prompt and completion)", 400, `{"error":{"message":"This model's maximum context length is 4097 tokens. However, you requested 4203 tokens (3703 in the messages, 500 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, 4097, 3703, 500},
		{"OpenAI (newer models)", 400, `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`, 0, 0, 0},
		{"DeepSeek", 400, `{"error":{"message":"This model's maximum context length is 131072 tokens. However, you requested 140000 tokens (136000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`, 131072, 136000, 4000},
		{"vLLM (older)", 400, `{"object":"error","message":"This model's maximum context length is 6048 tokens. However, you requested 6616 tokens (568 in the messages, 6048 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, 6048, 568, 6048},
		{"vLLM", 400, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 64 output tokens and your prompt contains 10000 input tokens, for a total of 10064 tokens. Please reduce the length of the input prompt or the number of requested output tokens.","type":"BadRequestError","param":"input_tokens","code":400}}`, 8192, 10000, 64},
		{"vLLM (at least)", 400, `{"error":{"message":"This model's maximum context length is 32768 tokens. However, you requested 8192 output tokens and your prompt contains at least 24577 input tokens, for a total of at least 32769 tokens. Please reduce the length of the input prompt or the number of requested output tokens.","type":"BadRequestError","param":"input_tokens","code":400}}`, 32768, 24577, 8192},
		{"vLLM (max_tokens too large)", 400, `{"object":"error","message":"'max_tokens' or 'max_completion_tokens' is too large: 16384. This model's maximum context length is 262144 tokens and your request has 246773 input tokens (16384 > 262144 - 246773).","type":"BadRequestError","param":null,"code":400}`, 262144, 246773, 16384},
		{"vLLM (prompt too long to fit)", 400, `{"object":"error","message":"The prompt (total length 25938) is too long to fit into the model (context length 4096). Make sure that ` + "`max_model_len`" + ` is no smaller than the number of text tokens plus multimodal tokens.","type":"BadRequestError","param":null,"code":400}`, 4096, 25938, 0},
		{"TGI (Messages API, 422)", 422, "{\"error\":\"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: 3474 `inputs` tokens and 60 `max_new_tokens`\",\"error_type\":\"validation\"}", 2048, 3474, 60},
		{"TGI (input bound, 422)", 422, "{\"error\":\"Input validation error: `inputs` must have less than 1024 tokens. Given: 1168\",\"error_type\":\"validation\"}", 1024, 1168, 0},
		{"llama.cpp server", 400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}`, 8192, 14429, 0},
		{"llama.cpp server (older, 500)", 500, `{"error":{"code":500,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":1407,"n_ctx":256}}`, 256, 1407, 0},
		{"Ollama", 400, `{"error":{"message":"the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length","type":"invalid_request_error","param":null,"code":null}}`, 0, 0, 0},
		{"Ollama (embeddings)", 400, `{"error":"the input length exceeds the context length"}`, 0, 0, 0},
		{"LM Studio", 400, `{"error":"Trying to keep the first 14538 tokens when context the overflows. However, the model is loaded with context length of only 2048 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}`, 2048, 14538, 0},
		{"LiteLLM proxy (wrapping Anthropic)", 400, `{"error":{"message":"litellm.BadRequestError: litellm.ContextWindowExceededError: AnthropicError - {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 209303 tokens > 200000 maximum\"}}\nReceived Model Group=anthropic/claude-3-5-sonnet-20241022\nAvailable Model Group Fallbacks=None","type":null,"param":null,"code":"400"}}`, 200000, 209303, 0},
		{"LiteLLM proxy (wrapping vLLM)", 400, `{"error":{"message":"litellm.ContextWindowExceededError: litellm.BadRequestError: Hosted_vllmException - This model's maximum context length is 65536 tokens. However, you requested 16 output tokens and your prompt contains at least 65521 input tokens, for a total of at least 65537 tokens.","type":null,"param":null,"code":"400"}}`, 65536, 65521, 16},
		{"OpenRouter", 400, `{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 141607 tokens (10535 of text input, 131072 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":"Chutes"}}}`, 131072, 10535, 131072},
		{"OpenRouter (tool input)", 400, `{"error":{"message":"This endpoint's maximum context length is 65536 tokens. However, you requested about 92208 tokens (60833 of text input, 10042 of tool input, 21333 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":null}}}`, 65536, 70875, 21333},
		{"Anthropic", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`, 200000, 208310, 0},
		{"Anthropic (with max_tokens)", 400, "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again\"},\"request_id\":\"req_011CUB2XUHWkFnQzxcKBbjpF\"}", 200000, 178959, 64000},
		{"Mistral", 400, `{"object":"error","message":"Prompt contains 300000 tokens, too large for model with 131072 maximum context length","type":"invalid_request_error","param":null,"code":null}`, 131072, 300000, 0},
		{"Qwen (DashScope)", 400, `{"error":{"code":"invalid_parameter_error","message":"<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 983616]","param":null,"type":"invalid_request_error"},"request_id":"81a373d6-28bd-9968-8335-e22a2127c41b"}`, 983616, 0, 0},
		{"Kimi", 400, `{"error":{"message":"Your request exceeded model token limit: 262144 (requested: 300000)","type":"invalid_request_error"}}`, 262144, 300000, 0},
	} {
		t.Run(tc.server, func(t *testing.T) {
			err := Classify("p", tc.status, http.Header{}, []byte(tc.body), time.Now())
			var cl *llm.ContextLengthError
			if !errors.As(err, &cl) {
				t.Fatalf("got %T %v, want a ContextLengthError", err, err)
			}
			if cl.Limit != tc.limit || cl.Requested != tc.requested || cl.Output != tc.output {
				t.Fatalf("limit/requested/output %d/%d/%d, want %d/%d/%d", cl.Limit, cl.Requested, cl.Output, tc.limit, tc.requested, tc.output)
			}
			// The same body inside a 200 stream is classified the same way.
			if !llm.IsContextLength(ClassifyStreamError("p", []byte(tc.body))) {
				t.Error("the body inside a stream is not a context-length error")
			}
		})
	}
}

// Neighbours of the overflow messages that are not overflows stay API errors: rate limits by tokens per minute,
// a max_new_tokens bound alone, an unknown model.
func TestNotContextLength(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
	}{
		{429, `{"error":{"message":"Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 45000. The input or output tokens must be reduced in order to run successfully.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`},
		{422, "{\"error\":\"Input validation error: `max_new_tokens` must be <= 192. Given: 200\",\"error_type\":\"validation\"}"},
		{404, `{"error":{"message":"model \"qwen3\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`},
		{400, `{"error":{"message":"Invalid value for 'temperature': must be between 0 and 2.","type":"invalid_request_error","code":"invalid_value"}}`},
	} {
		if err := Classify("p", tc.status, http.Header{}, []byte(tc.body), time.Now()); llm.IsContextLength(err) {
			t.Errorf("%s: classified as a context-length error: %v", tc.body, err)
		}
	}
}

// FuzzClassify: any body and status classifies without panicking, and a context-length error never states
// negative numbers.
func FuzzClassify(f *testing.F) {
	f.Add(400, `{"error":{"message":"This model's maximum context length is 8,192 tokens. However, your messages resulted in 9,000 tokens.","code":"context_length_exceeded"}}`)
	f.Add(400, `{"error":{"type":"exceed_context_size_error","n_prompt_tokens":-5,"n_ctx":99999999999999999999}}`)
	f.Add(422, "{\"error\":\"`inputs` tokens + `max_new_tokens` must be <= 99999999999999999999999. Given: 1 `inputs` tokens and 2 `max_new_tokens`\"}")
	f.Fuzz(func(t *testing.T, status int, body string) {
		err := Classify("p", status, http.Header{}, []byte(body), time.Now())
		var cl *llm.ContextLengthError
		if errors.As(err, &cl) && (cl.Limit < 0 || cl.Requested < 0 || cl.Output < 0) {
			t.Fatalf("negative numbers from %q: %+v", body, cl)
		}
		_ = err.Error()
	})
}
