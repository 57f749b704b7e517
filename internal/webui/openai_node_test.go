package webui

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/mcptools/mcptest"
)

// TestAPIWithOpenAINodeClient drives the API with the official OpenAI JavaScript client: the model list, a
// non-streaming and a streaming completion (progress as reasoning_content, then the report), and the errors it
// raises for a wrong key, an unknown model and tools.
func TestAPIWithOpenAINodeClient(t *testing.T) {
	cache := mcptest.NodeCache()
	if _, err := os.Stat(filepath.Join(cache, "node_modules", "openai", "package.json")); err != nil {
		t.Fatalf("the openai npm package is not installed in %s: run internal/webui/testdata/install.sh", cache)
	}
	node := mcptest.Node(t)
	f := newAPIFixture(t, apiToken, 0, nil)

	// The script must sit next to node_modules for Node's module resolution.
	script, err := os.ReadFile(filepath.Join("testdata", "openai_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	tmp, err := os.CreateTemp(cache, "openai-client-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(script); err != nil {
		t.Fatal(err)
	}
	tmp.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, tmp.Name(), f.ts.URL+"/v1", apiToken, researchtest.Question)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("OpenAI JavaScript client: %v\n%s", err, stdout)
	}
	var (
		models     []string
		completion struct{ ID, Content, Reasoning, Finish string }
		stream     struct {
			Reasoning, Content, Finish, Order string
			Usage                             *struct {
				TotalTokens int `json:"total_tokens"`
			}
		}
		errs = map[string]struct {
			Status int
			Code   *string
		}{}
	)
	for _, line := range strings.Split(strings.TrimSpace(string(stdout)), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("client printed %q: %v", line, err)
		}
		switch {
		case m["models"] != nil:
			json.Unmarshal(m["models"], &models)
		case m["completion"] != nil:
			json.Unmarshal(m["completion"], &completion)
		case m["stream"] != nil:
			json.Unmarshal(m["stream"], &stream)
		case m["error"] != nil:
			var e struct {
				Name   string
				Status int
				Code   *string
			}
			json.Unmarshal(m["error"], &e)
			errs[e.Name] = struct {
				Status int
				Code   *string
			}{e.Status, e.Code}
		}
	}
	if strings.Join(models, ",") != "deepresearch,deepresearch-quick,deepresearch-standard,deepresearch-deep" {
		t.Errorf("models %v", models)
	}
	checkAnswer(t, f, completion.Content)
	if completion.Finish != "stop" || !strings.HasPrefix(completion.ID, "chatcmpl-") || !strings.Contains(completion.Reasoning, "plan:") {
		t.Errorf("completion: finish %q id %q reasoning %.200q", completion.Finish, completion.ID, completion.Reasoning)
	}
	checkAnswer(t, f, stream.Content)
	// Reasoning first, then the content: no reasoning after the answer began.
	if stream.Finish != "stop" || stream.Usage == nil || !strings.Contains(stream.Reasoning, "plan:") ||
		!strings.HasPrefix(stream.Order, "r") || strings.Contains(strings.TrimLeft(stream.Order, "r"), "r") {
		t.Errorf("stream: finish %q usage %v order %q reasoning %.200q", stream.Finish, stream.Usage, stream.Order, stream.Reasoning)
	}
	for name, want := range map[string]struct {
		status int
		code   string
	}{"wrong-key": {401, "invalid_api_key"}, "unknown-model": {404, "model_not_found"}, "tools": {400, "unsupported_parameter"}} {
		got := errs[name]
		if got.Status != want.status || got.Code == nil || *got.Code != want.code {
			t.Errorf("%s: the client raised status %d code %v, want %d %s", name, got.Status, got.Code, want.status, want.code)
		}
	}
}
