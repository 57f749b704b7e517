package webui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/research"
)

// browser starts headless Chromium for one test. A missing Chromium fails the test: the end-to-end tests are
// the web viewer's proof that it works.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		t.Fatal("chromium not found: install it (Debian: apt-get install -y chromium) or set CHROMIUM to its path")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	}
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	// The first action binds the browser's life to its context, so it gets no deadline; callers bound their
	// steps with contexts derived from the one returned.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium %s: %v", path, err)
	}
	return ctx
}

// artifacts is where screenshots go: $DEEPRESEARCH_ARTIFACTS/<test> when set (CI keeps it), else a temp dir.
func artifacts(t *testing.T) string {
	dir := os.Getenv("DEEPRESEARCH_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	dir = filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// dumpPage saves what the browser shows when a step fails, using a fresh deadline since the step's may be spent.
func dumpPage(t *testing.T, ctx context.Context, dir string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if png, err := chromedp.Run(c, chromedp.FullScreenshot(100)); err == nil {
		os.WriteFile(filepath.Join(dir, "failed.png"), png, 0o644)
	}
	if html, err := chromedp.Run(c, chromedp.OuterHTML(chromedp.CSS("html"))); err == nil {
		os.WriteFile(filepath.Join(dir, "failed.html"), []byte(html), 0o644)
		t.Logf("page at failure saved in %s/failed.{png,html}", dir)
	}
}

// TestBrowserRunToQuote is the user's path: fill the form, watch the run live, read the report, click a
// citation and see its quote highlighted in the stored source text.
func TestBrowserRunToQuote(t *testing.T) {
	eng := researchtest.New(t, 250*time.Millisecond)
	runs := t.TempDir()
	started := make(chan RunRequest, 4)
	srv, err := New(Config{RunsDir: runs, WebProviders: []string{"searxng"}, Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
		started <- req
		if req.Corpus != eng.Dir {
			t.Errorf("run started with corpus %q, want %q", req.Corpus, eng.Dir)
		}
		return eng.Run(ctx, req.Question, req.RunID, req.OutDir, req.OnEvent)
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	defer srv.Close()
	base := browser(t)
	ctx, cancel := context.WithTimeout(base, 90*time.Second)
	defer cancel()
	shots := artifacts(t)

	// 1. The form.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("run-form")),
		chromedp.SendKeys(chromedp.ID("question"), researchtest.Question),
		chromedp.SendKeys(chromedp.ID("corpus"), eng.Dir),
		chromedp.SetValue(chromedp.ID("max_cost"), "0.50"),
	); err != nil {
		t.Fatalf("fill the form: %v", err)
	}
	screenshot(t, ctx, shots, "01-run-form.png")

	// 2. Live progress: evidence arrives while the run is still running.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("start")),
		chromedp.WaitVisible(chromedp.CSS(`#run[data-live="true"]`)),
		chromedp.WaitVisible(chromedp.CSS("#evidence li")),
	); err != nil {
		dumpPage(t, base, shots)
		t.Fatalf("watch the run: %v", err)
	}
	type live struct {
		Status string `json:"status"`
		SubQs  int    `json:"subqs"`
		Ev     int    `json:"ev"`
		Claim  string `json:"claim"`
		Stage  string `json:"stage"`
	}
	lv, err := chromedp.Run(ctx, chromedp.Evaluate[live](`({status: document.getElementById("status").innerText.trim(),
		subqs: document.querySelectorAll("#subqs li[data-sq]").length,
		ev: document.querySelectorAll("#evidence li").length,
		claim: document.querySelector("#evidence li .claim").innerText,
		stage: (document.querySelector("#stages li.active")||{}).innerText||""})`))
	if err != nil {
		t.Fatalf("read the live view: %v", err)
	}
	status, subqs, evidence, firstClaim := lv.Status, lv.SubQs, lv.Ev, lv.Claim
	screenshot(t, ctx, shots, "02-live-progress.png")
	if strings.TrimSpace(status) != research.RunRunning {
		t.Errorf("status while evidence arrives = %q, want %q", status, research.RunRunning)
	}
	if subqs < 3 || evidence < 1 || firstClaim == "" {
		t.Errorf("live view shows %d sub-questions and %d evidence (first claim %q)", subqs, evidence, firstClaim)
	}
	var id string
	select {
	case req := <-started:
		id = req.RunID
	default:
		t.Fatal("the form started no run")
	}
	if len(started) != 0 {
		t.Fatalf("the form started more than one run")
	}

	// 3. The report replaces the live view when the run finishes.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#report a.cite"))); err != nil {
		dumpPage(t, base, shots)
		t.Fatalf("read the report: %v", err)
	}
	citeCount, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#report a.cite").length`))
	if err != nil {
		t.Fatal(err)
	}
	reportText, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("report")))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, shots, "03-report.png")
	rep, err := research.LoadReport(filepath.Join(runs, id))
	if err != nil {
		t.Fatal(err)
	}
	if citeCount == 0 || !strings.Contains(reportText, "waggle dance") {
		t.Errorf("report page shows %d citation links; text:\n%s", citeCount, reportText)
	}

	// 4. Click the first citation: the stored source opens with the quote highlighted and the file anchor shown.
	attr, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#report a.cite"), "href"))
	if err != nil {
		t.Fatal(err)
	}
	href := attr.Value
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#report a.cite")),
		chromedp.WaitVisible(chromedp.CSS("mark#quote")),
	); err != nil {
		dumpPage(t, base, shots)
		t.Fatalf("open a citation: %v", err)
	}
	texts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.getElementById("quote").innerText, document.getElementById("origin").innerText, document.getElementById("anchor").innerText]`))
	if err != nil {
		t.Fatal(err)
	}
	marked, origin, anchor := texts[0], texts[1], texts[2]
	screenshot(t, ctx, shots, "04-quote.png")
	n := 0
	if _, err := fmt.Sscanf(href, "/runs/"+id+"/cite/%d", &n); err != nil {
		t.Fatalf("citation link %q: %v", href, err)
	}
	var want research.Evidence
	for _, c := range rep.Citations {
		if c.N == n {
			want, _ = findEvidence(rep, c.EvidenceIDs[0])
		}
	}
	if want.ID == "" {
		t.Fatalf("citation [%d] is not in report.json", n)
	}
	if strings.Join(strings.Fields(marked), " ") != strings.Join(strings.Fields(want.Quote), " ") {
		t.Errorf("highlighted %q, want the quote of %s: %q", marked, want.ID, want.Quote)
	}
	if anchor != want.Source || !strings.Contains(origin, strings.TrimPrefix(strings.SplitN(want.Source, "#", 2)[0], "file://")) {
		t.Errorf("source shown as %q / %q, want %s", origin, anchor, want.Source)
	}
	inView, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(function(){var r=document.getElementById("quote").getBoundingClientRect();var p=document.getElementById("text").getBoundingClientRect();return r.top>=p.top-1&&r.bottom<=p.bottom+1;})()`))
	if err != nil {
		t.Fatal(err)
	}
	if !inView {
		t.Errorf("the highlighted quote is not scrolled into view")
	}

	// 5. Downloads and the list of past runs.
	for file, want := range map[string]string{"report.md": rep.Markdown, "report.json": `"citations"`} {
		resp, err := http.Get(ts.URL + "/runs/" + id + "/" + file)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("download %s: %d %q", file, resp.StatusCode, resp.Header.Get("Content-Disposition"))
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/")); err != nil {
		t.Fatal(err)
	}
	listed, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("runs")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(listed, researchtest.Question) || !strings.Contains(listed, "done") {
		t.Errorf("past runs list lacks the finished run:\n%s", listed)
	}
	screenshot(t, ctx, shots, "05-past-runs.png")

	// 6. A reloaded finished run replays its log from events.jsonl.
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/runs/"+id), chromedp.WaitVisible(chromedp.ID("report"))); err != nil {
		t.Fatalf("reload the run: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll("#log li").length > 5 && document.querySelectorAll("#evidence li").length > 0`)); err != nil {
		t.Fatalf("the finished run's log was not replayed: %v", err)
	}
	var api []research.RunSummary
	resp, err := http.Get(ts.URL + "/api/runs")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&api)
	resp.Body.Close()
	if len(api) != 1 || api[0].ID != id || api[0].Status != research.RunDone {
		t.Errorf("/api/runs = %+v", api)
	}
}

// TestBrowserTokenLink checks the token flow a user of a non-loopback server follows: the printed link sets a
// cookie, after which pages and the event stream work without the token in the URL.
func TestBrowserTokenLink(t *testing.T) {
	srv, err := New(Config{RunsDir: t.TempDir(), Token: "tok-123", Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
		return nil, context.Canceled
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx, cancel := context.WithTimeout(browser(t), 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/?token=tok-123"), chromedp.WaitVisible(chromedp.ID("run-form"))); err != nil {
		t.Fatal(err)
	}
	url, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/api/runs")); err != nil {
		t.Fatal(err)
	}
	body, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(url, "token") {
		t.Errorf("token left in the address bar: %s", url)
	}
	if strings.TrimSpace(body) != "[]" {
		t.Errorf("/api/runs with the cookie = %q", body)
	}
}
