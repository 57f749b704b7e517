package research

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources"
)

func (r *runner) saturated(sq string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	nv := r.novelty[sq]
	return nv != nil && nv.saturated
}

func analysisStep(sq, u string) string { return "analysis:" + sq + ":" + sources.NormalizeURL(u) }

// readStep is one read: fetch the source (once per run) and have the analyst read it for its sub-question. What
// the analyst found is stored under the read's analysis key, so a read run again (a retry, a second delivery)
// returns it without a second model call; it enters the pool through admitStep.
func (r *runner) readStep(ctx context.Context, round int, c Candidate) (Reading, error) {
	name := readStep(c.SubQuestion, c.URL)
	if done, err := r.db.Step(ctx, name, nil); err != nil {
		return Reading{}, storeErr(ctx, err)
	} else if done {
		return Reading{Skipped: "done"}, nil
	}
	var items []Evidence
	if done, err := r.db.Step(ctx, analysisStep(c.SubQuestion, c.URL), &items); err != nil {
		return Reading{}, storeErr(ctx, err)
	} else if done {
		return Reading{Items: items}, nil
	}
	skip := func(why string) (Reading, error) {
		r.update(func(p *Progress) { p.ReadsPending = max(p.ReadsPending-1, 0) })
		return Reading{Skipped: why}, nil
	}
	if r.saturated(c.SubQuestion) {
		r.emit(Event{Stage: StageRead, Kind: EventSkip, Round: round, SubQuestion: c.SubQuestion, URL: c.URL,
			Message: "not read: early stop"})
		r.logf(ctx, StageRead, round, c.SubQuestion, "skipped", "early stop: "+c.URL, nil)
		return skip("early stop")
	}
	if err := ctx.Err(); err != nil {
		return Reading{}, err
	}
	sq := r.subQuestion(c.SubQuestion)
	gate := func() error {
		if err := r.checkFuse(StageRead); err != nil {
			return err
		}
		if r.saturated(c.SubQuestion) {
			return errSaturated
		}
		return nil
	}
	var partial error
	err := r.roleCall(ctx, StageRead, round, c.SubQuestion, "read "+c.URL, gate, func(ctx context.Context) error {
		doc, err := r.document(ctx, c.URL)
		if err != nil {
			if errors.Is(err, ErrStateStore) {
				return err // the source was read; storing it failed: the step is run again
			}
			return &permanentError{err}
		}
		// The document is fetched once per run; the analyst reads it at this candidate's URL (its line anchor
		// names the passage the search found), not at whichever URL fetched it first.
		at := *doc.doc
		at.URL = c.URL
		items, err = r.cfg.Roles.Analyst.Analyze(ctx, sq, &at)
		if err != nil && len(items) > 0 && ctx.Err() == nil {
			partial = err // some windows failed: keep what the others found rather than read it all again
			return nil
		}
		return err
	})
	if partial != nil {
		r.logf(ctx, StageRead, round, c.SubQuestion, "partial error", "read "+c.URL, partial)
		r.emit(Event{Stage: StageRead, Kind: EventError, Round: round, SubQuestion: c.SubQuestion, URL: c.URL,
			Message: "read in part", Err: partial.Error()})
	}
	switch {
	case errors.Is(err, errFuse):
		r.emit(Event{Stage: StageRead, Kind: EventSkip, Round: round, SubQuestion: c.SubQuestion, URL: c.URL,
			Message: "not read: cut short"})
		return skip("cut short")
	case errors.Is(err, errSaturated):
		r.emit(Event{Stage: StageRead, Kind: EventSkip, Round: round, SubQuestion: c.SubQuestion, URL: c.URL,
			Message: "not read: early stop"})
		r.logf(ctx, StageRead, round, c.SubQuestion, "skipped", "early stop: "+c.URL, nil)
		return skip("early stop")
	case err != nil:
		if ctx.Err() != nil || isContextErr(err) || errors.Is(err, ErrStateStore) {
			return Reading{}, err
		}
		// Not read again in a later round, for this or any sub-question.
		_ = r.db.MarkStep(ctx, unreadableStep(c.URL), map[string]string{"error": lexical.Clip(r.scrub.Scrub(err.Error()), 300)})
		return skip("failed") // logged and emitted by roleCall
	}
	if items == nil {
		items = []Evidence{}
	}
	if err := r.db.MarkStep(ctx, analysisStep(c.SubQuestion, c.URL), items); err != nil {
		return Reading{}, storeErr(ctx, err)
	}
	return Reading{Items: items}, nil
}

