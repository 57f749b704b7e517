package scaletest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/internal/mcpserver"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
)

var servingRE = regexp.MustCompile(`serving on (http://[0-9.:]+)`)

// serve starts a long-lived surface (serve, mcp --http) and returns its base URL once it listens.
func (d *deployment) serve(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	p := d.command(ctx, args...)
	p.cmd.Stdout = nil
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		_ = p.cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case base := <-found:
		return base
	case <-time.After(time.Minute):
		t.Fatalf("deepresearch %s did not start serving", strings.Join(args, " "))
	}
	return ""
}

// startViewerRun submits the form of a viewer and returns the run's page path.
func startViewerRun(t *testing.T, base, docs string) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(base+"/runs", url.Values{"question": {question}, "corpus": {docs}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/runs/") {
		t.Fatalf("start: %s, location %q", resp.Status, loc)
	}
	return loc
}

// followEvents reads a viewer run's event stream to its end, calling onEvent with each progress event, and
// returns the end frame's data.
func followEvents(t *testing.T, ctx context.Context, eventsURL string, onEvent func(research.Event)) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", eventsURL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("events: %s %s", resp.Status, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := strings.TrimPrefix(line, "data: ")
			if event == "end" {
				return data
			}
			var e research.Event
			if onEvent != nil && json.Unmarshal([]byte(data), &e) == nil {
				onEvent(e)
			}
		}
	}
	t.Fatalf("the event stream ended without an end event: %v", sc.Err())
	return ""
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// workflowStatus is what resume --temporal says of a run: "running", "completed", "canceled", ….
func (d *deployment) workflowStatus(t *testing.T, ctx context.Context, runID string) string {
	t.Helper()
	p := d.command(ctx, "resume", "--temporal", d.temporal, "--namespace", d.namespace, runID)
	if err := p.cmd.Run(); err != nil {
		t.Fatalf("resume --temporal %s: %v\n%s", runID, err, p.stderr.String())
	}
	m := regexp.MustCompile(`on Temporal \((\w+)\)`).FindStringSubmatch(p.stdout.String())
	if m == nil {
		t.Fatalf("resume --temporal said %q", p.stdout.String())
	}
	return m[1]
}

func (d *deployment) waitWorkflow(t *testing.T, ctx context.Context, runID, want string) {
	t.Helper()
	got := ""
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if got = d.workflowStatus(t, ctx, runID); got == want {
			return
		}
	}
	t.Errorf("workflow of %s is %s, want %s", runID, got, want)
}

