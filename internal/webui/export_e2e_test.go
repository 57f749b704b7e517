package webui

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/publish"
)

// spacer pushes a page's content far below the first screen, so that a browser opening it at a quote must scroll.
const spacer = `<div style="height:4000px">above the fold</div>`

// scrolledTo opens link and reports the page's scroll position and whether the element holding text is on screen.
func scrolledTo(t *testing.T, ctx context.Context, link, text string) (scrollY float64, onScreen bool) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(link)); err != nil {
		t.Fatalf("open %s: %v", link, err)
	}
	// The browser scrolls to a text fragment once the page is laid out; wait for it rather than for a fixed time.
	_ = untilTrue(ctx, `window.scrollY > 0`)
	type pos struct {
		Y  float64 `json:"y"`
		In bool    `json:"in"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[pos](`(function(t){
		var w=document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT), n, el=null;
		while ((n=w.nextNode())) { if (n.data.replace(/\s+/g," ").indexOf(t)>=0) { el=n.parentElement; break; } }
		if (!el) return {y: window.scrollY, in: false};
		var r=el.getBoundingClientRect();
		return {y: window.scrollY, in: r.bottom>0 && r.top<window.innerHeight};
	})(`+jsString(text)+`)`))
	if err != nil {
		t.Fatal(err)
	}
	return got.Y, got.In
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "<", `\x3c`)
	return `"` + r.Replace(s) + `"`
}

// TestBrowserTextFragmentOpensAtQuote: the "at the quote" links a report gives its web sources make Chromium
// scroll to the quote on the original page — here the fetched pages of a Chinese run, served again with a screen's
// height of filler above their content — and a long English quote's start,end link and a local HTML file's link
// do the same.
func TestBrowserTextFragmentOpensAtQuote(t *testing.T) {
	z := startZhRun(t)
	base := browser(t)
	ctx, cancel := context.WithTimeout(base, 90*time.Second)
	defer cancel()

	// The same pages as the run fetched, each with filler above its content.
	tall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(filepath.Join("testdata", "zhsite", filepath.Base(r.URL.Path)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, strings.Replace(string(b), "<body>", "<body>"+spacer, 1))
	}))
	defer tall.Close()

	// The report lists a text-fragment link for each web quote, and the viewer shows it as a link.
	var opened int
	for _, e := range z.rep.Evidence {
		link, ok := research.TextFragmentURL(e.Source, e.Quote)
		if !ok || !strings.Contains(z.rep.Markdown, "("+link+")") {
			continue
		}
		if opened == 2 {
			break
		}
		opened++
		y, in := scrolledTo(t, ctx, strings.Replace(link, z.site.URL, tall.URL, 1), firstWords(e.Quote))
		if y <= 0 || !in {
			t.Errorf("%s: scrollY %v, quote on screen %v; want the page scrolled to %q", link, y, in, e.Quote)
		}
	}
	if opened == 0 {
		t.Fatalf("the report gives no text-fragment link:\n%s", z.rep.Markdown)
	}
	var links int
	if err := chromedp.Do(ctx, chromedp.Navigate(z.ts.URL+"/runs/"+z.id)); err != nil {
		t.Fatal(err)
	}
	links, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#report a[href*=":~:text="]').length`))
	if err != nil || links == 0 {
		t.Errorf("the viewer shows %d text-fragment links (%v)", links, err)
	}
	// Every source of the Sources list is a link.
	unlinked, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(function(){
		var hs=[...document.querySelectorAll('#report h2')].filter(h=>/Sources|来源/.test(h.textContent));
		if (!hs.length) return -1;
		var list=hs[0].nextElementSibling, n=0;
		for (const li of list.querySelectorAll('li')) if (!li.querySelector('a[href]')) n++;
		return n;
	})()`))
	if err != nil || unlinked != 0 {
		t.Errorf("Sources entries without a link: %d (%v)", unlinked, err)
	}

	// A long English quote, named by its first and last words, on a page of its own.
	quote := "A delete in a log-structured merge tree writes a tombstone, a marker that shadows every older value " +
		"of the key, and compaction later drops the tombstone together with the values it shadows."
	page := "<!doctype html><html><body>" + spacer + "<p>Unrelated text first.</p><p>" + quote + "</p>" + spacer + "</body></html>"
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	defer web.Close()
	link, ok := research.TextFragmentURL(web.URL+"/lsm#L3-L4", quote)
	if !ok || !strings.Contains(link, ",") {
		t.Fatalf("long quote: %q, %v; want the start,end form", link, ok)
	}
	if y, in := scrolledTo(t, ctx, link, "A delete in a log-structured"); y <= 0 || !in {
		t.Errorf("%s: scrollY %v, on screen %v", link, y, in)
	}
	// The same page as a local HTML file, linked as the corpus cites it.
	file := filepath.Join(t.TempDir(), "lsm.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	local, ok := research.TextFragmentURL((&url.URL{Scheme: "file", Path: file, Fragment: "L135-L135"}).String(), quote)
	if !ok {
		t.Fatal("no text-fragment link for a local HTML file")
	}
	if y, in := scrolledTo(t, ctx, local, "A delete in a log-structured"); y <= 0 || !in {
		t.Errorf("%s: scrollY %v, on screen %v", local, y, in)
	}
}

// firstWords is the beginning of a quote, enough to find its element on the page.
func firstWords(q string) string {
	q = strings.Join(strings.Fields(publish.QuoteFragments(q)[0]), " ")
	if r := []rune(q); len(r) > 8 {
		return string(r[:8])
	}
	return q
}

// TestBrowserStandaloneHTML downloads the HTML export from the viewer and opens it from a file in Chromium: it
// renders, fetches nothing, and a citation marker jumps to its quote in the citation list.
func TestBrowserStandaloneHTML(t *testing.T) {
	z := startZhRun(t)
	resp, err := http.Get(z.ts.URL + "/runs/" + z.id + "/export/html")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), z.id+"-report.html") {
		t.Fatalf("export: %d %v", resp.StatusCode, resp.Header)
	}
	for _, f := range []string{"docx", "bibtex"} {
		r, err := http.Get(z.ts.URL + "/runs/" + z.id + "/export/" + f)
		if err != nil || r.StatusCode != http.StatusOK {
			t.Errorf("export %s: %v %v", f, r.Status, err)
		}
		r.Body.Close()
	}
	if r, err := http.Get(z.ts.URL + "/runs/" + z.id + "/export/exe"); err != nil || r.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown format: %v %v", r.Status, err)
	}
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	base := browser(t)
	ctx, cancel := context.WithTimeout(base, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+file), chromedp.WaitVisible(chromedp.CSS("main h1"))); err != nil {
		t.Fatal(err)
	}
	type state struct {
		H1        string  `json:"h1"`
		Resources int     `json:"resources"`
		Cites     int     `json:"cites"`
		Width     float64 `json:"width"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[state](`({h1: document.querySelector("main h1").textContent,
		resources: performance.getEntriesByType("resource").length,
		cites: document.querySelectorAll("a.cite").length, width: document.documentElement.scrollWidth - window.innerWidth})`))
	if err != nil {
		t.Fatal(err)
	}
	if got.H1 != firstHeading(z.rep.Markdown) || got.Resources != 0 || got.Cites == 0 || got.Width > 0 {
		t.Fatalf("opened export: %+v (want the heading %q, no resource fetched, citations, no overflow)", got, firstHeading(z.rep.Markdown))
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("a.cite"))); err != nil {
		t.Fatal(err)
	}
	if err := untilTrue(ctx, `location.hash.startsWith("#cite-") && document.querySelector("li:target") !== null &&
		document.querySelector("li:target").getBoundingClientRect().top < window.innerHeight`); err != nil {
		t.Error(err)
	}
}
