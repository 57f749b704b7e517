package llmroles_test

import (
	"context"
	"fmt"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/research/llmroles"
)

// A custom role: any struct becomes the output schema, and malformed answers are repaired or re-asked.
func ExampleRunRole() {
	type Triage struct {
		Urgent bool   `json:"urgent"`
		Reason string `json:"reason" jsonschema:"one sentence"`
	}
	model := scripted.New(llm.Info{}, scripted.Sequence(
		scripted.Reply("Sure:\n```json\n{\"urgent\": true, \"reason\": \"production is down\",}\n```"),
	))
	t, err := llmroles.RunRole[Triage](context.Background(), llmroles.RoleSpec{
		Name: "triage", Model: model, System: "You triage incident reports.",
	}, "Report: the checkout service returns 500 for every request.")
	fmt.Println(t.Urgent, t.Reason, err)
	// Output: true production is down <nil>
}
