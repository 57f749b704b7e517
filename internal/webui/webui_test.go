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
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
)

func TestLocateQuote(t *testing.T) {
	text := "Intro line.\nThe angle of the waggle run\n   encodes the   direction.\nNext 中文 句子。"
	tests := []struct {
		name, quote, want string
		ok                bool
	}{
		{"exact", "Intro line.", "Intro line.", true},
		{"across newlines and runs of spaces", "waggle run encodes the direction.", "waggle run\n   encodes the   direction.", true},
		{"quote with its own odd spacing", "  The angle  of the\twaggle ", "The angle of the waggle", true},
		{"case differs", "the ANGLE of", "The angle of", true},
		{"cjk", "中文 句子", "中文 句子", true},
		{"absent", "honey is sweet", "", false},
		{"empty", "   ", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, e, ok := locateQuote(text, tt.quote)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if ok && text[s:e] != tt.want {
				t.Fatalf("located %q, want %q", text[s:e], tt.want)
			}
		})
	}
}

func TestRenderReport(t *testing.T) {
	rep := &research.Report{
		Markdown: "# Bees <script>\n\nBees dance [1]. Odour matters [1, 2]; see [7] and [link](https://example.org/x?a=1&b=2).\n" +
			"A [bad](javascript:alert(1)) link and **bold** and `code <b>`.\n\n## Sources\n\n1. [Waggle](file:///c/w.md#L3-L4)\n2. Scent\n",
		Citations: []research.Citation{{N: 1, EvidenceIDs: []string{"e1"}}, {N: 2, EvidenceIDs: []string{"e2"}}},
		Evidence:  []research.Evidence{{ID: "e1", Quote: "the \"waggle\" dance", Source: "file:///c/w.md#L3-L4"}, {ID: "e2", Quote: "scent", Source: "https://x.org"}},
	}
	got := string(renderReport(rep, "/runs/r1"))
	for _, want := range []string{
		"<h1>Bees &lt;script&gt;</h1>",
		`<a class="cite" href="/runs/r1/cite/1" title="the &#34;waggle&#34; dance — file:///c/w.md#L3-L4" data-n="1">1</a>`,
		`<a class="cite" href="/runs/r1/cite/2"`,
		"see [7] and", // not a citation of this report: left as text
		`<a href="https://example.org/x?a=1&amp;b=2" rel="noopener noreferrer" target="_blank">link</a>`,
		`A bad <span class="anchor">(javascript:alert(1)</span>`,
		"<strong>bold</strong>", "<code>code &lt;b&gt;</code>",
		"<h2>Sources</h2>", "<ol>", "<li>Scent</li>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered report lacks %q\n%s", want, got)
		}
	}
	if strings.Contains(got, "<script>") || strings.Contains(got, `href="javascript`) {
		t.Errorf("unsafe markup survived:\n%s", got)
	}
}

func TestCheckBind(t *testing.T) {
	tests := []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8787", "", true},
		{"localhost:0", "", true},
		{"[::1]:8787", "", true},
		{"0.0.0.0:8787", "", false},
		{":8787", "", false},
		{"192.168.1.4:80", "", false},
		{"0.0.0.0:8787", "s3cret", true},
		{"nonsense", "", false},
	}
	for _, tt := range tests {
		err := CheckBind(tt.addr, tt.token)
		if (err == nil) != tt.ok {
			t.Errorf("CheckBind(%q, %q) = %v, want ok=%v", tt.addr, tt.token, err, tt.ok)
		}
		if !tt.ok && tt.addr != "nonsense" && !errors.Is(err, ErrTokenRequired) {
			t.Errorf("CheckBind(%q) error %v should wrap ErrTokenRequired", tt.addr, err)
		}
	}
}

