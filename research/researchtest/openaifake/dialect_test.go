package openaifake_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/llmtest"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
)

// dialectRun runs the whole graph against the fake speaking one server's dialect, through the real OpenAI adapter,
// metered into a ledger the fuses read.
func dialectRun(t *testing.T, d *openaifake.Dialect, mb openaifake.Misbehaviour, budget research.Budget) (*research.Report, *openaifake.Server, *llm.Ledger, string) {
	t.Helper()
	cfg, srv := dialectConfig(t, d, mb, budget)
	rep, err := research.Run(t.Context(), cfg)
	if err != nil {
		t.Fatalf("the run failed: %v", err)
	}
	return rep, srv, cfg.Ledger, cfg.OutDir
}

// dialectConfig is a run's configuration over the fake speaking d, in a run folder of its own.
func dialectConfig(t *testing.T, d *openaifake.Dialect, mb openaifake.Misbehaviour, budget research.Budget) (research.Config, *openaifake.Server) {
	t.Helper()
	site := researchtest.NewSite(kilnPages())
	t.Cleanup(site.Close)
	srv := openaifake.New(t, openaifake.Config{SubQuestions: kilnPlan, GapSubQuestion: -1, Misbehave: mb, Dialect: d})
	roles, ledger := fakeRoles(t, srv, siteSearcher{site}, 5*time.Second)
	return research.Config{Question: "How good is the solar kiln?", Roles: roles, Fetcher: site.Fetcher(),
		OutDir: filepath.Join(t.TempDir(), "run"), Ledger: ledger, Budget: budget}, srv
}

// noReasoningPublished: nothing of the model's thinking is in the report.
func noReasoningPublished(t *testing.T, rep *research.Report) {
	t.Helper()
	for _, bad := range []string{openaifake.ReasoningMarker, "fastest ever built", "the kiln dries wood quickly", "<think>", "</think>", "Let me draft"} {
		if strings.Contains(rep.Markdown, bad) {
			t.Errorf("reasoning %q published:\n%s", bad, rep.Markdown)
		}
	}
}

// TestGraphThroughEachDialect runs the research graph through every OpenAI-compatible server's wire shape with a
// reasoning model that answers honestly: the report is cited and grounded, none of the reasoning (a draft with a
// paraphrased quote, a cited sentence) is in it, and the fuses see the run's tokens — the server's figures, or
// counted here and marked estimated where the server reports none.
func TestGraphThroughEachDialect(t *testing.T) {
	for _, d := range llmtest.Dialects() {
		if d.Anthropic {
			continue // the fake speaks Chat Completions; Anthropic's thinking blocks are covered in package llm
		}
		t.Run(d.Name, func(t *testing.T) {
			rep, srv, ledger, dir := dialectRun(t, &openaifake.Dialect{Dialect: d}, openaifake.Misbehaviour{}, research.Budget{})
			if len(rep.Citations) == 0 || rep.Stats.Ungrounded != 0 {
				t.Fatalf("%d citations, %d ungrounded quotes:\n%s", len(rep.Citations), rep.Stats.Ungrounded, rep.Markdown)
			}
			noReasoningPublished(t, rep)
			checkCitations(t, dir, rep)
			u, _, calls := ledger.Totals()
			if calls != len(srv.Calls()) || u.InputTokens <= 0 || u.OutputTokens <= 0 {
				t.Fatalf("ledger %+v over %d calls, the server answered %d", u, calls, len(srv.Calls()))
			}
			if u.Estimated != d.NoUsage || (ledger.EstimatedCalls() == calls) != d.NoUsage {
				t.Fatalf("estimated %v (%d of %d calls) for a server that reports usage: %v", u.Estimated, ledger.EstimatedCalls(), calls, !d.NoUsage)
			}
			if p, c := srv.Usage(); !d.NoUsage && (p != u.PromptTokens() || c != u.OutputTokens) {
				t.Errorf("the server reported %d/%d tokens, the ledger has %+v", p, c, u)
			}
			// The footer says when the token figure was estimated, and only then.
			if said := strings.Contains(rep.Markdown, "estimated with a tokenizer"); said != d.NoUsage || (rep.Stats.TokensEstimated > 0) != d.NoUsage {
				t.Errorf("footer says estimated: %v (%d tokens), server reports no usage: %v:\n%s", said, rep.Stats.TokensEstimated, d.NoUsage, rep.Markdown)
			}
		})
	}
}

