package llmroles

import (
	"errors"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/research"
)

// A role call under a Fleet is one fleet call, however many times the model is asked again; past the fleet's
// total the call fails at once with ErrCallCap and the model is not called.
func TestRunRoleUnderAFleet(t *testing.T) {
	type plan struct {
		Queries []string `json:"queries"`
	}
	m := scripted.New(llm.Info{Name: "scripted"}, scripted.Sequence(
		scripted.Reply(`{"wrong": true}`),
		scripted.Reply(`{"queries": ["a", "b"]}`),
	))
	fleet := research.NewFleet(2, 1)
	spec := RoleSpec{Name: "planner", Model: m, Fleet: fleet}
	got, err := RunRole[plan](t.Context(), spec, "plan it")
	if err != nil || len(got.Queries) != 2 {
		t.Fatalf("got %+v, %v", got, err)
	}
	if fleet.Calls() != 1 || m.Calls() != 2 {
		t.Fatalf("fleet calls %d, model calls %d: want one fleet call holding both attempts", fleet.Calls(), m.Calls())
	}
	if _, err := RunRole[plan](t.Context(), spec, "again"); !errors.Is(err, research.ErrCallCap) || m.Calls() != 2 {
		t.Fatalf("past the cap: %v (model calls %d)", err, m.Calls())
	}
}
