package websearch

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/sources"
)

// Tavily searches with the Tavily API (POST /search, bearer key).
type Tavily struct {
	c    *client
	key  string
	base string
	now  func() time.Time
}

// Name implements sources.Searcher.
func (t *Tavily) Name() string { return "tavily" }

type tavilyResponse struct {
	Results []struct {
		Title         string  `json:"title"`
		URL           string  `json:"url"`
		Content       string  `json:"content"`
		Score         float64 `json:"score"`
		PublishedDate string  `json:"published_date"`
	} `json:"results"`
}

// Search implements sources.Searcher. A query about recent events ("latest", "this week", "最新", the current
// year) searches Tavily's news topic over the period it names, the only topic whose results carry dates.
func (t *Tavily) Search(ctx context.Context, query string, limit int) ([]sources.Result, error) {
	n := clampLimit(limit, 20)
	body := map[string]any{
		"query": query, "max_results": n, "search_depth": "basic", "topic": "general",
		"include_answer": false, "include_raw_content": false, "include_images": false,
	}
	if period := recency(query, t.now()); period != "" {
		body["topic"] = "news"
		body["time_range"] = period
	}
	mk := jsonRequest(http.MethodPost, t.base+"/search", body)
	var resp tavilyResponse
	err := t.c.do(ctx, queryLanguage(query), func() (*http.Request, error) {
		req, err := mk()
		if err == nil {
			req.Header.Set("Authorization", "Bearer "+t.key)
		}
		return req, err
	}, &resp)
	if err != nil {
		return nil, wrap("tavily", query, err)
	}
	rs := make([]sources.Result, 0, len(resp.Results))
	for _, r := range resp.Results {
		rs = append(rs, sources.Result{Title: r.Title, URL: r.URL, Snippet: r.Content, Score: r.Score, Date: parseDate(r.PublishedDate)})
	}
	return finish("tavily", rs, n), nil
}

// Brave searches with the Brave Search web API (GET /res/v1/web/search,
// X-Subscription-Token header).
type Brave struct {
	c    *client
	key  string
	base string
}

// Name implements sources.Searcher.
func (b *Brave) Name() string { return "brave" }

type braveResponse struct {
	Web struct {
		Results []struct {
			Title         string   `json:"title"`
			URL           string   `json:"url"`
			Description   string   `json:"description"`
			PageAge       string   `json:"page_age"`
			Age           string   `json:"age"`
			ExtraSnippets []string `json:"extra_snippets"`
		} `json:"results"`
	} `json:"web"`
}

// Search implements sources.Searcher. The query is shortened to Brave's documented limits, the country and
// search language follow the query's language, and extra snippets (more passages of each page) are asked for.
func (b *Brave) Search(ctx context.Context, query string, limit int) ([]sources.Result, error) {
	n := clampLimit(limit, 20)
	lang := queryLanguage(query)
	short := shortenQuery(query, braveMaxQueryWords, braveMaxQueryChars)
	q := url.Values{"q": {short}, "count": {strconv.Itoa(n)}, "extra_snippets": {"true"}}
	country, searchLang := braveLocale(lang)
	if country != "" {
		q.Set("country", country)
	}
	q.Set("search_lang", searchLang)
	mk := jsonRequest(http.MethodGet, b.base+"/res/v1/web/search?"+q.Encode(), nil)
	var resp braveResponse
	err := b.c.do(ctx, lang, func() (*http.Request, error) {
		req, err := mk()
		if err == nil {
			req.Header.Set("X-Subscription-Token", b.key)
		}
		return req, err
	}, &resp)
	if err != nil {
		return nil, wrap("brave", query, err)
	}
	rs := make([]sources.Result, 0, len(resp.Web.Results))
	for _, r := range resp.Web.Results {
		d := parseDate(r.PageAge)
		if d.IsZero() {
			d = parseDate(r.Age)
		}
		rs = append(rs, sources.Result{Title: r.Title, URL: r.URL, Snippet: joinSnippets(r.Description, r.ExtraSnippets), Date: d})
	}
	return finish("brave", rs, n), nil
}

// maxSnippet bounds a snippet assembled from several passages.
const maxSnippet = 1200

// joinSnippets puts a result's passages together, in the provider's order, without repeats, within maxSnippet.
func joinSnippets(first string, more []string) string {
	parts := []string{}
	seen := map[string]bool{}
	for _, p := range append([]string{first}, more...) {
		p = cleanText(p)
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		parts = append(parts, p)
	}
	out := strings.Join(parts, " … ")
	return lexical.Clip(out, maxSnippet)
}

// braveRefusal explains a spent monthly quota instead of retrying into it. Brave's rate-limit headers list one
// value per window, the per-second window first and the monthly one second: X-RateLimit-Remaining "0, 0" with
// X-RateLimit-Reset "1, 1419704" means the month's requests are used up for another 16 days.
func braveRefusal(resp *http.Response, se *StatusError) error {
	if resp.StatusCode != http.StatusTooManyRequests {
		return nil
	}
	remaining := headerValues(resp.Header.Get("X-RateLimit-Remaining"))
	if len(remaining) < 2 || remaining[1] != 0 {
		return nil
	}
	msg := "brave: the plan's monthly request quota is spent"
	if limits := headerValues(resp.Header.Get("X-RateLimit-Limit")); len(limits) >= 2 {
		msg = fmt.Sprintf("brave: the plan's monthly quota of %d requests is spent", limits[1])
	}
	if resets := headerValues(resp.Header.Get("X-RateLimit-Reset")); len(resets) >= 2 {
		msg += fmt.Sprintf("; it renews in %s", (time.Duration(resets[1]) * time.Second).Round(time.Minute))
	}
	return fmt.Errorf("%s (upgrade the plan at the Brave Search API dashboard, or use another --web provider): %w", msg, se)
}

