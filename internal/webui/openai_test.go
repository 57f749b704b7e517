package webui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/research"
)

const apiToken = "tok-api-123456"

// apiFixture is a viewer with the API on, whose runs are real research (the extractive engine over the honeybee
// corpus), on a loopback httptest server.
type apiFixture struct {
	srv    *Server
	ts     *httptest.Server
	runs   string
	mu     sync.Mutex
	depths []string
}

func newAPIFixture(t *testing.T, token string, delay time.Duration, tweak func(*Config)) *apiFixture {
	t.Helper()
	eng := researchtest.New(t, delay)
	f := &apiFixture{runs: t.TempDir()}
	cfg := Config{
		RunsDir: f.runs, Token: token,
		Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
			return nil, errors.New("the form is not used here")
		},
		API: &APIConfig{Start: func(ctx context.Context, req RunRequest, depth string) (*research.Report, error) {
			f.mu.Lock()
			f.depths = append(f.depths, depth)
			f.mu.Unlock()
			return eng.Run(ctx, req.Question, req.RunID, req.OutDir, req.OnEvent)
		}},
	}
	if tweak != nil {
		tweak(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = s
	f.ts = httptest.NewServer(s.Handler())
	t.Cleanup(func() { f.ts.Close(); s.Close() })
	return f
}

func (f *apiFixture) client(key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(f.ts.URL+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

func (f *apiFixture) lastDepth() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.depths) == 0 {
		return "(none)"
	}
	return f.depths[len(f.depths)-1]
}

// checkAnswer asserts the shape of an answer: the report's prose with numbered citations, its Sources list, and the
// link to the run in the viewer, whose folder holds the same report.
func checkAnswer(t *testing.T, f *apiFixture, content string) string {
	t.Helper()
	if !strings.Contains(content, "[1]") || !strings.Contains(content, "waggle") {
		t.Errorf("the answer has no cited prose about the waggle dance:\n%.1500s", content)
	}
	if !strings.Contains(content, "## Sources") && !strings.Contains(content, "Sources") {
		t.Errorf("the answer has no sources list:\n%.1500s", content)
	}
	i := strings.Index(content, f.ts.URL+"/runs/")
	if i < 0 {
		t.Fatalf("the answer does not link to the run in the viewer:\n%s", content)
	}
	id := strings.TrimSpace(strings.TrimPrefix(content[i:], f.ts.URL+"/runs/"))
	md, err := os.ReadFile(filepath.Join(f.runs, id, research.ReportMarkdownFile))
	if err != nil {
		t.Fatalf("run folder of %s: %v", id, err)
	}
	if first := strings.SplitN(strings.TrimSpace(string(md)), "\n", 2)[0]; !strings.Contains(content, first) {
		t.Errorf("the answer is not the run's report (its first line %q is missing)", first)
	}
	return id
}

// TestAPIWithOpenAIGo uses the official Go client against a real server: the model list, a non-streaming and a
// streaming completion whose progress arrives as reasoning before the answer, the <think> format, and the depth
// a model name asks for reaching the run.
func TestAPIWithOpenAIGo(t *testing.T) {
	f := newAPIFixture(t, apiToken, 0, nil)
	c := f.client(apiToken)
	ctx := t.Context()

	models, err := c.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range models.Data {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "deepresearch,deepresearch-quick,deepresearch-standard,deepresearch-deep" {
		t.Errorf("models: %v", ids)
	}
	if m, err := c.Models.Get(ctx, "deepresearch-deep"); err != nil || m.ID != "deepresearch-deep" {
		t.Errorf("get model: %v %+v", err, m)
	}

	t.Run("non-streaming", func(t *testing.T) {
		resp, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "deepresearch-quick",
			Messages: []openai.ChatCompletionMessageParamUnion{
				openai.SystemMessage("You are helpful."),
				openai.UserMessage("Tell me about bees."),
				openai.AssistantMessage("Which part?"),
				openai.UserMessage(researchtest.Question),
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Choices) != 1 || resp.Choices[0].FinishReason != "stop" || resp.Choices[0].Message.Role != "assistant" || resp.Model != "deepresearch-quick" {
			t.Fatalf("response: %+v", resp)
		}
		id := checkAnswer(t, f, resp.Choices[0].Message.Content)
		if resp.ID != "chatcmpl-"+id {
			t.Errorf("id %q, want chatcmpl-%s", resp.ID, id)
		}
		var reasoning string
		_ = json.Unmarshal([]byte(resp.Choices[0].Message.JSON.ExtraFields["reasoning_content"].Raw()), &reasoning)
		if !strings.Contains(reasoning, "plan:") || !strings.Contains(reasoning, "read ") {
			t.Errorf("reasoning_content lacks the plan and the reads:\n%s", reasoning)
		}
		if got := f.lastDepth(); got != research.DepthQuick {
			t.Errorf("depth %q reached the run, want quick", got)
		}
		// The question was the last user message.
		sum := f.srv.liveRun(id).summary()
		if sum.Question != researchtest.Question {
			t.Errorf("the run's question is %q", sum.Question)
		}
	})

	t.Run("streaming", func(t *testing.T) {
		st := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:         "deepresearch",
			Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage(researchtest.Question)},
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		})
		var reasoning, content strings.Builder
		reasoningAfterContent, finish, usageChunks, chunks := false, "", 0, 0
		for st.Next() {
			ch := st.Current()
			chunks++
			if ch.JSON.Usage.Valid() && len(ch.Choices) == 0 {
				usageChunks++
				continue
			}
			for _, choice := range ch.Choices {
				if raw := choice.Delta.JSON.ExtraFields["reasoning_content"].Raw(); raw != "" && raw != "null" {
					var s string
					_ = json.Unmarshal([]byte(raw), &s)
					reasoning.WriteString(s)
					if content.Len() > 0 {
						reasoningAfterContent = true
					}
				}
				content.WriteString(choice.Delta.Content)
				if choice.FinishReason != "" {
					finish = choice.FinishReason
				}
			}
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
		checkAnswer(t, f, content.String())
		if !strings.Contains(reasoning.String(), "plan:") || reasoningAfterContent {
			t.Errorf("progress did not stream as reasoning before the answer (after: %v):\n%s", reasoningAfterContent, reasoning.String())
		}
		if finish != "stop" || usageChunks != 1 || chunks < 5 {
			t.Errorf("finish %q, %d usage chunks, %d chunks", finish, usageChunks, chunks)
		}
		if got := f.lastDepth(); got != "" {
			t.Errorf("the plain model asked for depth %q", got)
		}
	})

	t.Run("think-tags", func(t *testing.T) {
		resp, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "deepresearch-deep", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(researchtest.Question)},
		}, option.WithJSONSet("reasoning_format", "think"))
		if err != nil {
			t.Fatal(err)
		}
		got := resp.Choices[0].Message.Content
		open, end := strings.Index(got, "<think>"), strings.Index(got, "</think>")
		if open != 0 || end < 0 || !strings.Contains(got[:end], "plan:") {
			t.Errorf("progress is not in <think> at the start of the content:\n%.800s", got)
		}
		checkAnswer(t, f, got[end:])
		if f.lastDepth() != research.DepthDeep {
			t.Errorf("depth %q, want deep", f.lastDepth())
		}
	})
}