// A server that reports no usage still trips the token fuse: the estimate is what the fuse reads.
func TestTokenFuseTripsOnEstimatedUsage(t *testing.T) {
	var noUsage llmtest.Dialect
	for _, d := range llmtest.Dialects() {
		if d.NoUsage {
			noUsage = d
		}
	}
	rep, _, ledger, _ := dialectRun(t, &openaifake.Dialect{Dialect: noUsage}, openaifake.Misbehaviour{}, research.Budget{MaxTokens: 1000})
	u, _, _ := ledger.Totals()
	if !u.Estimated || u.InputTokens+u.OutputTokens < 1000 {
		t.Fatalf("ledger %+v", u)
	}
	if !strings.Contains(rep.Markdown, "token fuse") {
		t.Fatalf("the token fuse did not trip on estimated usage:\n%s", rep.Markdown)
	}
	noReasoningPublished(t, rep)
}

// A run stopped after a server that reports no usage, resumed against one that does, still says its token figure
// was partly estimated: the mark is saved with the spend and restored with it.
func TestEstimatedSpendSurvivesResume(t *testing.T) {
	var noUsage, usage llmtest.Dialect
	for _, d := range llmtest.Dialects() {
		switch {
		case d.Anthropic:
		case d.NoUsage:
			noUsage = d
		default:
			usage = d
		}
	}
	if noUsage.Name == "" || usage.Name == "" {
		t.Fatalf("the dialect table has no OpenAI-style dialect without usage (%q) or with it (%q)", noUsage.Name, usage.Name)
	}
	cfg, _ := dialectConfig(t, &openaifake.Dialect{Dialect: noUsage}, openaifake.Misbehaviour{}, research.Budget{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cfg.OnEvent = func(e research.Event) {
		if e.Kind == research.EventEvidence {
			cancel()
		}
	}
	if _, err := research.Run(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("the first run: %v, want it stopped", err)
	}
	if u, _, _ := cfg.Ledger.Totals(); !u.Estimated || u.InputTokens == 0 {
		t.Fatalf("the first run's ledger %+v: not estimated", u)
	}
	again, _ := dialectConfig(t, &openaifake.Dialect{Dialect: usage}, openaifake.Misbehaviour{}, research.Budget{})
	again.Question = ""
	rep, err := research.Resume(t.Context(), cfg.OutDir, again)
	if err != nil {
		t.Fatal(err)
	}
	if u, _, _ := again.Ledger.Totals(); u.Estimated {
		t.Fatalf("the resumed process's usage is estimated: %+v", u)
	}
	if rep.Stats.TokensEstimated <= 0 || rep.Stats.TokensEstimated >= rep.Stats.Tokens || !strings.Contains(rep.Markdown, "estimated with a tokenizer") {
		t.Errorf("resumed report: %d of %d tokens estimated, footer:\n%s", rep.Stats.TokensEstimated, rep.Stats.Tokens, rep.Markdown)
	}
}

// Each server's own context-length body is recognised as one: the run shrinks instead of failing or resending,
// and still publishes a cited report.
func TestContextErrorsInEachDialect(t *testing.T) {
	for _, d := range llmtest.Dialects() {
		if d.Anthropic {
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			rep, srv, _, _ := dialectRun(t, &openaifake.Dialect{Dialect: d}, openaifake.Misbehaviour{ContextLimit: 1400}, research.Budget{})
			overflows := 0
			for _, c := range srv.Calls() {
				if c.Error == "context length exceeded" {
					overflows++
				}
			}
			if overflows == 0 || overflows > 20 {
				t.Errorf("%d context-length errors; want a few, each followed by a smaller request", overflows)
			}
			if len(rep.Citations) == 0 {
				t.Fatalf("nothing cited:\n%s", rep.Markdown)
			}
			noReasoningPublished(t, rep)
		})
	}
}

// An Ollama server with a small num_ctx reads only part of long prompts and answers anyway. The adapter notices
// (reported prompt tokens far below what was sent), the roles shrink their requests, and the run ends with a cited
// report instead of answers to prompts the model never saw.
func TestSilentTruncationAtGraphLevel(t *testing.T) {
	ollama := llmtest.Dialects()[1]
	rep, srv, _, _ := dialectRun(t, &openaifake.Dialect{Dialect: ollama, NumCtx: 1500}, openaifake.Misbehaviour{}, research.Budget{})
	if srv.Truncated() == 0 {
		t.Fatal("no prompt was long enough to be truncated: the test proves nothing")
	}
	if len(rep.Citations) == 0 {
		t.Fatalf("nothing cited:\n%s", rep.Markdown)
	}
	noReasoningPublished(t, rep)
}
