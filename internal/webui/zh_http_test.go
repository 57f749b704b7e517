package webui

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/chromedp/chromedp"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/extractive"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/fetch"
)

// zhQuestion is answered by the pages in testdata/zhsite.
const zhQuestion = "蜜蜂如何向同伴传达食物的位置？"

// siteSearcher is a search engine over a small web site: it returns the site's pages that share characters with
// the query, best first, as a web search provider would return URLs. The texts are then read through the real
// fetcher, so what the report quotes is what was fetched over HTTP.
type siteSearcher struct {
	base  string
	pages map[string]string // path → raw HTML
}

func newSiteSearcher(t *testing.T, base, dir string) *siteSearcher {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := &siteSearcher{base: base, pages: map[string]string{}}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s.pages["/"+e.Name()] = string(b)
	}
	return s
}

func (s *siteSearcher) Name() string { return "testsite" }

var titleRE = regexp.MustCompile(`<title>([^<]*)</title>`)

func (s *siteSearcher) Search(_ context.Context, query string, limit int) ([]sources.Result, error) {
	type scored struct {
		path  string
		score int
	}
	var hits []scored
	for p, page := range s.pages {
		n := 0
		seen := map[rune]bool{}
		for _, r := range query {
			if seen[r] || unicode.IsSpace(r) || unicode.IsPunct(r) {
				continue
			}
			seen[r] = true
			if strings.ContainsRune(page, r) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, scored{p, n})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].path < hits[j].path
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]sources.Result, 0, len(hits))
	for _, h := range hits {
		title := ""
		if m := titleRE.FindStringSubmatch(s.pages[h.path]); m != nil {
			title = m[1]
		}
		out = append(out, sources.Result{Title: title, URL: s.base + h.path, Provider: "testsite", Score: float64(h.score)})
	}
	return out, nil
}

// zhRun is a finished run a user of web search made in Chinese through the viewer: the sources are http URLs of
// a loopback test site, read by the real fetcher (allowed loopback for the test).
type zhRun struct {
	ts, site *httptest.Server
	runs, id string
	rep      *research.Report
}