// The web viewer and the MCP server as Temporal clients, against a real Temporal server, PostgreSQL and a worker
// process: a run submitted from the viewer is followed live and its report written and served as a local run's;
// Stop cancels the workflow; a second viewer on "another machine" (its own empty runs folder, only the shared
// state) lists the run and shows its report and the quoted source texts; the MCP server submits a run with
// progress notifications, cancelling the call cancels the workflow, and a second MCP server publishes the
// viewer's run as a resource.
func TestViewerAndMCPOnTemporal(t *testing.T) {
	d := setup(t, 100*time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	d.startWorker(t, ctx, 0, 4)
	on := []string{"--temporal", d.temporal, "--namespace", d.namespace, "--state", d.state}
	runsA := t.TempDir()
	viewer := d.serve(t, ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--runs", runsA, "--root", d.docs}, on...)...)

	// A run from the viewer, followed live to its end.
	loc := startViewerRun(t, viewer, d.docs)
	id := path.Base(loc)
	var kinds, stages []string
	end := followEvents(t, ctx, viewer+loc+"/events", func(e research.Event) {
		kinds = append(kinds, e.Kind)
		stages = append(stages, e.Stage)
	})
	if !strings.Contains(end, `"done"`) {
		t.Fatalf("viewer run %s ended %s", id, end)
	}
	// The page streams the events the workers stored in the shared state, as it streams a local run's.
	if !slices.Contains(kinds, research.EventEvidence) || !slices.Contains(kinds, research.EventRead) ||
		!slices.Contains(stages, research.StageScope) || !slices.Contains(stages, research.StageSynth) {
		t.Errorf("progress of the durable run: kinds %v, stages %v", kinds, stages)
	}
	rep, err := research.LoadReport(filepath.Join(runsA, id))
	if err != nil {
		t.Fatalf("the viewer wrote no report: %v", err)
	}
	db, err := state.OpenRunReadOnly(ctx, d.state, id)
	if err != nil {
		t.Fatalf("run %s is not in the shared state: %v", id, err)
	}
	checkRun(t, ctx, db, rep)
	db.Close()
	if st := d.workflowStatus(t, ctx, id); st != "completed" {
		t.Errorf("workflow of %s: %s", id, st)
	}
	checkShown := func(name, base string) {
		t.Helper()
		code, page := get(t, base+"/runs/"+id)
		if code != http.StatusOK || !strings.Contains(page, "/runs/"+id+"/cite/1") {
			t.Errorf("%s: run page %d:\n%.2000s", name, code, page)
		}
		code, src := get(t, base+"/runs/"+id+"/cite/1")
		if code != http.StatusOK || !strings.Contains(src, `<mark id="quote">`) || strings.Contains(src, "warn-box") ||
			strings.Contains(src, `class="error"`) {
			t.Errorf("%s: the source of [1] is not shown with its quote (%d):\n%.3000s", name, code, src)
		}
		if code, md := get(t, base+"/runs/"+id+"/report.md"); code != http.StatusOK || md != rep.Markdown {
			t.Errorf("%s: report.md %d", name, code)
		}
	}
	checkShown("the submitting viewer", viewer)

	// Stop cancels the workflow. The model is held while a run is stopped, so the run cannot finish first.
	release := d.model.Hold()
	t.Cleanup(release)
	loc2 := startViewerRun(t, viewer, d.docs)
	id2 := path.Base(loc2)
	stopped := false
	end2 := followEvents(t, ctx, viewer+loc2+"/events", func(e research.Event) {
		if !stopped { // a worker is on it: the workflow exists
			stopped = true
			resp, err := http.Post(viewer+loc2+"/cancel", "application/x-www-form-urlencoded", nil)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}
	})
	if !strings.Contains(end2, `"stopped"`) {
		t.Errorf("stopped run ended %s", end2)
	}
	d.waitWorkflow(t, ctx, id2, "canceled")
	release()

	// Stop on a viewer that did not start the run: a second viewer on Temporal cancels the durable run of the
	// shared state by its id, and its page does not offer resume, which cannot continue a cancelled workflow.
	viewerB := d.serve(t, ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--runs", t.TempDir(), "--root", d.docs}, on...)...)
	release = d.model.Hold()
	t.Cleanup(release)
	loc3 := startViewerRun(t, viewer, d.docs)
	id3 := path.Base(loc3)
	stoppedB := false
	followEvents(t, ctx, viewer+loc3+"/events", func(e research.Event) {
		if stoppedB {
			return
		}
		// Once the run is in the shared state as running, the other viewer can stop it.
		if code, body := get(t, viewerB+"/api/runs"); code != http.StatusOK || !strings.Contains(body, `"id":"`+id3+`"`) {
			return
		}
		stoppedB = true
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Post(viewerB+loc3+"/cancel", "application/x-www-form-urlencoded", nil)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Errorf("the other viewer's Stop of %s answered %d", id3, resp.StatusCode)
		}
	})
	if !stoppedB {
		t.Fatalf("run %s never appeared in the other viewer", id3)
	}
	d.waitWorkflow(t, ctx, id3, "canceled")
	release()
	status3 := ""
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && status3 != research.RunStopped; time.Sleep(500 * time.Millisecond) {
		_, body := get(t, viewerB+"/api/runs")
		var rs []research.RunSummary
		_ = json.Unmarshal([]byte(body), &rs)
		for _, r := range rs {
			if r.ID == id3 {
				status3 = r.Status
			}
		}
	}
	if status3 != research.RunStopped {
		t.Errorf("the cancelled run %s is listed as %q in the shared state", id3, status3)
	}
	if code, body := get(t, viewerB+loc3); code != http.StatusOK || strings.Contains(body, "deepresearch resume") || !strings.Contains(body, "start the question again") {
		t.Errorf("the stopped durable run's page %d:\n%.3000s", code, body)
	}

	// Another machine: its own empty runs folder, no Temporal, the shared state.
	other := d.serve(t, ctx, "serve", "--addr", "127.0.0.1:0", "--runs", t.TempDir(), "--state", d.state)
	code, body := get(t, other+"/api/runs")
	var listed []research.RunSummary
	if code != http.StatusOK || json.Unmarshal([]byte(body), &listed) != nil {
		t.Fatalf("api/runs %d: %s", code, body)
	}
	found := false
	for _, r := range listed {
		if r.ID == id {
			found = r.Status == research.RunDone && r.Question == question
		}
	}
	if !found {
		t.Errorf("the other viewer does not list %s as done: %s", id, body)
	}
	checkShown("a viewer on another machine", other)
	if end := followEvents(t, ctx, other+"/runs/"+id+"/events", nil); !strings.Contains(end, `"done"`) {
		t.Errorf("the other viewer's stream of %s ended %s", id, end)
	}

	// The MCP server on Temporal (stdio): progress notifications, the report, and cancellation.
	progress := make(chan float64, 256)
	client := mcp.NewClient(&mcp.Implementation{Name: "scaletest", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case progress <- req.Params.Progress:
			default:
			}
		},
	})
	mcpRuns := t.TempDir()
	p := d.command(ctx, append([]string{"mcp", "--runs", mcpRuns, "--corpus", d.docs}, on...)...)
	p.cmd.Stdout = nil
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: p.cmd}, nil)
	if err != nil {
		t.Fatalf("mcp: %v\n%s", err, p.stderr.String())
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "deep_research", Arguments: map[string]any{"question": question},
		Meta: mcp.Meta{"progressToken": "t1"}})
	if err != nil || res.IsError {
		t.Fatalf("deep_research: %v %+v\n%s", err, res, p.stderr.String())
	}
	var out mcpserver.Output
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || out.Status != mcpserver.StatusDone || out.RunID == "" {
		t.Fatalf("deep_research output %s", b)
	}
	if len(progress) == 0 {
		t.Error("no progress notification while the durable run went on")
	}
	if _, err := research.LoadReport(filepath.Join(mcpRuns, out.RunID)); err != nil {
		t.Errorf("the MCP server wrote no report: %v", err)
	}
	if st := d.workflowStatus(t, ctx, out.RunID); st != "completed" {
		t.Errorf("workflow of the MCP run: %s", st)
	}
	for len(progress) > 0 {
		<-progress
	}
	before, err := state.ListRuns(ctx, d.state)
	if err != nil {
		t.Fatal(err)
	}
	release = d.model.Hold()
	t.Cleanup(release)
	cctx, stop := context.WithCancel(ctx)
	callDone := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "deep_research", Arguments: map[string]any{"question": question},
			Meta: mcp.Meta{"progressToken": "t2"}})
		if err == nil && !res.IsError {
			err = errors.New("the call completed")
		}
		callDone <- err
	}()
	select {
	case <-progress:
	case <-time.After(time.Minute):
		t.Fatal("no progress from the second MCP call")
	}
	var cancelled string
	for deadline := time.Now().Add(time.Minute); cancelled == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		after, err := state.ListRuns(ctx, d.state)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range after {
			if !slices.Contains(before, r) {
				cancelled = r
			}
		}
	}
	stop()
	if err := <-callDone; err != nil && err.Error() == "the call completed" {
		t.Error("the cancelled call completed")
	}
	if cancelled == "" {
		t.Fatal("the second MCP run never reached the shared state")
	}
	d.waitWorkflow(t, ctx, cancelled, "canceled")
	release()

	// A second MCP server with only the shared state publishes the viewer's run.
	client2 := mcp.NewClient(&mcp.Implementation{Name: "scaletest", Version: "1"}, nil)
	p2 := d.command(ctx, "mcp", "--runs", t.TempDir(), "--state", d.state)
	p2.cmd.Stdout = nil
	cs2, err := client2.Connect(ctx, &mcp.CommandTransport{Command: p2.cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	lr, err := cs2.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listedURI := false
	for _, r := range lr.Resources {
		listedURI = listedURI || r.URI == mcpserver.ReportURI(id)
	}
	if !listedURI {
		t.Errorf("the second MCP server does not publish %s", mcpserver.ReportURI(id))
	}
	rr, err := cs2.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.ReportURI(id)})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != rep.Markdown {
		t.Errorf("read %s: %v", mcpserver.ReportURI(id), err)
	}
}
