package export

import (
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
)

// BenchmarkHostileMarkdown renders paragraphs built to make a regular-expression parser slow (unclosed "[", "`"
// and "*" by the thousand, deep quotes, a long citation list), each ~180 KB: the time grows with the length, not
// with its square.
func BenchmarkHostileMarkdown(b *testing.B) {
	for name, md := range map[string]string{
		"unclosed": strings.Repeat("[a `b *c ", 20000),
		"quotes":   strings.Repeat("> ", 20000) + "x",
		"citelist": strings.Repeat("- [1] x\n", 20000),
	} {
		rep := &research.Report{Markdown: md, Citations: []research.Citation{{N: 1, EvidenceIDs: []string{"e1"}}},
			Evidence: []research.Evidence{{ID: "e1", Quote: md, Source: "https://x.org/a"}}}
		b.Run(name+"/html", func(b *testing.B) {
			for b.Loop() {
				ReportHTML(rep, Links{})
			}
		})
		b.Run(name+"/docx", func(b *testing.B) {
			for b.Loop() {
				if _, err := DOCX(rep); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
