package research

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/base/runfolder"
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
	req := r.planRequest()
	earlier, err := r.planEarlier(ctx)
	if err != nil {
		return nil, fmt.Errorf("research: scope: %w", err)
	}
	req.Earlier = earlier
	var got *Plan
	given := r.cfg.Plan != nil
	if given {
		cp := *r.cfg.Plan
		cp.SubQuestions = append([]SubQuestion(nil), r.cfg.Plan.SubQuestions...)
		got = &cp
		r.logf(ctx, StageScope, 0, "", "plan given", fmt.Sprintf("%d sub-questions, not asked of the planner", len(got.SubQuestions)), nil)
	} else {
		if err := r.clarify(sctx, &req); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("research: scope: %w", err)
		}
		err := r.roleCall(sctx, StageScope, 0, "", "plan", nil, func(ctx context.Context) error {
			var p *Plan
			var err error
			if rp, ok := r.cfg.Roles.Planner.(RequestPlanner); ok {
				p, err = rp.PlanRequest(ctx, req)
			} else {
				p, err = r.cfg.Roles.Planner.Plan(ctx, r.question)
			}
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
	}
	d, why := resolveDepth(r.given.Depth, got.Depth, got.DepthReason)
	if given && r.given.Depth == DepthAuto {
		if fd, ok := DepthOf(strings.ToLower(strings.TrimSpace(got.Depth))); ok && got.Depth != "" {
			d, why = fd, "named by the plan file"
		} else {
			why = "auto: a given plan is not triaged, so standard"
		}
	}
	lim := d
	if given {
		lim = personLimits(d) // the person's own sub-questions are not trimmed to the depth's range
	}
	p, notes := normalizePlan(got, r.question, lim)
	p.Depth, p.DepthReason = d.Name, why
	for _, n := range notes {
		r.logf(ctx, StageScope, 0, "", "plan repaired", n, nil)
	}
	if len(p.SubQuestions) == 0 {
		err := errors.New("the planner produced no sub-questions")
		if given {
			err = errors.New("the plan given has no sub-questions")
		}
		r.logf(ctx, StageScope, 0, "", "error", "plan", err)
		return nil, fmt.Errorf("research: scope: %w", err)
	}
	if r.cfg.ReviewPlan != nil {
		reviewed, err := r.review(sctx, p, d)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("research: plan review: %w", err)
		}
		p = reviewed
	}
	r.logf(ctx, StageScope, 0, "", "depth", d.Name+": "+why, nil)
	if err := r.carry(ctx, p); err != nil {
		return nil, fmt.Errorf("research: follow-up: %w", err)
	}
	if err := r.db.MarkStep(ctx, "scope", p); err != nil {
		return nil, err
	}
	_ = r.db.SetMeta(ctx, "language", p.Language)
	r.savePlanFile(ctx, p)
	var sqs []string
	for _, sq := range p.SubQuestions {
		sqs = append(sqs, sq.ID+": "+sq.Question)
	}
	r.logf(ctx, StageScope, 0, "", "planned", strings.Join(sqs, "\n"), nil)
	r.emit(Event{Stage: StageScope, Kind: EventPlan, Plan: p, Count: len(p.SubQuestions)})
	r.stageDone(ctx, StageScope, 0, start, t0, c0, fmt.Sprintf("%d sub-questions, %s depth", len(p.SubQuestions), d.Name))
	return p, nil
}

// planRequest is what the planner is asked, from the run's configuration.
func (r *runner) planRequest() PlanRequest {
	req := PlanRequest{Question: r.question, Depth: r.given.Depth, Instructions: r.rc.Instructions}
	req.Words, _ = LengthWords(r.rc.Length)
	if req.Depth != DepthAuto {
		d, _ := DepthOf(req.Depth)
		req.Depth = d.Name
		req.MinSubQuestions, req.MaxSubQuestions, req.MaxQueries = d.MinSubQuestions, d.MaxSubQuestions, d.Queries
	}
	return req
}

