package webui

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/export"
)

// renderReport turns the report's Markdown into HTML (export.ReportHTML, the renderer of the HTML export) whose
// citation markers link to the cited quotes. Every source and anchor is a link: web addresses as they are, and
// what a browser could not open from this page — a local file, a line anchor into the text the run kept — to
// the viewer's page showing the quote in that text.
func renderReport(rep *research.Report, base string) template.HTML {
	firstEvidence := map[string]string{}
	for _, e := range rep.Evidence {
		k := strings.SplitN(e.Source, "#", 2)[0]
		if _, ok := firstEvidence[k]; !ok {
			firstEvidence[k] = e.ID
		}
	}
	href := func(h string, cite int) string {
		switch {
		case export.SafeHref(h):
			return h
		case cite > 0 && (strings.HasPrefix(strings.ToLower(h), "file:") || strings.HasPrefix(h, research.DocsDir+"/")):
			return fmt.Sprintf("%s/cite/%d", base, cite)
		case strings.HasPrefix(strings.ToLower(h), "file:"):
			if id, ok := firstEvidence[strings.SplitN(h, "#", 2)[0]]; ok {
				return base + "/evidence/" + id
			}
		}
		return ""
	}
	return template.HTML(export.ReportHTML(rep, export.Links{
		Cite: func(n int) string { return fmt.Sprintf("%s/cite/%d", base, n) },
		Href: href,
	}))
}
