package websearch

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/sources"
)

// Fakes of each provider's documented request and response shapes.
type fake struct {
	name    string
	env     map[string]string
	check   func(t *testing.T, r *http.Request, body map[string]any) // asserts the request
	payload string                                                   // documented response JSON
	want    []sources.Result
}

var fakes = []fake{
	{
		name: "tavily",
		env:  map[string]string{"TAVILY_API_KEY": "tvly-test"},
		check: func(t *testing.T, r *http.Request, body map[string]any) {
			if r.Method != http.MethodPost || r.URL.Path != "/search" {
				t.Errorf("tavily: %s %s", r.Method, r.URL.Path)
			}
			if got := r.Header.Get("Authorization"); got != "Bearer tvly-test" {
				t.Errorf("tavily auth = %q", got)
			}
			if body["query"] != "otter sleep" || body["max_results"] != float64(3) {
				t.Errorf("tavily body = %v", body)
			}
		},
		payload: `{"query":"otter sleep","answer":null,"images":[],"response_time":1.2,
		  "results":[
		    {"title":"Otters  hold hands","url":"https://example.org/otters","content":"Sea otters hold\npaws.","score":0.91,"raw_content":null,"published_date":"2024-03-05T10:00:00Z"},
		    {"title":"Kelp","url":"https://example.org/kelp?utm_source=x","content":"Kelp forests.","score":0.5},
		    {"title":"Dup","url":"https://example.org/kelp","content":"Duplicate.","score":0.4},
		    {"title":"No URL","url":"","content":"dropped","score":0.3}]}`,
		want: []sources.Result{
			{Title: "Otters hold hands", URL: "https://example.org/otters", Snippet: "Sea otters hold paws.", Score: 0.91, Date: time.Date(2024, 3, 5, 10, 0, 0, 0, time.UTC), Provider: "tavily"},
			{Title: "Kelp", URL: "https://example.org/kelp?utm_source=x", Snippet: "Kelp forests.", Score: 0.5, Provider: "tavily"},
		},
	},
	{
		name: "brave",
		env:  map[string]string{"BRAVE_SEARCH_API_KEY": "brv-test"},
		check: func(t *testing.T, r *http.Request, _ map[string]any) {
			if r.Method != http.MethodGet || r.URL.Path != "/res/v1/web/search" {
				t.Errorf("brave: %s %s", r.Method, r.URL.Path)
			}
			if got := r.Header.Get("X-Subscription-Token"); got != "brv-test" {
				t.Errorf("brave token = %q", got)
			}
			if q := r.URL.Query(); q.Get("q") != "otter sleep" || q.Get("count") != "3" {
				t.Errorf("brave query = %v", q)
			}
		},
		payload: `{"type":"search","query":{"original":"otter sleep"},"web":{"type":"search","results":[
		    {"title":"Why do <strong>otters</strong> hold hands?","url":"https://example.com/a","description":"Otters <strong>sleep</strong> &amp; float.","page_age":"2023-03-07T00:00:00","age":"March 7, 2023","meta_url":{"hostname":"example.com"}},
		    {"title":"Second","url":"https://example.com/b","description":"Undated.","extra_snippets":["more"]}]}}`,
		want: []sources.Result{
			{Title: "Why do otters hold hands?", URL: "https://example.com/a", Snippet: "Otters sleep & float.", Date: time.Date(2023, 3, 7, 0, 0, 0, 0, time.UTC), Provider: "brave", Score: 1},
			{Title: "Second", URL: "https://example.com/b", Snippet: "Undated. … more", Provider: "brave", Score: 0.5},
		},
	},
	{
		name: "searxng",
		env:  map[string]string{}, // SEARXNG_URL is set from the fake server
		check: func(t *testing.T, r *http.Request, _ map[string]any) {
			if r.Method != http.MethodGet || r.URL.Path != "/search" {
				t.Errorf("searxng: %s %s", r.Method, r.URL.Path)
			}
			if q := r.URL.Query(); q.Get("q") != "otter sleep" || q.Get("format") != "json" {
				t.Errorf("searxng query = %v", q)
			}
		},
		payload: `{"query":"otter sleep","number_of_results":0,"results":[
		    {"url":"https://a.example/1","title":"One","content":"first","engine":"duckduckgo","engines":["duckduckgo"],"score":2.5,"category":"general","publishedDate":"2022-01-02T03:04:05"},
		    {"url":"https://a.example/2","title":"Two","content":"second","engine":"bing","score":1.5,"publishedDate":null},
		    {"url":"https://a.example/3","title":"Three","content":"third","engine":"bing","score":1.0},
		    {"url":"https://a.example/4","title":"Four","content":"fourth","engine":"bing","score":0.5}],
		  "answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`,
		want: []sources.Result{
			{Title: "One", URL: "https://a.example/1", Snippet: "first", Score: 2.5, Date: time.Date(2022, 1, 2, 3, 4, 5, 0, time.UTC), Provider: "searxng"},
			{Title: "Two", URL: "https://a.example/2", Snippet: "second", Score: 1.5, Provider: "searxng"},
			{Title: "Three", URL: "https://a.example/3", Snippet: "third", Score: 1.0, Provider: "searxng"},
		},
	},
	{
		name: "exa",
		env:  map[string]string{"EXA_API_KEY": "exa-test"},
		check: func(t *testing.T, r *http.Request, body map[string]any) {
			if r.Method != http.MethodPost || r.URL.Path != "/search" {
				t.Errorf("exa: %s %s", r.Method, r.URL.Path)
			}
			if got := r.Header.Get("x-api-key"); got != "exa-test" {
				t.Errorf("exa key = %q", got)
			}
			if body["query"] != "otter sleep" || body["numResults"] != float64(3) {
				t.Errorf("exa body = %v", body)
			}
		},
		payload: `{"requestId":"abc","resolvedSearchType":"neural","results":[
		    {"id":"https://x.example/p","title":"Otter paper","url":"https://x.example/p","publishedDate":"2021-06-01T00:00:00.000Z","author":"A. Lutra","score":0.42,"text":"Full text of the otter paper."},
		    {"id":"https://x.example/q","title":"Highlighted","url":"https://x.example/q","score":0.3,"text":"long text","highlights":["the best sentence"],"highlightScores":[0.9]}]}`,
		want: []sources.Result{
			{Title: "Otter paper", URL: "https://x.example/p", Snippet: "Full text of the otter paper.", Score: 0.42, Date: time.Date(2021, 6, 1, 0, 0, 0, 0, time.UTC), Provider: "exa"},
			{Title: "Highlighted", URL: "https://x.example/q", Snippet: "the best sentence", Score: 0.3, Provider: "exa"},
		},
	},
}