// review shows the plan to Config.ReviewPlan and checks what comes back as a planner's plan is checked. The
// depth stays the one settled: the review edits the plan, not the depth's limits.
func (r *runner) review(ctx context.Context, p *Plan, d DepthSettings) (*Plan, error) {
	shown := *p
	shown.SubQuestions = append([]SubQuestion(nil), p.SubQuestions...)
	edited, err := r.cfg.ReviewPlan(ctx, &shown)
	if err != nil {
		r.logf(ctx, StageScope, 0, "", "plan review", "the review ended the run", err)
		return nil, err
	}
	if edited == nil {
		edited = p
	}
	out, notes := normalizePlan(edited, r.question, personLimits(d))
	out.Depth, out.DepthReason = p.Depth, p.DepthReason
	for _, n := range notes {
		r.logf(ctx, StageScope, 0, "", "plan repaired", "after review: "+n, nil)
	}
	if len(out.SubQuestions) == 0 {
		return nil, errors.New("the reviewed plan has no sub-questions")
	}
	r.logf(ctx, StageScope, 0, "", "plan reviewed", planChanges(p, out), nil)
	return out, nil
}

// personLimits are the limits of a plan a person wrote or edited: the graph's, not the depth's range.
func personLimits(d DepthSettings) DepthSettings {
	d.MaxSubQuestions, d.Queries = MaxSubQuestions, MaxQueries
	return d
}

// savePlanFile writes the plan to the run folder as plan.yaml, for the person to edit and reuse (run --plan).
func (r *runner) savePlanFile(ctx context.Context, p *Plan) {
	b, err := MarshalPlan(p)
	if err == nil {
		err = runfolder.WriteFile(r.dir, PlanFile, b)
	}
	if err != nil {
		r.logf(ctx, StageScope, 0, "", "error", "write "+PlanFile, err)
	}
}

// maxClarificationRunes bounds one clarifying question, MaxAnswerRunes one answer (a longer one is clipped).
const (
	maxClarificationRunes = 300
	MaxAnswerRunes        = 1000
)

// ErrUnanswered is what a Config.Clarify returns (wrapped, saying why) when the person gave no answers in the
// time it waits: the run plans without answers and says so in the research log and its events, instead of
// failing.
var ErrUnanswered = errors.New("the clarifying questions were not answered")

// CleanAnswer is an answer as the planner and the log get it, whichever surface took it: invalid UTF-8 and
// control characters dropped (line breaks and tabs become spaces), white space collapsed, at most MaxAnswerRunes
// characters.
func CleanAnswer(a string) string {
	a = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unicode.IsControl(r) || r == utf8.RuneError:
			return -1
		}
		return r
	}, a)
	return lexical.Clip(lexical.NormalizeSpace(a), MaxAnswerRunes)
}

