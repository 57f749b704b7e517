package research

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deepresearch/deepresearch/lexical"
)

// ---- ① scope ----

func (r *runner) scope(ctx context.Context) (*Plan, error) {
	var plan Plan
	if ok, err := r.db.Step(ctx, "scope", &plan); err != nil {
		return nil, err
	} else if ok {
		return &plan, nil
	}
	start, t0, c0 := r.stageStart(StageScope, 0)
	sctx, cancel := r.stageCtx(ctx, StageScope)
	defer cancel()
	var got *Plan
	err := r.roleCall(sctx, StageScope, 0, "", "plan", nil, func(ctx context.Context) error {
		p, err := r.cfg.Roles.Planner.Plan(ctx, r.question)
		if err != nil {
			return err
		}
		if p == nil {
			return errors.New("planner returned no plan")
		}
		got = p
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(context.Cause(sctx), errTimeLimit) {
			return nil, fmt.Errorf("research: scope: the time limit of %s was reached before the plan was made: %w", r.rc.Budget.MaxTime, err)
		}
		return nil, fmt.Errorf("research: scope: %w", err)
	}
	p, notes := normalizePlan(got, r.question)
	for _, n := range notes {
		r.logf(ctx, StageScope, 0, "", "plan repaired", n, nil)
	}
	if len(p.SubQuestions) == 0 {
		err := errors.New("the planner produced no sub-questions")
		r.logf(ctx, StageScope, 0, "", "error", "plan", err)
		return nil, fmt.Errorf("research: scope: %w", err)
	}
	if err := r.db.MarkStep(ctx, "scope", p); err != nil {
		return nil, err
	}
	_ = r.db.SetMeta(ctx, "language", p.Language)
	var sqs []string
	for _, sq := range p.SubQuestions {
		sqs = append(sqs, sq.ID+": "+sq.Question)
	}
	r.logf(ctx, StageScope, 0, "", "planned", strings.Join(sqs, "\n"), nil)
	r.emit(Event{Stage: StageScope, Kind: EventPlan, Plan: p, Count: len(p.SubQuestions)})
	r.stageDone(ctx, StageScope, 0, start, t0, c0, fmt.Sprintf("%d sub-questions", len(p.SubQuestions)))
	return p, nil
}

// MaxSubQuestions bounds the search fan-out of a plan.
const MaxSubQuestions = 8

// MaxQueries bounds the search queries of one sub-question, and maxQueryRunes the length of each: a plan is
// model output, and a runaway one must not turn into thousands of searches or megabyte queries.
const (
	MaxQueries    = 8
	maxQueryRunes = 300
)

// normalizePlan makes a plan usable: ids unique and present, queries present, language set, at most
// MaxSubQuestions. It returns what it changed.
func normalizePlan(in *Plan, question string) (*Plan, []string) {
	p := *in
	var notes []string
	p.Question = question
	if p.Language == "" {
		p.Language = lexical.Language(question)
	}
	seen := map[string]bool{}
	var sqs []SubQuestion
	for i, sq := range in.SubQuestions {
		sq.Question = strings.TrimSpace(sq.Question)
		if sq.Question == "" {
			notes = append(notes, fmt.Sprintf("sub-question %d has no text; dropped", i+1))
			continue
		}
		if sq.ID == "" || seen[sq.ID] {
			id := fmt.Sprintf("q%d", len(sqs)+1)
			for seen[id] {
				id += "x"
			}
			notes = append(notes, fmt.Sprintf("sub-question %q had id %q; now %s", sq.Question, sq.ID, id))
			sq.ID = id
		}
		seen[sq.ID] = true
		sq.Question = lexical.Clip(sq.Question, MaxQuestionRunes)
		var qs []string
		for _, q := range sq.Queries {
			if q = strings.TrimSpace(q); q != "" && len(qs) < MaxQueries {
				qs = append(qs, lexical.Clip(q, maxQueryRunes))
			}
		}
		if len(sq.Queries) > MaxQueries {
			notes = append(notes, fmt.Sprintf("%s: %d queries trimmed to %d", sq.ID, len(sq.Queries), MaxQueries))
		}
		if len(qs) == 0 {
			qs = []string{sq.Question}
			notes = append(notes, fmt.Sprintf("%s had no queries; searching its text", sq.ID))
		}
		sq.Queries = qs
		sqs = append(sqs, sq)
	}
	if len(sqs) > MaxSubQuestions {
		notes = append(notes, fmt.Sprintf("%d sub-questions trimmed to %d", len(sqs), MaxSubQuestions))
		sqs = sqs[:MaxSubQuestions]
	}
	p.SubQuestions = sqs
	return &p, notes
}