// start serves fk; the first fails429 requests get HTTP 429 (-1: forever).
func start(t *testing.T, fk fake, fails429 int) (Config, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		var body map[string]any
		if r.Body != nil {
			data, _ := io.ReadAll(r.Body)
			if len(data) > 0 {
				if err := json.Unmarshal(data, &body); err != nil {
					t.Errorf("%s: request body is not JSON: %v", fk.name, err)
				}
			}
		}
		fk.check(t, r, body)
		if fails429 < 0 || int(n) <= fails429 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":"rate limit exceeded"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, fk.payload)
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{"SEARXNG_URL": srv.URL}
	for k, v := range fk.env {
		env[k] = v
	}
	cfg := Config{Getenv: func(k string) string { return env[k] }}
	if fk.name != "searxng" {
		cfg.BaseURL = srv.URL
	}
	return cfg, &calls
}

func TestProviders(t *testing.T) {
	for _, fk := range fakes {
		t.Run(fk.name, func(t *testing.T) {
			cfg, calls := start(t, fk, 0)
			s, err := New(fk.name, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if s.Name() != fk.name {
				t.Fatalf("Name = %q", s.Name())
			}
			got, err := s.Search(t.Context(), "otter sleep", 3)
			if err != nil {
				t.Fatal(err)
			}
			if calls.Load() != 1 {
				t.Fatalf("%d calls", calls.Load())
			}
			if len(got) != len(fk.want) {
				t.Fatalf("got %d results, want %d: %+v", len(got), len(fk.want), got)
			}
			for i := range got {
				g, w := got[i], fk.want[i]
				if g.Title != w.Title || g.URL != w.URL || g.Snippet != w.Snippet || g.Provider != w.Provider ||
					g.Score != w.Score || !g.Date.Equal(w.Date) {
					t.Errorf("result %d:\n got %+v\nwant %+v", i, g, w)
				}
			}
		})
	}
}

// retrying lists the providers whose 429 is a passing rate limit worth waiting out. SearXNG's 429 comes from its
// bot limiter, which no retry gets past (TestSearXNGLimiter).
func retrying() []fake {
	var out []fake
	for _, fk := range fakes {
		if fk.name != "searxng" {
			out = append(out, fk)
		}
	}
	return out
}

func TestRateLimitThenSuccess(t *testing.T) {
	for _, fk := range retrying() {
		t.Run(fk.name, func(t *testing.T) {
			cfg, calls := start(t, fk, 2)
			s, err := New(fk.name, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Search(t.Context(), "otter sleep", 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(fk.want) || calls.Load() != 3 {
				t.Fatalf("%d results after %d calls", len(got), calls.Load())
			}
		})
	}
}

func TestRateLimitForeverIsAnError(t *testing.T) {
	for _, fk := range retrying() {
		t.Run(fk.name, func(t *testing.T) {
			cfg, calls := start(t, fk, -1)
			cfg.MaxAttempts = 3
			s, err := New(fk.name, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Search(t.Context(), "otter sleep", 3)
			if err == nil {
				t.Fatalf("want an error, got %d results", len(got))
			}
			want := fmt.Sprintf(`websearch %s "otter sleep": HTTP 429 Too Many Requests after 3 attempts (rate limited): {"error":"rate limit exceeded"}`, fk.name)
			if err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
			if calls.Load() != 3 {
				t.Fatalf("%d calls, want 3", calls.Load())
			}
		})
	}
}

func TestRetryAfterOverCap(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("X-RateLimit-Reset", "86400, 1000000") // Brave: seconds to reset per window
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	s, err := New("brave", Config{BaseURL: srv.URL, APIKey: "k", MaxRetryWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Search(t.Context(), "q", 5)
	if err == nil || !strings.Contains(err.Error(), "provider asks to wait 24h0m0s, over the 1s limit") || calls.Load() != 1 {
		t.Fatalf("err = %v after %d calls", err, calls.Load())
	}
}

func TestConfigErrors(t *testing.T) {
	empty := func(string) string { return "" }
	for name, want := range map[string]string{
		"tavily":  "set TAVILY_API_KEY",
		"brave":   "set BRAVE_API_KEY or BRAVE_SEARCH_API_KEY",
		"exa":     "set EXA_API_KEY",
		"searxng": "set SEARXNG_URL",
		"bing":    `unknown provider "bing" (known: arxiv, brave, crossref, europepmc, exa, openalex, searxng, semanticscholar, tavily, wikipedia)`,
	} {
		_, err := New(name, Config{Getenv: empty})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", name, err, want)
		}
	}
}

func TestAuthErrorIsReported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"detail":{"error":"Unauthorized: missing or invalid API key."}}`)
	}))
	defer srv.Close()
	s, _ := New("tavily", Config{BaseURL: srv.URL, APIKey: "bad"})
	_, err := s.Search(t.Context(), "q", 5)
	if err == nil || !strings.Contains(err.Error(), "HTTP 401 Unauthorized") || !strings.Contains(err.Error(), "invalid API key") {
		t.Fatalf("err = %v", err)
	}
}
