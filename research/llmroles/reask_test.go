package llmroles

import (
	"context"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
)

// TestRepairableAnswersCostNoReask: answers the repair can read — a bare array where the object holding it is
// asked for, single-quoted JSON with trailing commas, a draft in reasoning before the answer, a wrapper object —
// are taken as they are, with one model call each: a re-ask would send the whole prompt again.
func TestRepairableAnswersCostNoReask(t *testing.T) {
	for _, tt := range []struct{ name, answer, want string }{
		{"bare array", `[{"claim": "c", "quote": "q", "confidence": 0.5}]`, "q"},
		{"single quotes and trailing commas", `{'evidence': [{'claim': 'c', 'quote': 'it's q', 'confidence': 0.5,},],}`, "it's q"},
		{"single-quoted bare array", `[{'claim': 'c', 'quote': 'q2', 'confidence': 0.5,},]`, "q2"},
		{"draft in reasoning first", `<think>{"evidence": [{"claim": "c", "quote": "draft", "confidence": 1}]}</think>{"evidence": [{"claim": "c", "quote": "final", "confidence": 0.5}]}`, "final"},
		{"closing tag only", `I should quote {"evidence": [{"claim": "c", "quote": "draft", "confidence": 1}]}</think>` + "\n" + `{"evidence": [{"claim": "c", "quote": "final", "confidence": 0.5}]}`, "final"},
		{"wrapper object", `{"result": {"evidence": [{"claim": "c", "quote": "inner", "confidence": 0.5}]}}`, "inner"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			m := scripted.New(llm.Info{Name: "test-model"}, func(context.Context, *llm.Request) (*llm.Response, error) {
				calls++
				return scripted.Reply(tt.answer), nil
			})
			got, err := RunRole[evidenceOutput](t.Context(), RoleSpec{Name: "analyst", Model: m, Logger: quietLogger()}, "Extract.")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d model calls", calls)
			if calls != 1 || len(got.Evidence) != 1 || got.Evidence[0].Quote != tt.want {
				t.Errorf("%d calls, got %+v, want one call and quote %q", calls, got, tt.want)
			}
		})
	}
}
