// Package websearch holds small clients for hosted search APIs: the web
// (Tavily, Brave Search, SearXNG, Exa) and, needing no key, scholarly and
// reference indexes (arXiv, OpenAlex, Crossref, Semantic Scholar, Europe PMC,
// Wikipedia). Each turns the provider's documented JSON or Atom into
// normalised sources.Result values, papers with their bibliographic record. Rate limiting (HTTP 429) is backed
// off honouring Retry-After for a bounded number of attempts and then
// reported as an error: a query is never silently answered with nothing.
package websearch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/deepresearch/deepresearch/sources"
)

// Defaults used when the corresponding Config field is zero.
const (
	DefaultLimit        = 10
	DefaultMaxAttempts  = 4
	DefaultMaxRetryWait = 30 * time.Second
	DefaultTimeout      = 30 * time.Second
)

// Config configures a provider client. The zero value reads the key (or,
// for SearXNG, the instance URL) from the environment and uses the public
// endpoint.
type Config struct {
	// BaseURL replaces the provider's endpoint root (tests, proxies). For
	// SearXNG it is the instance URL and defaults to $SEARXNG_URL.
	BaseURL string
	// APIKey overrides the key from the environment.
	APIKey string
	// HTTPClient is used for requests; nil means a client with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one request when HTTPClient is nil.
	Timeout time.Duration
	// MaxAttempts bounds tries on 429 and transient 5xx answers.
	MaxAttempts int
	// MaxRetryWait caps one wait. A longer Retry-After fails at once with
	// an error saying how long the provider asked to wait.
	MaxRetryWait time.Duration
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Logger receives back-off notices; nil discards them.
	Logger *slog.Logger
	// UserAgent is sent with every request; empty means DefaultUserAgent(). Some services (SearXNG's bot
	// limiter among them) refuse generic library agents such as Go's own.
	UserAgent string
	// Now tells the time when a query names a period ("this week", "今年"); nil means time.Now.
	Now func() time.Time
}

// DefaultUserAgent names the project, its version when the binary was built from a tagged module, and where to read
// about it, as services ask well-behaved clients to.
func DefaultUserAgent() string {
	v := ""
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = "/" + bi.Main.Version
	}
	return "deepresearch" + v + " (+https://github.com/deepresearch/deepresearch)"
}

// New returns the named provider (see Providers).
func New(name string, cfg Config) (sources.Searcher, error) {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = DefaultMaxRetryWait
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: cfg.Timeout}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("websearch: unknown provider %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	key := cfg.APIKey
	for _, e := range p.KeyEnv {
		if key != "" {
			break
		}
		key = strings.TrimSpace(cfg.Getenv(e))
	}
	if key == "" && len(p.KeyEnv) > 0 && !p.KeyOptional {
		return nil, fmt.Errorf("websearch %s: no API key: set %s", p.Name, strings.Join(p.KeyEnv, " or "))
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" && p.URLEnv != "" {
		base = strings.TrimRight(strings.TrimSpace(cfg.Getenv(p.URLEnv)), "/")
	}
	if base == "" {
		base = p.BaseURL
	}
	if base == "" {
		return nil, fmt.Errorf("websearch %s: no instance URL: set %s", p.Name, p.URLEnv)
	}
	return p.build(cfg, key, base), nil
}

// client is the HTTP plumbing the providers share.
type client struct {
	name string
	cfg  Config
	// accept is the Accept header; empty means application/json.
	accept string
	// refuse recognises answers that no retry can change (a spent quota, a disabled feature) and explains them;
	// nil, or a nil result, leaves the answer to the ordinary status handling.
	refuse func(resp *http.Response, se *StatusError) error
	// decode turns a successful body into out; nil means JSON.
	decode func(data []byte, out any) error
	// pace spaces requests as the service asks of clients without a key (arXiv: one every 3 s); nil sends at once.
	pace *rate.Limiter
}

func newClient(name string, cfg Config) *client { return &client{name: name, cfg: cfg} }

// StatusError is a non-success answer from a provider.
type StatusError struct {
	Provider   string
	StatusCode int
	Status     string
	Attempts   int
	Body       string // start of the response body: providers explain errors there
}

func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %s", e.Status)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.StatusCode == http.StatusTooManyRequests {
		b.WriteString(" (rate limited)")
	}
	if e.Body != "" {
		fmt.Fprintf(&b, ": %s", e.Body)
	}
	return b.String()
}

func retryable(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusBadGateway ||
		code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout
}

