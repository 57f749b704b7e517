package durable

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// A run's limits are its request's; a worker's configured limits (Activities.Ceiling) are its operator's ceiling
// over them, the smaller winning — a run that sets no call cap is held to the worker's, and a run whose own cap is
// lower keeps it. The run stores its limits as submitted, not the worker's ceiling.
func TestWorkersLimitsAreACeiling(t *testing.T) {
	for _, tc := range []struct {
		name           string
		run, ceiling   int
		want           int
		cutShort       bool
		storedMaxCalls int
	}{
		{"the worker's ceiling over a run without a cap", 0, 8, 8, true, 0},
		{"the run's lower cap", 6, 8, 6, true, 6},
		{"the worker's lower ceiling", 40, 7, 7, true, 40},
		{"no ceiling", 0, 0, -1, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			var calls atomic.Int32
			f.onCall = func(string, string) error { calls.Add(1); return nil }
			acts := f.activities(t)
			acts.Ceiling, acts.KeepBuilds = research.Budget{MaxCalls: tc.ceiling}, true
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			register(env, acts, nil)
			id := fmt.Sprintf("ceiling%d-%d", tc.run, tc.ceiling)
			env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: id, Question: question, Budget: research.Budget{MaxCalls: tc.run}}})
			if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
				t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
			}
			var rep research.Report
			if err := env.GetWorkflowResult(&rep); err != nil {
				t.Fatal(err)
			}
			db, err := state.OpenReadOnly(t.Context(), filepath.Join(acts.Dir, id, research.StateFile))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			sp, err := db.TotalSpend(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if tc.want >= 0 && (sp.Calls != tc.want || int(calls.Load()) != tc.want) {
				t.Errorf("ledger %d calls, roles asked %d times; want exactly %d", sp.Calls, calls.Load(), tc.want)
			}
			if got := strings.Contains(rep.CutShort, "call cap"); got != tc.cutShort {
				t.Errorf("cut short by the call cap: %v (%q), want %v", got, rep.CutShort, tc.cutShort)
			}
			if !tc.cutShort && rep.Stats.EvidenceAccepted != 25 {
				t.Errorf("an unbounded run gathered %d items, want 25", rep.Stats.EvidenceAccepted)
			}
			v, _, _ := db.Meta(t.Context(), "given")
			var given struct {
				Budget research.Budget `json:"budget"`
			}
			if err := json.Unmarshal([]byte(v), &given); err != nil || given.Budget.MaxCalls != tc.storedMaxCalls {
				t.Errorf("stored limits %s (%v); want the request's call cap %d", v, err, tc.storedMaxCalls)
			}
		})
	}
}
