package webui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/research"
)

// DefaultClarifyWait is how long a run started from the form waits for the answers to its planner's clarifying
// questions before it plans without them (Config.ClarifyWait).
const DefaultClarifyWait = 10 * time.Minute

// maxClarifyForm bounds the body of an answer to clarifying questions: MaxClarifications answers of at most
// research.MaxAnswerRunes characters (four bytes each, percent-encoded) and the form's own fields.
const maxClarifyForm = research.MaxClarifications*research.MaxAnswerRunes*4*3 + 4<<10

// pendingClarify is the planner's questions shown on the run's page, waiting for the person's answers.
type pendingClarify struct {
	// nonce names this asking: an answer posted with another one (another run's page, an earlier asking) is
	// refused rather than taken for an answer to these questions.
	nonce     string
	questions []string
	deadline  time.Time
	reply     chan []string // buffered: the one answer taken is never lost, whoever reads it first
}

// Outcomes of a run's clarifying questions, shown on its page once nothing waits.
const (
	clarifyAnswered = "answered"
	clarifySkipped  = "skipped"
	clarifyLate     = "late"
)

func newPendingClarify(questions []string, wait time.Duration) *pendingClarify {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return &pendingClarify{nonce: hex.EncodeToString(b), questions: questions, deadline: time.Now().Add(wait),
		reply: make(chan []string, 1)}
}

// askedLocked puts the planner's questions on the page as the run announces them (the clarify event), so that a
// page rendered after that event always shows the form. r.mu is held.
func (r *liveRun) askedLocked(e research.Event) {
	if e.Kind != research.EventClarify || !r.params.Clarify || r.clarify != nil || r.clarifyOutcome != "" {
		return
	}
	var qs []string
	for _, q := range strings.Split(e.Message, "\n") {
		if q = strings.TrimSpace(q); q != "" {
			qs = append(qs, q)
		}
	}
	r.clarify = newPendingClarify(qs, r.clarifyWait)
}

// awaitClarify is the run's research.Config.Clarify: it waits for the answers posted from the run's page, until
// the page's deadline (then the run plans without answers: research.ErrUnanswered) or until the run is stopped.
func (r *liveRun) awaitClarify(ctx context.Context, questions []string) ([]string, error) {
	r.mu.Lock()
	pc := r.clarify
	if pc == nil {
		pc = newPendingClarify(questions, r.clarifyWait)
		r.clarify = pc
	}
	pc.questions = questions
	r.mu.Unlock()
	t := time.NewTimer(time.Until(pc.deadline))
	defer t.Stop()
	select {
	case a := <-pc.reply:
		return a, nil
	case <-t.C:
		r.mu.Lock()
		defer r.mu.Unlock()
		select {
		case a := <-pc.reply: // posted just as the time ran out: the person's answer wins
			return a, nil
		default:
		}
		if r.clarify == pc {
			r.clarify, r.clarifyOutcome = nil, clarifyLate
		}
		return nil, fmt.Errorf("%w within %s on the run's page", research.ErrUnanswered, r.clarifyWait)
	case <-ctx.Done():
		r.mu.Lock()
		if r.clarify == pc {
			r.clarify = nil
		}
		r.mu.Unlock()
		return nil, ctx.Err()
	}
}

// clarifyForm is the run page's form for the questions that wait.
type clarifyForm struct {
	Nonce     string
	Questions []string
	// Minutes is how long is left to answer, rounded up.
	Minutes int
	Max     int
}

// clarifyView is what the run page shows of a live run's clarifying questions: the form while they wait, else
// how they ended ("" when none were asked); and how many events the run has had, read with them, so that the
// page's live view knows which clarify event the page already shows.
func (r *liveRun) clarifyView() (*clarifyForm, string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if pc := r.clarify; pc != nil {
		left := max(time.Until(pc.deadline), 0)
		return &clarifyForm{Nonce: pc.nonce, Questions: append([]string(nil), pc.questions...),
			Minutes: int((left + time.Minute - 1) / time.Minute), Max: research.MaxAnswerRunes}, "", len(r.events)
	}
	return nil, r.clarifyOutcome, len(r.events)
}

// handleClarify takes the answers to a run's clarifying questions posted from its page ("skip" leaves them all
// open). The first answer wins: a second window posting after it, an answer to questions the run no longer asks
// (another run's, an earlier page's, after the time ran out) and an oversized answer are refused, saying why.
func (s *Server) handleClarify(w http.ResponseWriter, r *http.Request) {
	id, ok := s.pathID(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxClarifyForm)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	lr := s.liveRun(id)
	if lr == nil {
		http.Error(w, "run "+id+" is not running in this server, so it asks nothing", http.StatusNotFound)
		return
	}
	skip := r.PostFormValue("action") == "skip"
	lr.mu.Lock()
	defer lr.mu.Unlock()
	pc := lr.clarify
	if pc == nil {
		msg := "run " + id + " asks no clarifying questions"
		switch lr.clarifyOutcome {
		case clarifyAnswered, clarifySkipped:
			msg = "the questions of run " + id + " were already answered (in another window or tab); the run goes on with that answer"
		case clarifyLate:
			msg = fmt.Sprintf("the questions of run %s were not answered within %s, so the run went on without answers", id, lr.clarifyWait)
		}
		http.Error(w, msg, http.StatusConflict)
		return
	}
	if r.PostFormValue("asked") != pc.nonce {
		http.Error(w, "these answers are not for the questions run "+id+" asks now (another run's page, or an earlier one): reload its page", http.StatusConflict)
		return
	}
	answers := make([]string, len(pc.questions))
	if !skip {
		for i := range answers {
			a := r.PostFormValue(fmt.Sprintf("a%d", i+1))
			if n := utf8.RuneCountInString(a); n > research.MaxAnswerRunes {
				http.Error(w, fmt.Sprintf("answer %d has %d characters; at most %d are taken", i+1, n, research.MaxAnswerRunes), http.StatusRequestEntityTooLarge)
				return
			}
			answers[i] = research.CleanAnswer(a)
		}
	}
	pc.reply <- answers // the one send: the asking is cleared under the same lock
	lr.clarify, lr.clarifyOutcome = nil, clarifyAnswered
	if skip {
		lr.clarifyOutcome = clarifySkipped
	}
	next := "/runs/" + id
	if lr.params.Review {
		next += "/plan" // the plan, made with the answers, waits for review there
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}