// clarify lets a Clarifier planner ask the person about an ambiguous question before it plans, when the
// surface can ask (Config.Clarify). At most MaxClarifications questions are put, each clipped; a planner that
// fails to clarify is logged and the run plans without. The questions and answers go to the research log and
// into the plan request.
func (r *runner) clarify(ctx context.Context, req *PlanRequest) error {
	c, ok := r.cfg.Roles.Planner.(Clarifier)
	if r.cfg.Clarify == nil || !ok {
		return nil
	}
	var asked []string
	err := r.roleCall(ctx, StageScope, 0, "", "clarify", nil, func(ctx context.Context) error {
		qs, err := c.Clarify(ctx, *req)
		asked = qs
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.logf(ctx, StageScope, 0, "", "clarify failed", "planning without clarifying questions", err)
		return nil
	}
	var qs []string
	seen := map[string]bool{}
	for _, q := range asked {
		q = lexical.Clip(lexical.NormalizeSpace(q), maxClarificationRunes)
		if q == "" || seen[strings.ToLower(q)] || CheckQuestion(q) != nil {
			continue
		}
		seen[strings.ToLower(q)] = true
		qs = append(qs, q)
	}
	if len(qs) > MaxClarifications {
		r.logf(ctx, StageScope, 0, "", "clarify", fmt.Sprintf("the planner asked %d questions; the first %d are put", len(qs), MaxClarifications), nil)
		qs = qs[:MaxClarifications]
	}
	if len(qs) == 0 {
		r.logf(ctx, StageScope, 0, "", "clarify", "the question is clear: nothing to ask", nil)
		return nil
	}
	r.emit(Event{Stage: StageScope, Kind: EventClarify, Count: len(qs), Message: strings.Join(qs, "\n")})
	answers, err := r.cfg.Clarify(ctx, qs)
	if errors.Is(err, ErrUnanswered) && ctx.Err() == nil {
		r.logf(ctx, StageScope, 0, "", "clarify unanswered", err.Error()+"; planning without answers", nil)
		r.emit(Event{Stage: StageScope, Kind: EventUnanswered, Message: err.Error() + "; planning without answers"})
		answers, err = nil, nil
	}
	if err != nil {
		return fmt.Errorf("clarifying questions: %w", err)
	}
	for i, q := range qs {
		a := ""
		if i < len(answers) {
			a = CleanAnswer(answers[i])
		}
		req.Clarifications = append(req.Clarifications, Clarification{Question: q, Answer: a})
		shown := a
		if shown == "" {
			shown = "(no answer)"
		}
		r.logf(ctx, StageScope, 0, "", "clarified", q+" → "+shown, nil)
	}
	return nil
}

// planChanges says what a review changed, for the research log.
func planChanges(before, after *Plan) string {
	was := map[string]bool{}
	for _, sq := range before.SubQuestions {
		was[sq.Question] = true
	}
	now := map[string]bool{}
	added := 0
	for _, sq := range after.SubQuestions {
		now[sq.Question] = true
		if !was[sq.Question] {
			added++
		}
	}
	dropped := 0
	for _, sq := range before.SubQuestions {
		if !now[sq.Question] {
			dropped++
		}
	}
	if added == 0 && dropped == 0 {
		return fmt.Sprintf("accepted: %d sub-questions", len(after.SubQuestions))
	}
	return fmt.Sprintf("%d sub-questions: %d new or reworded, %d dropped or reworded", len(after.SubQuestions), added, dropped)
}

// MaxSubQuestions bounds the search fan-out of a plan.
const MaxSubQuestions = 8

// MaxQueries bounds the search queries of one sub-question, and maxQueryRunes the length of each: a plan is
// model output, and a runaway one must not turn into thousands of searches or megabyte queries.
const (
	MaxQueries    = 8
	maxQueryRunes = 300
)

// normalizePlan makes a plan usable: ids unique and present, queries present (at most the depth's), language
// set, at most the depth's sub-questions (and never more than MaxSubQuestions). It returns what it changed.
func normalizePlan(in *Plan, question string, d DepthSettings) (*Plan, []string) {
	maxSQ, maxQ := min(max(d.MaxSubQuestions, 1), MaxSubQuestions), min(max(d.Queries, 1), MaxQueries)
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
			if q = strings.TrimSpace(q); q != "" && len(qs) < maxQ {
				qs = append(qs, lexical.Clip(q, maxQueryRunes))
			}
		}
		if len(sq.Queries) > maxQ {
			notes = append(notes, fmt.Sprintf("%s: %d queries trimmed to %d", sq.ID, len(sq.Queries), maxQ))
		}
		if len(qs) == 0 {
			qs = []string{sq.Question}
			notes = append(notes, fmt.Sprintf("%s had no queries; searching its text", sq.ID))
		}
		sq.Queries = qs
		sqs = append(sqs, sq)
	}
	if len(sqs) > maxSQ {
		notes = append(notes, fmt.Sprintf("%d sub-questions trimmed to %d (%s depth)", len(sqs), maxSQ, d.Name))
		sqs = sqs[:maxSQ]
	}
	p.SubQuestions = sqs
	return &p, notes
}
