package webui

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/openai"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/llmroles"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/sources"
)

// clarifyQuestions are what the fake planner asks; the second is hostile markup, which the page must show as text.
var clarifyQuestions = []string{"Which Kestrel kiln do you mean?", `Which period? <script>alert("x")</script>`}

// modelViewer is a viewer whose runs are the whole research graph against the fake OpenAI-compatible server over
// the Kestrel kiln pages, with the form's clarifying questions wired as the command line wires them
// (RunRequest.Research).
type modelViewer struct {
	s    *Server
	ts   *httptest.Server
	fake *openaifake.Server
	mu   sync.Mutex
	done map[string]error // run id → how its run ended
	dirs map[string]string
}

func newModelViewer(t *testing.T, cfg Config, fake openaifake.Config) *modelViewer {
	t.Helper()
	site := openaifake.KilnSite(t)
	srv := openaifake.New(t, fake)
	m, err := openai.New(openai.Config{Model: "fake-research", BaseURL: srv.BaseURL(), APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	v := &modelViewer{fake: srv, done: map[string]error{}, dirs: map[string]string{}}
	cfg.RunsDir = t.TempDir()
	cfg.WebProviders = []string{"searxng"}
	cfg.Start = func(ctx context.Context, req RunRequest) (*research.Report, error) {
		q := req.Research()
		ledger := &llm.Ledger{}
		model := llm.Metered(llm.WithRetry(m, llm.RetryConfig{CallTimeout: 10 * time.Second,
			Sleep: func(context.Context, time.Duration) error { return nil }}), ledger, "fake")
		rc := research.Config{Question: q.Question, RunID: q.RunID, OutDir: q.OutDir, OnEvent: q.OnEvent,
			Clarify: q.Clarify, ReviewPlan: q.ReviewPlan, Fetcher: site.Fetcher(), Ledger: ledger,
			Roles: llmroles.New(llmroles.Config{Planner: model, Searcher: model, Analyst: model, Verifier: model,
				Synthesizer: model, Sources: []sources.Searcher{anyWordSite{site}}, Logger: slog.New(slog.DiscardHandler)})}
		rep, err := research.Run(ctx, rc)
		v.mu.Lock()
		v.done[req.RunID], v.dirs[req.RunID] = err, req.OutDir
		v.mu.Unlock()
		return rep, err
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v.s = s
	v.ts = httptest.NewServer(s.Handler())
	t.Cleanup(func() { v.ts.Close(); s.Close() })
	return v
}

// ended waits for run id to end and returns its error.
func (v *modelViewer) ended(t *testing.T, id string) error {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		v.mu.Lock()
		err, ok := v.done[id]
		v.mu.Unlock()
		if ok {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("run %s never ended", id)
	return nil
}

func (v *modelViewer) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := noRedirect.Get(v.ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (v *modelViewer) post(t *testing.T, path string, form url.Values, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, v.ts.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// start posts the form and returns the new run's id.
func (v *modelViewer) start(t *testing.T, form url.Values) string {
	t.Helper()
	code, _ := v.post(t, "/runs", form)
	if code != http.StatusSeeOther {
		t.Fatalf("POST /runs: %d", code)
	}
	// The id is the newest live run's.
	v.s.mu.Lock()
	defer v.s.mu.Unlock()
	var newest *liveRun
	for _, lr := range v.s.live {
		if newest == nil || lr.created.After(newest.created) {
			newest = lr
		}
	}
	return newest.id
}

var askedRE = regexp.MustCompile(`name="asked" value="([0-9a-f]+)"`)

// waitQuestions polls the run's page until it shows the questions' form and returns the page and its nonce.
func (v *modelViewer) waitQuestions(t *testing.T, id string) (string, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if code, body := v.get(t, "/runs/"+id); code == http.StatusOK {
			if m := askedRE.FindStringSubmatch(body); m != nil {
				return body, m[1]
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("run %s never showed its questions", id)
	return "", ""
}

func kilnForm(extra ...string) url.Values {
	v := url.Values{"question": {"What does a Kestrel kiln cost?"}, "web": {"searxng"}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return v
}

// TestClarifyingQuestionsOnTheRunPage drives the whole flow over HTTP: a form asking for clarifying questions
// starts a run whose page shows the planner's questions as a form (escaped), before anything is searched; the
// answers posted (one left empty, one with control bytes) go into the plan the run researches and its research
// log, and the page then says they did. Posting again, from a second window, is refused with a clear message.
func TestClarifyingQuestionsOnTheRunPage(t *testing.T) {
	v := newModelViewer(t, Config{}, openaifake.Config{GapSubQuestion: -1, Clarify: clarifyQuestions})
	if _, body := v.get(t, "/"); !strings.Contains(body, `name="clarify"`) || strings.Contains(body, `name="clarify" type="checkbox" value="1" checked`) {
		t.Fatalf("the form has no clarify box, or ticks it while the configuration does not:\n%s", body)
	}
	id := v.start(t, kilnForm("clarify", "1"))
	page, nonce := v.waitQuestions(t, id)
	if !strings.Contains(page, clarifyQuestions[0]) || strings.Contains(page, "<script>alert") || !strings.Contains(page, "&lt;script&gt;alert") {
		t.Fatalf("the page does not show the questions, escaped:\n%s", page)
	}
	if n := v.fake.Count(openaifake.RoleSearcher); n != 0 {
		t.Fatalf("%d searches while the questions wait", n)
	}
	code, _ := v.post(t, "/runs/"+id+"/clarify", url.Values{"asked": {nonce}, "a1": {"the \x1bsolar\x00\x07 one"}, "a2": {""}, "action": {"answer"}})
	if code != http.StatusSeeOther {
		t.Fatalf("answering: %d", code)
	}
	// A second window posting the same form after the first: refused, saying the questions were answered.
	code, body := v.post(t, "/runs/"+id+"/clarify", url.Values{"asked": {nonce}, "a1": {"the other one"}, "action": {"answer"}})
	if code != http.StatusConflict || !strings.Contains(body, "already answered") {
		t.Errorf("a second answer: %d %s", code, body)
	}
	if err := v.ended(t, id); err != nil {
		t.Fatalf("the run failed: %v", err)
	}
	v.mu.Lock()
	dir := v.dirs[id]
	v.mu.Unlock()
	plan, err := os.ReadFile(filepath.Join(dir, research.PlanFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(plan), "the solar one") || strings.Contains(string(plan), "the other one") {
		t.Errorf("the answer did not reach the plan as given (control bytes stripped), or the second one did:\n%s", plan)
	}
	if !strings.Contains(eventsOf(t, dir), `clarified: `) && !strings.Contains(eventsOf(t, dir), `"kind":"clarify"`) {
		t.Errorf("the run's events do not record the questions")
	}
	_, page = v.get(t, "/runs/"+id)
	if !strings.Contains(page, `id="clarify-done"`) || strings.Contains(page, `name="asked"`) {
		t.Errorf("the page after answering:\n%s", page)
	}
}

func eventsOf(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, research.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestClarifyingQuestionsHostilePosts: answers posted to a run that asked nothing, to a run that does not
// exist, with another run's nonce, oversized, from another site, or with a bad Host are refused and leave the
// questions waiting; a skip lets the run plan without answers.
func TestClarifyingQuestionsHostilePosts(t *testing.T) {
	v := newModelViewer(t, Config{}, openaifake.Config{GapSubQuestion: -1, Clarify: clarifyQuestions})
	plain := v.start(t, kilnForm()) // clarify not asked for
	a := v.start(t, kilnForm("clarify", "1"))
	b := v.start(t, kilnForm("clarify", "1"))
	_, nonceA := v.waitQuestions(t, a)
	_, nonceB := v.waitQuestions(t, b)
	if err := v.ended(t, plain); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		form       url.Values
		header     []string
		code       int
		says       string
	}{
		{"a run that asked nothing", "/runs/" + plain + "/clarify", url.Values{"asked": {nonceA}, "a1": {"x"}}, nil, http.StatusConflict, "asks no clarifying questions"},
		{"no such run", "/runs/nosuchrun/clarify", url.Values{"asked": {nonceA}, "a1": {"x"}}, nil, http.StatusNotFound, "not running"},
		{"a bad run id", "/runs/-bad/clarify", url.Values{"asked": {nonceA}}, nil, http.StatusBadRequest, ""},
		{"another run's answers", "/runs/" + a + "/clarify", url.Values{"asked": {nonceB}, "a1": {"x"}}, nil, http.StatusConflict, "not for the questions"},
		{"no nonce", "/runs/" + a + "/clarify", url.Values{"a1": {"x"}}, nil, http.StatusConflict, "not for the questions"},
		{"an oversized answer", "/runs/" + a + "/clarify", url.Values{"asked": {nonceA}, "a1": {strings.Repeat("é", research.MaxAnswerRunes+1)}}, nil, http.StatusRequestEntityTooLarge, "at most 1000"},
		{"an oversized body", "/runs/" + a + "/clarify", url.Values{"asked": {nonceA}, "a1": {strings.Repeat("x", maxClarifyForm)}}, nil, http.StatusRequestEntityTooLarge, ""},
		{"another site's page", "/runs/" + a + "/clarify", url.Values{"asked": {nonceA}, "a1": {"x"}}, []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, "cross-origin"},
		{"a rebinding Host", "/runs/" + a + "/clarify", url.Values{"asked": {nonceA}, "a1": {"x"}}, []string{"Host", "evil.example"}, http.StatusForbidden, "loopback"},
	} {
		var code int
		var body string
		if len(c.header) == 2 && c.header[0] == "Host" {
			req, _ := http.NewRequest(http.MethodPost, v.ts.URL+c.path, strings.NewReader(c.form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Host = c.header[1]
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			bb, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			code, body = resp.StatusCode, string(bb)
		} else {
			code, body = v.post(t, c.path, c.form, c.header...)
		}
		if code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.name, code, body, c.code, c.says)
		}
	}
	// Both runs still wait, each with its own questions.
	if _, n := v.waitQuestions(t, a); n != nonceA {
		t.Error("run a's questions changed")
	}
	if code, _ := v.post(t, "/runs/"+a+"/clarify", url.Values{"asked": {nonceA}, "action": {"skip"}, "a1": {"ignored"}}); code != http.StatusSeeOther {
		t.Fatalf("skip: %d", code)
	}
	if err := v.ended(t, a); err != nil {
		t.Fatal(err)
	}
	v.mu.Lock()
	dirA := v.dirs[a]
	v.mu.Unlock()
	if plan, _ := os.ReadFile(filepath.Join(dirA, research.PlanFile)); strings.Contains(string(plan), "ignored") {
		t.Errorf("a skip's fields reached the plan:\n%s", plan)
	}
	if _, page := v.get(t, "/runs/"+a); !strings.Contains(page, "skipped") {
		t.Errorf("the page does not say the questions were skipped")
	}
	if code, _ := v.post(t, "/runs/"+b+"/clarify", url.Values{"asked": {nonceB}, "a1": {"the solar one"}}); code != http.StatusSeeOther {
		t.Fatalf("run b's answer after a's: %d", code)
	}
	if err := v.ended(t, b); err != nil {
		t.Fatal(err)
	}
}

// TestClarifyingQuestionsRaceFirstWins: two windows post answers at once; exactly one is taken, the other is told
// the questions were already answered, and the plan holds the one taken.
func TestClarifyingQuestionsRaceFirstWins(t *testing.T) {
	v := newModelViewer(t, Config{}, openaifake.Config{GapSubQuestion: -1, Clarify: clarifyQuestions})
	id := v.start(t, kilnForm("clarify", "1"))
	_, nonce := v.waitQuestions(t, id)
	answers := []string{"the window one answer", "the window two answer"}
	codes := make([]int, 2)
	bodies := make([]string, 2)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			codes[i], bodies[i] = v.post(t, "/runs/"+id+"/clarify", url.Values{"asked": {nonce}, "a1": {answers[i]}})
		}()
	}
	close(gate)
	wg.Wait()
	won := -1
	for i, c := range codes {
		if c == http.StatusSeeOther {
			if won >= 0 {
				t.Fatal("both answers were taken")
			}
			won = i
		} else if c != http.StatusConflict || !strings.Contains(bodies[i], "already answered") {
			t.Errorf("the losing window got %d %q", c, bodies[i])
		}
	}
	if won < 0 {
		t.Fatalf("no answer was taken: %v %q", codes, bodies)
	}
	if err := v.ended(t, id); err != nil {
		t.Fatal(err)
	}
	v.mu.Lock()
	dir := v.dirs[id]
	v.mu.Unlock()
	plan, _ := os.ReadFile(filepath.Join(dir, research.PlanFile))
	if !strings.Contains(string(plan), answers[won]) || strings.Contains(string(plan), answers[1-won]) {
		t.Errorf("the plan does not hold exactly the answer taken (%q):\n%s", answers[won], plan)
	}
}

// TestClarifyingQuestionsTimeOut: questions nobody answers within the viewer's bound (3 s: long enough for a
// loaded machine to read the page's form first) let the run plan without answers; the research log, the run's events and its page say so, and a late answer is refused saying why.
func TestClarifyingQuestionsTimeOut(t *testing.T) {
	v := newModelViewer(t, Config{ClarifyWait: 3 * time.Second, Clarify: true}, openaifake.Config{GapSubQuestion: -1, Clarify: clarifyQuestions})
	if _, body := v.get(t, "/"); !strings.Contains(body, `name="clarify" type="checkbox" value="1" checked`) {
		t.Fatalf("the configuration's default does not tick the box:\n%s", body)
	}
	id := v.start(t, kilnForm("clarify", "1"))
	_, nonce := v.waitQuestions(t, id)
	if err := v.ended(t, id); err != nil {
		t.Fatalf("an unanswered run failed: %v", err)
	}
	v.mu.Lock()
	dir := v.dirs[id]
	v.mu.Unlock()
	if ev := eventsOf(t, dir); !strings.Contains(ev, `"kind":"unanswered"`) || !strings.Contains(ev, "not answered within 3s") {
		t.Errorf("the events do not say the questions went unanswered:\n%s", ev)
	}
	code, body := v.post(t, "/runs/"+id+"/clarify", url.Values{"asked": {nonce}, "a1": {"too late"}})
	if code != http.StatusConflict || !strings.Contains(body, "not answered within 3s") {
		t.Errorf("a late answer: %d %q", code, body)
	}
	if _, page := v.get(t, "/runs/"+id); !strings.Contains(page, `id="clarify-late"`) {
		t.Errorf("the page does not say the questions went unanswered:\n%s", page)
	}
}

// TestFormRefusesAskingWhenRunsCannotAsk: a viewer whose runs cannot ask (durable runs) offers neither box and
// refuses a form that ticks one before any run starts.
func TestFormRefusesAskingWhenRunsCannotAsk(t *testing.T) {
	started := false
	s, err := New(Config{RunsDir: t.TempDir(), WebProviders: []string{"searxng"}, Clarify: true, AskUnavailable: "they run on Temporal workers",
		Start: func(context.Context, RunRequest) (*research.Report, error) {
			started = true
			return nil, context.Canceled
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(b), `name="clarify"`) || strings.Contains(string(b), `name="review"`) || !strings.Contains(string(b), "they run on Temporal workers") {
		t.Errorf("the form offers asking:\n%s", b)
	}
	for _, box := range []string{"clarify", "review"} {
		resp, err := noRedirect.PostForm(ts.URL+"/runs", kilnForm(box, "1"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "cannot ask you anything") {
			t.Errorf("%s: %d", box, resp.StatusCode)
		}
	}
	s.Wait()
	if started {
		t.Error("a run started")
	}
}

// anyWordSite searches the site for pages holding any of the query's longer words: a search engine's recall.
type anyWordSite struct{ *researchtest.Site }

func (anyWordSite) Name() string { return "site" }
func (s anyWordSite) Search(_ context.Context, q string, limit int) ([]sources.Result, error) {
	seen := map[string]bool{}
	var out []sources.Result
	for _, w := range strings.Fields(strings.ToLower(q)) {
		if w = strings.Trim(w, "?,.:"); len(w) < 4 {
			continue
		}
		for _, r := range s.Site.Search(w, 0) {
			if !seen[r.URL] {
				seen[r.URL] = true
				out = append(out, r)
			}
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// TestBrowserClarifyingQuestions is the person's path in headless Chromium: tick the box on the form, see the
// planner's questions appear on the run's page (the hostile one as text), answer one, send, and read the report
// of a run whose plan holds the answer.
func TestBrowserClarifyingQuestions(t *testing.T) {
	v := newModelViewer(t, Config{}, openaifake.Config{GapSubQuestion: -1, Clarify: clarifyQuestions})
	base := browser(t)
	ctx, cancel := context.WithTimeout(base, 90*time.Second)
	defer cancel()
	shots := artifacts(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(v.ts.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("run-form")),
		chromedp.SendKeys(chromedp.ID("question"), "What does a Kestrel kiln cost?"),
		chromedp.SetValue(chromedp.ID("web"), "searxng"),
		chromedp.Click(chromedp.ID("clarify")),
		chromedp.Click(chromedp.ID("start")),
		chromedp.WaitVisible(chromedp.ID("clarify-form")),
	); err != nil {
		dumpPage(t, base, shots)
		t.Fatalf("start a run that asks: %v", err)
	}
	screenshot(t, ctx, shots, "01-questions.png")
	labels, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#clarify-form label")).map(l => l.innerText)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) != 2 || !strings.Contains(labels[1], `<script>alert("x")</script>`) {
		t.Fatalf("the questions shown: %q", labels)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("a1"), "the solar one"),
		chromedp.Click(chromedp.ID("clarify-send")),
		chromedp.WaitVisible(chromedp.ID("clarify-done")),
		chromedp.WaitVisible(chromedp.ID("report")),
	); err != nil {
		dumpPage(t, base, shots)
		t.Fatalf("answer and read the report: %v", err)
	}
	screenshot(t, ctx, shots, "02-report.png")
	v.mu.Lock()
	var dir string
	for _, d := range v.dirs {
		dir = d
	}
	v.mu.Unlock()
	plan, err := os.ReadFile(filepath.Join(dir, research.PlanFile))
	if err != nil || !strings.Contains(string(plan), "the solar one") {
		t.Errorf("the plan does not hold the answer typed (%v):\n%s", err, plan)
	}
}

// TestClarifyThenReview: a form asking for both goes to the plan page, which sends the person to the run's page
// while the questions wait; the answer leads back to the plan page, where the plan made with it is reviewed.
func TestClarifyThenReview(t *testing.T) {
	v := newModelViewer(t, Config{}, openaifake.Config{GapSubQuestion: -1, Clarify: clarifyQuestions})
	code, _ := v.post(t, "/runs", kilnForm("clarify", "1", "review", "1"))
	if code != http.StatusSeeOther {
		t.Fatalf("POST /runs: %d", code)
	}
	var id string
	v.s.mu.Lock()
	for k := range v.s.live {
		id = k
	}
	v.s.mu.Unlock()
	_, nonce := v.waitQuestions(t, id)
	resp, err := noRedirect.Get(v.ts.URL + "/runs/" + id + "/plan")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/runs/"+id {
		t.Fatalf("the plan page while the questions wait: %d → %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	req, _ := http.NewRequest(http.MethodPost, v.ts.URL+"/runs/"+id+"/clarify", strings.NewReader(url.Values{"asked": {nonce}, "a1": {"the solar one"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Location") != "/runs/"+id+"/plan" {
		t.Fatalf("answering leads to %q", resp.Header.Get("Location"))
	}
	deadline := time.Now().Add(30 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		if _, body = v.get(t, "/runs/"+id+"/plan"); strings.Contains(body, `name="plan"`) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(body, "the solar one") {
		t.Fatalf("the plan page does not show the plan made with the answer:\n%s", body)
	}
	if code, _ := v.post(t, "/runs/"+id+"/plan", url.Values{"action": {"accept"}, "plan": {"- What does the Kestrel solar kiln cost?\n"}}); code != http.StatusSeeOther {
		t.Fatalf("accept: %d", code)
	}
	if err := v.ended(t, id); err != nil {
		t.Fatal(err)
	}
}