func newTestServer(t *testing.T, token string, start StartFunc) *Server {
	t.Helper()
	if start == nil {
		start = func(ctx context.Context, req RunRequest) (*research.Report, error) {
			return nil, errors.New("not used")
		}
	}
	s, err := New(Config{RunsDir: t.TempDir(), Start: start, Token: token, WebProviders: []string{"searxng"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestTokenRequiredOnEveryRequest(t *testing.T) {
	s := newTestServer(t, "s3cret", nil)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	for _, p := range []string{"/", "/static/app.css", "/api/runs", "/runs/x/events", "/runs/x/report.md"} {
		resp, err := noRedirect.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without token: %d, want 401", p, resp.StatusCode)
		}
	}
	// Wrong token in the link.
	resp, err := noRedirect.Get(ts.URL + "/?token=wrong")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong ?token: %d, want 401", resp.StatusCode)
	}
	// The link with the token sets a cookie and redirects to the same page without it.
	resp, err = noRedirect.Get(ts.URL + "/api/runs?token=s3cret&x=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/api/runs?x=1" {
		t.Fatalf("token link: %d → %q, want 303 → /api/runs?x=1", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if strings.HasPrefix(c.Name, tokenCookiePrefix) {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly {
		t.Fatalf("token link set no HttpOnly cookie: %v", resp.Cookies())
	}
	for name, set := range map[string]func(*http.Request){
		"cookie": func(r *http.Request) { r.AddCookie(cookie) },
		"bearer": func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") },
		"header": func(r *http.Request) { r.Header.Set("X-Deepresearch-Token", "s3cret") },
	} {
		req, _ := http.NewRequest("GET", ts.URL+"/api/runs", nil)
		set(req)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("with %s: %d, want 200", name, resp.StatusCode)
		}
	}
}

func TestLoopbackGuards(t *testing.T) {
	s := newTestServer(t, "", nil)
	h := s.Handler()
	// DNS rebinding: a foreign Host name reaching the loopback listener is refused.
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "evil.example:8787"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("foreign Host: %d, want 403", rec.Code)
	}
	// CSRF: a form posted from another site is refused before it can start a run.
	form := url.Values{"question": {"q"}, "web": {"searxng"}}
	req = httptest.NewRequest("POST", "/runs", strings.NewReader(form.Encode()))
	req.Host = "127.0.0.1:8787"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("cross-origin POST: %d, want 403", rec.Code)
	}
	// Security headers: nothing may load from elsewhere.
	req = httptest.NewRequest("GET", "/", nil)
	req.Host = "localhost:8787"
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET / on localhost: %d", rec.Code)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP = %q", csp)
	}
	if strings.Contains(rec.Body.String(), "https://") || strings.Contains(rec.Body.String(), "http://") {
		t.Errorf("index page references an external URL:\n%s", rec.Body.String())
	}
}

func TestFormErrorsKeepInput(t *testing.T) {
	started := 0
	s := newTestServer(t, "", func(ctx context.Context, req RunRequest) (*research.Report, error) {
		started++
		return nil, errors.New("x")
	})
	h := s.Handler()
	tests := []struct {
		name string
		form url.Values
		want string
	}{
		{"no question", url.Values{"question": {"  "}, "web": {"searxng"}}, "Please enter a research question."},
		{"no source", url.Values{"question": {"Why is the sky blue?"}}, "Choose at least one source"},
		{"missing corpus", url.Values{"question": {"Why is the sky blue?"}, "corpus": {"/no/such/dir"}}, "Cannot use the corpus"},
		{"bad cost", url.Values{"question": {"Why is the sky blue?"}, "web": {"searxng"}, "max_cost": {"lots"}}, "is not a number of dollars"},
		{"NaN cost", url.Values{"question": {"Why is the sky blue?"}, "web": {"searxng"}, "max_cost": {"NaN"}}, "is not a number of dollars"},
		{"infinite cost", url.Values{"question": {"Why is the sky blue?"}, "web": {"searxng"}, "max_cost": {"Inf"}}, "is not a number of dollars"},
		{"negative minutes", url.Values{"question": {"Why is the sky blue?"}, "web": {"searxng"}, "max_minutes": {"-5"}}, "is not a number of minutes"},
		{"endless minutes", url.Values{"question": {"Why is the sky blue?"}, "web": {"searxng"}, "max_minutes": {"1e308"}}, "is not a number of minutes"},
		{"long question", url.Values{"question": {strings.Repeat("why ", 2000)}, "web": {"searxng"}}, "the limit is 4000"},
		{"bad rounds", url.Values{"question": {"Why is the sky blue?"}, "web": {"searxng"}, "rounds": {"99"}}, "Extra rounds"},
		{"bad unjudged choice", url.Values{"question": {"Why is the sky blue?"}, "web": {"searxng"}, "unjudged": {"sometimes"}}, "either removed or kept"},
		{"unknown provider", url.Values{"question": {"Why is the sky blue?"}, "web": {"altavista"}}, "Unknown web search provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/runs", strings.NewReader(tt.form.Encode()))
			req.Host = "127.0.0.1"
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			body := rec.Body.String()
			if rec.Code != http.StatusBadRequest || !strings.Contains(body, tt.want) {
				t.Fatalf("%d, body lacks %q", rec.Code, tt.want)
			}
			if q := strings.TrimSpace(tt.form.Get("question")); q != "" && !strings.Contains(body, q) {
				t.Errorf("the question the user typed was lost")
			}
		})
	}
	if started != 0 {
		t.Errorf("bad forms started %d runs", started)
	}
}

