package cli

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/internal/chat"
	"github.com/deepresearch/deepresearch/internal/mcpserver"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/internal/webui"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/mcptools/mcptest"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/extractive"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/corpus"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

// effective is what a surface would run: everything in a research.Config that the request and the configuration
// decide (the run id and folder aside, which each surface names its own way).
type effective struct {
	Question      string
	Engine        string
	Settings      map[string]string
	Budget        research.Budget
	Rounds        int
	MaxCandidates int
	Unjudged      string
	Depth         string
	Length        string
	Instructions  string
	From          string
	HasFetcher    bool
}

// capture is a Builder.Runner that records the configurations it is given instead of running them.
type capture struct {
	mu   sync.Mutex
	runs []effective
}

func (c *capture) run(_ context.Context, cfg research.Config, _ string) (*research.Report, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs = append(c.runs, effective{Question: cfg.Question, Engine: cfg.Roles.Engine, Settings: maps.Clone(cfg.Settings),
		Budget: cfg.Budget, Rounds: cfg.Rounds, MaxCandidates: cfg.MaxCandidates, Unjudged: cfg.Unjudged, HasFetcher: cfg.Fetcher != nil,
		Depth: cfg.Depth, Length: cfg.Length, Instructions: cfg.Instructions, From: cfg.From})
	return &research.Report{Question: cfg.Question, Engine: cfg.Roles.Engine, Dir: cfg.OutDir, Markdown: "A report."}, nil
}

