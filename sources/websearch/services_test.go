package websearch

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// searxngFake behaves like a SearXNG instance: its bot limiter's header rules (the agents it blocks, Accept
// without text/html, no Accept-Language, no gzip/deflate, Connection: close), its quota for API (non-HTML)
// requests per address, the search.formats switch that answers 403 when json is not enabled, and pages of
// pageSize results.
type searxngFake struct {
	limiter  bool
	json     bool
	apiMax   int // API requests allowed per window when the limiter is on
	pageSize int
	total    int // results the engines would return over all pages

	mu       sync.Mutex
	apiCalls int
	pages    []int
	headers  []http.Header
}

// blockedAgents is the shape of the limiter's user-agent rule: a regular expression matched at the start of the
// User-Agent header.
var blockedAgents = regexp.MustCompile(`^(unknown|[Cc][Uu][Rr][Ll]|[wW]get|Scrapy|python-requests|Go-http-client|Java|okhttp|HttpClient|Python|libwww-perl|Ruby|Googlebot|bingbot|HeadlessChrome)`)

func (f *searxngFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.headers = append(f.headers, r.Header.Clone())
	tooMany := func(why string) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, "Too Many Requests") // the limiter's body says no more than this; why is for the test log
		_ = why
	}
	if f.limiter {
		switch ua := r.Header.Get("User-Agent"); {
		case ua == "" || blockedAgents.MatchString(ua):
			tooMany("user agent")
			return
		case !strings.Contains(r.Header.Get("Accept"), "text/html"):
			tooMany("accept")
			return
		case strings.TrimSpace(r.Header.Get("Accept-Language")) == "":
			tooMany("accept-language")
			return
		case strings.EqualFold(strings.TrimSpace(r.Header.Get("Connection")), "close"):
			tooMany("connection")
			return
		}
		enc := strings.Split(r.Header.Get("Accept-Encoding"), ",")
		ok := false
		for _, e := range enc {
			e = strings.TrimSpace(e)
			ok = ok || e == "gzip" || e == "deflate"
		}
		if !ok {
			tooMany("accept-encoding")
			return
		}
	}
	format := r.URL.Query().Get("format")
	if format != "" && format != "html" {
		if !f.json {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, "<html><body>403 Forbidden</body></html>")
			return
		}
		if f.limiter {
			f.apiCalls++
			if f.apiCalls > f.apiMax {
				tooMany("api window")
				return
			}
		}
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("pageno"))
	if page < 1 {
		page = 1
	}
	f.pages = append(f.pages, page)
	type res struct {
		URL     string  `json:"url"`
		Title   string  `json:"title"`
		Content string  `json:"content"`
		Score   float64 `json:"score"`
	}
	var out []res
	for i := (page - 1) * f.pageSize; i < min(page*f.pageSize, f.total); i++ {
		out = append(out, res{URL: fmt.Sprintf("https://r.example/%d", i), Title: fmt.Sprintf("Result %d", i), Content: "text", Score: 1 / float64(i+1)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"query": r.URL.Query().Get("q"), "results": out, "unresponsive_engines": []any{}})
}

func newSearXNG(t *testing.T, f *searxngFake, cfg Config) (*SearXNG, *searxngFake) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL
	s, err := New("searxng", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*SearXNG), f
}

