package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// sharedRun stores a finished run in a shared state as a worker on another machine leaves it.
func sharedRun(t *testing.T, url, id, markdown string) {
	t.Helper()
	db, err := state.OpenRun(t.Context(), url, id)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b, _ := json.Marshal(research.Report{RunID: id, Question: "Question of " + id, Markdown: markdown})
	for k, v := range map[string]string{"run_id": id, "question": "Question of " + id, "status": research.RunDone,
		"created": time.Now().UTC().Format(time.RFC3339Nano), "report": string(b)} {
		if err := db.SetMeta(t.Context(), k, v); err != nil {
			t.Fatal(err)
		}
	}
}

// With a shared state the server publishes the runs other machines finished — those there when it started and,
// at the next listing, those finished since — and reads their reports from PostgreSQL; a run still going is not
// published.
func TestSharedStateRunsArePublished(t *testing.T) {
	pg := pgtest.New(t)
	sharedRun(t, pg.URL, "before-1", "# Before\n\nA report written elsewhere.\n")
	s, err := New(Config{RunsDir: t.TempDir(), State: pg.URL, Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
		return nil, errors.New("no runs here")
	}})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, s, &recorder{})
	listed := func() map[string]bool {
		t.Helper()
		res, err := cs.ListResources(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, r := range res.Resources {
			m[r.URI] = true
		}
		return m
	}
	if got := listed(); !got[ReportURI("before-1")] || !got[ReportJSONURI("before-1")] {
		t.Errorf("the run finished before start is not published: %v", got)
	}
	sharedRun(t, pg.URL, "after-1", "# After\n\nFinished while the server ran.\n")
	db, err := state.OpenRun(t.Context(), pg.URL, "running-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetMeta(t.Context(), "status", research.RunRunning); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s.mu.Lock()
	s.refreshed = time.Time{} // the refresh interval has passed
	s.mu.Unlock()
	got := listed()
	if !got[ReportURI("after-1")] {
		t.Errorf("the run finished after start is not published: %v", got)
	}
	if got[ReportURI("running-1")] {
		t.Error("a running run is published")
	}
	rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: ReportURI("after-1")})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "# After\n\nFinished while the server ran.\n" {
		t.Errorf("read after-1: %v %+v", err, rr)
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: ReportURI("no-such-run")}); err == nil {
		t.Error("a run in neither the folder nor the state was read")
	}
}
