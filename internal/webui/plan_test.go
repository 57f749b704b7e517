package webui

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/research"
)

// TestReviewThePlanOnThePlanPage: a form that asks to review the plan leads to the plan page, which shows the
// plan as YAML before anything is searched; an edit that is not a plan is refused with the reason and the
// person's text kept; a good edit is what the run researches; a decline ends the run with nothing searched.
func TestReviewThePlanOnThePlanPage(t *testing.T) {
	researched := make(chan *research.Plan, 1)
	failed := make(chan error, 1)
	s := newTestServer(t, "", func(ctx context.Context, req RunRequest) (*research.Report, error) {
		if req.ReviewPlan == nil {
			t.Error("the form asked to review the plan, but the run has no review")
			return nil, context.Canceled
		}
		p, err := req.ReviewPlan(ctx, &research.Plan{Question: req.Question, Depth: research.DepthStandard,
			SubQuestions: []research.SubQuestion{{ID: "q1", Question: "How does the kiln heat?", Queries: []string{"kiln absorber"}}}})
		if err != nil {
			failed <- err
			return nil, err
		}
		researched <- p
		return &research.Report{Question: req.Question, Markdown: "# done\n"}, nil
	})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	start := func() string {
		resp, err := client.PostForm(ts.URL+"/runs", url.Values{"question": {"How does the kiln work?"}, "web": {"searxng"}, "review": {"1"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || !strings.HasSuffix(loc, "/plan") {
			t.Fatalf("POST /runs: %d → %q", resp.StatusCode, loc)
		}
		return loc
	}
	get := func(path string) (int, string) {
		resp, err := client.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitPlan := func(path string) string {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if code, body := get(path); code == http.StatusOK && strings.Contains(body, `name="plan"`) {
				return body
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal("the plan page never showed the plan")
		return ""
	}
	post := func(path string, v url.Values) (int, string) {
		resp, err := client.PostForm(ts.URL+path, v)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	path := start()
	body := waitPlan(path)
	if !strings.Contains(body, "How does the kiln heat?") || !strings.Contains(body, "kiln absorber") {
		t.Fatalf("the plan page does not show the plan:\n%s", body)
	}
	code, body := post(path, url.Values{"plan": {"sub_questions: [unclosed # my edit"}, "action": {"accept"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "not valid YAML") || !strings.Contains(body, "[unclosed # my edit") {
		t.Fatalf("an invalid edit: %d\n%s", code, body)
	}
	if code, body := get(path); code != http.StatusOK || !strings.Contains(body, "[unclosed # my edit") {
		t.Fatalf("the edit is lost on reload: %d\n%s", code, body)
	}
	if code, _ := post(path, url.Values{"plan": {"- How fast does it dry oak?\n- What does it cost?\n"}, "action": {"accept"}}); code != http.StatusSeeOther {
		t.Fatalf("a good edit: %d", code)
	}
	select {
	case p := <-researched:
		if len(p.SubQuestions) != 2 || p.SubQuestions[1].Question != "What does it cost?" {
			t.Fatalf("researched %+v", p.SubQuestions)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not go on after the plan was accepted")
	}

	path = start()
	waitPlan(path)
	if code, _ := post(path, url.Values{"action": {"decline"}}); code != http.StatusSeeOther {
		t.Fatalf("decline: %d", code)
	}
	select {
	case err := <-failed:
		if !strings.Contains(err.Error(), "nothing was searched") {
			t.Fatalf("decline: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the declined run did not end")
	}
	if code, _ := post(path, url.Values{"action": {"accept"}, "plan": {"- Why?"}}); code != http.StatusConflict {
		t.Errorf("an answer with no plan waiting: %d", code)
	}
}