func TestSearXNGLimiter(t *testing.T) {
	t.Run("headers pass the limiter", func(t *testing.T) {
		s, f := newSearXNG(t, &searxngFake{limiter: true, json: true, apiMax: 4, pageSize: 10, total: 10}, Config{})
		got, err := s.Search(t.Context(), "Go 的 context 包如何传播取消信号", 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 {
			t.Fatalf("%d results", len(got))
		}
		h := f.headers[0]
		if ua := h.Get("User-Agent"); !strings.HasPrefix(ua, "deepresearch") || !strings.Contains(ua, "https://") {
			t.Errorf("User-Agent = %q: want the project's name and a contact URL", ua)
		}
		if al := h.Get("Accept-Language"); !strings.HasPrefix(al, "zh") {
			t.Errorf("Accept-Language = %q for a Chinese query", al)
		}
	})
	t.Run("a generic agent is refused and the error says how to configure the instance", func(t *testing.T) {
		s, f := newSearXNG(t, &searxngFake{limiter: true, json: true, apiMax: 4, pageSize: 10, total: 10},
			Config{UserAgent: "Go-http-client/1.1", MaxAttempts: 4})
		_, err := s.Search(t.Context(), "otters", 5)
		if err == nil {
			t.Fatal("want the limiter's refusal")
		}
		for _, want := range []string{"bot limiter", "server.limiter: false", "pass_ip", "HTTP 429"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
		if len(f.headers) != 1 {
			t.Errorf("%d requests: a limiter refusal must not be retried", len(f.headers))
		}
	})
	t.Run("the API quota spent is the same refusal", func(t *testing.T) {
		s, _ := newSearXNG(t, &searxngFake{limiter: true, json: true, apiMax: 1, pageSize: 10, total: 10}, Config{})
		if _, err := s.Search(t.Context(), "first", 5); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Search(t.Context(), "second", 5); err == nil || !strings.Contains(err.Error(), "bot limiter") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestSearXNGJSONDisabled(t *testing.T) {
	s, f := newSearXNG(t, &searxngFake{json: false, pageSize: 10, total: 10}, Config{MaxAttempts: 4})
	_, err := s.Search(t.Context(), "otters", 5)
	if err == nil || !strings.Contains(err.Error(), "formats: [html, json]") || !strings.Contains(err.Error(), "403") {
		t.Fatalf("err = %v: want the settings line that enables json", err)
	}
	if len(f.headers) != 1 {
		t.Errorf("%d requests for a 403", len(f.headers))
	}
}

func TestSearXNGPaging(t *testing.T) {
	for _, tc := range []struct {
		name         string
		total, limit int
		wantN        int
		wantPages    []int
	}{
		{"one page is enough", 50, 8, 8, []int{1}},
		{"pages until the limit", 50, 25, 25, []int{1, 2, 3}},
		{"an empty page ends it", 15, 40, 15, []int{1, 2, 3}},
		{"bounded pages", 1000, 100, 50, []int{1, 2, 3, 4, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, f := newSearXNG(t, &searxngFake{json: true, pageSize: 10, total: tc.total}, Config{})
			got, err := s.Search(t.Context(), "otters", tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.wantN || fmt.Sprint(f.pages) != fmt.Sprint(tc.wantPages) {
				t.Fatalf("%d results over pages %v; want %d over %v", len(got), f.pages, tc.wantN, tc.wantPages)
			}
			seen := map[string]bool{}
			for _, r := range got {
				if seen[r.URL] {
					t.Fatalf("duplicate %s", r.URL)
				}
				seen[r.URL] = true
			}
		})
	}
}

// braveFake enforces Brave's documented query limits (422 past 400 characters or 50 words) and its rate-limit
// headers: one value per window, per second first and per month second.
type braveFake struct {
	monthlyLeft int
	mu          sync.Mutex
	queries     []url.Values
	calls       int
}

func (f *braveFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	q := r.URL.Query()
	f.queries = append(f.queries, q)
	if len(q.Get("q")) > 400 || len(strings.Fields(q.Get("q"))) > 50 {
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprint(w, `{"type":"ErrorResponse","error":{"code":"VALIDATION","detail":"Unable to validate request parameter(s)","status":422}}`)
		return
	}
	w.Header().Set("X-RateLimit-Limit", "1, 2000")
	if f.monthlyLeft <= 0 {
		w.Header().Set("X-RateLimit-Remaining", "0, 0")
		w.Header().Set("X-RateLimit-Reset", "1, 1419704")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"type":"ErrorResponse","error":{"code":"RATE_LIMITED","detail":"Request rate limit exceeded for plan.","status":429}}`)
		return
	}
	f.monthlyLeft--
	w.Header().Set("X-RateLimit-Remaining", fmt.Sprintf("0, %d", f.monthlyLeft))
	w.Header().Set("X-RateLimit-Reset", "1, 1419704")
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"type":"search","web":{"type":"search","results":[
	  {"title":"A","url":"https://b.example/a","description":"first <strong>passage</strong>","extra_snippets":["second passage","first passage","third passage"]}]}}`)
}

func TestBraveLimitsAndLocale(t *testing.T) {
	f := &braveFake{monthlyLeft: 10}
	srv := httptest.NewServer(f)
	defer srv.Close()
	s, err := New("brave", Config{BaseURL: srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("goroutine scheduling preemption ", 30) // 90 words, ~960 characters
	got, err := s.Search(t.Context(), long, 5)
	if err != nil {
		t.Fatalf("a long query must be shortened, not refused: %v", err)
	}
	if len(got) != 1 || got[0].Snippet != "first passage … second passage … third passage" {
		t.Fatalf("snippet = %q: want the description and the extra snippets, without repeats", got[0].Snippet)
	}
	q := f.queries[0]
	if q["extra_snippets"][0] != "true" || q["search_lang"][0] != "en" {
		t.Errorf("query = %v", q)
	}
	if _, err := s.Search(t.Context(), "Go 语言的内存模型对通道通信保证了什么", 5); err != nil {
		t.Fatal(err)
	}
	if q := f.queries[1]; q.Get("country") != "CN" || q.Get("search_lang") != "zh-hans" {
		t.Errorf("Chinese query sent country=%q search_lang=%q", q.Get("country"), q.Get("search_lang"))
	}
}

func TestBraveMonthlyQuotaSpent(t *testing.T) {
	f := &braveFake{monthlyLeft: 0}
	srv := httptest.NewServer(f)
	defer srv.Close()
	s, _ := New("brave", Config{BaseURL: srv.URL, APIKey: "k", MaxAttempts: 4})
	_, err := s.Search(t.Context(), "otters", 5)
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"monthly quota of 2000 requests is spent", "renews in 394h22m0s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if f.calls != 1 {
		t.Errorf("%d calls: a spent monthly quota must not be retried", f.calls)
	}
}

func TestTavilyTopicFromQuery(t *testing.T) {
	var bodies []map[string]any
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		data, _ := io.ReadAll(r.Body)
		json.Unmarshal(data, &body)
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		// Tavily dates results only on the news topic.
		date := ""
		if body["topic"] == "news" {
			date = `,"published_date":"Mon, 23 Nov 2026 09:00:00 GMT"`
		}
		fmt.Fprintf(w, `{"results":[{"title":"T","url":"https://t.example/1","content":"c","score":0.5%s}]}`, date)
	}))
	defer srv.Close()
	now := func() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) }
	s, _ := New("tavily", Config{BaseURL: srv.URL, APIKey: "k", Now: now})
	for _, tc := range []struct {
		q, topic, period string
		dated            bool
	}{
		{"How does the Go scheduler preempt goroutines?", "general", "", false},
		{"latest Go release notes", "news", "month", true},
		{"What happened to the Go proposal this week?", "news", "week", true},
		{"Go 1.26 changes in 2026", "news", "year", true},
		{"最新的 Go 版本有什么变化", "news", "month", true},
	} {
		got, err := s.Search(t.Context(), tc.q, 3)
		if err != nil {
			t.Fatal(err)
		}
		b := bodies[len(bodies)-1]
		if b["topic"] != tc.topic || (tc.period != "" && b["time_range"] != tc.period) || (tc.period == "" && b["time_range"] != nil) {
			t.Errorf("%q: topic=%v time_range=%v; want %s %s", tc.q, b["topic"], b["time_range"], tc.topic, tc.period)
		}
		if got[0].Date.IsZero() == tc.dated {
			t.Errorf("%q: date %v kept=%v", tc.q, got[0].Date, !got[0].Date.IsZero())
		}
	}
}

func TestExaAsksForHighlights(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		json.Unmarshal(data, &body)
		fmt.Fprint(w, `{"results":[{"title":"P","url":"https://x.example/p","score":0.4,"highlights":["the answer sentence.","another one."]}]}`)
	}))
	defer srv.Close()
	s, _ := New("exa", Config{BaseURL: srv.URL, APIKey: "k"})
	got, err := s.Search(t.Context(), "otters", 3)
	if err != nil {
		t.Fatal(err)
	}
	contents, _ := body["contents"].(map[string]any)
	hl, _ := contents["highlights"].(map[string]any)
	if hl == nil || hl["query"] != "otters" || contents["text"] != nil {
		t.Fatalf("contents = %v: want highlights for the query and no page text", body["contents"])
	}
	if got[0].Snippet != "the answer sentence. … another one." {
		t.Fatalf("snippet = %q", got[0].Snippet)
	}
}

func TestQueryRules(t *testing.T) {
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for q, want := range map[string]string{
		"how do LSM trees handle deletes":       "",
		"what changed today in the Go tree":     "day",
		"Go news":                               "month",
		"Go 1.21 release in 2023":               "",
		"the 2025 Go developer survey":          "year",
		"上周发布了什么":                               "week",
		"recently merged proposals":             "month",
		"what did last year's survey say":       "year",
		"a newsletter about compilers":          "", // "news" only as a word
		"the latest of the memory model rules?": "month",
	} {
		if got := recency(q, now); got != want {
			t.Errorf("recency(%q) = %q, want %q", q, got, want)
		}
	}
	for _, tc := range []struct {
		in         string
		words, max int
		want       string
	}{
		{"a b c", 50, 400, "a b c"},
		{"one two three four", 2, 400, "one two"},
		{"alpha beta gamma", 50, 11, "alpha beta"},
		{"内存模型通道通信", 50, 7, "内存"}, // 3-byte runes: never cut inside one
	} {
		if got := shortenQuery(tc.in, tc.words, tc.max); got != tc.want {
			t.Errorf("shortenQuery(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
