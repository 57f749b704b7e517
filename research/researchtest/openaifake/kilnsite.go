package openaifake

import (
	"sort"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research/researchtest"
)

// KilnSite serves KilnDocs as web pages on a loopback server, for tests that run the whole graph against this
// fake over the web rather than a corpus folder: each document at "/" and its name without ".md" (kiln-design.md
// at /kiln-design), titled by its first heading, in the order of their names. The site is closed when the test
// ends.
func KilnSite(t testing.TB) *researchtest.Site {
	t.Helper()
	names := make([]string, 0, len(KilnDocs))
	for n := range KilnDocs {
		names = append(names, n)
	}
	sort.Strings(names)
	var pages []researchtest.Page
	for _, n := range names {
		body := KilnDocs[n]
		title, _, _ := strings.Cut(strings.TrimPrefix(body, "# "), "\n")
		pages = append(pages, researchtest.Page{Path: "/" + strings.TrimSuffix(n, ".md"), Title: title, Body: body})
	}
	site := researchtest.NewSite(pages)
	t.Cleanup(site.Close)
	return site
}
