package request

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
)

func TestValidate(t *testing.T) {
	ok := Research{Question: "Why?", Corpora: []string{"/docs"}}
	tests := []struct {
		name string
		edit func(*Research)
		want string // "" means valid
	}{
		{"valid", func(*Research) {}, ""},
		{"empty question", func(r *Research) { r.Question = "  " }, "question is empty"},
		{"resume needs no question", func(r *Research) { r.Question, r.ResumeDir = "", "/runs/x" }, ""},
		{"NaN cost", func(r *Research) { r.Budget.MaxCostUSD = math.NaN() }, "cost limit"},
		{"infinite cost", func(r *Research) { r.Budget.MaxCostUSD = math.Inf(1) }, "cost limit"},
		{"negative cost", func(r *Research) { r.Budget.MaxCostUSD = -1 }, "cost limit"},
		{"negative time", func(r *Research) { r.Budget.MaxTime = -time.Second }, "time limit"},
		{"negative candidates", func(r *Research) { r.MaxCandidates = -3 }, "max candidates"},
		{"too many corpora", func(r *Research) { r.Corpora = make([]string, MaxCorpora+1) }, "corpus folders"},
		{"blank corpus", func(r *Research) { r.Corpora = []string{" "} }, "empty corpus path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.edit(&r)
			err := r.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, research.ErrBadInput) {
				t.Fatalf("got %v, want an ErrBadInput saying %q", err, tc.want)
			}
		})
	}
}

// The configuration fills what a request leaves zero, and only that; a request naming any source replaces all
// the configured ones.
func TestResolveFillsFromConfiguration(t *testing.T) {
	cfg := &config.Config{}
	cfg.Sources.Web, cfg.Sources.Corpus, cfg.MCPFile = "searxng", []string{"/docs"}, "/x/.mcp.json"
	cfg.Research = config.Research{Rounds: 3, MaxCostUSD: 2, MaxTokens: 1000, MaxTime: time.Minute, MaxCandidates: 9, Concurrency: 5, MaxCalls: 50}
	b := &Builder{Config: cfg}

	r, err := b.Resolve(Research{Question: "Why?"})
	if err != nil {
		t.Fatal(err)
	}
	want := research.Budget{MaxCostUSD: 2, MaxTokens: 1000, MaxTime: time.Minute, Concurrency: 5, MaxCalls: 50}
	if r.Web != "searxng" || len(r.Corpora) != 1 || r.Corpora[0] != "/docs" || r.MCPFile != "/x/.mcp.json" ||
		r.Budget != want || r.Rounds != 3 || r.MaxCandidates != 9 || r.Engine != "extractive" {
		t.Fatalf("resolved %+v", r)
	}

	r, err = b.Resolve(Research{Question: "Why?", Web: "brave", Rounds: -1, Budget: research.Budget{MaxCostUSD: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Web != "brave" || len(r.Corpora) != 0 || r.MCPFile != "" || r.Rounds != -1 || r.Budget.MaxCostUSD != 0.5 || r.Budget.MaxTokens != 1000 {
		t.Fatalf("resolved %+v", r)
	}

	if _, err := b.Resolve(Research{Question: "Why?", Engine: "llm"}); err == nil || !strings.Contains(err.Error(), "needs a model") {
		t.Fatalf("llm engine with no model: %v", err)
	}
	if _, err := (&Builder{Config: &config.Config{}}).Resolve(Research{Question: "Why?"}); err == nil || !strings.Contains(err.Error(), "no sources") {
		t.Fatalf("no sources: %v", err)
	}
}

type pricedModel struct{ info llm.Info }

func (m pricedModel) Info() llm.Info { return m.info }
func (m pricedModel) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	return nil, errors.New("not called")
}

func TestUnpricedModelUnderACostFuseIsWarnedAbout(t *testing.T) {
	priced := pricedModel{llm.Info{Name: "gpt-4.1", Price: llm.Price{Input: 2, Output: 8}}}
	local := pricedModel{llm.Info{Name: "qwen3:8b"}}
	for _, tc := range []struct {
		name   string
		models []llm.Model
		budget research.Budget
		want   []string // "" entries: no warning
	}{
		{"priced", []llm.Model{priced, priced}, research.Budget{MaxCostUSD: 1}, nil},
		{"no cost fuse", []llm.Model{local}, research.Budget{}, nil},
		{"unpriced, no token fuse", []llm.Model{priced, local, local}, research.Budget{MaxCostUSD: 1},
			[]string{"cannot price model qwen3:8b", "no token fuse is set"}},
		{"unpriced, token fuse", []llm.Model{local}, research.Budget{MaxCostUSD: 1, MaxTokens: 50_000},
			[]string{"the token fuse of 50000 tokens still applies"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w strings.Builder
			(&Builder{Warn: &w}).warnUnpriced(tc.models, tc.budget)
			if len(tc.want) == 0 && w.Len() > 0 {
				t.Fatalf("unexpected warning %q", w.String())
			}
			for _, s := range tc.want {
				if !strings.Contains(w.String(), s) {
					t.Errorf("warning %q lacks %q", w.String(), s)
				}
			}
			if strings.Count(w.String(), "warning:") > 1 {
				t.Errorf("one model warned about twice: %q", w.String())
			}
		})
	}
}

// A request gets a run id in one place: its own is kept, a folder's name is left to the folder, and a request
// naming neither gets a fresh one each time.
func TestNamedGivesARunIDOnce(t *testing.T) {
	if got := (Research{RunID: "mine"}).Named().RunID; got != "mine" {
		t.Errorf("own id became %q", got)
	}
	for _, r := range []Research{{OutDir: "/runs/x"}, {ResumeDir: "/runs/y"}} {
		if got := r.Named().RunID; got != "" {
			t.Errorf("%+v named %q: the folder names the run", r, got)
		}
	}
	a, b := Research{}.Named().RunID, Research{}.Named().RunID
	if a == "" || a == b {
		t.Errorf("fresh ids %q and %q", a, b)
	}
}