// admitStep grounds a read's items and writes them to the pool, then marks the read done. Reads are admitted in
// candidate order; a sub-question saturated by the reads before this one takes none. Admitting again (a retry)
// adds nothing twice: evidence is unique per (source, quote).
func (r *runner) admitStep(ctx context.Context, round int, c Candidate, rd Reading) (Admission, error) {
	defer r.update(func(p *Progress) { p.ReadsPending = max(p.ReadsPending-1, 0) })
	name := readStep(c.SubQuestion, c.URL)
	if done, err := r.db.Step(ctx, name, nil); err != nil || done {
		return Admission{}, storeErr(ctx, err)
	}
	// A sub-question the reads before this one saturated takes nothing from it, and the read counts as not made,
	// exactly as when early stop was known before it started: which of the two happened depends on timing, and
	// the report must not.
	if r.saturated(c.SubQuestion) {
		r.emit(Event{Stage: StageRead, Kind: EventSkip, Round: round, SubQuestion: c.SubQuestion, URL: c.URL,
			Message: "not read: early stop"})
		r.logf(ctx, StageRead, round, c.SubQuestion, "skipped", "early stop: "+c.URL, nil)
		return Admission{}, nil
	}
	items := rd.Items
	doc, err := r.document(ctx, c.URL)
	if err != nil {
		// The read stored its document; not finding it now is the store's failure.
		return Admission{}, storeErr(ctx, fmt.Errorf("research: admit %s: %w", c.URL, err))
	}
	// The read's evidence, its log rows and its step marker commit together: one commit per read, while the next
	// read waits for its turn.
	accepted, err := r.admit(ctx, round, c, doc, items, func(b *state.Batch, accepted int) error {
		r.logTo(b, StageRead, round, c.SubQuestion, "read", fmt.Sprintf("%s: %d items, %d accepted", c.URL, len(items), accepted), nil)
		return b.MarkStep(name, map[string]int{"evidence": accepted, "items": len(items)})
	})
	if err != nil {
		return Admission{}, storeErr(ctx, err)
	}
	r.update(func(p *Progress) { p.SourcesRead++ })
	r.emit(Event{Stage: StageRead, Kind: EventRead, Round: round, SubQuestion: c.SubQuestion, URL: c.URL, Count: accepted})
	return Admission{Accepted: accepted}, nil
}

func earlyStopStep(round int, sq string) string { return fmt.Sprintf("earlystop:r%d:%s", round, sq) }

var errSaturated = errors.New("early stop")

func unreadableStep(u string) string { return "unreadable:" + documentKey(u) }

func (r *runner) subQuestion(id string) SubQuestion {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sq := range r.plan.SubQuestions {
		if sq.ID == id {
			return sq
		}
	}
	return SubQuestion{ID: id}
}

// admit grounds each item against the text that was read and writes the grounded ones to the pool. Every
// item's anchor is computed here, never taken from the analyst or the search hit: a file:// source is cited by
// the lines where its quote stands in the text read (file:///x#L17-L18), any other source by its URL (the
// report links the stored text's lines). So evidence is one item per (document, normalised quote), whichever
// sub-question, hit chunk or round found it.
//
// The items and their log rows are written in one batch, and with them what done queues once it knows how many
// items were new to the pool: one commit for the read, not one per row. Nothing of it is written when the commit
// fails.
func (r *runner) admit(ctx context.Context, round int, c Candidate, doc *docEntry, items []Evidence,
	done func(b *state.Batch, accepted int) error) (int, error) {
	b := r.db.Batch()
	type queued struct {
		it  Evidence
		res state.AddedEvidence
	}
	var grounded []*queued
	for _, it := range items {
		it.SubQuestion = c.SubQuestion
		it.Source = c.URL
		if it.Title == "" {
			it.Title = doc.doc.Title
		}
		if it.Title == "" {
			it.Title = c.Title
		}
		it.Round = round
		it.Status = StatusAccepted
		it.Reason = ""
		first, last, ok := doc.idx.QuoteLines(doc.doc.Text, it.Quote)
		if !ok {
			r.logTo(b, StageRead, round, c.SubQuestion, "ungrounded",
				fmt.Sprintf("quote not found verbatim in %s: %q", c.URL, lexical.Clip(it.Quote, 200)), nil)
			cp := it
			r.emit(Event{Stage: StageRead, Kind: EventUngrounded, Round: round, SubQuestion: c.SubQuestion, URL: c.URL,
				Evidence: &cp, Message: "quote not found in the source text"})
			continue
		}
		if why := publish.InstructionLike(it.Quote); why != "" {
			// Sources are data: a quote addressing the reader or the model is no evidence of anything.
			r.logTo(b, StageRead, round, c.SubQuestion, "instruction",
				fmt.Sprintf("quote in %s %s; refused as evidence: %q", c.URL, why, lexical.Clip(it.Quote, 200)), nil)
			cp := it
			r.emit(Event{Stage: StageRead, Kind: EventInstruction, Round: round, SubQuestion: c.SubQuestion, URL: c.URL,
				Evidence: &cp, Message: "quote " + why})
			continue
		}
		if publish.IsFileURL(c.URL) {
			it.Source = publish.WithLines(c.URL, first, last)
		} else {
			it.Source = publish.StripFragment(c.URL)
		}
		q := &queued{it: it}
		if err := b.AddEvidence(toState(it), &q.res); err != nil {
			r.refused(ctx, b, round, c, err)
			continue
		}
		grounded = append(grounded, q)
	}
	b.Later(func(b *state.Batch) error {
		n := 0
		for _, q := range grounded {
			if q.res.Added {
				n++
			}
		}
		return done(b, n)
	})
	if err := b.Commit(ctx); err != nil {
		r.refused(ctx, nil, round, c, err)
		return 0, err
	}
	accepted := 0
	for _, q := range grounded {
		if !q.res.Added {
			continue // the same quote of the same document is already in the pool, shared by every sub-question
		}
		it := q.it
		it.ID = q.res.ID
		accepted++
		r.update(func(p *Progress) { p.Evidence++ })
		r.emit(Event{Stage: StageRead, Kind: EventEvidence, Round: round, SubQuestion: c.SubQuestion, URL: c.URL, Evidence: &it})
		if r.observeClaim(c.SubQuestion, it.Claim) {
			r.logf(ctx, StageRead, round, c.SubQuestion, "early stop",
				fmt.Sprintf("the last %d new items added no new claim", r.rc.EarlyStopWindow), nil)
			_ = r.db.MarkStep(ctx, earlyStopStep(round, c.SubQuestion), nil)
			r.emit(Event{Stage: StageRead, Kind: EventEarlyStop, Round: round, SubQuestion: c.SubQuestion,
				Message: fmt.Sprintf("the last %d new items added no new claim", r.rc.EarlyStopWindow)})
		}
	}
	return accepted, nil
}

