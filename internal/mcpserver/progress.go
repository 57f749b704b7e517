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
	// at is the progress last sent, in percent of the run (total is always 100): each stage owns a span of it
	// (stageSpan), and the events within a stage close half the remaining gap to the span's end, so progress
	// rises with every notification, as the specification requires, and reaches 100 only when the run is done.
	at       float64
	finished bool
}

// progressTotal is the total of every progress notification: progress is in percent.
const progressTotal = 100

// stageSpan is the share of the run each stage covers, in percent: [start, end).
var stageSpan = map[string][2]float64{
	research.StageIndex:  {0, 5},
	research.StageScope:  {5, 10},
	research.StageSearch: {10, 35},
	research.StageRead:   {35, 75},
	research.StageVerify: {75, 85},
	research.StageSynth:  {85, 99},
}

// advance returns the progress to send for e: never less than the last value plus a little, never 100 before the
// run is done. A re-search round goes back to the search stage; progress then keeps creeping up from where it is.
func (p *progress) advance(e research.Event) float64 {
	next := p.at
	if span, ok := stageSpan[e.Stage]; ok {
		if next < span[0] {
			next = span[0]
		}
		if next < span[1] {
			next += (span[1] - next) / 2
		}
	}
	if min := p.at + 0.001; next < min {
		next = min
	}
	if next >= progressTotal {
		next = p.at + (progressTotal-p.at)/2
	}
	p.at = next
	return next
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
			at := p.advance(e)
			err := p.ss.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: at, Total: progressTotal, Message: Describe(e)})
			if err != nil {
				return // the client is gone; the run itself carries on until its context ends
			}
		}
		p.sendFinal()
		select {
		case <-p.wake:
		case <-p.ctx.Done():
			return
		case <-p.stop:
			p.mu.Lock()
			empty := len(p.queue) == 0
			p.mu.Unlock()
			if empty {
				p.sendFinal()
				return
			}
		}
	}
}

// sendFinal sends 100 of 100 once the run is done and every event before it has been sent.
func (p *progress) sendFinal() {
	p.mu.Lock()
	fin := p.finished && len(p.queue) == 0
	p.mu.Unlock()
	if fin && p.at < progressTotal {
		p.at = progressTotal
		_ = p.ss.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: progressTotal, Total: progressTotal, Message: "report ready"})
	}
}

// finish marks the run done: the last notification says 100 of 100.
func (p *progress) finish() {
	p.mu.Lock()
	p.finished = true
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
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
	case research.EventIndexProgress:
		// Any event that counts done of a total says so; indexing a corpus is the one a run has today.
		msg = e.Message
		if msg == "" && e.Total > 0 {
			msg = fmt.Sprintf("%s: %d/%d", e.Stage, e.Count, e.Total)
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
