package export

import (
	"regexp"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
)

var hrefAttrRE = regexp.MustCompile(`href="([^"]*)"`)

// FuzzReportExports: whatever the report's Markdown (model output over fetched pages), the HTML holds no markup
// of its own making beyond the renderer's tags, links only to safe targets, and the DOCX is well-formed XML.
func FuzzReportExports(f *testing.F) {
	for _, s := range []string{
		"# T\n\nA [1] b [2, 3].\n\n- [1] “q” — https://x.org/a (e1) · [at](https://x.org/a#:~:text=q)\n",
		"<script>alert(1)</script> [x](javascript:alert(1)) `<b>` **<i>** > > > deep",
		"```\n<code>\n```\n1. [a](file:///etc/passwd) [b](docs/../../x) [c](docs/a.txt#L1)\n",
		"\x00\x1b[31m\xff [1]\n***\n> [1](http://\"onmouseover=x)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		rep := &research.Report{RunID: "r", Question: "q", Markdown: md, Dir: "/runs/r",
			Citations: []research.Citation{{N: 1, EvidenceIDs: []string{"e1"}}, {N: 2, EvidenceIDs: []string{"e2"}}},
			Evidence:  []research.Evidence{{ID: "e1", Quote: md, Source: "https://x.org/a"}, {ID: "e2", Quote: "q", Source: "file:///d/a.html#L1"}}}
		out := ReportHTML(rep, Links{})
		if i := strings.Index(strings.ToLower(out), "<script"); i >= 0 {
			t.Fatalf("a script tag in the HTML: %q", out[i:])
		}
		for _, m := range hrefAttrRE.FindAllStringSubmatch(out, -1) {
			h := strings.ToLower(m[1])
			if !strings.HasPrefix(h, "#cite-") && !strings.HasPrefix(h, "http://") && !strings.HasPrefix(h, "https://") &&
				!strings.HasPrefix(h, "mailto:") && !strings.HasPrefix(h, "file://") {
				t.Fatalf("unsafe href %q in %q", m[1], out)
			}
			if strings.HasPrefix(h, "file:///runs/r/") && strings.Contains(h, "..") {
				t.Fatalf("a link out of the run folder: %q", m[1])
			}
		}
		wellFormedDOCX(t, rep)
	})
}
