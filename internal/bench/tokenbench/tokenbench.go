// Package tokenbench measures what the language-model research path spends: input and output tokens, model
// calls and cost per stage, for a fixed set of questions over the Go distribution's documentation, with an honest
// scripted model (package openaifake: it quotes source sentences verbatim and cites what it extracted) behind the
// real OpenAI adapter, real HTTP and the real corpus. Recall is the answer-quality bench's fact recall for the same
// questions, so a token saving that loses facts shows.
package tokenbench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/catalog"
	"github.com/deepresearch/deepresearch/llm/openai"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/extractive/qualitybench"
	"github.com/deepresearch/deepresearch/research/llmroles"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

// DefaultQuestions are the answer-quality bench's questions over $(go env GOROOT)/doc measured by default; the
// first is the README's question.
var DefaultQuestions = []string{"mem-channels", "mem-datarace", "spec-select"}

// PriceModel names the catalogue model whose prices turn the tokens into dollars.
const PriceModel = "gpt-4.1"

// Config selects what to measure. Zero fields take the defaults.
type Config struct {
	Questions []string // question ids [DefaultQuestions]
	GoRoot    string   // [go env GOROOT]
	WorkDir   string   // index and run folders [a temporary folder, removed]
	// Depths runs every question at each of these depths (research.Config.Depth) [the default depth only].
	Depths []string
	// FollowUp, when set, is a follow-up question asked after the first question twice: as a fresh run and as a
	// follow-up of the first (research.Config.From), to measure what carrying the earlier run saves.
	FollowUp string
	Log      *slog.Logger
}

// Usage is what one stage (or a whole run) spent.
type Usage struct {
	Stage   string  `json:"stage"`
	Calls   int     `json:"calls"`
	Input   int     `json:"input_tokens"`
	Output  int     `json:"output_tokens"`
	CostUSD float64 `json:"cost_usd"`
}

// QuestionResult is one question's spend and recall.
type QuestionResult struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	// Depth is the depth asked for ("" the default) and Used the one the run used (the planner's triage for
	// auto); Sources is the reads the run made and Budget the token fuse it ran under.
	Depth     string  `json:"depth,omitempty"`
	Used      string  `json:"used,omitempty"`
	Sources   int     `json:"sources_read"`
	Budget    int     `json:"token_budget,omitempty"`
	Stages    []Usage `json:"stages"`
	Total     Usage   `json:"total"`
	Facts     int     `json:"facts"`
	Found     int     `json:"found"`
	Citations int     `json:"citations"`
	// From is the run a follow-up followed ("" for a fresh run); Seconds the run's wall time.
	From    string  `json:"from,omitempty"`
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}

// Result is a whole bench run.
type Result struct {
	PriceModel string           `json:"price_model"`
	Price      llm.Price        `json:"price"`
	Questions  []QuestionResult `json:"questions"`
	Total      Usage            `json:"total"`
}

// stages maps the fake model's roles to the graph's stages, in the order they run.
var stages = []struct{ role, stage string }{
	{openaifake.RolePlanner, research.StageScope},
	{openaifake.RoleSearcher, research.StageSearch},
	{openaifake.RoleAnalyst, research.StageRead},
	{openaifake.RoleVerifier, research.StageVerify},
	{openaifake.RoleSynthesizer, research.StageSynth},
	{openaifake.RoleJudge, "judge"},
}

// Run measures every configured question.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if len(cfg.Questions) == 0 {
		cfg.Questions = DefaultQuestions
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.GoRoot == "" {
		out, err := exec.CommandContext(ctx, "go", "env", "GOROOT").Output()
		if err != nil {
			return nil, fmt.Errorf("token bench: go env GOROOT: %w", err)
		}
		cfg.GoRoot = strings.TrimSpace(string(out))
	}
	if cfg.WorkDir == "" {
		dir, err := os.MkdirTemp("", "deepresearch-tokenbench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		cfg.WorkDir = dir
	}
	all, err := qualitybench.Questions()
	if err != nil {
		return nil, err
	}
	byID := map[string]qualitybench.Question{}
	for _, q := range all {
		byID[q.ID] = q
	}
	ix, err := corpus.Open(filepath.Join(cfg.WorkDir, "index"))
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	if _, err := ix.Add(ctx, filepath.Join(cfg.GoRoot, "doc")); err != nil {
		return nil, fmt.Errorf("token bench: index %s/doc: %w", cfg.GoRoot, err)
	}
	price := catalog.Lookup("openai", PriceModel).Price
	res := &Result{PriceModel: PriceModel, Price: price, Total: Usage{Stage: "total"}}
	for _, id := range cfg.Questions {
		q, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("token bench: no question %q", id)
		}
		depths := cfg.Depths
		if len(depths) == 0 {
			depths = []string{""}
		}
		for _, depth := range depths {
			if err := research.CheckDepth(depth); err != nil {
				return nil, fmt.Errorf("token bench: %w", err)
			}
			qr := runQuestion(ctx, cfg, ix, q, price, depth, "")
			res.add(qr)
		}
	}
	if cfg.FollowUp != "" && len(res.Questions) > 0 {
		first := res.Questions[0]
		q := qualitybench.Question{ID: "follow-up", Question: cfg.FollowUp}
		res.add(runQuestion(ctx, cfg, ix, q, price, first.Depth, ""))
		q.ID = "follow-up-from"
		res.add(runQuestion(ctx, cfg, ix, q, price, first.Depth, filepath.Join(cfg.WorkDir, "runs", runName(first.ID, first.Depth))))
	}
	return res, nil
}