// TestAPIRefusesHostileClients sends what a broken or hostile client would: no key, a wrong key, malformed JSON,
// a body past the limit, an unknown model, tools, functions, n>1, a JSON response format, too many messages, no
// user message, a bad depth, unknown paths, a cross-site page's post. Each gets OpenAI's error format with a
// status that says what is wrong, and no run starts.
func TestAPIRefusesHostileClients(t *testing.T) {
	f := newAPIFixture(t, apiToken, 0, func(c *Config) { c.API.MaxBody = 64 << 10; c.API.MaxMessages = 8 })
	post := func(key, body string, hdr ...string) (int, apiError, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", f.ts.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var e apiError
		if err := json.Unmarshal(b, &e); err != nil || e.Error.Message == "" {
			t.Errorf("status %d body is not an OpenAI error: %s", resp.StatusCode, b)
		}
		return resp.StatusCode, e, string(b)
	}
	q := `"messages":[{"role":"user","content":"How do honeybees communicate the location of food?"}]`
	many := strings.Repeat(`{"role":"user","content":"x"},`, 9)
	cases := []struct {
		name, key, body string
		hdr             []string
		status          int
		code, param     string
	}{
		{"no key", "", `{"model":"deepresearch",` + q + `}`, nil, 401, "invalid_api_key", ""},
		{"wrong key", "tok-wrong-000000", `{"model":"deepresearch",` + q + `}`, nil, 401, "invalid_api_key", ""},
		{"malformed JSON", apiToken, `{"model":"deepresearch",` + q, nil, 400, "invalid_json", ""},
		{"two JSON values", apiToken, `{"model":"deepresearch",` + q + `} {}`, nil, 400, "invalid_json", ""},
		{"wrong types", apiToken, `{"model":7,"messages":"x"}`, nil, 400, "invalid_json", ""},
		{"huge body", apiToken, `{"model":"deepresearch","pad":"` + strings.Repeat("a", 70<<10) + `",` + q + `}`, nil, 413, "request_too_large", ""},
		{"no model", apiToken, `{` + q + `}`, nil, 400, "missing_model", "model"},
		{"unknown model", apiToken, `{"model":"gpt-4o",` + q + `}`, nil, 404, "model_not_found", "model"},
		{"tools", apiToken, `{"model":"deepresearch","tools":[{"type":"function","function":{"name":"f"}}],` + q + `}`, nil, 400, "unsupported_parameter", "tools"},
		{"functions", apiToken, `{"model":"deepresearch","functions":[{"name":"f"}],` + q + `}`, nil, 400, "unsupported_parameter", "tools"},
		{"tool choice", apiToken, `{"model":"deepresearch","tool_choice":"required",` + q + `}`, nil, 400, "unsupported_parameter", "tools"},
		{"n=2", apiToken, `{"model":"deepresearch","n":2,` + q + `}`, nil, 400, "unsupported_parameter", "n"},
		{"json response", apiToken, `{"model":"deepresearch","response_format":{"type":"json_object"},` + q + `}`, nil, 400, "unsupported_parameter", "response_format"},
		{"no messages", apiToken, `{"model":"deepresearch","messages":[]}`, nil, 400, "", "messages"},
		{"too many messages", apiToken, `{"model":"deepresearch","messages":[` + many + `{"role":"user","content":"q"}]}`, nil, 400, "", "messages"},
		{"no user message", apiToken, `{"model":"deepresearch","messages":[{"role":"system","content":"be brief"}]}`, nil, 400, "", "messages"},
		{"image only", apiToken, `{"model":"deepresearch","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:,"}}]}]}`, nil, 400, "", "messages"},
		{"bad content", apiToken, `{"model":"deepresearch","messages":[{"role":"user","content":{"a":1}}]}`, nil, 400, "", "messages[0].content"},
		{"control characters", apiToken, `{"model":"deepresearch","messages":[{"role":"user","content":"bees \u0007\u001b[2J"}]}`, nil, 400, "", "messages"},
		{"bad depth", apiToken, `{"model":"deepresearch","depth":"abyssal",` + q + `}`, nil, 400, "", "depth"},
		{"bad reasoning format", apiToken, `{"model":"deepresearch","reasoning_format":"xml",` + q + `}`, nil, 400, "", "reasoning_format"},
		{"cross-site page", apiToken, `{"model":"deepresearch",` + q + `}`, []string{"Sec-Fetch-Site", "cross-site"}, 403, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, e, body := post(tc.key, tc.body, tc.hdr...)
			if status != tc.status {
				t.Errorf("status %d, want %d: %s", status, tc.status, body)
			}
			if e.Error.Code != nil && tc.code != "" && *e.Error.Code != tc.code || (tc.code != "" && e.Error.Code == nil) {
				t.Errorf("code %v, want %s: %s", e.Error.Code, tc.code, body)
			}
			if tc.param != "" && (e.Error.Param == nil || *e.Error.Param != tc.param) {
				t.Errorf("param %v, want %s: %s", e.Error.Param, tc.param, body)
			}
		})
	}
	if n := len(f.depths); n != 0 {
		t.Errorf("%d runs started for refused requests", n)
	}
	ents, _ := os.ReadDir(f.runs)
	if len(ents) != 0 {
		t.Errorf("refused requests left %d run folders", len(ents))
	}

	// The official client sees these as typed errors with the status and code.
	ac := f.client(apiToken)
	_, err := ac.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model: "gpt-4o", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("q")}})
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 404 || oe.Code != "model_not_found" {
		t.Errorf("unknown model through openai-go: %v", err)
	}
	wc := f.client("tok-wrong-000000")
	_, err = wc.Models.List(t.Context())
	if !errors.As(err, &oe) || oe.StatusCode != 401 {
		t.Errorf("wrong key through openai-go: %v", err)
	}

	// Paths and methods the API does not serve.
	for _, p := range []struct{ method, path string }{{"GET", "/v1/chat/completions"}, {"POST", "/v1/embeddings"}, {"GET", "/v1/models/gpt-4o"}} {
		req, _ := http.NewRequest(p.method, f.ts.URL+p.path, nil)
		req.Header.Set("Authorization", "Bearer "+apiToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 && resp.StatusCode != 405 || !strings.Contains(string(b), `"error"`) {
			t.Errorf("%s %s: %d %s", p.method, p.path, resp.StatusCode, b)
		}
	}
}