// refused reports evidence of candidate c the state did not take: in batch b when given, else at once.
func (r *runner) refused(ctx context.Context, b *state.Batch, round int, c Candidate, err error) {
	if b != nil {
		r.logTo(b, StageRead, round, c.SubQuestion, "refused", c.URL, err)
	} else {
		r.logf(ctx, StageRead, round, c.SubQuestion, "refused", c.URL, err)
	}
	r.emit(Event{Stage: StageRead, Kind: EventError, Round: round, SubQuestion: c.SubQuestion, URL: c.URL, Err: err.Error()})
}

// nearDuplicateThreshold is the token-set Jaccard similarity above which two claims say the same thing.
const nearDuplicateThreshold = 0.8

func (nv *novelty) isNew(claim string) (bool, lexical.TokenSet) {
	key := strings.ToLower(lexical.NormalizeSpace(claim))
	toks := lexical.NewTokenSet(lexical.Tokenize(claim))
	if nv.normed[key] {
		return false, toks
	}
	for _, c := range nv.claims {
		if c.Jaccard(toks) >= nearDuplicateThreshold {
			return false, toks
		}
	}
	return true, toks
}

func (nv *novelty) add(claim string, toks lexical.TokenSet) {
	nv.claims = append(nv.claims, toks)
	nv.normed[strings.ToLower(lexical.NormalizeSpace(claim))] = true
}

// observeClaim updates the sub-question's novelty and reports whether it has just become saturated.
func (r *runner) observeClaim(sq, claim string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	nv := r.novelty[sq]
	if nv == nil {
		nv = &novelty{normed: map[string]bool{}}
		r.novelty[sq] = nv
	}
	isNew, toks := nv.isNew(claim)
	nv.add(claim, toks)
	if isNew {
		nv.stale = 0
		return false
	}
	nv.stale++
	if r.rc.EarlyStopWindow > 0 && nv.stale >= r.rc.EarlyStopWindow && !nv.saturated {
		nv.saturated = true
		return true
	}
	return false
}

// rebuildNovelty recomputes early-stop state at the start of a round from the pool: earlier rounds' claims are
// the baseline, and this round's items (present when resuming mid-round) are replayed in order.
func (r *runner) rebuildNovelty(ctx context.Context, round int) error {
	pool, err := r.db.Evidence(ctx, "")
	if err != nil {
		return err
	}
	fresh := map[string]*novelty{}
	for _, e := range pool {
		nv := fresh[e.SubQuestion]
		if nv == nil {
			nv = &novelty{normed: map[string]bool{}}
			fresh[e.SubQuestion] = nv
		}
		isNew, toks := nv.isNew(e.Claim)
		nv.add(e.Claim, toks)
		if e.Round < round {
			continue
		}
		if isNew {
			nv.stale = 0
		} else {
			nv.stale++
		}
	}
	for sq, nv := range fresh {
		done, _ := r.db.Step(ctx, earlyStopStep(round, sq), nil)
		nv.saturated = done || (r.rc.EarlyStopWindow > 0 && nv.stale >= r.rc.EarlyStopWindow)
	}
	r.mu.Lock()
	r.novelty = fresh
	r.mu.Unlock()
	return nil
}
