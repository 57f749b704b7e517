package research_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources"
)

// publishShared puts a finished local run into a shared state as workers on other machines leave one: its
// settings and report in the run's meta, the documents it read and their texts (no run folder anywhere).
func publishShared(t *testing.T, url, id, localDir string, rep *research.Report) {
	t.Helper()
	ctx := t.Context()
	db, err := state.OpenRun(ctx, url, id)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b, _ := json.Marshal(rep)
	for k, v := range map[string]string{"run_id": id, "question": rep.Question, "status": research.RunDone,
		"engine": rep.Engine, "created": time.Now().UTC().Format(time.RFC3339Nano), "report": string(b)} {
		if err := db.SetMeta(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, ev := range rep.Evidence {
		text, err := research.LoadSourceText(localDir, ev.Source)
		if err != nil {
			t.Fatal(err)
		}
		hash := sources.HashText(text)
		if err := db.PutText(ctx, hash, text); err != nil {
			t.Fatal(err)
		}
		if err := db.PutDocument(ctx, state.Document{URL: ev.Source, Hash: hash, Path: "docs/" + hash + ".txt"}); err != nil {
			t.Fatal(err)
		}
	}
}

// Runs reads a run that lives only in the shared state — as workers on other machines leave it — beside a local run folder: listed together, its report, report files and the very texts
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
	run := func(id, dir string) *research.Report {
		ledger := &llm.Ledger{}
		roles := &researchtest.Roles{Site: site, Plan: plan, Ledger: ledger, PerQuery: 2}
		roles.NewModel(time.Millisecond)
		rep, err := research.Run(t.Context(), research.Config{Roles: roles.Set(), Fetcher: site.Fetcher(), Ledger: ledger,
			RunID: id, OutDir: dir, Question: "How does a kiln work?", Rounds: -1, EarlyStopWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	// A run of another machine: only in the shared state.
	elsewhere := filepath.Join(t.TempDir(), "shared-1")
	shared := run("shared-1", elsewhere)
	if len(shared.Citations) == 0 {
		t.Fatal("the shared run cited nothing")
	}
	publishShared(t, pg.URL, "shared-1", elsewhere, shared)
	if err := os.RemoveAll(elsewhere); err != nil {
		t.Fatal(err)
	}
	// A local run in the runs folder.
	dir := t.TempDir()
	run("local-1", filepath.Join(dir, "local-1"))

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
		got["shared-1"].Question != "How does a kiln work?" {
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
