// Package mcpsearch makes a search-like tool — typically an MCP server's (Brave, Exa, Tavily, an intranet search
// server) — usable as a sources.Searcher, so the research graph can search through servers users already run.
// It lives apart from mcptools because it depends on package sources, which the agent runtime must not.
package mcpsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/sources"
)

// Config tunes a Searcher. The zero value means the defaults.
type Config struct {
	// Name is the provider name results carry; default the tool's name.
	Name string
	// QueryArg is the argument that takes the query; default "query".
	QueryArg string
	// LimitArg, when set, is the argument that takes the number of results (e.g. "count", "limit",
	// "max_results").
	LimitArg string
	// Args are fixed extra arguments sent with every call.
	Args map[string]any
}

// Searcher is a sources.Searcher over a tool. It is safe for concurrent use when the tool is.
type Searcher struct {
	tool agent.Tool
	cfg  Config
}

var _ sources.Searcher = (*Searcher)(nil)

// New returns a Searcher that calls tool.
func New(tool agent.Tool, cfg Config) *Searcher {
	if cfg.Name == "" {
		cfg.Name = tool.Spec().Name
	}
	if cfg.QueryArg == "" {
		cfg.QueryArg = "query"
	}
	return &Searcher{tool: tool, cfg: cfg}
}

// Name implements sources.Searcher.
func (s *Searcher) Name() string { return s.cfg.Name }

// Search implements sources.Searcher. It understands JSON answers (an array of results, or an object holding one
// under results, items, data, organic or web.results, with the usual field names) and, failing that, text with
// URLs: Markdown links, or a URL on a line with its title on the line before.
func (s *Searcher) Search(ctx context.Context, query string, limit int) ([]sources.Result, error) {
	args := make(map[string]any, len(s.cfg.Args)+2)
	for k, v := range s.cfg.Args {
		args[k] = v
	}
	args[s.cfg.QueryArg] = query
	if s.cfg.LimitArg != "" && limit > 0 {
		args[s.cfg.LimitArg] = limit
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", s.cfg.Name, err)
	}
	res, err := s.tool.Run(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", s.cfg.Name, err)
	}
	if res.IsError {
		return nil, fmt.Errorf("search %s: %s", s.cfg.Name, strings.TrimPrefix(res.Content, "Error: "))
	}
	out := Parse(res.Content)
	if out == nil && strings.TrimSpace(res.Content) != "" {
		return nil, fmt.Errorf("search %s: %w", s.cfg.Name, ErrNoResults)
	}
	for i := range out {
		out[i].Provider = s.cfg.Name
		if out[i].Score == 0 {
			out[i].Score = 1 / float64(i+1)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// ErrNoResults is returned (wrapped) when the tool answered with text in which no result could be recognised.
var ErrNoResults = errors.New("no search results recognised in the tool's answer")

// Parse extracts results from a tool's answer.
func Parse(text string) []sources.Result {
	text = strings.TrimSpace(text)
	var v any
	if json.Unmarshal([]byte(text), &v) == nil {
		if out := fromJSON(v); len(out) > 0 {
			return out
		}
	}
	return fromText(text)
}

func fromJSON(v any) []sources.Result {
	switch x := v.(type) {
	case []any:
		var out []sources.Result
		for _, item := range x {
			if m, ok := item.(map[string]any); ok {
				if r, ok := resultFrom(m); ok {
					out = append(out, r)
				}
			}
		}
		return out
	case map[string]any:
		for _, k := range []string{"results", "items", "data", "organic", "organic_results", "documents", "hits"} {
			if out := fromJSON(x[k]); len(out) > 0 {
				return out
			}
		}
		if web, ok := x["web"].(map[string]any); ok {
			return fromJSON(web["results"])
		}
		if r, ok := resultFrom(x); ok {
			return []sources.Result{r}
		}
	}
	return nil
}

func resultFrom(m map[string]any) (sources.Result, bool) {
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
				return strings.TrimSpace(s)
			}
		}
		return ""
	}
	r := sources.Result{
		Title:   str("title", "name", "headline"),
		URL:     str("url", "link", "href", "uri", "source"),
		Snippet: str("snippet", "description", "summary", "content", "text", "abstract", "highlight"),
	}
	if d := str("date", "published", "publishedDate", "published_date", "published_at", "page_age"); d != "" {
		for _, layout := range []string{time.RFC3339, "2006-01-02", "2006-01-02T15:04:05", "January 2, 2006"} {
			if t, err := time.Parse(layout, d); err == nil {
				r.Date = t
				break
			}
		}
	}
	if score, ok := m["score"].(float64); ok {
		r.Score = score
	}
	if r.URL == "" {
		return r, false
	}
	if r.Title == "" {
		r.Title = r.URL
	}
	return r, true
}

var (
	mdLink = regexp.MustCompile(`\[([^\]]+)\]\((https?://[^)\s]+)\)`)
	bare   = regexp.MustCompile(`https?://[^\s<>()"']+`)
)

func fromText(text string) []sources.Result {
	var out []sources.Result
	seen := map[string]bool{}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if m := mdLink.FindAllStringSubmatch(line, -1); m != nil {
			for _, g := range m {
				if !seen[g[2]] {
					seen[g[2]] = true
					snippet := strings.TrimSpace(mdLink.ReplaceAllString(line, ""))
					if snippet == "" && i+1 < len(lines) {
						snippet = strings.TrimSpace(lines[i+1])
					}
					out = append(out, sources.Result{Title: g[1], URL: g[2], Snippet: strings.Trim(snippet, " -–:")})
				}
			}
			continue
		}
		for _, raw := range bare.FindAllString(line, -1) {
			u := strings.TrimRight(raw, ".,;")
			if seen[u] {
				continue
			}
			seen[u] = true
			title := strings.TrimSpace(strings.Replace(line, raw, "", 1))
			title = strings.Trim(strings.TrimPrefix(strings.TrimPrefix(title, "URL:"), "url:"), " -–:.")
			if title == "" && i > 0 {
				title = strings.Trim(strings.TrimPrefix(strings.TrimSpace(lines[i-1]), "Title:"), " -–:#*")
			}
			snippet := ""
			if i+1 < len(lines) && !bare.MatchString(lines[i+1]) {
				snippet = strings.TrimPrefix(strings.TrimSpace(lines[i+1]), "Description:")
			}
			if title == "" {
				title = u
			}
			out = append(out, sources.Result{Title: title, URL: u, Snippet: strings.TrimSpace(snippet)})
		}
	}
	return out
}
