package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/internal/testpdf"
)

// mapResolver answers from a fixed table, standing in for DNS.
type mapResolver map[string][]string

func (m mapResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ips, ok := m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

func newFetcher(t *testing.T, cfg Config) *Fetcher {
	t.Helper()
	f, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

const articleHTML = `<!DOCTYPE html>
<html><head><title>Otters hold hands | Nature Weekly</title>
<meta property="article:published_time" content="2024-03-05T10:00:00Z">
</head><body>
<header><nav class="site-nav"><ul>
<li><a href="/">Home</a></li><li><a href="/news">NAVLINK News</a></li><li><a href="/shop">NAVLINK Shop</a></li>
</ul></nav></header>
<div class="sidebar ad advertisement" id="ad-slot-1"><p>ADVERT: Buy cheap watches today! Limited offer, click now.</p></div>
<main><article>
<h1>Sea otters hold hands while they sleep</h1>
<p>Sea otters are famous for a charming habit: when they rest on the water they often hold paws with one another,
forming a loose raft so that the current does not pull them apart during the night. Researchers watching colonies
along the Californian coast have recorded rafts of more than a hundred animals floating together.</p>
<p>The behaviour is not merely endearing. Otters that drift apart lose the warmth and protection of the group, and
young animals separated from their mothers are at real risk. Holding on is a simple way to stay together, and the
animals also wrap themselves in strands of kelp which act like an anchor against the tide.</p>
<p>Biologists think the habit is learned early. Pups spend their first weeks lying on their mothers' bellies, and
the contact they learn there seems to carry over into adult life, when they seek out a neighbour before dozing off.</p>
</article></main>
<aside class="related-ads sponsored"><p>ADVERT: Sponsored content you may like.</p></aside>
<footer class="footer"><p>Copyright Nature Weekly. FOOTERTEXT Privacy policy, terms of use.</p></footer>
</body></html>`

func TestArticleExtraction(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, articleHTML)
	})
	f := newFetcher(t, Config{AllowLoopback: true})
	doc, err := f.Fetch(t.Context(), srv.URL+"/otters")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hold paws with one another", "strands of kelp", "Pups spend their first weeks"} {
		if !strings.Contains(doc.Text, want) {
			t.Errorf("article text lost %q:\n%s", want, doc.Text)
		}
	}
	for _, bad := range []string{"ADVERT", "NAVLINK", "FOOTERTEXT"} {
		if strings.Contains(doc.Text, bad) {
			t.Errorf("page furniture %q kept:\n%s", bad, doc.Text)
		}
	}
	if !strings.Contains(doc.Title, "Sea otters") && !strings.Contains(doc.Title, "Otters hold hands") {
		t.Errorf("title = %q", doc.Title)
	}
	if doc.ContentType != "text/html" || doc.Hash != sources.HashText(doc.Text) || doc.URL != srv.URL+"/otters" {
		t.Errorf("doc = %+v", doc)
	}
	if !doc.Published.Equal(time.Date(2024, 3, 5, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("published = %v", doc.Published)
	}
}

func TestPDF(t *testing.T) {
	pdf := testpdf.Build([]string{"Hello PDF world"}, []string{"Second page text"})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/typed.pdf" {
			w.Header().Set("Content-Type", "application/pdf")
		} else {
			w.Header().Set("Content-Type", "application/octet-stream")
		}
		w.Write(pdf)
	})
	f := newFetcher(t, Config{AllowLoopback: true})
	for _, p := range []string{"/typed.pdf", "/download?id=7"} {
		doc, err := f.Fetch(t.Context(), srv.URL+p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !strings.Contains(doc.Text, "Hello PDF world") || !strings.Contains(doc.Text, "Second page text") || doc.ContentType != "application/pdf" {
			t.Fatalf("%s: doc = %+v", p, doc)
		}
	}
}