func (r *Result) add(qr QuestionResult) {
	r.Questions = append(r.Questions, qr)
	r.Total.Calls += qr.Total.Calls
	r.Total.Input += qr.Total.Input
	r.Total.Output += qr.Total.Output
	r.Total.CostUSD += qr.Total.CostUSD
}

func runName(id, depth string) string {
	if depth != "" {
		return id + "-" + depth
	}
	return id
}

func runQuestion(ctx context.Context, cfg Config, ix *corpus.Index, q qualitybench.Question, price llm.Price, depth, from string) QuestionResult {
	qr := QuestionResult{ID: q.ID, Question: q.Question, Depth: depth, Facts: len(q.Facts), Total: Usage{Stage: "total"}, From: from}
	name := runName(q.ID, depth)
	start := time.Now()
	srv := openaifake.Start(openaifake.Config{})
	defer srv.Close()
	// The model's window and prices as the catalogue gives them, as deepresearch run would configure it.
	m, err := openai.New(openai.Config{Model: PriceModel, BaseURL: srv.BaseURL(), APIKey: "bench",
		Info: catalog.Lookup("openai", PriceModel).Info})
	if err != nil {
		qr.Error = err.Error()
		return qr
	}
	model := llm.WithRetry(m, llm.RetryConfig{})
	roles := llmroles.New(llmroles.Config{Planner: model, Searcher: model, Analyst: model, Verifier: model,
		Synthesizer: model, Sources: []sources.Searcher{ix}, Logger: cfg.Log})
	rep, err := research.Run(ctx, research.Config{Question: q.Question, Roles: roles, Fetcher: ix, RunID: name,
		OutDir: filepath.Join(cfg.WorkDir, "runs", name), Log: cfg.Log, Depth: depth, From: from})
	qr.Seconds = time.Since(start).Seconds()
	if err != nil {
		qr.Error = err.Error()
	} else {
		qr.Found, _ = qualitybench.FactRecall(rep, q.Facts)
		qr.Citations = len(rep.Citations)
		qr.Used, qr.Sources = rep.Depth, rep.Stats.SourcesRead
		d, _ := research.DepthOf(rep.Depth)
		qr.Budget = d.MaxTokens
	}
	for _, st := range stages {
		u := Usage{Stage: st.stage}
		for _, c := range srv.Calls() {
			if c.Role == st.role {
				u.Calls++
				u.Input += c.PromptTokens
				u.Output += c.CompletionTokens
			}
		}
		if u.Calls == 0 {
			continue
		}
		u.CostUSD = price.Cost(llm.Usage{InputTokens: u.Input, OutputTokens: u.Output})
		qr.Stages = append(qr.Stages, u)
		qr.Total.Calls += u.Calls
		qr.Total.Input += u.Input
		qr.Total.Output += u.Output
		qr.Total.CostUSD += u.CostUSD
	}
	return qr
}

// WriteTable prints the result as a table per question and a total line.
func (r *Result) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "prices of %s: $%.2f / $%.2f per million input / output tokens\n\n", r.PriceModel, r.Price.Input, r.Price.Output)
	fmt.Fprintf(&b, "%-14s %-8s %6s %10s %9s %9s\n", "question", "stage", "calls", "input", "output", "cost")
	for _, q := range r.Questions {
		id := q.ID
		if q.Depth != "" {
			id += "@" + q.Depth
		}
		for _, s := range q.Stages {
			fmt.Fprintf(&b, "%-14s %-8s %6d %10d %9d %9.4f\n", id, s.Stage, s.Calls, s.Input, s.Output, s.CostUSD)
		}
		depth := ""
		if q.Used != "" {
			depth = fmt.Sprintf(", depth %s, %d sources read, %s of %s budget tokens", q.Used, q.Sources,
				lexical.Thousands(q.Total.Input+q.Total.Output), lexical.Thousands(q.Budget))
		}
		fmt.Fprintf(&b, "%-14s %-8s %6d %10d %9d %9.4f   recall %d/%d, %d citations%s, %.1f s%s\n", id, "TOTAL", q.Total.Calls,
			q.Total.Input, q.Total.Output, q.Total.CostUSD, q.Found, q.Facts, q.Citations, depth, q.Seconds, errNote(q.Error))
	}
	fmt.Fprintf(&b, "%-14s %-8s %6d %10d %9d %9.4f\n", "ALL", "", r.Total.Calls, r.Total.Input, r.Total.Output, r.Total.CostUSD)
	_, err := io.WriteString(w, b.String())
	return err
}

func errNote(e string) string {
	if e == "" {
		return ""
	}
	return " — error: " + e
}
