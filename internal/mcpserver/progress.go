package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
)

// progress forwards run events to the client as progress notifications on the request's progress token. The
// graph's OnEvent must not block, and a client may read slowly, so events are queued and sent by one goroutine;
// close drains the queue so every notification precedes the tool's result.
type progress struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any

	mu    sync.Mutex
	queue []research.Event
	wake  chan struct{}
	stop  chan struct{} // closed by close: drain the queue and finish
	done  chan struct{}
	n     float64
}

func newProgress(ctx context.Context, req *mcp.CallToolRequest) *progress {
	p := &progress{ctx: ctx, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if req != nil && req.Params != nil {
		p.token = req.Params.GetProgressToken()
		p.ss = req.Session
	}
	if p.token == nil || p.ss == nil {
		close(p.done)
		return p
	}
	go p.loop()
	return p
}

func (p *progress) event(e research.Event) {
	if p.token == nil || p.ss == nil || !worthTelling(e) {
		return
	}
	p.mu.Lock()
	p.queue = append(p.queue, e)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// worthTelling drops the high-frequency bookkeeping events a person following along does not need.
func worthTelling(e research.Event) bool {
	return e.Kind != research.EventSpend && e.Kind != research.EventRetry
}

func (p *progress) loop() {
	defer close(p.done)
	for {
		p.mu.Lock()
		q := p.queue
		p.queue = nil
		p.mu.Unlock()
		for _, e := range q {
			p.n++
			err := p.ss.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: Describe(e)})
			if err != nil {
				return // the client is gone; the run itself carries on until its context ends
			}
		}
		select {
		case <-p.wake:
		case <-p.ctx.Done():
			return
		case <-p.stop:
			p.mu.Lock()
			empty := len(p.queue) == 0
			p.mu.Unlock()
			if empty {
				return
			}
		}
	}
}

func (p *progress) close() {
	if p.token == nil || p.ss == nil {
		return
	}
	close(p.stop)
	<-p.done
}

// Describe renders one run event as a short line for a person following the run.
func Describe(e research.Event) string {
	pr := e.Progress
	tail := fmt.Sprintf(" [round %d · %d sources read · %d evidence · %d tokens · $%.4f]", pr.Round, pr.SourcesRead, pr.Evidence, pr.Tokens, pr.CostUSD)
	var msg string
	switch e.Kind {
	case research.EventStageStart:
		msg = stageName(e.Stage) + " started"
	case research.EventStageDone:
		msg = stageName(e.Stage) + " done"
	case research.EventPlan:
		if e.Plan != nil {
			qs := make([]string, len(e.Plan.SubQuestions))
			for i, sq := range e.Plan.SubQuestions {
				qs[i] = sq.ID + ": " + sq.Question
			}
			msg = fmt.Sprintf("plan: %d sub-questions — %s", len(qs), strings.Join(qs, "; "))
		}
	case research.EventSearch:
		msg = fmt.Sprintf("searched %s: %d hits", e.SubQuestion, e.Count)
	case research.EventCandidates:
		msg = fmt.Sprintf("picked %d sources to read", e.Count)
	case research.EventRead:
		msg = fmt.Sprintf("read %s: %d evidence", e.URL, e.Count)
	case research.EventEvidence:
		if e.Evidence != nil {
			msg = fmt.Sprintf("evidence %s (%s): %s", e.Evidence.ID, e.Evidence.SubQuestion, lexical.Clip(e.Evidence.Claim, 160))
		}
	case research.EventVerdict:
		if e.Verdict != nil {
			msg = fmt.Sprintf("verdict: pass=%t, %d gaps, %d rejected", e.Verdict.Pass, len(e.Verdict.Gaps), len(e.Verdict.Rejected))
		}
	case research.EventReportReady:
		msg = "report written"
	case research.EventRunStart:
		msg = "run started"
	case research.EventRunDone:
		msg = "run finished"
	}
	if msg == "" {
		msg = e.Stage + " " + e.Kind
		if e.SubQuestion != "" {
			msg += " " + e.SubQuestion
		}
		if e.URL != "" {
			msg += " " + e.URL
		}
		if e.Message != "" {
			msg += ": " + e.Message
		}
		if e.Err != "" {
			msg += " (error: " + e.Err + ")"
		}
	}
	return msg + tail
}

func stageName(s string) string {
	switch s {
	case research.StageScope:
		return "scope"
	case research.StageSearch:
		return "search"
	case research.StageRead:
		return "fetch & read"
	case research.StageVerify:
		return "verify"
	case research.StageSynth:
		return "synthesis"
	}
	return s
}