func TestSizeLimitEndlessBody(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		line := []byte(strings.Repeat("endless ", 16) + "\n")
		for r.Context().Err() == nil {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	})
	const limit = 64 << 10
	f := newFetcher(t, Config{AllowLoopback: true, MaxBytes: limit, Timeout: 10 * time.Second})
	doc, err := f.Fetch(t.Context(), srv.URL+"/forever.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Truncated || len(doc.Text) != limit {
		t.Fatalf("truncated=%v len=%d, want truncation at %d", doc.Truncated, len(doc.Text), limit)
	}

	pdfSrv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(testpdf.Build([]string{strings.Repeat("x", 200)}))
		w.Write(bytes.Repeat([]byte(" "), limit))
	})
	_, err = f.Fetch(t.Context(), pdfSrv.URL+"/big.pdf")
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversized PDF: err = %v", err)
	}
}

func TestSlowBodyTimeout(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(200)
		fmt.Fprint(w, "<html><body><p>start")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // never finish
	})
	f := newFetcher(t, Config{AllowLoopback: true, Timeout: 300 * time.Millisecond})
	_, err := f.Fetch(t.Context(), srv.URL+"/slow")
	if err == nil {
		t.Fatal("slow body: want error")
	}
	if !strings.Contains(err.Error(), "timed out after 300ms") || !strings.Contains(err.Error(), srv.URL+"/slow") {
		t.Fatalf("err = %v", err)
	}
}

func TestRedirectToLoopbackRefused(t *testing.T) {
	var finalHit atomic.Bool
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, "/hop?"+r.URL.RawQuery, http.StatusFound)
		case "/hop":
			http.Redirect(w, r, "http://127.0.0.1:"+r.URL.Query().Get("port")+"/final", http.StatusMovedPermanently)
		case "/via-name":
			http.Redirect(w, r, "http://rebind.test:"+r.URL.Query().Get("port")+"/final", http.StatusFound)
		case "/final":
			finalHit.Store(true)
			fmt.Fprint(w, "internal secret")
		}
	})
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	f := newFetcher(t, Config{
		AllowHosts: []string{"intranet.test"},
		Resolver: mapResolver{
			"intranet.test": {"127.0.0.1"},
			"rebind.test":   {"127.0.0.1"},
		},
	})
	start := fmt.Sprintf("http://intranet.test:%d/start?port=%d", port, port)
	_, err := f.Fetch(t.Context(), start)
	want := fmt.Sprintf("fetch %s: refused: redirect to http://127.0.0.1:%d/final: 127.0.0.1 is a loopback address", start, port)
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if !IsRefused(err) {
		t.Fatal("IsRefused = false")
	}

	// The same via a host name that resolves to loopback: caught at dial.
	viaName := fmt.Sprintf("http://intranet.test:%d/via-name?port=%d", port, port)
	_, err = f.Fetch(t.Context(), viaName)
	if err == nil || !strings.Contains(err.Error(), "refused: rebind.test resolves to 127.0.0.1, a loopback address") {
		t.Fatalf("err = %v", err)
	}
	if finalHit.Load() {
		t.Fatal("the internal endpoint was contacted")
	}

	// The allow-listed host itself works.
	if _, err := f.Fetch(t.Context(), fmt.Sprintf("http://intranet.test:%d/final", port)); err != nil {
		t.Fatalf("allow-listed host: %v", err)
	}
}