func startZhRun(t *testing.T) *zhRun {
	t.Helper()
	site := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("testdata", "zhsite"))))
	t.Cleanup(site.Close)
	search := newSiteSearcher(t, site.URL, filepath.Join("testdata", "zhsite"))
	web, err := fetch.New(&fetch.Config{AllowLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	runs := t.TempDir()
	srv, err := New(Config{RunsDir: runs, WebProviders: []string{"testsite"}, Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
		if req.Web != "testsite" {
			t.Errorf("run started with web provider %q", req.Web)
		}
		return research.Run(ctx, research.Config{
			Question: req.Question,
			Roles:    extractive.New(extractive.Config{Searchers: []sources.Searcher{search}}),
			Fetcher:  sources.Router{Web: web},
			RunID:    req.RunID, OutDir: req.OutDir, OnEvent: req.OnEvent,
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	t.Cleanup(func() { srv.Close() })

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(ts.URL+"/runs", url.Values{"question": {zhQuestion}, "web": {"testsite"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/runs/") {
		t.Fatalf("start: %d → %q", resp.StatusCode, loc)
	}
	id := strings.TrimPrefix(loc, "/runs/")
	srv.Wait()

	rep, err := research.LoadReport(filepath.Join(runs, id))
	if err != nil {
		t.Fatalf("the run left no report: %v", err)
	}
	if rep.Language != "zh" || len(rep.Citations) == 0 {
		t.Fatalf("want a cited Chinese report; language %q, %d citations:\n%s", rep.Language, len(rep.Citations), rep.Markdown)
	}
	return &zhRun{ts: ts, site: site, runs: runs, id: id, rep: rep}
}

// TestChineseReportOverHTTPSources: the Chinese report renders, and every citation opens the text that was
// fetched with its quote highlighted in place and the original URL as a link.
func TestChineseReportOverHTTPSources(t *testing.T) {
	z := startZhRun(t)
	ts, site, runs, id, rep := z.ts, z.site, z.runs, z.id, z.rep
	loc := "/runs/" + id
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, body)
		}
		return string(body)
	}

	// The report page: the Chinese question and report text come through unmangled, with citation links.
	page := get(loc)
	if !strings.Contains(page, zhQuestion) {
		t.Errorf("run page lacks the question %q", zhQuestion)
	}
	// The page's own words are Chinese too.
	for _, want := range []string{`<html lang="zh">`, "运行日志", "条证据被引用", "新建研究"} {
		if !strings.Contains(page, want) {
			t.Errorf("Chinese run page lacks %q", want)
		}
	}
	if src := get(loc + "/cite/1"); !strings.Contains(src, "保存的来源原文") || !strings.Contains(src, `<html lang="zh">`) {
		t.Errorf("Chinese source page is not labelled in Chinese")
	}
	if n := strings.Count(page, `<a class="cite" href="/runs/`+id+`/cite/`); n == 0 {
		t.Errorf("run page has no citation links:\n%s", page)
	}
	if !strings.Contains(page, `<h1>`+html.EscapeString(firstHeading(rep.Markdown))+`</h1>`) {
		t.Errorf("run page lacks the report's title %q", firstHeading(rep.Markdown))
	}

	if first, ok := findEvidence(rep, rep.Citations[0].EvidenceIDs[0]); ok &&
		!strings.Contains(page, `<a href="`+html.EscapeString(first.Source)+`" rel="noopener noreferrer" target="_blank">`) {
		t.Errorf("the report's source list does not link %s:\n%s", first.Source, page)
	}

	// Every citation opens the fetched text of its http source with the quote highlighted in place.
	markRE := regexp.MustCompile(`(?s)<pre class="source" id="text">(.*?)<mark id="quote">(.*?)</mark>(.*?)</pre>`)
	originRE := regexp.MustCompile(`<dd id="origin"><a href="([^"]+)" target="_blank" rel="noopener noreferrer">`)
	for _, c := range rep.Citations {
		ev, ok := findEvidence(rep, c.EvidenceIDs[0])
		if !ok {
			t.Fatalf("citation [%d] → %s, which is not in the report", c.N, c.EvidenceIDs[0])
		}
		if !strings.HasPrefix(ev.Source, site.URL+"/") {
			t.Errorf("[%d] source %s is not a page of the test site %s", c.N, ev.Source, site.URL)
			continue
		}
		cite := get("/runs/" + id + "/cite/" + strconv.Itoa(c.N))
		m := markRE.FindStringSubmatch(cite)
		if m == nil {
			t.Errorf("[%d] the source page does not highlight the quote:\n%s", c.N, cite)
			continue
		}
		before, marked, after := html.UnescapeString(m[1]), html.UnescapeString(m[2]), html.UnescapeString(m[3])
		if squash(marked) != squash(ev.Quote) {
			t.Errorf("[%d] highlighted %q, want the quote %q", c.N, marked, ev.Quote)
		}
		stored, err := research.LoadSourceText(filepath.Join(runs, id), ev.Source)
		if err != nil {
			t.Fatal(err)
		}
		if before+marked+after != stored {
			t.Errorf("[%d] the page does not show the stored text of %s around the quote", c.N, ev.Source)
		}
		if !containsCJK(stored) {
			t.Errorf("[%d] stored text of %s holds no Chinese: %q", c.N, ev.Source, stored)
		}
		o := originRE.FindStringSubmatch(cite)
		if o == nil || html.UnescapeString(o[1]) != ev.Source {
			t.Errorf("[%d] the original URL %s is not shown as a link: %v", c.N, ev.Source, o)
		}
	}

}

func firstHeading(md string) string {
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "# ") {
			return strings.TrimSpace(line[2:])
		}
	}
	return ""
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

func containsCJK(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// TestBrowserChineseCitation clicks a citation of the Chinese report in Chromium: the fetched page's text opens
// with the quote highlighted and scrolled into view, and the original URL is a link.
func TestBrowserChineseCitation(t *testing.T) {
	z := startZhRun(t)
	base := browser(t)
	ctx, cancel := context.WithTimeout(base, 60*time.Second)
	defer cancel()
	shots := artifacts(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(z.ts.URL+"/runs/"+z.id),
		chromedp.WaitVisible(chromedp.CSS("#report a.cite")),
	); err != nil {
		dumpPage(t, base, shots)
		t.Fatalf("open the report: %v", err)
	}
	screenshot(t, ctx, shots, "01-zh-report.png")
	attr, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#report a.cite"), "href"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if _, err := fmt.Sscanf(attr.Value, "/runs/"+z.id+"/cite/%d", &n); err != nil {
		t.Fatalf("citation link %q: %v", attr.Value, err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#report a.cite")),
		chromedp.WaitVisible(chromedp.CSS("mark#quote")),
	); err != nil {
		dumpPage(t, base, shots)
		t.Fatalf("open a citation: %v", err)
	}
	type shown struct {
		Quote  string `json:"quote"`
		Link   string `json:"link"`
		InView bool   `json:"inView"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[shown](`(function(){
		var q=document.getElementById("quote"), p=document.getElementById("text"), a=document.querySelector("#origin a");
		var r=q.getBoundingClientRect(), b=p.getBoundingClientRect();
		return {quote: q.innerText, link: a ? a.getAttribute("href") : "", inView: r.top>=b.top-1 && r.bottom<=b.bottom+1};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, shots, "02-zh-quote.png")
	var want research.Evidence
	for _, c := range z.rep.Citations {
		if c.N == n {
			want, _ = findEvidence(z.rep, c.EvidenceIDs[0])
		}
	}
	if want.ID == "" {
		t.Fatalf("citation [%d] is not in the report", n)
	}
	if squash(got.Quote) != squash(want.Quote) {
		t.Errorf("highlighted %q, want %q", got.Quote, want.Quote)
	}
	if got.Link != want.Source || !strings.HasPrefix(got.Link, z.site.URL+"/") {
		t.Errorf("original URL link = %q, want %s", got.Link, want.Source)
	}
	if !got.InView {
		t.Error("the highlighted quote is not scrolled into view")
	}
}
