package webui

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/research"
)

// layout is what a page's geometry says about it in the browser.
type layout struct {
	ScrollWidth int     `json:"scrollWidth"`
	Inner       int     `json:"inner"`
	NavLines    int     `json:"navLines"`
	Outside     string  `json:"outside"` // the first element whose right edge is past the viewport
	ScrollY     float64 `json:"scrollY"`
}

const measure = `(function(){
  var nav = Array.from(document.querySelectorAll("header nav a")).map(function(a){return a.getBoundingClientRect().top});
  var outside = "";
  document.querySelectorAll("main *").forEach(function(e){
    if (outside) return;
    var r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > window.innerWidth + 1 && !e.closest("pre.source, ul.sources, ol.log, ul.evidence")) outside = e.tagName + "#" + e.id + "." + e.className + ": " + (e.textContent||"").slice(0, 60);
  });
  return {scrollWidth: document.documentElement.scrollWidth, inner: window.innerWidth,
    navLines: new Set(nav).size, outside: outside, scrollY: window.scrollY};
})()`

// TestBrowserLayouts renders the viewer's pages at 1400 px and as a 390 px phone with touch, and checks what a
// user of either sees: nothing wider than the screen, header buttons and nav that fit, long file:// anchors that
// wrap, "line N" in one piece, a citation that a finger can open, a source page that starts at its header, the
// Sources column one row per document with counts that agree with the report, dark mode and print.
func TestBrowserLayouts(t *testing.T) {
	// A deep folder makes the file:// anchors long, as a real home directory does.
	work := filepath.Join(t.TempDir(), "users", "someone-with-a-long-name", "Documents", "research-projects-2026", "honeybee-communication-notes")
	eng, err := researchtest.Open(work, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Index.Close()
	srv, err := New(Config{RunsDir: t.TempDir(), WebProviders: []string{"searxng"}, Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
		return eng.Run(ctx, req.Question, req.RunID, req.OutDir, req.OnEvent)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	id, err := srv.startRun(RunParams{Question: researchtest.Question, Corpus: eng.Dir})
	if err != nil {
		t.Fatal(err)
	}
	srv.Wait()
	rep, err := research.LoadReport(srv.runDir(id))
	if err != nil {
		t.Fatal(err)
	}

	base := browser(t)
	shots := artifacts(t)
	pages := map[string]string{"index": "/", "run": "/runs/" + id, "source": "/runs/" + id + "/cite/1"}
	for _, width := range []int64{1400, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(base, 60*time.Second)
			defer cancel()
			vp := chromedp.EmulateViewport(width, 900)
			if width < 600 {
				vp = chromedp.EmulateViewport(width, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch)
			}
			if err := chromedp.Do(ctx, vp); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"index", "run", "source"} {
				if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+pages[name]), chromedp.WaitVisible(chromedp.CSS("main"))); err != nil {
					t.Fatal(err)
				}
				if name == "run" {
					// The replayed log fills the Sources column.
					if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll("#sources li").length > 0 && document.querySelectorAll("#log li").length > 5`)); err != nil {
						t.Fatalf("run page: %v", err)
					}
				}
				l, err := chromedp.Run(ctx, chromedp.Evaluate[layout](measure))
				if err != nil {
					t.Fatal(err)
				}
				screenshot(t, ctx, shots, fmt.Sprintf("%s-%d.png", name, width))
				if l.ScrollWidth > l.Inner || l.Outside != "" {
					t.Errorf("%s at %d px: page %d px wide in a %d px window; sticking out: %s", name, width, l.ScrollWidth, l.Inner, l.Outside)
				}
				if l.NavLines != 1 {
					t.Errorf("%s at %d px: the nav wraps onto %d lines", name, width, l.NavLines)
				}
				if name == "source" {
					if l.ScrollY != 0 {
						t.Errorf("source page at %d px opened scrolled %v px past its header", width, l.ScrollY)
					}
					lines, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(function(){var e=document.getElementById("lines");return e?e.getClientRects().length:-1})()`))
					if err != nil || lines != 1 {
						t.Errorf("source page at %d px: the line label is in %d pieces (%v)", width, lines, err)
					}
				}
			}

			// The run page: one Sources row per document, and counts that agree with the report.
			if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+pages["run"]), chromedp.WaitVisible(chromedp.ID("report"))); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll("#evidence li").length == `+fmt.Sprint(len(rep.Evidence)))); err != nil {
				t.Fatalf("evidence not replayed: %v", err)
			}
			type column struct {
				Rows  int      `json:"rows"`
				Cited int      `json:"cited"`
				Names []string `json:"names"`
				Sum   string   `json:"sum"`
			}
			col, err := chromedp.Run(ctx, chromedp.Evaluate[column](`(function(){
				var rows = Array.from(document.querySelectorAll("#sources li"));
				var cited = 0;
				rows.forEach(function(li){ var m = /(\d+) cited/.exec(li.querySelector(".n").textContent); if (m) cited += +m[1]; });
				return {rows: rows.length, cited: cited, names: rows.map(function(li){return li.title}), sum: document.getElementById("sum-cited").textContent};
			})()`))
			if err != nil {
				t.Fatal(err)
			}
			// Every document the run read or took evidence from, once.
			docs := map[string]bool{}
			evs, err := research.LoadEvents(srv.runDir(id))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				switch {
				case e.Kind == research.EventRead || e.Kind == research.EventSkip && e.URL != "":
					docs[strings.SplitN(e.URL, "#", 2)[0]] = true
				case e.Kind == research.EventEvidence && e.Evidence != nil:
					docs[strings.SplitN(e.Evidence.Source, "#", 2)[0]] = true
				}
			}
			if col.Rows != len(docs) || col.Cited != len(rep.CitedEvidence()) || col.Sum != fmt.Sprint(len(rep.CitedEvidence())) {
				t.Errorf("Sources column: %d rows for %d documents, %d cited (header %s) for %d cited by the report; rows %v",
					col.Rows, len(docs), col.Cited, col.Sum, len(rep.CitedEvidence()), col.Names)
			}

			if width < 600 {
				// A finger on the first citation opens its quote.
				box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(function(){var a=document.querySelector("#report a.cite");a.scrollIntoView({block:"center"});var r=a.getBoundingClientRect();return [r.left+r.width/2, r.top+r.height/2, r.height]})()`))
				if err != nil {
					t.Fatal(err)
				}
				if box[2] < 12 {
					t.Errorf("a citation is %v px tall: too small to tap", box[2])
				}
				err = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					pt := []*input.TouchPoint{{X: box[0], Y: box[1]}}
					if _, err := cdp.Call(ctx, tg, input.DispatchTouchEvent, input.DispatchTouchEventParams{Type: input.DispatchTouchEventTypeTouchStart, TouchPoints: pt}); err != nil {
						return err
					}
					_, err := cdp.Call(ctx, tg, input.DispatchTouchEvent, input.DispatchTouchEventParams{Type: input.DispatchTouchEventTypeTouchEnd, TouchPoints: []*input.TouchPoint{}})
					return err
				}))
				if err != nil {
					t.Fatal(err)
				}
				if err := untilTrue(ctx, `location.pathname.indexOf("/cite/") > 0 && !!document.getElementById("quote")`); err != nil {
					dumpPage(t, base, shots)
					t.Errorf("tapping a citation did not open it: %v", err)
				}
				screenshot(t, ctx, shots, "tapped-citation-390.png")
			}
		})
	}

	t.Run("stop", func(t *testing.T) {
		slow, err := researchtest.Open(t.TempDir(), 300*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		defer slow.Index.Close()
		srv2, err := New(Config{RunsDir: t.TempDir(), Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
			return slow.Run(ctx, req.Question, req.RunID, req.OutDir, req.OnEvent)
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer srv2.Close()
		ts2 := httptest.NewServer(srv2.Handler())
		defer ts2.Close()
		id2, err := srv2.startRun(RunParams{Question: researchtest.Question, Corpus: slow.Dir})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(base, 60*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch),
			chromedp.Navigate(ts2.URL+"/runs/"+id2), chromedp.WaitVisible(chromedp.ID("stop")), chromedp.Click(chromedp.ID("stop"))); err != nil {
			t.Fatal(err)
		}
		if err := untilTrue(ctx, `!document.getElementById("stop-form") && document.querySelector("#status .badge").textContent.trim() === "stopped" && !!document.getElementById("run-stopped") && document.querySelectorAll("#run-error:not([hidden])").length === 0`); err != nil {
			dumpPage(t, base, shots)
			t.Errorf("after Stop: %v", err)
		}
		screenshot(t, ctx, shots, "stopped-390.png")
		srv2.Wait()
		if info, err := research.LoadRunInfo(srv2.runDir(id2)); err != nil || info.Status != research.RunStopped {
			t.Errorf("stopped run on disk: %+v %v", info, err)
		}
	})

	t.Run("dark-and-print", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(base, 60*time.Second)
		defer cancel()
		media := func(m string, f ...*emulation.MediaFeature) chromedp.Action[chromedp.Void] {
			return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: m, Features: f})
				return err
			})
		}
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900),
			media("", &emulation.MediaFeature{Name: "prefers-color-scheme", Value: "dark"}),
			chromedp.Navigate(ts.URL+pages["run"]), chromedp.WaitVisible(chromedp.ID("report"))); err != nil {
			t.Fatal(err)
		}
		bright, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(function(){function lum(c){var m=c.match(/\d+/g).map(Number);return (m[0]+m[1]+m[2])/3}
			return [lum(getComputedStyle(document.body).backgroundColor), lum(getComputedStyle(document.querySelector(".card")).backgroundColor), lum(getComputedStyle(document.body).color)]})()`))
		if err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, shots, "run-dark-1400.png")
		if bright[0] > 60 || bright[1] > 60 || bright[2] < 180 {
			t.Errorf("dark mode: page %v, cards %v, text %v (0 black, 255 white)", bright[0], bright[1], bright[2])
		}
		if err := chromedp.Do(ctx, media("print", &emulation.MediaFeature{Name: "prefers-color-scheme", Value: "light"})); err != nil {
			t.Fatal(err)
		}
		shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`["header.top", "#progress", ".actions", "#report"].map(function(s){return getComputedStyle(document.querySelector(s)).display})`))
		if err != nil {
			t.Fatal(err)
		}
		if shown[0] != "none" || shown[1] != "none" || shown[2] != "none" || shown[3] == "none" {
			t.Errorf("print: header %s, progress %s, buttons %s, report %s — want only the report", shown[0], shown[1], shown[2], shown[3])
		}
		screenshot(t, ctx, shots, "run-print-1400.png")
	})
}

// untilTrue evaluates expr until it is true, across the navigation a tap or click may start (an evaluation that
// meets the page being replaced fails and is tried again).
func untilTrue(ctx context.Context, expr string) error {
	c, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var last error
	for {
		ok, err := chromedp.Run(c, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-c.Done():
			return fmt.Errorf("%s never became true (last error %v)", expr, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
