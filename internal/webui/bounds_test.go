package webui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/research"
)

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// blockingServer is a viewer whose runs publish one event and then go on until they are stopped.
func blockingServer(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	cfg.RunsDir = t.TempDir()
	if cfg.WebProviders == nil {
		cfg.WebProviders = []string{"searxng"}
	}
	cfg.Start = func(ctx context.Context, req RunRequest) (*research.Report, error) {
		req.OnEvent(research.Event{Kind: research.EventRunStart, Stage: research.StageRun, Message: "started"})
		<-ctx.Done()
		return nil, ctx.Err()
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts
}

// startForm posts the form and returns the status, the Location and the body.
func startForm(t *testing.T, ts *httptest.Server, form url.Values) (int, string, string) {
	t.Helper()
	resp, err := noRedirect.PostForm(ts.URL+"/runs", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

func getWith(t *testing.T, u string, set func(*http.Request)) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if set != nil {
		set(req)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// Any web page may make the browser GET a URL (an <img>, a script, EventSource); a run's event stream holds a
// connection for the whole run, so one another site's page opens is refused — also when a token cookie goes with
// it, as it does for a page on another port of the same host (same site) — while the viewer's own page gets it.
func TestEventsRefusedToOtherSites(t *testing.T) {
	for _, token := range []string{"", "s3cret"} {
		t.Run("token="+token, func(t *testing.T) {
			_, ts := blockingServer(t, Config{Token: token})
			auth := func(r *http.Request) {
				if token != "" {
					r.Header.Set("Authorization", "Bearer "+token)
				}
			}
			form := url.Values{"question": {"Why?"}, "web": {"searxng"}}
			req, _ := http.NewRequest("POST", ts.URL+"/runs", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			auth(req)
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			loc := resp.Header.Get("Location")
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("start: %d", resp.StatusCode)
			}
			for name, set := range map[string]func(*http.Request){
				"cross-site":                         func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") },
				"same-site, another port":            func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-site") },
				"foreign Origin (no fetch metadata)": func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") },
			} {
				resp := getWith(t, ts.URL+loc+"/events", func(r *http.Request) { auth(r); set(r) })
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "cross-origin") {
					t.Errorf("%s: %d %q, want 403", name, resp.StatusCode, body)
				}
			}
			// The viewer's own page (same origin) gets the stream.
			resp = getWith(t, ts.URL+loc+"/events", func(r *http.Request) {
				auth(r)
				r.Header.Set("Sec-Fetch-Site", "same-origin")
			})
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("same origin: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			line := make([]byte, 64)
			if n, _ := resp.Body.Read(line); !strings.Contains(string(line[:n]), "id: 0") {
				t.Errorf("same-origin stream starts %q", line[:n])
			}
		})
	}
}

// Each open event stream holds a connection and a goroutine: past MaxStreams one more is refused with 429 and a
// message saying what to do, and a stream that closes makes room again.
func TestEventStreamsAreBounded(t *testing.T) {
	_, ts := blockingServer(t, Config{MaxStreams: 2})
	code, loc, _ := startForm(t, ts, url.Values{"question": {"Why?"}, "web": {"searxng"}})
	if code != http.StatusSeeOther {
		t.Fatalf("start: %d", code)
	}
	open := func() *http.Response { return getWith(t, ts.URL+loc+"/events", nil) }
	a, b := open(), open()
	defer b.Body.Close()
	for i, r := range []*http.Response{a, b} {
		if r.StatusCode != http.StatusOK {
			t.Fatalf("stream %d: %d", i+1, r.StatusCode)
		}
	}
	c := open()
	body, _ := io.ReadAll(c.Body)
	c.Body.Close()
	if c.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "at most 2") {
		t.Fatalf("third stream: %d %q, want 429 naming the bound", c.StatusCode, body)
	}
	a.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := open()
		d.Body.Close()
		if d.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream made no room: %d", d.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// 300 form posts used to start 300 runs (4,002 open files): past MaxRuns (default 10) a post is refused with 429
// and a message, the form keeps what was typed, no run starts, and a run that ends makes room.
func TestConcurrentRunsAreBounded(t *testing.T) {
	s, ts := blockingServer(t, Config{})
	var locs []string
	for i := 0; i < DefaultMaxRuns; i++ {
		code, loc, body := startForm(t, ts, url.Values{"question": {fmt.Sprintf("Question %d?", i)}, "web": {"searxng"}})
		if code != http.StatusSeeOther {
			t.Fatalf("run %d: %d %s", i+1, code, body)
		}
		locs = append(locs, loc)
	}
	code, _, body := startForm(t, ts, url.Values{"question": {"One too many?"}, "web": {"searxng"}})
	if code != http.StatusTooManyRequests || !strings.Contains(body, fmt.Sprintf("at most %d at once", DefaultMaxRuns)) || !strings.Contains(body, "One too many?") {
		t.Fatalf("run %d: %d, want 429 saying the bound and keeping the question:\n%s", DefaultMaxRuns+1, code, body)
	}
	s.mu.Lock()
	live := len(s.live)
	s.mu.Unlock()
	if live != DefaultMaxRuns {
		t.Errorf("%d runs exist, want %d", live, DefaultMaxRuns)
	}
	resp, err := noRedirect.PostForm(ts.URL+locs[0]+"/cancel", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _, body = startForm(t, ts, url.Values{"question": {"Room now?"}, "web": {"searxng"}})
		if code == http.StatusSeeOther {
			break
		}
		if code != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("after a stop: %d %s", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Any local process can post to the viewer: a corpus outside the shared roots — /etc, /proc/self, a link inside
// a root that points out of it — is refused with a message naming the roots, before any run starts; a folder
// below a root is accepted and the run gets its link-free path. The roots are shown on the page.
func TestCorpusOutsideRootsIsRefused(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "notes")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "etc-link")); err != nil {
		t.Fatal(err)
	}
	inLink := filepath.Join(t.TempDir(), "in-link")
	if err := os.Symlink(sub, inLink); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	s, err := New(Config{RunsDir: t.TempDir(), Roots: []string{root}, Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
		got <- req.Corpus
		return nil, errors.New("done")
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for _, bad := range []string{"/etc", "/proc/self", filepath.Join(root, "etc-link"), filepath.Join(root, "..")} {
		code, _, body := startForm(t, ts, url.Values{"question": {"What is in there?"}, "corpus": {bad}})
		if code != http.StatusBadRequest || !strings.Contains(body, "outside the folders this server may read") || !strings.Contains(body, root) {
			t.Errorf("corpus %s: %d, want a refusal naming the roots", bad, code)
		}
	}
	if len(got) != 0 {
		t.Fatalf("a refused corpus started a run: %q", <-got)
	}
	code, _, body := startForm(t, ts, url.Values{"question": {"What is in there?"}, "corpus": {sub}})
	if code != http.StatusSeeOther {
		t.Fatalf("corpus below the root: %d %s", code, body)
	}
	if c := <-got; c != sub {
		t.Errorf("the run got corpus %q, want %q", c, sub)
	}
	// A link from elsewhere into a root is the root's folder: accepted, and the run gets the folder itself.
	code, _, body = startForm(t, ts, url.Values{"question": {"What is in there?"}, "corpus": {inLink}})
	if code != http.StatusSeeOther {
		t.Fatalf("link into the root: %d %s", code, body)
	}
	if c := <-got; c != sub {
		t.Errorf("the run got corpus %q, want %q", c, sub)
	}
	resp := getWith(t, ts.URL+"/", nil)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `id="roots"`) || !strings.Contains(string(page), "<code>"+root+"</code>") {
		t.Errorf("the page does not show the roots")
	}
	s.Wait()
}

// The token cookie belongs to one port: it is named for the port, HttpOnly, SameSite=Strict and Path=/, and a
// viewer on another port with the same token takes neither it nor its value under its own port's name.
func TestTokenCookieIsPerPort(t *testing.T) {
	a, b := newTestServer(t, "s3cret", nil), newTestServer(t, "s3cret", nil)
	tsA, tsB := httptest.NewServer(a.Handler()), httptest.NewServer(b.Handler())
	defer tsA.Close()
	defer tsB.Close()
	port := func(ts *httptest.Server) string { u, _ := url.Parse(ts.URL); return u.Port() }
	resp := getWith(t, tsA.URL+"/?token=s3cret", nil)
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		cookie = c
	}
	if cookie == nil || cookie.Name != tokenCookiePrefix+port(tsA) || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" {
		t.Fatalf("cookie = %+v, want %s, HttpOnly, SameSite=Strict, Path=/", cookie, tokenCookiePrefix+port(tsA))
	}
	if r := getWith(t, tsA.URL+"/api/runs", func(r *http.Request) { r.AddCookie(cookie) }); r.StatusCode != http.StatusOK {
		t.Errorf("port A with its cookie: %d", r.StatusCode)
	}
	// A browser sends every cookie of the host to every port of it.
	if r := getWith(t, tsB.URL+"/api/runs", func(r *http.Request) { r.AddCookie(cookie) }); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("port B with port A's cookie: %d, want 401", r.StatusCode)
	}
	old := &http.Cookie{Name: "deepresearch_token", Value: "s3cret"}
	if r := getWith(t, tsB.URL+"/api/runs", func(r *http.Request) { r.AddCookie(old) }); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("port B with an unscoped cookie: %d, want 401", r.StatusCode)
	}
}
