package webui

import (
	"io"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// userContent matches the elements of the pages that show what a run found — the report, the source's link and
// anchor, its stored text — where URLs of the user's sources belong. Everything else is the application's own.
var userContent = regexp.MustCompile(`(?s)<article class="card report" id="report"[^>]*>.*?</article>|<dd id="origin">.*?</dd>|<code id="anchor">.*?</code>|<pre class="source" id="text">.*?</pre>`)

// externalRef finds what would make a browser reach another origin: absolute http(s) URLs, protocol-relative
// references in attributes or CSS, and CSS imports.
var externalRef = regexp.MustCompile(`(?i)https?://[^\s"'<>)]*|(?:src|href|action)\s*=\s*["']?//[^\s"'>]*|url\(\s*["']?(?:https?:)?//[^)]*\)|@import`)

// TestServedPagesReferenceNoExternalOrigin: the viewer works offline and leaks nothing to third parties, so
// neither its embedded assets nor any page it serves may point at another origin — except the user's own sources
// inside the report and the source view. The run's sources are http URLs, so those exceptions are exercised.
func TestServedPagesReferenceNoExternalOrigin(t *testing.T) {
	z := startZhRun(t)
	pages := []string{"/", "/runs/" + z.id, "/runs/" + z.id + "/evidence/" + z.rep.Evidence[0].ID, "/runs/no-such-run"}
	for _, c := range z.rep.Citations {
		pages = append(pages, "/runs/"+z.id+"/cite/"+strconv.Itoa(c.N))
	}
	err := fs.WalkDir(assetsFS, "assets/static", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			pages = append(pages, "/static/"+strings.TrimPrefix(p, "assets/static/"))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The templates are checked as written too, so a reference on a page this test does not reach is caught.
	tmpls, err := fs.Glob(assetsFS, "assets/templates/*.html")
	if err != nil || len(tmpls) == 0 {
		t.Fatalf("templates: %v %v", tmpls, err)
	}
	for _, p := range tmpls {
		b, err := fs.ReadFile(assetsFS, p)
		if err != nil {
			t.Fatal(err)
		}
		if refs := externalRef.FindAllString(string(b), -1); len(refs) > 0 {
			t.Errorf("template %s references another origin: %q", path.Base(p), refs)
		}
	}

	sawUserURL := false
	for _, p := range pages {
		resp, err := http.Get(z.ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 || (resp.StatusCode != http.StatusOK && p != "/runs/no-such-run") {
			t.Errorf("GET %s: %d", p, resp.StatusCode)
			continue
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q does not restrict loading to the server itself", p, csp)
		}
		text := string(body)
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			text = userContent.ReplaceAllStringFunc(text, func(s string) string {
				if strings.Contains(s, z.site.URL) {
					sawUserURL = true
				}
				return ""
			})
		}
		if refs := externalRef.FindAllString(text, -1); len(refs) > 0 {
			t.Errorf("GET %s references another origin outside user content: %q", p, refs)
		}
	}
	if !sawUserURL {
		t.Error("no page showed the sources' http URLs as user content; the exemption was not exercised")
	}
}
