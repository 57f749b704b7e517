// Command skeleton is the five-stage research workflow in ~30 lines — scope, parallel search, read, adversarial
// verify, synthesize — written in Go with the research package's primitives: FanOut (a bounded parallel fan-out in
// which one failure never cancels the others), Loop (a convergent loop capped at a number of rounds) and Fleet (the
// global bound on concurrent and total agent calls), and llmroles.RunRole, the typed-answer primitive (run an
// agent for a role; its answer is repaired if malformed, validated against the JSON Schema of the Go type, and
// asked for again when it does not fit).
//
// It runs offline on a scripted model (see model.go); swap in a real llm.Model per tier to use it for real.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/llmroles"
)

type plan struct {
	Queries []string `json:"queries"`
}

type evidence struct {
	Claim  string `json:"claim"`
	Quote  string `json:"quote"`
	Source string `json:"source"`
}

type verdict struct {
	Pass bool     `json:"pass"`
	Gaps []string `json:"gaps"`
}

type report struct {
	Markdown string `json:"markdown"`
}

// deepResearch is the whole workflow: plan, then up to three rounds of parallel search+extract and
// adversarial verification, then a cited synthesis.
func deepResearch(ctx context.Context, strong, mid llm.Model, question string) (string, error) {
	fleet := research.NewFleet(16, 1000) // 16 concurrent, 1,000 per run
	role := func(name string, m llm.Model) llmroles.RoleSpec {
		return llmroles.RoleSpec{Name: name, Model: m, Fleet: fleet}
	}
	// ① Scope: split the question into sub-questions with search terms (strong model).
	p, err := llmroles.RunRole[plan](ctx, role("planner", strong), "Split into 3-5 sub-questions with queries: "+question)
	if err != nil {
		return "", err
	}
	var pool []evidence
	_, _, err = research.Loop(ctx, 3, func(ctx context.Context, round int) (bool, error) { // convergent loop
		// ②+③ Search and extract, fused into one fan-out layer (mid model).
		found, errs := research.FanOut(ctx, p.Queries, 8, func(ctx context.Context, q string) ([]evidence, error) {
			return llmroles.RunRole[[]evidence](ctx, role("searcher", mid), "Search and extract evidence about: "+q)
		})
		for i := range found {
			if errs[i] == nil { // fan-in clean-up: failed branches are dropped, the others kept
				pool = append(pool, found[i]...)
			}
		}
		// ④ Adversarial verify: one strong verifier with the whole pool.
		b, _ := json.Marshal(pool)
		v, err := llmroles.RunRole[verdict](ctx, role("verifier", strong), "You are an independent verifier. Find gaps. Pool: "+string(b))
		if err != nil {
			return false, err
		}
		p.Queries = v.Gaps // directed re-search: the gaps become the next queries
		return v.Pass, nil
	})
	if err != nil {
		return "", err
	}
	// ⑤ Synthesize with citations (strong model).
	b, _ := json.Marshal(pool)
	r, err := llmroles.RunRole[report](ctx, role("synthesizer", strong), "Write the report; cite every conclusion's source. Evidence: "+string(b))
	return r.Markdown, err
}

func run(ctx context.Context, w io.Writer) error {
	m := offlineModel()
	md, err := deepResearch(ctx, m, m, "Why do Go programs use channels?")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, md)
	return err
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