func (c *capture) take(t *testing.T, surface string) effective {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c.mu.Lock()
		if len(c.runs) > 0 {
			e := c.runs[0]
			c.runs = c.runs[1:]
			c.mu.Unlock()
			return e
		}
		c.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("%s started no run", surface)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEverySurfaceRunsTheSameRequest drives run, serve (the web form), the MCP server's deep_research tool and
// chat's /deep-research with the same request rows and asserts that all of them build the same research
// configuration: sources (corpus, web, MCP search tools), limits, rounds and engine. Each surface takes the
// request through its own input — flags, form fields, tool arguments, a chat line. Rows whose request names its
// own sources or limits skip chat, which takes only a question and always uses the configured sources and
// limits; the row that leaves the sources to the configuration skips the web form, which always names its sources.
func TestEverySurfaceRunsTheSameRequest(t *testing.T) {
	home := t.TempDir()
	// The MCP servers are found in the real cache before the test moves it.
	everything := mcptest.Everything(t)
	mcpFile := filepath.Join(home, "mcp.json")
	if err := os.WriteFile(mcpFile, []byte(mcptest.JSON(map[string]mcptools.ServerConfig{"everything": everything})), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	corpusA, corpusB := filepath.Join(home, "notes-a"), filepath.Join(home, "notes-b")
	for _, d := range []string{corpusA, corpusB} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "bees.md"), []byte("# Bees\n\nHoneybees dance to tell the hive where flowers are.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := func(k string) string { return map[string]string{"SEARXNG_URL": "http://127.0.0.1:9/"}[k] }
	limits := "research:\n  rounds: 3\n  max_cost_usd: 0.75\n  max_tokens: 90000\n  max_time: 4m\n  max_candidates: 12\n  concurrency: 4\n  max_calls: 200\n"

	// A finished run every surface's runs folder holds, for the follow-up row.
	runs := filepath.Join(home, "runs")
	earlierID := "20260101-000000-ea71e2"
	earlier := filepath.Join(runs, earlierID)
	{
		ix, err := corpus.OpenWith(filepath.Join(home, "earlier-index"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Add(t.Context(), corpusA); err != nil {
			t.Fatal(err)
		}
		_, err = research.Run(t.Context(), research.Config{Question: "How do honeybees dance?", OutDir: earlier,
			Roles: extractive.New(extractive.Config{Searchers: []sources.Searcher{ix}}), Fetcher: sources.Router{Corpus: ix}})
		ix.Close()
		if err != nil {
			t.Fatal(err)
		}
	}

	type row struct {
		name   string
		config string
		req    request.Research // what the user asks for beyond the question; zero means the configuration's
		// notOn names the surfaces that cannot carry the request, with the reason.
		notOn map[string]string
	}
	rows := []row{
		{name: "configured sources and limits",
			config: limits + "sources:\n  web: searxng\n  corpus: [" + corpusA + ", " + corpusB + "]\n"},
		{name: "configured MCP search sources",
			config: limits + "sources:\n  corpus: [" + corpusA + "]\nmcp_file: " + mcpFile + "\n"},
		{name: "request names corpus, web and limits",
			config: limits + "sources:\n  corpus: [" + corpusB + "]\n",
			req: request.Research{Corpora: []string{corpusA}, Web: "searxng", Rounds: 1,
				Budget: research.Budget{MaxCostUSD: 0.25, MaxTime: 3 * time.Minute}}},
		{name: "configured to keep unjudged sentences",
			config: "research:\n  unjudged: keep\nsources:\n  web: searxng\n"},
		{name: "request keeps unjudged sentences",
			config: "sources:\n  web: searxng\n",
			req:    request.Research{Web: "searxng", Unjudged: research.UnjudgedKeep}},
		{name: "configured depth and length",
			config: "research:\n  depth: deep\n  length: long\nsources:\n  web: searxng\n"},
		{name: "request steers depth, length and audience",
			config: "research:\n  depth: deep\nsources:\n  web: searxng\n",
			req: request.Research{Web: "searxng", Depth: research.DepthQuick, Length: "400",
				Instructions: "For a newcomer to Go; leave out the history."}},
		{name: "request follows up an earlier run",
			config: "sources:\n  web: searxng\n",
			req:    request.Research{Web: "searxng", From: earlierID},
			notOn: map[string]string{
				"api":  "a chat completion names no run: the OpenAI-compatible API is stateless, and a client cannot point the server at a run folder",
				"chat": "chat follows up the session's last /deep-research by itself (internal/chat TestDeepResearchFollowsUpTheSessionsLastRun)",
			}},
		{name: "request asks for no re-search",
			config: "sources:\n  web: searxng\n",
			req:    request.Research{Corpora: []string{corpusB}, Rounds: -1, Budget: research.Budget{MaxTime: 90 * time.Second}}},
	}
	const question = "How do honeybees tell the hive where flowers are?"

	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			cfgFile := filepath.Join(t.TempDir(), "deepresearch.yaml")
			// chat needs a model for its agent; the research runs use the extractive engine all the same.
			yaml := tc.config + "model:\n  provider: openai\n  model: test-model\n  base_url: http://127.0.0.1:9/v1\n"
			if strings.Contains(yaml, "research:\n") {
				yaml = strings.Replace(yaml, "research:\n", "research:\n  engine: extractive\n", 1)
			} else {
				yaml += "research:\n  engine: extractive\n"
			}
			if err := os.WriteFile(cfgFile, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			cap := &capture{}
			newApp := func() *App {
				var out bytes.Buffer
				app := &App{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: env, configFile: cfgFile, runner: cap.run}
				if err := app.load(&cobra.Command{}); err != nil {
					t.Fatal(err)
				}
				return app
			}
			got := map[string]effective{}
			hasSources := tc.req.HasSources()
			hasLimits := tc.req.Rounds != 0 || tc.req.Budget != (research.Budget{}) || tc.req.Unjudged != ""
			steers := tc.req.Depth != "" || tc.req.Length != "" || tc.req.Instructions != ""

			// run: flags.
			{
				app := newApp()
				args := []string{"run", "--config", cfgFile, "--out", filepath.Join(t.TempDir(), "run")}
				for _, c := range tc.req.Corpora {
					args = append(args, "--corpus", c)
				}
				if tc.req.Web != "" {
					args = append(args, "--web", tc.req.Web)
				}
				if b := tc.req.Budget; b.MaxCostUSD != 0 {
					args = append(args, "--max-cost", strconv.FormatFloat(b.MaxCostUSD, 'g', -1, 64))
				}
				if b := tc.req.Budget; b.MaxTime != 0 {
					args = append(args, "--max-time", b.MaxTime.String())
				}
				if tc.req.Rounds != 0 {
					args = append(args, "--rounds", strconv.Itoa(max(tc.req.Rounds, 0)))
				}
				if tc.req.Unjudged != "" {
					args = append(args, "--unjudged", tc.req.Unjudged)
				}
				if tc.req.Depth != "" {
					args = append(args, "--depth", tc.req.Depth)
				}
				if tc.req.Length != "" {
					args = append(args, "--length", tc.req.Length)
				}
				if tc.req.Instructions != "" {
					args = append(args, "--instructions", tc.req.Instructions)
				}
				if tc.req.From != "" {
					args = append(args, "--from", earlier) // the command line takes a folder as well as an id
				}
				root := NewRootCmd(app)
				root.SetArgs(append(args, question))
				root.SetOut(app.Stdout)
				root.SetErr(app.Stderr)
				// The stub engine's report cites nothing (exit 3); the request it was given is what is compared.
				if err := root.ExecuteContext(t.Context()); err != nil && exitCode(t.Context(), err) != ExitNothing {
					t.Fatalf("run: %v\n%s", err, app.Stdout)
				}
				got["run"] = cap.take(t, "run")
			}

			// serve: the web form.
			if hasSources {
				app := newApp()
				b := app.builder(runs)
				srv, err := webui.New(webui.Config{RunsDir: runs, WebProviders: websearch.Names(), Start: webStart(b.Run)})
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				hs := httptest.NewServer(srv.Handler())
				defer hs.Close()
				form := url.Values{"question": {question}, "web": {tc.req.Web}}
				if len(tc.req.Corpora) > 0 {
					form.Set("corpus", tc.req.Corpora[0])
				}
				if b := tc.req.Budget; b.MaxCostUSD != 0 {
					form.Set("max_cost", strconv.FormatFloat(b.MaxCostUSD, 'g', -1, 64))
				}
				if b := tc.req.Budget; b.MaxTime != 0 {
					form.Set("max_minutes", strconv.FormatFloat(b.MaxTime.Minutes(), 'g', -1, 64))
				}
				if tc.req.Rounds != 0 {
					form.Set("rounds", strconv.Itoa(max(tc.req.Rounds, 0)))
				}
				if tc.req.Unjudged != "" {
					form.Set("unjudged", tc.req.Unjudged)
				}
				form.Set("depth", tc.req.Depth)
				form.Set("length", tc.req.Length)
				form.Set("instructions", tc.req.Instructions)
				form.Set("from", tc.req.From)
				client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
				resp, err := client.PostForm(hs.URL+"/runs", form)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusSeeOther {
					t.Fatalf("serve: POST /runs answered %d", resp.StatusCode)
				}
				got["serve"] = cap.take(t, "serve")
			}

			// The MCP server: deep_research's arguments.
			{
				app := newApp()
				b := app.builder(runs)
				srv, err := mcpserver.New(mcpserver.Config{RunsDir: runs, Start: mcpStart(b.Run),
					Defaults: mcpDefaults(app, nil, "", "")})
				if err != nil {
					t.Fatal(err)
				}
				ct, st := mcp.NewInMemoryTransports()
				ss, err := srv.MCP().Connect(t.Context(), st, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer ss.Close()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				args := map[string]any{"question": question}
				if hasSources {
					args["sources"] = map[string]any{"corpus": tc.req.Corpora, "web": tc.req.Web}
				}
				if hasLimits {
					budget := map[string]any{}
					if b := tc.req.Budget; b.MaxCostUSD != 0 {
						budget["max_cost_usd"] = b.MaxCostUSD
					}
					if b := tc.req.Budget; b.MaxTime != 0 {
						budget["max_minutes"] = b.MaxTime.Minutes()
					}
					if tc.req.Rounds != 0 {
						budget["rounds"] = max(tc.req.Rounds, 0)
					}
					if tc.req.Unjudged != "" {
						budget["unjudged"] = tc.req.Unjudged
					}
					args["budget"] = budget
				}
				for k, v := range map[string]string{"depth": tc.req.Depth, "length": tc.req.Length, "instructions": tc.req.Instructions, "from": tc.req.From} {
					if v != "" {
						args[k] = v
					}
				}
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "deep_research", Arguments: args})
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError {
					t.Fatalf("mcp: deep_research failed: %s", res.Content[0].(*mcp.TextContent).Text)
				}
				got["mcp"] = cap.take(t, "mcp")
			}

			// serve --api: an OpenAI chat completion, over the server's sources (its flags, else the configuration's).
			if !hasLimits && tc.notOn["api"] == "" {
				app := newApp()
				b := app.builder(t.TempDir())
				def := mcpDefaults(app, tc.req.Corpora, tc.req.Web, tc.req.MCPFile)
				srv, err := webui.New(webui.Config{RunsDir: t.TempDir(), Start: webStart(b.Run), API: &webui.APIConfig{Start: apiStart(b.Run, def)}})
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				hs := httptest.NewServer(srv.Handler())
				defer hs.Close()
				c := openai.NewClient(option.WithBaseURL(hs.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
				// A client steers as the chat UIs do: the depth by the model's name, the audience in a system
				// message, the length in the request's extension field.
				model := webui.ModelDefault
				if named := webui.ModelDefault + "-" + tc.req.Depth; slices.Contains(webui.ModelNames(), named) {
					model = named
				}
				msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage(question)}
				if tc.req.Instructions != "" {
					msgs = append([]openai.ChatCompletionMessageParamUnion{openai.SystemMessage(tc.req.Instructions)}, msgs...)
				}
				var opts []option.RequestOption
				if tc.req.Length != "" {
					opts = append(opts, option.WithJSONSet("length", tc.req.Length))
				}
				if _, err := c.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: model, Messages: msgs}, opts...); err != nil {
					t.Fatalf("api: %v", err)
				}
				got["api"] = cap.take(t, "api")
			}

			// chat: /deep-research takes only the question.
			if !hasSources && !hasLimits && !steers && tc.notOn["chat"] == "" {
				app := newApp()
				b := app.builder(t.TempDir())
				ledger := &llm.Ledger{}
				ws := t.TempDir()
				var out bytes.Buffer
				err := chat.Run(t.Context(), chat.Config{
					In: strings.NewReader("/deep-research " + question + "\n/exit\n"), Out: &out,
					Agent:  agent.Config{Model: scripted.New(llm.Info{Name: "scripted"}, nil)},
					Ledger: ledger, Sessions: chat.Store{Dir: t.TempDir()}, Workspace: ws,
					Research: func(ctx context.Context, q, from string, on func(research.Event)) (*research.Report, error) {
						r := chatRequest(app.Config, ws, q, on, ledger)
						r.From = from
						return b.Run(ctx, r)
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(out.String(), "Report: ") {
					t.Fatalf("chat ran no research:\n%s", out.String())
				}
				got["chat"] = cap.take(t, "chat")
			}

			want := got["run"]
			if want.Engine != "extractive" || !want.HasFetcher || want.Question != question {
				t.Fatalf("run built %+v", want)
			}
			if keep := tc.req.Unjudged == research.UnjudgedKeep || strings.Contains(tc.config, "unjudged: keep"); keep != (want.Unjudged == research.UnjudgedKeep) {
				t.Fatalf("run builds unjudged %q for a request that asks for %q under\n%s", want.Unjudged, tc.req.Unjudged, tc.config)
			}
			for surface, e := range got {
				if !reflect.DeepEqual(e, want) {
					t.Errorf("%s builds\n%s\nrun builds\n%s", surface, describeEffective(e), describeEffective(want))
				}
			}
			wantDepth := research.DepthStandard // the extractive engine does not triage: auto is not its default
			switch {
			case tc.req.Depth != "":
				wantDepth = tc.req.Depth
			case strings.Contains(tc.config, "depth: deep"):
				wantDepth = research.DepthDeep
			}
			if want.Depth != wantDepth || want.Instructions != tc.req.Instructions {
				t.Fatalf("run builds depth %q, instructions %q; want %q, %q", want.Depth, want.Instructions, wantDepth, tc.req.Instructions)
			}
			if tc.req.From != "" && want.From != earlier {
				t.Fatalf("run builds a follow-up of %q; want %q", want.From, earlier)
			}
			if len(got) < 3 {
				t.Fatalf("only %d surfaces ran", len(got))
			}
		})
	}
}

func describeEffective(e effective) string {
	return fmt.Sprintf("  engine %s, settings %v\n  budget %+v, rounds %d, max candidates %d, unjudged %q, depth %q, length %q, instructions %q, from %q",
		e.Engine, e.Settings, e.Budget, e.Rounds, e.MaxCandidates, e.Unjudged, e.Depth, e.Length, e.Instructions, e.From)
}