func TestSSRFRefusals(t *testing.T) {
	f := newFetcher(t, Config{Resolver: mapResolver{
		"evil.test":   {"93.184.216.34", "10.0.0.5"},
		"meta.test":   {"169.254.169.254"},
		"v6.test":     {"::1"},
		"mapped.test": {"::ffff:127.0.0.1"},
	}})
	cases := []struct{ url, reason string }{
		{"http://127.0.0.1/", "127.0.0.1 is a loopback address"},
		{"http://127.1.2.3:8080/x", "127.1.2.3 is a loopback address"},
		{"http://[::1]/", "::1 is a loopback address"},
		{"http://10.1.2.3/", "10.1.2.3 is a private address"},
		{"http://192.168.0.1/", "192.168.0.1 is a private address"},
		{"http://172.16.5.4/", "172.16.5.4 is a private address"},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"},
		{"http://[fd00:ec2::254]/", "fd00:ec2::254 is a cloud metadata address"},
		{"http://metadata.google.internal/computeMetadata/v1/", "metadata.google.internal is a cloud metadata host"},
		{"http://169.254.1.1/", "169.254.1.1 is a link-local address"},
		{"http://[fe80::1]/", "fe80::1 is a link-local address"},
		{"http://100.64.1.1/", "100.64.1.1 is a carrier-grade NAT (shared) address"},
		{"http://0.0.0.0/", "0.0.0.0 is an unspecified address"},
		{"http://224.0.0.1/", "224.0.0.1 is a multicast address"},
		{"http://[::ffff:10.0.0.1]/", "10.0.0.1 is a private address"},
		{"http://[64:ff9b::7f00:1]/", "a NAT64 address embedding 127.0.0.1, a loopback address"},
		{"http://evil.test/", "evil.test resolves to 10.0.0.5, a private address"},
		{"http://meta.test/", "meta.test resolves to 169.254.169.254, a cloud metadata address"},
		{"http://v6.test/", "v6.test resolves to ::1, a loopback address"},
		{"http://mapped.test/", "mapped.test resolves to 127.0.0.1, a loopback address"},
		{"file:///etc/passwd", `scheme "file" is not http or https`},
		{"ftp://example.com/x", `scheme "ftp" is not http or https`},
		{"gopher://example.com/", `scheme "gopher" is not http or https`},
		{"example.com/page", "no scheme"},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			_, err := f.Fetch(t.Context(), c.url)
			want := "fetch " + c.url + ": refused: " + c.reason
			if err == nil || !strings.HasPrefix(err.Error(), "fetch "+c.url+": refused: ") || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
		})
	}
}

func TestBlockedKindAllowsPublic(t *testing.T) {
	for _, s := range []string{"93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "100.128.0.1"} {
		if k := blockedKind(netip.MustParseAddr(s), false); k != "" {
			t.Errorf("%s blocked as %s", s, k)
		}
	}
	if k := blockedKind(netip.MustParseAddr("127.0.0.1"), true); k != "" {
		t.Errorf("AllowLoopback still blocks loopback: %s", k)
	}
	if k := blockedKind(netip.MustParseAddr("10.0.0.1"), true); k == "" {
		t.Error("AllowLoopback opened a private address")
	}
}

func TestLegacyCharsets(t *testing.T) {
	zh := "内存模型规定了协程之间读写变量的可见性。这是一段用国标码编码的中文文本，用来检查字符集解码是否正确。"
	gbk, err := simplifiedchinese.GBK.NewEncoder().String(`<html><head><meta http-equiv="Content-Type" content="text/html; charset=gbk"><title>中文页面</title></head><body><article><h1>内存模型</h1><p>` + zh + `</p></article></body></html>`)
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gbk":
			w.Header().Set("Content-Type", "text/html") // charset only in <meta>
			fmt.Fprint(w, gbk)
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("Caf\xe9 cr\xe8me br\xfbl\xe9e, na\xefve fa\xe7ade.\n"))
		}
	})
	f := newFetcher(t, Config{AllowLoopback: true})
	doc, err := f.Fetch(t.Context(), srv.URL+"/gbk")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.Text, zh) || doc.Title != "中文页面" {
		t.Fatalf("GBK page decoded wrongly: title %q\n%s", doc.Title, doc.Text)
	}
	doc, err = f.Fetch(t.Context(), srv.URL+"/latin1")
	if err != nil {
		t.Fatal(err)
	}
	if doc.Text != "Café crème brûlée, naïve façade.\n" {
		t.Fatalf("latin1 text = %q", doc.Text)
	}
}

