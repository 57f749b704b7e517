package research_test

import (
	"path/filepath"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/state"
)

// A run marked stopped (its workflow cancelled) stays stopped: a step whose session opens after the stop — on
// the same process's open run or on a fresh one — does not list it running again. A run that failed and is
// started again under its id is running again: the status is written, only stopped is kept.
func TestStoppedRunStaysStopped(t *testing.T) {
	site := researchtest.NewSite(testPages())
	t.Cleanup(site.Close)
	const question = "How fast is alpha, what does beta cost, who makes gamma?"
	for _, tc := range []struct {
		name, status, want string
		shared             bool
	}{
		{"stopped, a fresh session", research.RunStopped, research.RunStopped, false},
		{"stopped, the process's open run", research.RunStopped, research.RunStopped, true},
		{"failed, started again", research.RunFailed, research.RunRunning, false},
		{"failed, started again on the open run", research.RunFailed, research.RunRunning, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			location := filepath.Join(dir, research.StateFile)
			config := func() research.Config {
				ledger := &llm.Ledger{}
				roles := &researchtest.Roles{Site: site, Plan: testPlan(), Ledger: ledger}
				roles.NewModel(0)
				return research.Config{Question: question, Roles: roles.Set(), Fetcher: site.Fetcher(), Ledger: ledger,
					RunID: "stops", OutDir: dir}
			}
			var shared *research.SharedRun
			open := func(key string) *research.Session {
				t.Helper()
				var s *research.Session
				var err error
				if tc.shared {
					s, err = shared.OpenSession(t.Context(), config(), research.SessionConfig{SpendKey: key})
				} else {
					s, err = research.OpenSession(t.Context(), config(), research.SessionConfig{SpendKey: key})
				}
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			if tc.shared {
				var err error
				if shared, err = research.OpenSharedRun(t.Context(), location, "stops", dir); err != nil {
					t.Fatal(err)
				}
				defer shared.Close()
			}
			status := func() string {
				t.Helper()
				db, err := state.OpenReadOnly(t.Context(), location)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				v, _, err := db.Meta(t.Context(), "status")
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			first := open("scope#1")
			if _, err := first.Scope(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}
			if got := status(); got != research.RunRunning {
				t.Fatalf("after the first step the run is %q, want running", got)
			}
			// Whoever stops (or fails) the run writes it into the state, as MarkSharedStopped does.
			db, err := state.OpenRun(t.Context(), location, "stops")
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SetMeta(t.Context(), "status", tc.status); err != nil {
				t.Fatal(err)
			}
			db.Close()
			later := open("round#1")
			if _, err := later.BeginRound(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
			if err := later.Close(); err != nil {
				t.Fatal(err)
			}
			if got := status(); got != tc.want {
				t.Errorf("a session opened after the run was marked %s left it %q, want %q", tc.status, got, tc.want)
			}
		})
	}
}

// MarkFailed lists a run failed with its reason (and its question, when no step has written it), and leaves a run
// that was stopped or has finished as it is.
func TestSharedRunMarkFailed(t *testing.T) {
	for _, tc := range []struct {
		name, before, want string
	}{
		{"a run no step has started", "", research.RunFailed},
		{"a running run", research.RunRunning, research.RunFailed},
		{"a stopped run", research.RunStopped, research.RunStopped},
		{"a finished run", research.RunDone, research.RunDone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			location := filepath.Join(dir, research.StateFile)
			h, err := research.OpenSharedRun(t.Context(), location, "fails", dir)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			db, err := state.OpenRun(t.Context(), location, "fails")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if tc.before != "" {
				if err := db.SetMeta(t.Context(), "status", tc.before); err != nil {
					t.Fatal(err)
				}
			}
			const why = "worker cannot read corpus /srv/docs: stat /srv/docs: no such file or directory"
			if err := h.MarkFailed(t.Context(), "  Which kiln dries fastest?  ", why); err != nil {
				t.Fatal(err)
			}
			status, _, _ := db.Meta(t.Context(), "status")
			reason, _, _ := db.Meta(t.Context(), "error")
			question, _, _ := db.Meta(t.Context(), "question")
			if status != tc.want {
				t.Errorf("status %q, want %q", status, tc.want)
			}
			if failed := tc.want == research.RunFailed; failed != (reason == why) || failed != (question == "Which kiln dries fastest?") {
				t.Errorf("error %q, question %q (status %s)", reason, question, status)
			}
		})
	}
}
