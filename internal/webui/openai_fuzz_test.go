package webui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
)

// FuzzCompletionRequest parses any body a client may post to /v1/chat/completions: no panic; a refusal is an
// OpenAI error with a 4xx status; an accepted request names a served model and a question that passes the
// question check, and asks for no tools and at most one choice. Its seeds run with the tests; fuzzing it
// instruments the openai-go client this package's tests use, which takes minutes to build on a loaded machine, so
// scripts/test does not fuzz it.
func FuzzCompletionRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"deepresearch","messages":[{"role":"user","content":"How do bees dance?"}]}`,
		`{"model":"deepresearch-quick","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"x"},{"role":"user","content":[{"type":"text","text":"q?"},{"type":"image_url"}]}]}`,
		`{"model":"deepresearch","n":0,"tools":[],"tool_choice":"none","messages":[{"role":"user","content":null}]}`,
		`{"model":"x","messages":[{"role":"user","content":{"a":1}}]}`,
		`{"model":"deepresearch","depth":"deep","reasoning_format":"think","messages":[{"role":"user","content":"\u0000"}]}`,
		`[]`, `null`, `{"messages":[]}`, ``,
	} {
		f.Add([]byte(s))
	}
	s, err := New(Config{RunsDir: f.TempDir(), Start: func(context.Context, RunRequest) (*research.Report, error) { return nil, nil },
		API: &APIConfig{Start: func(context.Context, RunRequest, string) (*research.Report, error) { return nil, nil }, MaxBody: 8 << 10, MaxMessages: 16}})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	cfg := s.apiConfig()
	f.Fuzz(func(t *testing.T, body []byte) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(string(body)))
		req, question, depth, fail := s.parseCompletion(w, r, cfg)
		if fail != nil {
			fail()
			var e apiError
			if w.Code < 400 || w.Code >= 500 || json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error.Message == "" {
				t.Fatalf("refusal %d %q", w.Code, w.Body.String())
			}
			return
		}
		served := false
		for _, m := range modelNames() {
			served = served || m.ID == req.Model
		}
		if !served || research.CheckQuestion(question) != nil || (req.N != nil && *req.N != 1) || present(req.Tools) || len(req.Messages) > cfg.MaxMessages {
			t.Fatalf("accepted model %q question %q n %v tools %s", req.Model, question, req.N, req.Tools)
		}
		if _, ok := research.DepthOf(depth); !ok {
			t.Fatalf("depth %q", depth)
		}
	})
}
