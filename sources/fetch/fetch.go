// Package fetch retrieves web pages and documents for the research agents
// safely: it refuses internal and cloud-metadata addresses (after DNS
// resolution and on every redirect), bounds time and size, decodes legacy
// charsets, extracts the main content of HTML pages as Markdown, reads every
// document format of the registry in sources/extract (PDF, DOCX, PPTX, XLSX,
// EPUB, notebooks: the formats the corpus reads), backs off when a host says it is busy, and can keep every fetched
// text on disk keyed by URL and content hash.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/extract"
)

// Defaults used when the corresponding Config field is zero.
const (
	DefaultTimeout            = 30 * time.Second
	DefaultConnectTimeout     = 10 * time.Second
	DefaultMaxBytes           = 5 << 20
	DefaultMaxRedirects       = 5
	DefaultPerHostConcurrency = 4
	DefaultMaxAttempts        = 3
	DefaultMaxRetryWait       = 30 * time.Second
	DefaultUserAgent          = "github.com/deepresearch/deepresearch/1.0 (+https://github.com/deepresearch)"
)

// Config configures a Fetcher. The zero value is a safe default: public
// addresses only, 30 s per request, 5 MiB, 5 redirects, no disk cache.
type Config struct {
	// Timeout bounds one whole attempt: connect, headers and body.
	Timeout time.Duration
	// ConnectTimeout bounds the TCP connect (and TLS handshake).
	ConnectTimeout time.Duration
	// MaxBytes is the most body bytes read. Text and HTML beyond it are
	// truncated (Document.Truncated is set); a PDF beyond it is an error
	// because a cut PDF cannot be parsed.
	MaxBytes int64
	// MaxRedirects is the number of redirects followed; negative means none.
	MaxRedirects int
	// AllowHosts opens hosts that would otherwise be refused (intranet use).
	// Entries are host names or IP literals; "*.corp.example" opens a domain.
	AllowHosts []string
	// AllowLoopback opens 127.0.0.0/8 and ::1 for every host (tests, local
	// servers). Private and metadata addresses stay closed.
	AllowLoopback bool
	// PerHostConcurrency limits simultaneous requests to one host.
	PerHostConcurrency int
	// MaxAttempts bounds tries when a host answers 429 or 503.
	MaxAttempts int
	// MaxRetryWait caps the wait between tries. A Retry-After longer than
	// this fails at once with a clear error rather than stalling a run.
	MaxRetryWait time.Duration
	// CacheDir keeps every fetched text on disk, keyed by URL and content
	// hash. Empty means no cache.
	CacheDir string
	// CacheTTL lets Fetch answer from the cache while an entry is younger
	// than this. Zero means always fetch (but still record).
	CacheTTL time.Duration
	// UserAgent sent with every request.
	UserAgent string
	// Resolver replaces DNS resolution (tests). Nil means net.DefaultResolver.
	Resolver Resolver
	// Logger receives retries and cache events. Nil discards them.
	Logger *slog.Logger
	// Formats are the document formats a download is read as besides web pages and text (PDF, DOCX, EPUB, XLSX,
	// notebooks…: the corpus's formats); nil means extract.Builtin().
	Formats *extract.Registry
}

// Fetcher implements sources.Fetcher for http and https URLs.
// It is safe for concurrent use.
type Fetcher struct {
	cfg      Config
	allow    []string
	resolver Resolver
	dialer   *net.Dialer
	client   *http.Client
	log      *slog.Logger
	cache    *Cache

	mu    sync.Mutex
	hosts map[string]*hostSlots
}

// hostSlots bounds the requests in flight to one host. users counts the requests holding or awaiting a slot, so
// that the entry is dropped with the last one and the map does not grow with every host ever visited.
type hostSlots struct {
	sem   chan struct{}
	users int
}

var _ sources.Fetcher = (*Fetcher)(nil)

