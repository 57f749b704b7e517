package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/research"
)

// connectEliciting connects a client that offers elicitation, answering with answer, on protocol 2025-11-25
// (the last that lets a server elicit in the middle of a call).
func connectEliciting(t *testing.T, s *Server, answer func(*mcp.ElicitParams) *mcp.ElicitResult) *mcp.ClientSession {
	return connectElicitingOn(t, s, "2025-11-25", answer)
}

func connectElicitingOn(t *testing.T, s *Server, version string, answer func(*mcp.ElicitParams) *mcp.ElicitResult) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return answer(req.Params), nil
		}})
	cs, err := c.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// reviewingStart is a run that only asks: the clarifying questions, then the plan review, and reports what came
// back as its report.
func reviewingStart(plan *research.Plan) StartFunc {
	return func(ctx context.Context, rr RunRequest) (*research.Report, error) {
		var b strings.Builder
		if rr.Clarify != nil {
			a, err := rr.Clarify(ctx, []string{"Which kiln?", "Which season?"})
			if err != nil {
				return nil, err
			}
			b.WriteString("answers: " + strings.Join(a, "|") + "\n")
		}
		if rr.ReviewPlan != nil {
			p, err := rr.ReviewPlan(ctx, plan)
			if err != nil {
				return nil, err
			}
			for _, sq := range p.SubQuestions {
				b.WriteString("plan: " + sq.Question + "\n")
			}
		}
		if rr.Clarify == nil && rr.ReviewPlan == nil {
			b.WriteString("nothing asked\n")
		}
		return &research.Report{Question: rr.Question, Markdown: b.String()}, nil
	}
}

// TestPlanReviewAndClarificationThroughElicitation: a client that offers elicitation is asked the clarifying
// questions and shown the plan; an edit that is not a plan is shown again with the error and the user's own
// text; a declined plan ends the call with nothing searched. A client without elicitation is asked nothing.
func TestPlanReviewAndClarificationThroughElicitation(t *testing.T) {
	plan := &research.Plan{Question: "How does the kiln work?", SubQuestions: []research.SubQuestion{{ID: "q1", Question: "How does the kiln heat?"}}}
	s, err := New(Config{RunsDir: t.TempDir(), Defaults: Sources{Web: "searxng"}, Start: reviewingStart(plan)})
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	cs := connectEliciting(t, s, func(p *mcp.ElicitParams) *mcp.ElicitResult {
		asked = append(asked, p.Message)
		switch {
		case strings.Contains(p.Message, "asks what you mean"):
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"a1": "the Kestrel kiln"}}
		case strings.Contains(p.Message, "Your edit is not a plan"):
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"plan": "- How fast does it dry oak?\n- What does it cost?\n"}}
		default:
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"plan": "sub_questions: [unclosed\n"}}
		}
	})
	res := callResearch(t, cs, map[string]any{"question": "How does the kiln work?", "review": true, "clarify": true}, nil)
	got := text(res)
	if res.IsError || !strings.Contains(got, "answers: the Kestrel kiln|") ||
		!strings.Contains(got, "plan: How fast does it dry oak?") || !strings.Contains(got, "plan: What does it cost?") {
		t.Fatalf("error=%v\n%s", res.IsError, got)
	}
	if len(asked) != 3 || !strings.Contains(asked[1], "How does the kiln heat?") || !strings.Contains(asked[2], "[unclosed") {
		t.Fatalf("asked %q", asked)
	}

	// Declined: the call ends, and says nothing was searched.
	cs = connectEliciting(t, s, func(*mcp.ElicitParams) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "decline"} })
	res = callResearch(t, cs, map[string]any{"question": "How does the kiln work?", "review": true}, nil)
	if !res.IsError || !strings.Contains(text(res), "nothing was searched") {
		t.Fatalf("declined plan: error=%v %q", res.IsError, text(res))
	}

	// No elicitation offered, or a protocol that forbids it in a call: proceed without asking.
	for _, cs := range []*mcp.ClientSession{connectInMemory(t, s, &recorder{}),
		connectElicitingOn(t, s, "2026-07-28", func(*mcp.ElicitParams) *mcp.ElicitResult { t.Error("asked"); return nil })} {
		res = callResearch(t, cs, map[string]any{"question": "How does the kiln work?", "review": true, "clarify": true}, nil)
		if res.IsError || !strings.Contains(text(res), "nothing asked") {
			t.Fatalf("no elicitation: error=%v %q", res.IsError, text(res))
		}
	}
}

// TestAnEditThatStaysBrokenKeepsTheText: after maxPlanAsks edits that are not plans the call fails with the
// error and the user's last text.
func TestAnEditThatStaysBrokenKeepsTheText(t *testing.T) {
	plan := &research.Plan{Question: "Q?", SubQuestions: []research.SubQuestion{{ID: "q1", Question: "Why?"}}}
	s, err := New(Config{RunsDir: t.TempDir(), Defaults: Sources{Web: "searxng"}, Start: reviewingStart(plan)})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	cs := connectEliciting(t, s, func(*mcp.ElicitParams) *mcp.ElicitResult {
		n++
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"plan": "sub_questions: 42 # my careful edit\n"}}
	})
	res := callResearch(t, cs, map[string]any{"question": "Q?", "review": true}, nil)
	if !res.IsError || n != maxPlanAsks || !strings.Contains(text(res), "my careful edit") {
		t.Fatalf("error=%v after %d asks: %q", res.IsError, n, text(res))
	}
}
