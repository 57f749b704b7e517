package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/research"
)

// elicitor asks the client's user about a run through MCP elicitation (form mode): the plan before anything is
// searched, and the planner's clarifying questions. It is used only when the client declared elicitation.
type elicitor struct{ ss *mcp.ServerSession }

// elicitBefore is the first protocol version that refuses elicitation in the middle of a call (SEP-2322).
const elicitBefore = "2026-07-28"

// maxPlanAsks bounds how often the plan is shown again after an edit that is not a plan.
const maxPlanAsks = 3

// reviewPlan shows the plan as YAML; the user accepts it, declines it (the run ends, nothing searched) or sends
// an edited YAML plan. An edit that is not a plan is shown again with the error and the user's own text, so
// nothing they wrote is lost; after maxPlanAsks the call ends with the error and their text.
func (e elicitor) reviewPlan(ctx context.Context, p *research.Plan) (*research.Plan, error) {
	b, err := research.MarshalPlan(p)
	if err != nil {
		return nil, err
	}
	text, problem := string(b), ""
	for range maxPlanAsks {
		msg := "deepresearch will research this plan. Accept it, or edit the YAML (drop, add or reword sub-questions) and accept:\n\n" + text
		if problem != "" {
			msg = "Your edit is not a plan: " + problem + "\nYour text is below; correct it and accept, or decline to stop.\n\n" + text
		}
		res, err := e.ss.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"plan": map[string]any{"type": "string", "title": "Plan (YAML)", "default": text,
					"description": "sub_questions: a list of items with question: and optional queries: and criteria:, or of questions alone"},
			},
		}})
		if err != nil {
			return nil, fmt.Errorf("plan review: %w", err)
		}
		if res.Action != "accept" {
			return nil, errors.New("plan review: the plan was declined, so nothing was searched")
		}
		edited, _ := res.Content["plan"].(string)
		if strings.TrimSpace(edited) == "" || edited == string(b) {
			return p, nil
		}
		got, err := research.ParsePlan([]byte(edited))
		if err == nil {
			return got, nil
		}
		text, problem = edited, err.Error()
	}
	return nil, fmt.Errorf("plan review: the edited plan is not a plan (%s); your text:\n%s", problem, text)
}

// clarify puts the planner's questions to the user as one form of text fields; a declined or cancelled form
// leaves them all open.
func (e elicitor) clarify(ctx context.Context, questions []string) ([]string, error) {
	props := map[string]any{}
	for i, q := range questions {
		props[fmt.Sprintf("a%d", i+1)] = map[string]any{"type": "string", "title": q}
	}
	res, err := e.ss.Elicit(ctx, &mcp.ElicitParams{
		Message:         "Before planning, deepresearch asks what you mean (leave a field empty to keep that open):",
		RequestedSchema: map[string]any{"type": "object", "properties": props},
	})
	if err != nil {
		return nil, fmt.Errorf("clarifying questions: %w", err)
	}
	answers := make([]string, len(questions))
	if res.Action == "accept" {
		for i := range questions {
			answers[i], _ = res.Content[fmt.Sprintf("a%d", i+1)].(string)
		}
	}
	return answers, nil
}
