package websearch

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/deepresearch/deepresearch/sources"
)

// Tavily searches with the Tavily API (POST /search, bearer key).
type Tavily struct {
	c    *client
	key  string
	base string
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

// Search implements sources.Searcher.
func (t *Tavily) Search(ctx context.Context, query string, limit int) ([]sources.Result, error) {
	n := clampLimit(limit, 20)
	body := map[string]any{
		"query": query, "max_results": n, "search_depth": "basic", "topic": "general",
		"include_answer": false, "include_raw_content": false, "include_images": false,
	}
	mk := jsonRequest(http.MethodPost, t.base+"/search", body)
	var resp tavilyResponse
	err := t.c.do(ctx, func() (*http.Request, error) {
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

// Search implements sources.Searcher.
func (b *Brave) Search(ctx context.Context, query string, limit int) ([]sources.Result, error) {
	n := clampLimit(limit, 20)
	q := url.Values{"q": {query}, "count": {strconv.Itoa(n)}}
	mk := jsonRequest(http.MethodGet, b.base+"/res/v1/web/search?"+q.Encode(), nil)
	var resp braveResponse
	err := b.c.do(ctx, func() (*http.Request, error) {
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
		rs = append(rs, sources.Result{Title: r.Title, URL: r.URL, Snippet: r.Description, Date: d})
	}
	return finish("brave", rs, n), nil
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

// Search implements sources.Searcher. SearXNG has no result-count
// parameter; the first page is trimmed to limit.
func (s *SearXNG) Search(ctx context.Context, query string, limit int) ([]sources.Result, error) {
	n := clampLimit(limit, 100)
	q := url.Values{"q": {query}, "format": {"json"}, "pageno": {"1"}}
	var resp searxngResponse
	if err := s.c.do(ctx, jsonRequest(http.MethodGet, s.base+"/search?"+q.Encode(), nil), &resp); err != nil {
		return nil, wrap("searxng", query, err)
	}
	rs := make([]sources.Result, 0, len(resp.Results))
	for _, r := range resp.Results {
		var d string
		if r.PublishedDate != nil {
			d = *r.PublishedDate
		}
		rs = append(rs, sources.Result{Title: r.Title, URL: r.URL, Snippet: r.Content, Score: r.Score, Date: parseDate(d)})
	}
	return finish("searxng", rs, n), nil
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
		"contents": map[string]any{"text": map[string]any{"maxCharacters": 600}},
	}
	mk := jsonRequest(http.MethodPost, e.base+"/search", body)
	var resp exaResponse
	err := e.c.do(ctx, func() (*http.Request, error) {
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
		snip := r.Text
		if len(r.Highlights) > 0 {
			snip = r.Highlights[0]
		} else if r.Summary != "" {
			snip = r.Summary
		}
		rs = append(rs, sources.Result{Title: r.Title, URL: r.URL, Snippet: truncate(snip, 600), Score: r.Score, Date: parseDate(r.PublishedDate)})
	}
	return finish("exa", rs, n), nil
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