func TestPassthroughAndUnsupported(t *testing.T) {
	md := "# Notes\r\n\r\nSome *markdown* text.\r\n"
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/notes.md":
			w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			fmt.Fprint(w, md)
		case "/image.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n...."))
		case "/missing":
			http.NotFound(w, r)
		}
	})
	f := newFetcher(t, Config{AllowLoopback: true})
	doc, err := f.Fetch(t.Context(), srv.URL+"/notes.md")
	if err != nil {
		t.Fatal(err)
	}
	if doc.Text != "# Notes\n\nSome *markdown* text.\n" || doc.ContentType != "text/markdown" || doc.Title != "Notes" {
		t.Fatalf("doc = %+v", doc)
	}
	if _, err := f.Fetch(t.Context(), srv.URL+"/image.png"); err == nil || !strings.Contains(err.Error(), "unsupported content type image/png") {
		t.Fatalf("png: %v", err)
	}
	if _, err := f.Fetch(t.Context(), srv.URL+"/missing"); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("404: %v", err)
	}
}

func TestTooManyRedirects(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
	})
	f := newFetcher(t, Config{AllowLoopback: true, MaxRedirects: 3})
	_, err := f.Fetch(t.Context(), srv.URL+"/r")
	if err == nil || !strings.Contains(err.Error(), "stopped after 4 redirects (limit 3)") {
		t.Fatalf("err = %v", err)
	}
}

func TestBackoffOn429(t *testing.T) {
	var calls atomic.Int32
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if r.URL.Path == "/always" || n == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "finally some text")
	})
	logs := &recorder{}
	f := newFetcher(t, Config{AllowLoopback: true, MaxAttempts: 3, Logger: slog.New(logs)})
	doc, err := f.Fetch(t.Context(), srv.URL+"/once.txt")
	if err != nil {
		t.Fatal(err)
	}
	if doc.Text != "finally some text" || calls.Load() != 2 {
		t.Fatalf("text %q after %d calls", doc.Text, calls.Load())
	}
	if waits := logs.waits(); len(waits) != 1 || waits[0] != 0 {
		t.Fatalf("waits = %v, want [0s] (Retry-After: 0 honoured)", waits)
	}
	calls.Store(0)
	_, err = f.Fetch(t.Context(), srv.URL+"/always")
	if err == nil || !strings.Contains(err.Error(), "HTTP 429 Too Many Requests after 3 attempts") || calls.Load() != 3 {
		t.Fatalf("err = %v after %d calls", err, calls.Load())
	}
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 429 {
		t.Fatalf("not an HTTPError: %v", err)
	}

	// A Retry-After beyond the cap fails at once instead of stalling.
	slow := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	f2 := newFetcher(t, Config{AllowLoopback: true, MaxRetryWait: time.Second})
	_, err = f2.Fetch(t.Context(), slow.URL)
	if err == nil || !strings.Contains(err.Error(), "retry after 1h0m0s") {
		t.Fatalf("err = %v", err)
	}
}

