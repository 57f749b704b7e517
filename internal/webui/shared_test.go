package webui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/pgtest"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

// A viewer with a shared state and an empty runs folder — a laptop looking at the team's runs — lists a run
// another machine finished, shows its page and report, streams its end, and still answers 404 for a run that is
// nowhere; its listing never carries the state's password.
func TestSharedStateRunsAreShown(t *testing.T) {
	pg := pgtest.New(t)
	db, err := state.OpenRun(t.Context(), pg.URL, "team-1")
	if err != nil {
		t.Fatal(err)
	}
	md := "# Kilns\n\nA report written on another machine.\n"
	b, _ := json.Marshal(research.Report{RunID: "team-1", Question: "How do kilns work?", Markdown: md})
	for k, v := range map[string]string{"run_id": "team-1", "question": "How do kilns work?", "status": research.RunDone,
		"created": time.Now().UTC().Format(time.RFC3339Nano), "report": string(b)} {
		if err := db.SetMeta(t.Context(), k, v); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	// The password in the user information and as query parameters (password, sslpassword), as PostgreSQL
	// accepts it.
	withPassword := strings.Replace(pg.URL, "postgres://postgres@", "postgres://postgres:s3cretpw@", 1) + "&password=s3cretpw&sslpassword=s3cretpw"
	s, err := New(Config{RunsDir: t.TempDir(), State: withPassword, Start: func(context.Context, RunRequest) (*research.Report, error) {
		return nil, errors.New("no runs here")
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	code, body := get("/api/runs")
	var runs []research.RunSummary
	if code != http.StatusOK || json.Unmarshal([]byte(body), &runs) != nil || len(runs) != 1 || runs[0].ID != "team-1" ||
		runs[0].Status != research.RunDone {
		t.Fatalf("api/runs %d: %s", code, body)
	}
	if strings.Contains(body, "s3cretpw") {
		t.Errorf("the listing carries the password: %s", body)
	}
	if code, body := get("/"); code != http.StatusOK || !strings.Contains(body, "How do kilns work?") {
		t.Errorf("index %d does not list the run", code)
	}
	if code, body := get("/runs/team-1"); code != http.StatusOK || !strings.Contains(body, "A report written on another machine.") {
		t.Errorf("run page %d:\n%.1500s", code, body)
	}
	if code, body := get("/runs/team-1/report.md"); code != http.StatusOK || body != md {
		t.Errorf("report.md %d %q", code, body)
	}
	if code, body := get("/runs/team-1/events"); code != http.StatusOK || !strings.Contains(body, "event: end") || !strings.Contains(body, `"done"`) {
		t.Errorf("events %d: %s", code, body)
	}
	if code, _ := get("/runs/nowhere-1"); code != http.StatusNotFound {
		t.Errorf("a run that is nowhere: %d", code)
	}
}

// A viewer configured to stop runs elsewhere stops a durable run of the shared state that is still going by its
// id; it refuses a run that is not running, reports a failed cancellation, and a viewer without it stops only its
// own runs. A stopped run without its state here is not offered `resume`, which cannot continue it.
func TestStopRunOfTheSharedState(t *testing.T) {
	pg := pgtest.New(t)
	for id, status := range map[string]string{"going-1": research.RunRunning, "done-1": research.RunDone, "stopped-1": research.RunStopped} {
		db, err := state.OpenRun(t.Context(), pg.URL, id)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"run_id": id, "question": "Question " + id, "status": status,
			"created": time.Now().UTC().Format(time.RFC3339Nano)} {
			if err := db.SetMeta(t.Context(), k, v); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
	}
	noStart := func(context.Context, RunRequest) (*research.Report, error) { return nil, errors.New("no runs here") }
	var cancelled []string
	failing := false
	serve := func(cancel func(context.Context, string) error) *httptest.Server {
		s, err := New(Config{RunsDir: t.TempDir(), State: pg.URL, Start: noStart, Cancel: cancel})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		ts := httptest.NewServer(s.Handler())
		t.Cleanup(ts.Close)
		return ts
	}
	withCancel := serve(func(_ context.Context, id string) error {
		if failing {
			return errors.New("engine unreachable")
		}
		cancelled = append(cancelled, id)
		return nil
	})
	without := serve(nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	stop := func(ts *httptest.Server, id string) int {
		t.Helper()
		resp, err := client.Post(ts.URL+"/runs/"+id+"/cancel", "application/x-www-form-urlencoded", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := stop(without, "going-1"); code != http.StatusNotFound {
		t.Errorf("a viewer that cannot stop runs elsewhere answered %d", code)
	}
	if code := stop(withCancel, "done-1"); code != http.StatusNotFound {
		t.Errorf("stopping a finished run answered %d", code)
	}
	if code := stop(withCancel, "nowhere-1"); code != http.StatusNotFound {
		t.Errorf("stopping a run that is nowhere answered %d", code)
	}
	if len(cancelled) != 0 {
		t.Fatalf("cancelled %v", cancelled)
	}
	if code := stop(withCancel, "going-1"); code != http.StatusSeeOther || len(cancelled) != 1 || cancelled[0] != "going-1" {
		t.Errorf("stop of a run going elsewhere: %d, cancelled %v", code, cancelled)
	}
	failing = true
	if code := stop(withCancel, "going-1"); code != http.StatusBadGateway {
		t.Errorf("a failed cancellation answered %d", code)
	}
	resp, err := http.Get(withCancel.URL + "/runs/stopped-1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `id="run-stopped"`) || strings.Contains(string(body), "deepresearch resume") ||
		!strings.Contains(string(body), "start the question again") {
		t.Errorf("stopped durable run page:\n%.3000s", body)
	}
}
