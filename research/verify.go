package research

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/deepresearch/deepresearch/research/state"
)

// ---- ④ verify ----

func (r *runner) verify(ctx context.Context, round int) (*Verdict, error) {
	name := fmt.Sprintf("verify:r%d", round)
	var v Verdict
	if ok, err := r.db.Step(ctx, name, &v); err != nil {
		return nil, err
	} else if ok {
		return &v, nil
	}
	if r.depth.SkipVerify {
		// A quick question is settled by a source or two: the integrity and support checks still decide what
		// is published, and there is no re-search round for the verifier's gaps to start.
		r.logf(ctx, StageVerify, round, "", "skipped", r.depth.Name+" depth: no adversarial verification", nil)
		return nil, nil
	}
	start, t0, c0 := r.stageStart(StageVerify, round)
	sctx, cancel := r.stageCtx(ctx, StageVerify)
	defer cancel()
	pool, err := r.pool(ctx, StatusAccepted)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	plan := r.plan
	r.mu.Unlock()
	var got *Verdict
	err = r.roleCall(sctx, StageVerify, round, "", "verify", nil, func(ctx context.Context) error {
		v, err := r.cfg.Roles.Verifier.Verify(ctx, plan, pool)
		if err == nil && v == nil {
			err = errors.New("verifier returned no verdict")
		}
		got = v
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, errFuse) {
			return nil, nil
		}
		reason := fmt.Sprintf("verification failed in round %d: %v", round, err)
		r.noteCutShort(reason)
		_ = r.stageEnded(ctx, sctx, StageVerify, round)
		return nil, nil
	}
	// Apply rejections: only ids in the accepted pool; anything else is logged, not guessed at.
	inPool := map[string]bool{}
	for _, e := range pool {
		inPool[e.ID] = true
	}
	rejected := 0
	for _, rj := range got.Rejected {
		if !inPool[rj.EvidenceID] {
			r.logf(ctx, StageVerify, round, "", "ignored", fmt.Sprintf("rejection of unknown evidence %q: %s", rj.EvidenceID, rj.Reason), nil)
			continue
		}
		reason := strings.TrimSpace(rj.Reason)
		if reason == "" {
			reason = "rejected by the verifier"
		}
		if err := r.db.SetEvidenceStatus(ctx, rj.EvidenceID, StatusRejected, reason); err != nil {
			return nil, err
		}
		inPool[rj.EvidenceID] = false
		rejected++
		r.logf(ctx, StageVerify, round, "", "rejected", rj.EvidenceID+": "+reason, nil)
	}
	r.update(func(p *Progress) { p.Evidence -= rejected; p.Rejected += rejected })
	if err := r.db.MarkStep(ctx, name, got); err != nil {
		return nil, err
	}
	if err := writeJSONAtomic(filepath.Join(r.dir, fmt.Sprintf("verdict.round%d.json", round)), got); err != nil {
		return nil, err
	}
	var gaps []string
	for _, g := range got.Gaps {
		gaps = append(gaps, g.SubQuestion+": "+g.Missing)
	}
	decision := "pass"
	if !got.Pass {
		decision = "gaps"
	}
	r.logf(ctx, StageVerify, round, "", decision, fmt.Sprintf("%d rejected, %d conflicts. %s", rejected, len(got.Conflicts), got.Notes), nil,
		func(e *state.LogEntry) { e.Gaps = gaps })
	r.emit(Event{Stage: StageVerify, Kind: EventVerdict, Round: round, Verdict: got, Count: len(got.Gaps)})
	r.stageDone(ctx, StageVerify, round, start, t0, c0, decision)
	return got, nil
}

// gapTargets routes the verifier's gaps back to search: only the sub-questions named, with the suggested
// queries.
func (r *runner) gapTargets(ctx context.Context, round int, v *Verdict) []target {
	r.mu.Lock()
	plan := r.plan
	r.mu.Unlock()
	byID := map[string]int{}
	for i, sq := range plan.SubQuestions {
		byID[sq.ID] = i
		byID[strings.ToLower(strings.TrimSpace(sq.Question))] = i
	}
	var out []target
	at := map[int]int{}
	for _, g := range v.Gaps {
		i, ok := byID[strings.TrimSpace(g.SubQuestion)]
		if !ok {
			i, ok = byID[strings.ToLower(strings.TrimSpace(g.SubQuestion))]
		}
		if !ok {
			r.logf(ctx, StageVerify, round, "", "ignored", fmt.Sprintf("gap for unknown sub-question %q: %s", g.SubQuestion, g.Missing), nil)
			continue
		}
		var qs []string
		for _, q := range g.Queries {
			if q = strings.TrimSpace(q); q != "" {
				qs = append(qs, q)
			}
		}
		if len(qs) == 0 && strings.TrimSpace(g.Missing) != "" {
			qs = []string{strings.TrimSpace(g.Missing)}
		}
		if len(qs) == 0 {
			qs = plan.SubQuestions[i].Queries
		}
		if j, ok := at[i]; ok {
			out[j].queries = append(out[j].queries, qs...)
			continue
		}
		at[i] = len(out)
		out = append(out, target{sq: plan.SubQuestions[i], queries: qs})
	}
	for _, t := range out {
		r.logf(ctx, StageVerify, round, t.sq.ID, "re-search", strings.Join(t.queries, " | "), nil)
	}
	return out
}

func (r *runner) pool(ctx context.Context, status string) ([]Evidence, error) {
	rows, err := r.db.Evidence(ctx, status)
	if err != nil {
		return nil, err
	}
	out := make([]Evidence, len(rows))
	for i, e := range rows {
		out[i] = fromState(e)
	}
	return out, nil
}

func (r *runner) snapshotEvidence(ctx context.Context, round int) {
	pool, err := r.pool(ctx, "")
	if err != nil {
		r.log.Error("snapshot", "err", err)
		return
	}
	if pool == nil {
		pool = []Evidence{}
	}
	if err := writeJSONAtomic(filepath.Join(r.dir, fmt.Sprintf("evidence.round%d.json", round)), pool); err != nil {
		r.log.Error("snapshot", "err", err)
	}
}

func toState(e Evidence) state.Evidence {
	return state.Evidence{ID: e.ID, SubQuestion: e.SubQuestion, Claim: e.Claim, Quote: e.Quote, Source: e.Source,
		Title: e.Title, Confidence: e.Confidence, Round: e.Round, Status: e.Status, Reason: e.Reason}
}

func fromState(e state.Evidence) Evidence {
	return Evidence{ID: e.ID, SubQuestion: e.SubQuestion, Claim: e.Claim, Quote: e.Quote, Source: e.Source,
		Title: e.Title, Confidence: e.Confidence, Round: e.Round, Status: e.Status, Reason: e.Reason}
}
