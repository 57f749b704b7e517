package durable

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/llmtest"
	"github.com/deepresearch/deepresearch/llm/openai"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/llmroles"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/sources"
)

type siteSearcher struct{ *researchtest.Site }

func (siteSearcher) Name() string { return "site" }
func (s siteSearcher) Search(_ context.Context, q string, limit int) ([]sources.Result, error) {
	return s.Site.Search(q, limit), nil
}

// A durable run over a server that reports no usage says, as a local run does, that its tokens were estimated
// with a tokenizer: every attempt's spend row keeps its estimated part, and the footer adds them up.
func TestDurableFooterSaysSpendWasEstimated(t *testing.T) {
	var noUsage llmtest.Dialect
	for _, d := range llmtest.Dialects() {
		if d.NoUsage {
			noUsage = d
		}
	}
	if !noUsage.NoUsage {
		t.Fatal("llmtest has no dialect without usage")
	}
	var pages []researchtest.Page
	for _, topic := range []struct{ path, title, fact string }{
		{"/design", "Kiln design", "Roof fans push the warm air through the stack of kiln number %d on test day %d."},
		{"/speed", "Kiln speed", "Kiln number %d dried a full load of timber in %d days during the trial."},
	} {
		var b strings.Builder
		for i := 1; i <= 12; i++ {
			fmt.Fprintf(&b, topic.fact+"\n\n", i, 100+i)
		}
		pages = append(pages, researchtest.Page{Path: topic.path, Title: topic.title, Body: b.String()})
	}
	site := researchtest.NewSite(pages)
	t.Cleanup(site.Close)
	srv := openaifake.New(t, openaifake.Config{GapSubQuestion: -1, Dialect: &openaifake.Dialect{Dialect: noUsage},
		SubQuestions: []openaifake.SubQuestion{
			{Question: "How is the kiln designed?", Queries: []string{"kiln fans"}, Keywords: []string{"fans", "design"}},
			{Question: "How fast does it dry timber?", Queries: []string{"kiln days"}, Keywords: []string{"days", "speed"}},
		}})
	config := func() research.Config {
		m, err := openai.New(openai.Config{Model: "fake-research", BaseURL: srv.BaseURL(), APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		ledger := &llm.Ledger{}
		model := llm.Metered(llm.WithRetry(m, llm.RetryConfig{CallTimeout: 10 * time.Second,
			Sleep: func(context.Context, time.Duration) error { return nil }}), ledger, "fake")
		roles := llmroles.New(llmroles.Config{Planner: model, Searcher: model, Analyst: model, Verifier: model, Synthesizer: model,
			Sources: []sources.Searcher{siteSearcher{site}}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		return research.Config{Question: "How good is the solar kiln?", Roles: roles, Fetcher: site.Fetcher(), Ledger: ledger,
			Budget: research.Budget{Concurrency: 1}}
	}
	localCfg := config()
	localCfg.OutDir = filepath.Join(t.TempDir(), "local")
	local, err := research.Run(t.Context(), localCfg)
	if err != nil {
		t.Fatal(err)
	}

	acts := &Activities{Dir: t.TempDir(), KeepBuilds: true, Build: func(context.Context, Input) (research.Config, func(), error) {
		return config(), func() {}, nil
	}}
	defer acts.Close()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	register(env, acts, nil)
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "estimated", Question: localCfg.Question,
		Budget: research.Budget{Concurrency: 1}}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var durable research.Report
	if err := env.GetWorkflowResult(&durable); err != nil {
		t.Fatal(err)
	}
	for name, rep := range map[string]*research.Report{"local": local, "durable": &durable} {
		if st := rep.Stats; st.Tokens == 0 || st.TokensEstimated != st.Tokens {
			t.Errorf("%s run: %d tokens, %d estimated; want every token estimated (the server reports no usage)", name, st.Tokens, st.TokensEstimated)
		}
	}
	if local.Stats.Calls != durable.Stats.Calls || local.Stats.Tokens != durable.Stats.Tokens || local.Stats.TokensEstimated != durable.Stats.TokensEstimated {
		t.Errorf("durable spend %d calls, %d tokens (%d estimated); local %d calls, %d tokens (%d estimated)",
			durable.Stats.Calls, durable.Stats.Tokens, durable.Stats.TokensEstimated, local.Stats.Calls, local.Stats.Tokens, local.Stats.TokensEstimated)
	}
	footer := func(md string) string {
		for _, l := range strings.Split(md, "\n") {
			if strings.Contains(l, "estimated with a tokenizer") {
				return l
			}
		}
		return ""
	}
	if f := footer(local.Markdown); f == "" || footer(durable.Markdown) != f {
		t.Errorf("footers differ:\nlocal:   %q\ndurable: %q", f, footer(durable.Markdown))
	}
}