// TestAPIWithoutTokenOnLoopbackOnly: with no token configured the API answers on a loopback Host only, as the
// viewer does, so a page reached through DNS rebinding cannot use it.
func TestAPIWithoutTokenOnLoopbackOnly(t *testing.T) {
	f := newAPIFixture(t, "", 0, nil)
	req, _ := http.NewRequest("GET", f.ts.URL+"/v1/models", nil)
	req.Host = "attacker.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Host got %d, want 403", resp.StatusCode)
	}
	ac := f.client("anything")
	if _, err := ac.Models.List(t.Context()); err != nil {
		t.Errorf("loopback without a token: %v", err)
	}
}

// TestAPIRunCapAndDisconnect: API runs count against the viewer's cap (429 past it), and a client that goes away
// stops its run, which ends stopped (resumable) rather than running on.
func TestAPIRunCapAndDisconnect(t *testing.T) {
	f := newAPIFixture(t, apiToken, 300*time.Millisecond, func(c *Config) { c.MaxRuns = 1 })
	c := f.client(apiToken)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: "deepresearch", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(researchtest.Question)}})
	if !st.Next() {
		t.Fatalf("no first chunk: %v", st.Err())
	}
	id := strings.TrimPrefix(st.Current().ID, "chatcmpl-")
	lr := f.srv.liveRun(id)
	if lr == nil {
		t.Fatalf("no live run %q", id)
	}

	_, err := c.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model: "deepresearch", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(researchtest.Question)}})
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != http.StatusTooManyRequests || oe.Code != "rate_limit_exceeded" {
		t.Errorf("a second run past the cap: %v", err)
	}

	cancel() // the client goes away
	st.Close()
	deadline := time.Now().Add(30 * time.Second)
	for lr.status() == research.RunRunning {
		if time.Now().After(deadline) {
			t.Fatal("the run kept going after its client left")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := lr.status(); got != research.RunStopped {
		t.Errorf("the run ended %s, want stopped", got)
	}
}
