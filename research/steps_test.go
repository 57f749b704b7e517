package research_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/state"
)

// Every row of the step table is complete: a unique name, a stage, a role that is one of the five (or none, for
// bookkeeping), and the types an executor registers and decodes it by. Every role is called by a step.
func TestStepTableIsComplete(t *testing.T) {
	roles := []string{research.RolePlanner, research.RoleSearcher, research.RoleAnalyst, research.RoleVerifier, research.RoleSynthesizer}
	stages := []string{research.StageScope, research.StageSearch, research.StageRead, research.StageVerify, research.StageSynth}
	seen := map[string]bool{}
	called := map[string]bool{}
	for _, st := range research.Graph() {
		if st.Name == "" || seen[st.Name] {
			t.Errorf("step %q: empty or twice in the table", st.Name)
		}
		seen[st.Name] = true
		if !slices.Contains(stages, st.Stage) {
			t.Errorf("step %s: stage %q is not a stage of the graph", st.Name, st.Stage)
		}
		if st.Role != "" && !slices.Contains(roles, st.Role) {
			t.Errorf("step %s: role %q is not a research role", st.Name, st.Role)
		}
		called[st.Role] = true
		if st.Result == nil || slices.Contains(st.Args, nil) {
			t.Errorf("step %s: argument or result type missing: %v → %v", st.Name, st.Args, st.Result)
		}
	}
	for _, r := range roles {
		if !called[r] {
			t.Errorf("no step calls the %s", r)
		}
	}
	if len(seen) != 10 {
		t.Errorf("%d steps, want the graph's 10", len(seen))
	}
	// A row handed the wrong arguments is refused, not a panic, whichever argument is wrong.
	for _, tc := range []struct {
		step int
		args []any
		out  any
		want string
	}{
		{1, []any{"one"}, new(research.RoundPlan), "argument 1 is a string, not a int"},
		{3, []any{1, "targets", [][]research.Candidate{}}, new([]research.Candidate), "argument 2 is a string, not a []research.Target"},
		{3, []any{1, []research.Target{}, [][]string{}}, new([]research.Candidate), "argument 3 is a [][]string, not a [][]research.Candidate"},
	} {
		st := research.Graph()[tc.step]
		if err := st.Run(t.Context(), nil, tc.args, tc.out); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s over %v: %v, want %q", st.Name, tc.args, err, tc.want)
		}
	}
	st := research.Graph()[1]
	if err := st.Run(t.Context(), nil, nil, nil); err == nil || !strings.Contains(err.Error(), "arguments") {
		t.Errorf("%s with no argument: %v", st.Name, err)
	}
}

// sessionExecutor is an executor built from the table alone, as a durable engine's is: each step in a session
// of its own over the run's state, lanes one after the other.
type sessionExecutor struct {
	t      *testing.T
	config func() research.Config
	calls  map[string]int
	n      int
}

func (x *sessionExecutor) Exec(st *research.Step, out any, args ...any) error {
	x.calls[st.Name]++
	x.n++
	ctx := context.Background()
	s, err := research.OpenSession(ctx, x.config(), research.SessionConfig{SpendKey: fmt.Sprintf("step%d", x.n)})
	if err != nil {
		return err
	}
	err = st.Run(ctx, s, args, out)
	if cerr := s.Close(); cerr != nil {
		x.t.Errorf("close the session of %s: %v", st.Name, cerr)
	}
	return err
}

func (x *sessionExecutor) FanOut(n, _ int, fn func(research.Executor, int)) {
	for i := range n {
		fn(x, i)
	}
}

func (x *sessionExecutor) Turnstile(int) research.Turnstile { return serialTurnstile{} }

type serialTurnstile struct{}

func (serialTurnstile) Wait(research.Executor, int) error { return nil }
func (serialTurnstile) Done(int)                          {}

// Drive calls every step of the table, and an executor built from the table alone runs the graph to a report
// with the evidence a local run gathers; each step's key is where the step left its record in the run's state.
func TestDriveRunsEveryStepOfTheTable(t *testing.T) {
	site := researchtest.NewSite(testPages())
	t.Cleanup(site.Close)
	verify := func(_ int, _ *research.Plan, pool []research.Evidence) research.Verdict {
		for _, e := range pool {
			if strings.HasSuffix(e.Source, "/beta/tiers") {
				return research.Verdict{Pass: true}
			}
		}
		return research.Verdict{Gaps: []research.Gap{{SubQuestion: "q2", Missing: "pricing tiers", Queries: []string{"beta pricing tiers"}}}}
	}
	dir := t.TempDir()
	config := func(out string) research.Config {
		ledger := &llm.Ledger{}
		roles := &researchtest.Roles{Site: site, Plan: testPlan(), Ledger: ledger, Verify: verify}
		roles.NewModel(0)
		return research.Config{Question: "How fast is alpha, what does beta cost, who makes gamma?", Roles: roles.Set(),
			Fetcher: site.Fetcher(), Ledger: ledger, RunID: filepath.Base(out), OutDir: out, EarlyStopWindow: -1}
	}
	local, err := research.Run(t.Context(), config(filepath.Join(dir, "local")))
	if err != nil {
		t.Fatal(err)
	}
	x := &sessionExecutor{t: t, calls: map[string]int{}, config: func() research.Config { return config(filepath.Join(dir, "steps")) }}
	rep, err := research.Drive(x)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range research.Graph() {
		if x.calls[st.Name] == 0 {
			t.Errorf("Drive never called step %s", st.Name)
		}
	}
	if rep.Stats.Rounds != 2 || rep.Stats.EvidenceAccepted != local.Stats.EvidenceAccepted || len(rep.Citations) != len(local.Citations) {
		t.Errorf("steps: %d rounds, %d evidence, %d citations; local run: %d, %d, %d", rep.Stats.Rounds, rep.Stats.EvidenceAccepted,
			len(rep.Citations), local.Stats.Rounds, local.Stats.EvidenceAccepted, len(local.Citations))
	}
	db, err := state.OpenReadOnly(t.Context(), filepath.Join(dir, "steps", research.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, st := range research.Graph() {
		if st.Key == "" {
			continue
		}
		prefix, _, _ := strings.Cut(st.Key, "<")
		names, err := db.StepNames(t.Context(), prefix)
		if err != nil {
			t.Fatal(err)
		}
		if len(names) == 0 {
			t.Errorf("step %s: no record under its key %q in the run's state", st.Name, st.Key)
		}
	}
}
