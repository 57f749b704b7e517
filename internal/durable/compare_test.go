package durable

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// The set-up of the tests that hold a durable run on PostgreSQL against a local run of the same question.

// localRun runs the fixture's question in this process, with runID (empty: a new one), into a folder of its own:
// the run a durable run is compared with.
func (f *fixture) localRun(t *testing.T, runID string) *research.Report {
	t.Helper()
	c := f.config()
	c.RunID, c.Question, c.OutDir = runID, question, filepath.Join(t.TempDir(), "local")
	rep, err := research.Run(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// runWorkflow runs the workflow of runID on the fixture's question in the test environment, with acts' activities
// (override's in place of those it names), and returns its report; a workflow that does not complete fails the
// test.
func runWorkflow(t *testing.T, acts *Activities, override map[string]any, runID string) research.Report {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	register(env, acts, override)
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: runID, Question: question}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var rep research.Report
	if err := env.GetWorkflowResult(&rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// storedPool opens run runID of the state store at url read-only (closed when the test ends) and returns it with
// its evidence pool.
func storedPool(t *testing.T, url, runID string) (*state.DB, []state.Evidence) {
	t.Helper()
	db, err := state.OpenRunReadOnly(t.Context(), url, runID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	pool, err := db.Evidence(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	return db, pool
}

// evidenceKeys is the set of a report's evidence by state.EvidenceKey (document, quote).
func evidenceKeys(items []research.Evidence) map[string]bool {
	keys := make(map[string]bool, len(items))
	for _, e := range items {
		keys[state.EvidenceKey(e.Source, e.Quote)] = true
	}
	return keys
}