// do sends the request built by mk (called once per attempt, since a body
// can be read only once) and decodes the JSON answer into out. lang is the
// query's language ("en", "zh", …), sent as Accept-Language.
func (c *client) do(ctx context.Context, lang string, mk func() (*http.Request, error), out any) error {
	for attempt := 1; ; attempt++ {
		if c.pace != nil {
			if err := c.pace.Wait(ctx); err != nil {
				return fmt.Errorf("waiting for %s's request pace: %w", c.name, err)
			}
		}
		req, err := mk()
		if err != nil {
			return err
		}
		req = req.WithContext(ctx)
		accept := c.accept
		if accept == "" {
			accept = "application/json"
		}
		req.Header.Set("Accept", accept)
		req.Header.Set("User-Agent", c.cfg.UserAgent)
		req.Header.Set("Accept-Language", acceptLanguage(lang))
		resp, err := c.cfg.HTTPClient.Do(req)
		if err != nil {
			return err
		}
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		resp.Body.Close()
		if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			if rerr != nil {
				return fmt.Errorf("read response: %w", rerr)
			}
			decode := c.decode
			if decode == nil {
				decode = json.Unmarshal
			}
			if err := decode(data, out); err != nil {
				return fmt.Errorf("decode response: %w", err)
			}
			return nil
		}
		se := &StatusError{Provider: c.name, StatusCode: resp.StatusCode, Status: resp.Status, Attempts: attempt, Body: snippet(data)}
		if c.refuse != nil {
			if err := c.refuse(resp, se); err != nil {
				return err
			}
		}
		if !retryable(resp.StatusCode) || attempt >= c.cfg.MaxAttempts {
			return se
		}
		wait, ok := retryAfter(resp.Header, time.Now())
		if wait > c.cfg.MaxRetryWait {
			return fmt.Errorf("%w; provider asks to wait %s, over the %s limit", se, wait.Round(time.Second), c.cfg.MaxRetryWait)
		}
		if !ok {
			wait = backoff(attempt)
		}
		c.cfg.Logger.Info("websearch: backing off", "provider", c.name, "status", resp.StatusCode, "wait", wait, "attempt", attempt)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up waiting: %w)", se, ctx.Err())
		case <-t.C:
		}
	}
}

func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "…"
	}
	return s
}

// retryAfter reads Retry-After (seconds or HTTP date) and, failing that,
// Brave's X-RateLimit-Reset ("seconds-to-reset per window, …"). ok is false
// when the provider gave no usable hint.
func retryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
			return time.Duration(n * float64(time.Second)), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	if v := h.Get("X-RateLimit-Reset"); v != "" {
		first, _, _ := strings.Cut(v, ",")
		if n, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && n >= 0 {
			return time.Duration(n) * time.Second, true
		}
	}
	return 0, false
}

func backoff(attempt int) time.Duration {
	d := 500 * time.Millisecond << (attempt - 1)
	return d + time.Duration(rand.Int64N(int64(d/2))) - d/4
}

func clampLimit(limit, most int) int {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return min(limit, most)
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// cleanText drops inline markup (Brave wraps matches in <strong>) and
// collapses whitespace.
func cleanText(s string) string {
	s = tagRE.ReplaceAllString(s, "")
	r := strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'", "&#x27;", "'", "&nbsp;", " ")
	return strings.Join(strings.Fields(r.Replace(s)), " ")
}

var dateLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02",
	time.RFC1123, time.RFC1123Z, "January 2, 2006", "Jan 2, 2006",
}

// parseDate accepts the date forms the providers use; unknown forms give
// the zero time rather than a guess.
func parseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// finish drops results without a URL, removes duplicates (by normalised
// URL), fills rank-based scores where the provider gives none and trims to
// limit.
func finish(provider string, rs []sources.Result, limit int) []sources.Result {
	out := make([]sources.Result, 0, len(rs))
	seen := make(map[string]bool, len(rs))
	for _, r := range rs {
		r.URL = strings.TrimSpace(r.URL)
		if r.URL == "" {
			continue
		}
		k := sources.NormalizeURL(r.URL)
		if seen[k] {
			continue
		}
		seen[k] = true
		r.Provider = provider
		r.Title = cleanText(r.Title)
		r.Snippet = cleanText(r.Snippet)
		if r.Title == "" {
			r.Title = r.URL
		}
		out = append(out, r)
	}
	noScores := !slices.ContainsFunc(out, func(r sources.Result) bool { return r.Score != 0 })
	if noScores {
		for i := range out {
			out[i].Score = 1 / float64(i+1)
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func jsonRequest(method, url string, body any) func() (*http.Request, error) {
	return func() (*http.Request, error) {
		var rd io.Reader
		if body != nil {
			b, err := json.Marshal(body)
			if err != nil {
				return nil, err
			}
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, url, rd)
		if err != nil {
			return nil, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		return req, nil
	}
}

func wrap(provider, query string, err error) error {
	return fmt.Errorf("websearch %s %q: %w", provider, query, err)
}
