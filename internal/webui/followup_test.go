package webui

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/research"
)

// TestFollowUpForm: a finished run's page offers a follow-up form that posts the run's id and sources; the
// follow-up it starts carries the earlier run and links its report. A follow-up of a run that is not there, not
// named by an id, or not finished is refused with the form.
func TestFollowUpForm(t *testing.T) {
	eng := researchtest.New(t, 0)
	runs := t.TempDir()
	hold := make(chan struct{})
	s, err := New(Config{RunsDir: runs, WebProviders: []string{"searxng"}, Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
		if req.Question == "Hold on?" {
			req.OnEvent(research.Event{Kind: research.EventRunStart, Stage: research.StageRun})
			<-hold
			return nil, context.Canceled
		}
		cfg := eng.Config(req.Question, req.RunID, req.OutDir, req.OnEvent)
		cfg.From = req.From
		return research.Run(ctx, cfg)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(hold); s.Close() })
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	start := func(form url.Values) (int, string, string) {
		t.Helper()
		resp, err := noRedirect.PostForm(ts.URL+"/runs", form)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, strings.TrimPrefix(resp.Header.Get("Location"), "/runs/"), string(body)
	}
	waitDone := func(id string) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if info, err := research.LoadRunInfo(filepath.Join(runs, id)); err == nil && info.Status == research.RunDone {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s did not finish", id)
			}
		}
	}
	code, first, body := start(url.Values{"question": {"What does a channel send synchronize with?"}, "corpus": {eng.Dir}})
	if code != http.StatusSeeOther {
		t.Fatalf("start: %d\n%s", code, body)
	}
	waitDone(first)
	// The folder says done a moment before the viewer's live run does: the page offers the form once the viewer
	// has seen the run end.
	var page []byte
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(ts.URL + "/runs/" + first)
		if err != nil {
			t.Fatal(err)
		}
		page, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(page), `id="follow-up-form"`) || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{`id="follow-up-form"`, `name="from" value="` + first + `"`, `name="corpus" value="` + eng.Dir + `"`} {
		if !strings.Contains(string(page), want) {
			t.Fatalf("the finished run's page lacks %s:\n%s", want, page)
		}
	}
	code, next, body := start(url.Values{"question": {"What does a mutex guarantee?"}, "corpus": {eng.Dir}, "from": {first}})
	if code != http.StatusSeeOther {
		t.Fatalf("follow-up: %d\n%s", code, body)
	}
	waitDone(next)
	rep, err := research.LoadReport(filepath.Join(runs, next))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Follows == nil || rep.Follows.RunID != first || !strings.Contains(rep.Markdown, "](../"+first+"/report.md)") {
		t.Fatalf("the follow-up does not follow %s:\n%s", first, rep.Markdown)
	}

	code, held, _ := start(url.Values{"question": {"Hold on?"}, "corpus": {eng.Dir}})
	if code != http.StatusSeeOther {
		t.Fatalf("start: %d", code)
	}
	for _, tc := range []struct{ from, want string }{
		{"../" + first, "There is no run"},
		{"20991231-000000-000000", "There is no run"},
		{held, "only a finished run can be followed up"},
	} {
		code, _, body := start(url.Values{"question": {"Why?"}, "corpus": {eng.Dir}, "from": {tc.from}})
		if code != http.StatusBadRequest || !strings.Contains(body, tc.want) || !strings.Contains(body, `name="from" value="`) {
			t.Fatalf("from %q: %d, want 400 with %q and the form keeping from:\n%s", tc.from, code, tc.want, body)
		}
	}
}