// headerValues parses a comma-separated list of whole numbers; a value that is not one ends the list.
func headerValues(v string) []int {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			break
		}
		out = append(out, n)
	}
	return out
}

// SearXNG searches a (self-hosted) SearXNG instance through its JSON output
// (GET /search?format=json); the instance must enable the json format.
type SearXNG struct {
	c    *client
	base string
}

// Name implements sources.Searcher.
func (s *SearXNG) Name() string { return "searxng" }

type searxngResponse struct {
	Results []struct {
		Title         string  `json:"title"`
		URL           string  `json:"url"`
		Content       string  `json:"content"`
		Score         float64 `json:"score"`
		PublishedDate *string `json:"publishedDate"`
		Engine        string  `json:"engine"`
	} `json:"results"`
}

// searxngMaxPages bounds the pages fetched for one query.
const searxngMaxPages = 5

// Search implements sources.Searcher. SearXNG has no result-count parameter: pages are fetched until limit
// distinct results are in hand, a page adds nothing new, or searxngMaxPages is reached.
func (s *SearXNG) Search(ctx context.Context, query string, limit int) ([]sources.Result, error) {
	n := clampLimit(limit, 100)
	lang := queryLanguage(query)
	var rs []sources.Result
	seen := map[string]bool{}
	for page := 1; page <= searxngMaxPages; page++ {
		q := url.Values{"q": {query}, "format": {"json"}, "pageno": {strconv.Itoa(page)}}
		var resp searxngResponse
		if err := s.c.do(ctx, lang, jsonRequest(http.MethodGet, s.base+"/search?"+q.Encode(), nil), &resp); err != nil {
			if page > 1 && len(rs) > 0 {
				s.c.cfg.Logger.Info("websearch: searxng stopped paging", "page", page, "err", err)
				break
			}
			return nil, wrap("searxng", query, err)
		}
		added := 0
		for _, r := range resp.Results {
			k := sources.NormalizeURL(r.URL)
			if r.URL == "" || seen[k] {
				continue
			}
			seen[k] = true
			added++
			var d string
			if r.PublishedDate != nil {
				d = *r.PublishedDate
			}
			rs = append(rs, sources.Result{Title: r.Title, URL: r.URL, Snippet: r.Content, Score: r.Score, Date: parseDate(d)})
		}
		if added == 0 || len(rs) >= n {
			break
		}
	}
	return finish("searxng", rs, n), nil
}

// searxngRefusal explains the two refusals a SearXNG instance gives API clients, which no retry changes.
func searxngRefusal(resp *http.Response, se *StatusError) error {
	switch resp.StatusCode {
	case http.StatusForbidden:
		return fmt.Errorf("searxng: the instance does not serve JSON; enable it in its settings.yml "+
			"(search: formats: [html, json]) and restart it: %w", se)
	case http.StatusTooManyRequests:
		return fmt.Errorf("searxng: the instance's bot limiter refused the request; on an instance you run, set "+
			"server.limiter: false in settings.yml, or list this machine's address under "+
			"botdetection.ip_lists.pass_ip in limiter.toml (public instances refuse API clients): %w", se)
	}
	return nil
}

// Exa searches with the Exa API (POST /search, x-api-key header).
type Exa struct {
	c    *client
	key  string
	base string
}

// Name implements sources.Searcher.
func (e *Exa) Name() string { return "exa" }

type exaResponse struct {
	Results []struct {
		Title         string   `json:"title"`
		URL           string   `json:"url"`
		PublishedDate string   `json:"publishedDate"`
		Score         float64  `json:"score"`
		Text          string   `json:"text"`
		Highlights    []string `json:"highlights"`
		Summary       string   `json:"summary"`
	} `json:"results"`
}

// Search implements sources.Searcher.
func (e *Exa) Search(ctx context.Context, query string, limit int) ([]sources.Result, error) {
	n := clampLimit(limit, 100)
	body := map[string]any{
		"query": query, "numResults": n, "type": "auto",
		// Highlights are the passages of each page that answer the query: a better snippet than its first lines.
		"contents": map[string]any{"highlights": map[string]any{"query": query, "numSentences": 3, "highlightsPerUrl": 2}},
	}
	mk := jsonRequest(http.MethodPost, e.base+"/search", body)
	var resp exaResponse
	err := e.c.do(ctx, queryLanguage(query), func() (*http.Request, error) {
		req, err := mk()
		if err == nil {
			req.Header.Set("x-api-key", e.key)
		}
		return req, err
	}, &resp)
	if err != nil {
		return nil, wrap("exa", query, err)
	}
	rs := make([]sources.Result, 0, len(resp.Results))
	for _, r := range resp.Results {
		var snip string
		switch {
		case len(r.Highlights) > 0:
			snip = joinSnippets(r.Highlights[0], r.Highlights[1:])
		case r.Summary != "":
			snip = lexical.Clip(r.Summary, maxSnippet)
		default:
			snip = lexical.Clip(r.Text, 600)
		}
		rs = append(rs, sources.Result{Title: r.Title, URL: r.URL, Snippet: snip, Score: r.Score, Date: parseDate(r.PublishedDate)})
	}
	return finish("exa", rs, n), nil
}