// recorder is a slog.Handler that keeps the back-off waits it sees.
type recorder struct {
	mu sync.Mutex
	w  []time.Duration
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "wait" {
			r.mu.Lock()
			r.w = append(r.w, a.Value.Duration())
			r.mu.Unlock()
		}
		return true
	})
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }
func (r *recorder) waits() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.w...)
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              -1,
		"0":                             0,
		"7":                             7 * time.Second,
		"Wed, 01 Jan 2025 00:00:30 GMT": 30 * time.Second,
		"Tue, 31 Dec 2024 00:00:30 GMT": 0,
		"garbage":                       -1,
	} {
		got, ok := parseRetryAfter(in, now)
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPerHostConcurrency(t *testing.T) {
	var cur, peak atomic.Int32
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		// Hold the request until a second one is in flight (or a generous
		// deadline passes), so a working limiter is seen at exactly 2.
		for deadline := time.Now().Add(2 * time.Second); peak.Load() < 2 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(10 * time.Millisecond)
		cur.Add(-1)
		fmt.Fprint(w, "ok text")
	})
	f := newFetcher(t, Config{AllowLoopback: true, PerHostConcurrency: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, err := f.Fetch(t.Context(), fmt.Sprintf("%s/p%d.txt", srv.URL, i))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if p := peak.Load(); p != 2 {
		t.Fatalf("peak concurrency %d, want 2", p)
	}
}

func TestCache(t *testing.T) {
	var calls atomic.Int32
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		fmt.Fprintf(w, "version %d", calls.Load())
	})
	dir := t.TempDir()
	f := newFetcher(t, Config{AllowLoopback: true, CacheDir: dir})
	d1, err := f.Fetch(t.Context(), srv.URL+"/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	d2, err := f.Fetch(t.Context(), srv.URL+"/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if d1.Text == d2.Text || calls.Load() != 2 {
		t.Fatal("without a TTL every Fetch must go to the network")
	}
	// Both versions stay recoverable by hash: the evidence checker needs the
	// exact text each run read.
	for _, d := range []*sources.Document{d1, d2} {
		got, err := f.Cache().Text(d.Hash)
		if err != nil || got != d.Text {
			t.Fatalf("Text(%s) = %q, %v", d.Hash, got, err)
		}
	}
	if got, ok := f.Cache().Lookup(srv.URL + "/a.txt"); !ok || got.Text != d2.Text {
		t.Fatalf("Lookup = %+v, %v", got, ok)
	}

	f2 := newFetcher(t, Config{AllowLoopback: true, CacheDir: dir, CacheTTL: time.Hour})
	d3, err := f2.Fetch(t.Context(), srv.URL+"/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if d3.Text != d2.Text || calls.Load() != 2 {
		t.Fatalf("TTL cache not used: %q after %d calls", d3.Text, calls.Load())
	}
}

// Back-off without a Retry-After stays within MaxRetryWait however many attempts are configured, and never
// overflows into a panic.
func TestBackoffBounded(t *testing.T) {
	for _, attempt := range []int{1, 2, 10, 40, 64, 100} {
		d := backoff(attempt, 3*time.Second)
		if d <= 0 || d > 3*time.Second {
			t.Errorf("backoff(%d, 3s) = %s, want in (0, 3s]", attempt, d)
		}
	}
}

// The per-host semaphores are released with the last request to a host, so a long-lived fetcher that visits
// many hosts does not keep one forever for each.
func TestHostSemaphoresDoNotAccumulate(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	res := mapResolver{}
	for i := range 20 {
		res[fmt.Sprintf("h%d.test", i)] = []string{"127.0.0.1"}
	}
	f := newFetcher(t, Config{AllowLoopback: true, Resolver: res})
	for i := range 20 {
		if _, err := f.Fetch(t.Context(), fmt.Sprintf("http://h%d.test:%s/a.txt", i, port)); err != nil {
			t.Fatal(err)
		}
	}
	f.mu.Lock()
	n := len(f.hosts)
	f.mu.Unlock()
	if n != 0 {
		t.Errorf("%d host semaphores left after all requests finished, want 0", n)
	}
}

// IPv4-compatible IPv6 addresses (::a.b.c.d, deprecated) embed an IPv4 address; it is judged like the
// NAT64 form.
func TestIPv4CompatibleRefused(t *testing.T) {
	for s, want := range map[string]string{
		"::127.0.0.1":       "a loopback address",
		"::10.0.0.1":        "a private address",
		"::169.254.169.254": "a cloud metadata address",
	} {
		if k := blockedKind(netip.MustParseAddr(s), false); !strings.Contains(k, want) {
			t.Errorf("blockedKind(%s) = %q, want it to mention %q", s, k, want)
		}
	}
	if k := blockedKind(netip.MustParseAddr("::8.8.8.8"), false); k != "" {
		t.Errorf("::8.8.8.8 blocked as %s", k)
	}
}