// New returns a Fetcher for cfg (nil means all defaults).
func New(cfg *Config) (*Fetcher, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.MaxRedirects == 0 {
		c.MaxRedirects = DefaultMaxRedirects
	}
	if c.PerHostConcurrency <= 0 {
		c.PerHostConcurrency = DefaultPerHostConcurrency
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.MaxRetryWait <= 0 {
		c.MaxRetryWait = DefaultMaxRetryWait
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	f := &Fetcher{
		cfg:      c,
		resolver: c.Resolver,
		log:      c.Logger,
		hosts:    make(map[string]*hostSlots),
	}
	if f.resolver == nil {
		f.resolver = net.DefaultResolver
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	for _, h := range c.AllowHosts {
		h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
		if h != "" {
			f.allow = append(f.allow, strings.Trim(h, "[]"))
		}
	}
	if c.CacheDir != "" {
		cache, err := OpenCache(c.CacheDir)
		if err != nil {
			return nil, err
		}
		f.cache = cache
	}
	f.dialer = &net.Dialer{Timeout: c.ConnectTimeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		// No proxy: a proxy would make the connection on our behalf and
		// bypass the address checks in dialContext.
		Proxy:                 nil,
		DialContext:           f.dialContext,
		TLSHandshakeTimeout:   c.ConnectTimeout,
		ResponseHeaderTimeout: c.Timeout,
		MaxIdleConnsPerHost:   c.PerHostConcurrency,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	f.client = &http.Client{Transport: tr, CheckRedirect: f.checkRedirect}
	return f, nil
}

// Cache returns the on-disk cache, or nil when none is configured.
func (f *Fetcher) Cache() *Cache { return f.cache }

func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if f.cfg.MaxRedirects < 0 || len(via) > f.cfg.MaxRedirects {
		return fmt.Errorf("stopped after %d redirects (limit %d)", len(via), max(f.cfg.MaxRedirects, 0))
	}
	if err := checkScheme(req.URL); err != nil {
		return &RefusedError{Reason: "redirect to " + req.URL.String() + ": " + err.(*RefusedError).Reason}
	}
	if err := f.checkHost(req.URL.Hostname()); err != nil {
		return &RefusedError{Reason: "redirect to " + req.URL.String() + ": " + err.(*RefusedError).Reason}
	}
	return nil
}

func checkScheme(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return nil
	case "":
		return &RefusedError{Reason: "URL has no scheme (want http or https)"}
	default:
		return &RefusedError{Reason: fmt.Sprintf("scheme %q is not http or https", u.Scheme)}
	}
}

// HTTPError is a non-success status from the server.
type HTTPError struct {
	StatusCode int
	Status     string
	Attempts   int
}

func (e *HTTPError) Error() string {
	if e.Attempts > 1 {
		return fmt.Sprintf("HTTP %s after %d attempts", e.Status, e.Attempts)
	}
	return "HTTP " + e.Status
}

// Fetch retrieves rawURL and returns its extracted text. Errors name the URL
// and the reason, e.g. "fetch http://x: refused: 127.0.0.1 is a loopback address".
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*sources.Document, error) {
	doc, err := f.fetch(ctx, rawURL)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	return doc, nil
}

func (f *Fetcher) fetch(ctx context.Context, rawURL string) (*sources.Document, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return nil, err
	}
	if err := checkScheme(u); err != nil {
		return nil, err
	}
	if u.Host == "" {
		return nil, errors.New("URL has no host")
	}
	if err := f.checkHost(u.Hostname()); err != nil {
		return nil, err
	}
	if f.cache != nil && f.cfg.CacheTTL > 0 {
		if doc, ok := f.cache.Lookup(u.String()); ok && time.Since(doc.FetchedAt) < f.cfg.CacheTTL {
			f.log.Debug("fetch: cache hit", "url", u.String())
			return doc, nil
		}
	}
	release, err := f.acquire(ctx, strings.ToLower(u.Hostname()))
	if err != nil {
		return nil, err
	}
	defer release()

	var doc *sources.Document
	for attempt := 1; ; attempt++ {
		var retryAfter time.Duration // negative: server gave no Retry-After
		doc, retryAfter, err = f.attempt(ctx, u)
		var he *HTTPError
		if err == nil || !errors.As(err, &he) || (he.StatusCode != http.StatusTooManyRequests && he.StatusCode != http.StatusServiceUnavailable) {
			break
		}
		he.Attempts = attempt
		if attempt >= f.cfg.MaxAttempts {
			break
		}
		wait := retryAfter
		if wait > f.cfg.MaxRetryWait {
			err = fmt.Errorf("%w (server asks to retry after %s, over the %s limit)", err, wait.Round(time.Second), f.cfg.MaxRetryWait)
			break
		}
		if wait < 0 {
			wait = backoff(attempt, f.cfg.MaxRetryWait)
		}
		f.log.Info("fetch: host busy, backing off", "url", u.String(), "status", he.StatusCode, "wait", wait, "attempt", attempt)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	if err != nil {
		return nil, err
	}
	if f.cache != nil {
		if err := f.cache.Store(doc); err != nil {
			f.log.Warn("fetch: cache write failed", "url", doc.URL, "err", err)
		}
	}
	return doc, nil
}

// backoff is exponential with jitter: 0.5 s, 1 s, 2 s… ±25 %, never above limit (MaxRetryWait). Doubling stops
// at the limit, so a large MaxAttempts cannot overflow the shift.
func backoff(attempt int, limit time.Duration) time.Duration {
	d := 500 * time.Millisecond
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	if d/2 <= 0 {
		return max(d, time.Millisecond)
	}
	return min(d+time.Duration(rand.Int64N(int64(d/2)))-d/4, limit)
}

// parseRetryAfter understands both forms of Retry-After: delay seconds and
// an HTTP date. ok is false when the header is absent or unreadable.
func parseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func (f *Fetcher) acquire(ctx context.Context, host string) (func(), error) {
	f.mu.Lock()
	hs, ok := f.hosts[host]
	if !ok {
		hs = &hostSlots{sem: make(chan struct{}, f.cfg.PerHostConcurrency)}
		f.hosts[host] = hs
	}
	hs.users++
	f.mu.Unlock()
	leave := func() {
		f.mu.Lock()
		if hs.users--; hs.users == 0 {
			delete(f.hosts, host)
		}
		f.mu.Unlock()
	}
	select {
	case hs.sem <- struct{}{}:
		return func() { <-hs.sem; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

// attempt performs one request and extraction; retryAfter is set for 429/503.
func (f *Fetcher) attempt(parent context.Context, u *url.URL) (*sources.Document, time.Duration, error) {
	ctx, cancel := context.WithTimeoutCause(parent, f.cfg.Timeout, errTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,application/pdf;q=0.9,*/*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, 0, f.cleanErr(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		ra := time.Duration(-1)
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			ra = d
		}
		return nil, ra, &HTTPError{StatusCode: resp.StatusCode, Status: resp.Status, Attempts: 1}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("read body: %w", f.cleanErr(ctx, err))
	}
	truncated := int64(len(body)) > f.cfg.MaxBytes
	if truncated {
		body = body[:f.cfg.MaxBytes]
	}
	doc, err := f.extract(ctx, u, resp, body, truncated)
	return doc, 0, err
}

var errTimeout = errors.New("timed out")

// cleanErr turns transport errors into the reason a person needs: the
// refusal, or the timeout with its limit.
func (f *Fetcher) cleanErr(ctx context.Context, err error) error {
	var r *RefusedError
	if errors.As(err, &r) {
		return r
	}
	if errors.Is(context.Cause(ctx), errTimeout) {
		return fmt.Errorf("timed out after %s", f.cfg.Timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (f *Fetcher) extract(ctx context.Context, orig *url.URL, resp *http.Response, body []byte, truncated bool) (*sources.Document, error) {
	final := resp.Request.URL
	header := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(header)
	mt = strings.ToLower(mt)
	if mt == "" || mt == "application/octet-stream" || mt == "binary/octet-stream" {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	doc := &sources.Document{
		URL:       orig.String(), // what the caller asked for, before redirects
		FinalURL:  final.String(),
		FetchedAt: time.Now().UTC(),
		Truncated: truncated,
	}
	if fm, ok := f.format(mt, final.Path, body); ok {
		// A document format of the registry, by its own bytes first (a PDF or an Office file labelled as
		// anything), then by the server's label, then, under a generic label, by the URL's extension.
		if fm.Binary && truncated {
			return nil, fmt.Errorf("%s is larger than the %d-byte limit", strings.ToUpper(fm.Name), f.cfg.MaxBytes)
		}
		if !fm.Binary && extract.LooksBinary(body) {
			return nil, fmt.Errorf("refused: the body is read as %s but holds binary data", fm.Name)
		}
		d, err := fm.Read(ctx, body, extract.Limits{})
		if err != nil {
			return nil, err
		}
		doc.ContentType, doc.Title, doc.Text = fm.ContentType(), d.Title, d.Text
		if doc.Title == "" {
			doc.Title = path.Base(final.Path)
		}
		if strings.TrimSpace(doc.Text) == "" {
			return nil, fmt.Errorf("no text extracted from %s content", doc.ContentType)
		}
		doc.Hash = sources.HashText(doc.Text)
		return doc, nil
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		if extract.LooksBinary(body) {
			return nil, fmt.Errorf("refused: the body is labelled %s but holds binary data", mt)
		}
		res, err := extract.Readable(extract.DecodeText(body, header), final)
		if err != nil {
			return nil, err
		}
		doc.ContentType, doc.Title, doc.Text, doc.Published = "text/html", res.Title, res.Text, res.Published
	case strings.HasPrefix(mt, "text/") || mt == "application/json" || mt == "application/xml" || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml"):
		if extract.LooksBinary(body) {
			return nil, fmt.Errorf("refused: the body is labelled %s but holds binary data", mt)
		}
		doc.ContentType = mt
		if f.isMarkdown(mt, final.Path) {
			doc.ContentType = "text/markdown"
		}
		doc.Text = extract.NormalizeNewlines(extract.DecodeText(body, header))
		if doc.ContentType == "text/markdown" {
			doc.Title = extract.FirstHeading(doc.Text)
		}
		if doc.Title == "" {
			doc.Title = path.Base(final.Path)
		}
	default:
		return nil, fmt.Errorf("unsupported content type %s", mt)
	}
	if strings.TrimSpace(doc.Text) == "" {
		return nil, fmt.Errorf("no text extracted from %s content", doc.ContentType)
	}
	doc.Hash = sources.HashText(doc.Text)
	return doc, nil
}

// format picks the registry format a body is read as, when it is one with a converter of its own (web pages and
// text keep the fetcher's own reading): the body's bytes decide first, then the media type, then — under a
// label that says nothing (none, octet-stream, zip, plain text, JSON) — the URL path's extension.
func (f *Fetcher) format(mt, urlPath string, body []byte) (extract.Format, bool) {
	converted := func(fm extract.Format, ok bool) bool {
		return ok && fm.Convert != nil && fm.Layout != extract.LayoutHTML
	}
	if fm, ok := f.cfg.Formats.BySniff(body); converted(fm, ok) {
		return fm, true
	}
	if fm, ok := f.cfg.Formats.ByMIME(mt); converted(fm, ok) {
		return fm, true
	}
	switch mt {
	case "", "application/octet-stream", "binary/octet-stream", "application/zip", "application/x-zip-compressed",
		"text/plain", "application/json":
		if fm, ok := f.cfg.Formats.ByPath(urlPath); converted(fm, ok) {
			return fm, true
		}
	}
	return extract.Format{}, false
}

// isMarkdown reports a Markdown body: labelled so, or plain text at a path the registry knows as Markdown.
func (f *Fetcher) isMarkdown(mt, p string) bool {
	switch mt {
	case "text/markdown", "text/x-markdown":
		return true
	case "text/plain":
		fm, ok := f.cfg.Formats.ByPath(p)
		return ok && fm.Layout == extract.LayoutMarkdown && fm.Convert == nil
	}
	return false
}
