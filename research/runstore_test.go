package research_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/state"
)

// sessionSteps runs every step of a run in a session of its own, as workers on other machines would: each opens
// the shared state, runs one step and closes it, in a folder of its own.
type sessionSteps struct {
	t     *testing.T
	cfg   func() research.Config
	state string
	n     int
}

func (s *sessionSteps) open() *research.Session {
	s.n++
	cfg := s.cfg()
	cfg.OutDir = filepath.Join(s.t.TempDir(), fmt.Sprintf("worker%d", s.n))
	ss, err := research.OpenSession(s.t.Context(), cfg, research.SessionConfig{State: s.state, SpendKey: fmt.Sprintf("step%d", s.n)})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { ss.Close() })
	return ss
}

func (s *sessionSteps) Scope() (*research.Plan, error) { return s.open().Scope(s.t.Context()) }
func (s *sessionSteps) SearchRead(round int, ts []research.Target) (bool, error) {
	return s.open().SearchRead(s.t.Context(), round, ts)
}
func (s *sessionSteps) Verify(round int) (*research.Verdict, error) {
	return s.open().Verify(s.t.Context(), round)
}
func (s *sessionSteps) Next(round int, v *research.Verdict) ([]research.Target, error) {
	return s.open().Next(s.t.Context(), round, v)
}
func (s *sessionSteps) Synthesize(v *research.Verdict) (*research.Report, error) {
	return s.open().Synthesize(s.t.Context(), v)
}

// Runs reads a run that lives only in the shared state — run step by step in other folders, as workers on other
// machines leave it — beside a local run folder: listed together, its report, report files and the very texts
// its quotes stand in, read back from PostgreSQL; a missing run is ErrNotFound, and no listing carries the
// state's password.
func TestRunsReadsTheSharedState(t *testing.T) {
	pg := pgtest.New(t)
	site := researchtest.NewSite([]researchtest.Page{
		{Path: "/kiln/1", Title: "Kiln one", Body: "The kiln fires at 1200 degrees. Its walls are lined with firebrick."},
		{Path: "/kiln/2", Title: "Kiln two", Body: "A kiln cools over twelve hours. Cracks appear when it cools too fast."},
	})
	defer site.Close()
	plan := research.Plan{Language: "en", SubQuestions: []research.SubQuestion{{ID: "q1", Question: "How does a kiln work?", Queries: []string{"kiln"}}}}
	cfg := func() research.Config {
		ledger := &llm.Ledger{}
		roles := &researchtest.Roles{Site: site, Plan: plan, Ledger: ledger, PerQuery: 2}
		roles.NewModel(time.Millisecond)
		return research.Config{Roles: roles.Set(), Fetcher: site.Fetcher(), Ledger: ledger, RunID: "shared-1",
			Question: "How does a kiln work?", Rounds: -1, EarlyStopWindow: -1}
	}
	shared, err := research.Drive(&sessionSteps{t: t, cfg: cfg, state: pg.URL})
	if err != nil {
		t.Fatal(err)
	}
	if len(shared.Citations) == 0 {
		t.Fatal("the shared run cited nothing")
	}
	// A local run in the runs folder.
	dir := t.TempDir()
	local := cfg()
	local.RunID, local.OutDir = "local-1", filepath.Join(dir, "local-1")
	if _, err := research.Run(t.Context(), local); err != nil {
		t.Fatal(err)
	}

	withPassword := strings.Replace(pg.URL, "postgres://postgres@", "postgres://postgres:topsecret@", 1)
	if withPassword == pg.URL {
		t.Fatalf("cannot add a password to %s", pg.URL)
	}
	ctx := t.Context()
	runs := research.Runs{Dir: dir, State: withPassword}
	list, err := runs.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]research.RunSummary{}
	for _, r := range list {
		got[r.ID] = r
	}
	if len(list) != 2 || got["shared-1"].Status != research.RunDone || got["local-1"].Status != research.RunDone ||
		got["shared-1"].Evidence == 0 || got["shared-1"].Question != "How does a kiln work?" {
		t.Fatalf("listed %+v", list)
	}
	if b, _ := json.Marshal(list); strings.Contains(string(b), "topsecret") {
		t.Errorf("the listing carries the password: %s", b)
	}
	rep, err := runs.Report(ctx, "shared-1")
	if err != nil || rep.Markdown != shared.Markdown {
		t.Fatalf("report: %v", err)
	}
	md, err := runs.ReportFile(ctx, "shared-1", research.ReportMarkdownFile)
	if err != nil || string(md) != shared.Markdown {
		t.Errorf("report.md: %v", err)
	}
	js, err := runs.ReportFile(ctx, "shared-1", research.ReportJSONFile)
	var back research.Report
	if err != nil || json.Unmarshal(js, &back) != nil || len(back.Evidence) != len(shared.Evidence) {
		t.Errorf("report.json: %v", err)
	}
	if _, err := runs.ReportFile(ctx, "shared-1", "state.db"); err == nil {
		t.Error("ReportFile served a file that is not a report")
	}
	for _, ev := range shared.Evidence {
		text, err := runs.SourceText(ctx, "shared-1", ev.Source)
		if err != nil {
			t.Fatalf("text of %s: %v", ev.Source, err)
		}
		if !strings.Contains(text, ev.Quote) {
			t.Errorf("the text of %s does not hold the quote %q", ev.Source, ev.Quote)
		}
	}
	if _, err := runs.SourceText(ctx, "shared-1", site.URL+"/never/read"); err == nil {
		t.Error("a source the run never read has a text")
	}
	info, err := runs.Info(ctx, "shared-1")
	if err != nil || info.Status != research.RunDone || strings.Contains(info.Dir, "topsecret") {
		t.Errorf("info %+v, %v", info, err)
	}
	if _, err := runs.Info(ctx, "local-1"); err != nil {
		t.Errorf("local info: %v", err)
	}
	for _, id := range []string{"no-such-run"} {
		if _, err := runs.Report(ctx, id); !errors.Is(err, state.ErrNotFound) {
			t.Errorf("report of %s: %v, want ErrNotFound", id, err)
		}
		if _, err := runs.Info(ctx, id); !errors.Is(err, state.ErrNotFound) {
			t.Errorf("info of %s: %v, want ErrNotFound", id, err)
		}
	}
	// Without a shared state only the folder is read.
	folderOnly, err := research.Runs{Dir: dir}.List(ctx)
	if err != nil || len(folderOnly) != 1 || folderOnly[0].ID != "local-1" {
		t.Errorf("folder only: %+v, %v", folderOnly, err)
	}
	if _, err := (research.Runs{Dir: dir}).Report(ctx, "shared-1"); err == nil {
		t.Error("a folder-only reader found the shared run")
	}
}
