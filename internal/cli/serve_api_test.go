package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/deepresearch/deepresearch/base/syncio"
	"github.com/deepresearch/deepresearch/internal/cli"
	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/research"
)

// TestServeAPIEndToEnd runs `deepresearch serve --api --corpus DIR` with a token and uses it through the official
// Go client as an OpenAI model: the request builder indexes the corpus given as run takes it, the extractive
// engine answers, the answer is the report, and the run is one of the viewer's.
func TestServeAPIEndToEnd(t *testing.T) {
	cfg := serveEnv(t)
	corpus := copyCorpus(t)
	runs := filepath.Join(t.TempDir(), "runs")
	apiRE := regexp.MustCompile(`OpenAI-compatible API at (http://127\.0\.0\.1:\d+/v1) \(models deepresearch, deepresearch-quick, deepresearch-standard, deepresearch-deep;`)
	base, srv := startServe(t, apiRE, map[string]string{"DEEPRESEARCH_TOKEN": "tok-api-7890123"},
		"--api", "--corpus", corpus, "--addr", "127.0.0.1:0", "--runs", runs, "--config", cfg)
	c := openai.NewClient(option.WithBaseURL(base), option.WithAPIKey("tok-api-7890123"), option.WithMaxRetries(0))
	resp, err := c.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model: "deepresearch", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(researchtest.Question)}})
	if err != nil {
		t.Fatal(err)
	}
	answer := resp.Choices[0].Message.Content
	id := strings.TrimPrefix(resp.ID, "chatcmpl-")
	md, err := os.ReadFile(filepath.Join(runs, id, research.ReportMarkdownFile))
	if err != nil {
		t.Fatalf("the run's folder: %v", err)
	}
	if !strings.HasPrefix(answer, strings.TrimRight(string(md), "\n")) || !strings.Contains(answer, "[1]") {
		t.Errorf("the answer is not the run's report:\n%.1200s", answer)
	}
	if !strings.Contains(answer, "file://"+corpus) {
		t.Errorf("the answer does not cite the --corpus folder %s:\n%.1200s", corpus, answer)
	}
	wrong := openai.NewClient(option.WithBaseURL(base), option.WithAPIKey("nope-nope-nope"), option.WithMaxRetries(0))
	if _, err := wrong.Models.List(t.Context()); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong key: %v", err)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("serve exited with %d", code)
	}
}

// TestServeAPIFlags: the API's sources need --api, and --api needs sources; both are usage errors (exit 2)
// that say what to add.
func TestServeAPIFlags(t *testing.T) {
	cfg := serveEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--corpus", t.TempDir()}, "--corpus sets the sources of the API's answers and needs --api"},
		{[]string{"serve", "--web", "arxiv"}, "--web sets the sources of the API's answers and needs --api"},
		{[]string{"serve", "--api"}, "serve --api needs the sources its answers use: --corpus DIR, --web PROVIDER or --mcp FILE"},
	} {
		var stdout, stderr syncio.Buffer
		code := cli.Main(t.Context(), append(tc.args, "--addr", "127.0.0.1:0", "--config", cfg, "--runs", t.TempDir()),
			strings.NewReader(""), &stdout, &stderr, func(string) string { return "" })
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d\nstderr: %s", tc.args, code, stderr.String())
		}
	}
}