// A web search provider without its key is refused on the form, before a run (and its folder) exists.
func TestMissingWebKeyRefusedBeforeTheRun(t *testing.T) {
	runs := t.TempDir()
	s, err := New(Config{RunsDir: runs, WebProviders: []string{"tavily"},
		CheckWeb: func(name string) error { return fmt.Errorf("websearch %s: no API key: set TAVILY_API_KEY", name) },
		Start: func(context.Context, RunRequest) (*research.Report, error) {
			t.Error("a run started")
			return nil, errors.New("x")
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	req := httptest.NewRequest("POST", "/runs", strings.NewReader(url.Values{"question": {"Why?"}, "web": {"tavily"}}.Encode()))
	req.Host = "127.0.0.1"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "TAVILY_API_KEY") {
		t.Errorf("%d: %s", rec.Code, rec.Body.String())
	}
	if ents, _ := os.ReadDir(runs); len(ents) != 0 {
		t.Errorf("the refused form left %d run folders", len(ents))
	}
}

func TestBadRunIDs(t *testing.T) {
	s := newTestServer(t, "", nil)
	h := s.Handler()
	for _, p := range []string{"/runs/..%2F..%2Fetc/report.md", "/runs/.hidden/report.json"} {
		req := httptest.NewRequest("GET", p, nil)
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK {
			t.Errorf("GET %s: 200, want refusal", p)
		}
	}
}

// TestStopAndFailedRun: the Stop button cancels a run, and the event stream ends saying it failed and why.
func TestStopAndFailedRun(t *testing.T) {
	running := make(chan struct{})
	s := newTestServer(t, "", func(ctx context.Context, req RunRequest) (*research.Report, error) {
		req.OnEvent(research.Event{Kind: research.EventRunStart, Stage: research.StageRun, Message: "started"})
		close(running)
		<-ctx.Done()
		return nil, fmt.Errorf("run %s: %w", req.RunID, ctx.Err())
	})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(ts.URL+"/runs", url.Values{"question": {"Why?"}, "web": {"searxng"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/runs/") {
		t.Fatalf("start: %d → %q", resp.StatusCode, loc)
	}
	<-running
	// The live page offers Stop while the run is going.
	resp, err = http.Get(ts.URL + loc)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `action="`+loc+`/cancel"`) || !strings.Contains(string(page), `data-live="true"`) {
		t.Fatalf("live page lacks the Stop button:\n%s", page)
	}
	events, err := http.Get(ts.URL + loc + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer events.Body.Close()
	resp, err = noRedirect.PostForm(ts.URL+loc+"/cancel", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", resp.StatusCode)
	}
	body, _ := io.ReadAll(events.Body) // the stream ends when the run does
	got := string(body)
	// Stop is not a failure: the run ends "stopped", without the error of the step it interrupted.
	if !strings.Contains(got, `"kind":"run_start"`) || !strings.Contains(got, "event: end\ndata: {\"status\":\"stopped\"}") {
		t.Errorf("event stream:\n%s", got)
	}
	resp, err = http.Get(ts.URL + loc)
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, bad := range []string{`id="stop-form"`, "context canceled", `badge-failed`} {
		if strings.Contains(string(page), bad) {
			t.Errorf("stopped run page shows %s", bad)
		}
	}
	if !strings.Contains(string(page), `badge-stopped`) || strings.Count(string(page), `id="run-error"`) != 1 {
		t.Errorf("stopped run page: no stopped badge, or not exactly one run-error element")
	}
}

// The source view shows a corpus anchor as a reader says it, not as "lines 69–69".
func TestLineLabel(t *testing.T) {
	for _, tc := range []struct{ fragment, want string }{
		{"L52-L61", "lines 52–61"},
		{"L69-L69", "line 69"},
		{"L7", "line 7"},
		{"", ""},
	} {
		if got := lineLabel(tc.fragment); got != tc.want {
			t.Errorf("lineLabel(%q) = %q, want %q", tc.fragment, got, tc.want)
		}
	}
}

// The start page's title is the product's name once, not "deepresearch · deepresearch".
func TestIndexTitle(t *testing.T) {
	s := newTestServer(t, "", nil)
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "127.0.0.1:8787"
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /: %d", rec.Code)
	}
	if !strings.Contains(rec.Body.String(), "<title>deepresearch</title>") {
		t.Errorf("title is not plain deepresearch: %s", rec.Body.String()[:300])
	}
}
