package export

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/deepresearch/deepresearch/research"
)

// The report formats, beside the bibliography formats of bib.go.
const (
	Markdown Format = "md"
	JSON     Format = "json"
	HTML     Format = "html"
	Word     Format = "docx"
	PDFFile  Format = "pdf"
)

// formatInfo is one row of the one table of export formats.
type formatInfo struct {
	format      Format
	ext         string
	contentType string
	binary      bool   // not for a terminal
	what        string // for help texts
	write       func(ctx context.Context, rep *research.Report, o *Options) ([]byte, error)
}

var formats = []formatInfo{
	{Markdown, ".md", "text/markdown; charset=utf-8", false, "the report (report.md)",
		func(_ context.Context, rep *research.Report, _ *Options) ([]byte, error) {
			return []byte(rep.Markdown), nil
		}},
	{JSON, ".json", "application/json", false, "the report with its citations, evidence and sources (report.json)",
		func(_ context.Context, rep *research.Report, _ *Options) ([]byte, error) { return reportJSON(rep) }},
	{HTML, ".html", "text/html; charset=utf-8", false, "one self-contained HTML file (styles inline, no fetches)",
		func(_ context.Context, rep *research.Report, _ *Options) ([]byte, error) {
			return StandaloneHTML(rep), nil
		}},
	{Word, ".docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", true, "a Word document, citations as footnotes",
		func(_ context.Context, rep *research.Report, _ *Options) ([]byte, error) { return DOCX(rep) }},
	{PDFFile, ".pdf", "application/pdf", true, "a PDF, printed by headless Chromium (CHROMIUM names it)",
		func(ctx context.Context, rep *research.Report, o *Options) ([]byte, error) {
			return PDF(ctx, rep, o.Chromium)
		}},
	{BibTeX, ".bib", "application/x-bibtex; charset=utf-8", false, "the sources as BibTeX",
		func(_ context.Context, rep *research.Report, _ *Options) ([]byte, error) {
			return Bibliography(rep, BibTeX)
		}},
	{CSLJSON, ".csl.json", "application/vnd.citationstyles.csl+json", false, "the sources as CSL-JSON",
		func(_ context.Context, rep *research.Report, _ *Options) ([]byte, error) {
			return Bibliography(rep, CSLJSON)
		}},
	{RIS, ".ris", "application/x-research-info-systems", false, "the sources as RIS",
		func(_ context.Context, rep *research.Report, _ *Options) ([]byte, error) {
			return Bibliography(rep, RIS)
		}},
}

// Options are what some formats need; nil means defaults.
type Options struct {
	// Chromium is the browser the PDF is printed with; "" finds one (FindChromium).
	Chromium string
}

// Formats lists every export format, the report's own first.
func Formats() []Format {
	out := make([]Format, len(formats))
	for i, f := range formats {
		out[i] = f.format
	}
	return out
}

// Names lists the formats' names, for help texts and error messages.
func Names() string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f.format)
	}
	return strings.Join(names, ", ")
}

func lookup(f Format) (formatInfo, bool) {
	if f == "markdown" {
		f = Markdown
	}
	for _, fi := range formats {
		if fi.format == f {
			return fi, true
		}
	}
	return formatInfo{}, false
}

// Parse returns the format a name (as `show --format` takes it, "markdown" too) names.
func Parse(name string) (Format, error) {
	fi, ok := lookup(Format(strings.ToLower(strings.TrimSpace(name))))
	if !ok {
		return "", fmt.Errorf("unknown export format %q (known: %s)", name, Names())
	}
	return fi.format, nil
}

// Ext is the file name extension of the format's files (".docx").
func (f Format) Ext() string { fi, _ := lookup(f); return fi.ext }

// ContentType is the format's media type.
func (f Format) ContentType() string { fi, _ := lookup(f); return fi.contentType }

// Binary reports whether the format is not text (a terminal should not be sent it).
func (f Format) Binary() bool { fi, _ := lookup(f); return fi.binary }

// Describe says what the format holds, for help texts.
func (f Format) Describe() string { fi, _ := lookup(f); return fi.what }

// Render returns the report in format f.
func Render(ctx context.Context, rep *research.Report, f Format, o *Options) ([]byte, error) {
	fi, ok := lookup(f)
	if !ok {
		return nil, fmt.Errorf("export: unknown format %q (known: %s)", f, Names())
	}
	if o == nil {
		o = &Options{}
	}
	return fi.write(ctx, rep, o)
}

// Write writes the report in format f to w.
func Write(ctx context.Context, w io.Writer, rep *research.Report, f Format, o *Options) error {
	b, err := Render(ctx, rep, f, o)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// reportJSON is report.json's form: indented, with a final newline.
func reportJSON(rep *research.Report) ([]byte, error) {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("export: JSON: %w", err)
	}
	return append(b, '\n'), nil
}

// runLinkRE finds a Markdown link into the run folder: the report's links to the text a run kept (docs/<sha>.txt).
var runLinkRE = regexp.MustCompile(`\]\((` + regexp.QuoteMeta(research.DocsDir) + `/[^)\s]+)\)`)

// AbsoluteLinks rewrites the report's links into its run folder dir (relative to report.md) as absolute file://
// URLs, for a reader that does not open the report from that folder — an MCP client, a copy mailed on. A link
// that DefaultHref refuses (one climbing out of the folder) and every link when dir is not absolute stay as they
// are.
func AbsoluteLinks(md, dir string) string {
	if dir == "" || !filepath.IsAbs(dir) {
		return md
	}
	href := DefaultHref(dir)
	return runLinkRE.ReplaceAllStringFunc(md, func(m string) string {
		rel := runLinkRE.FindStringSubmatch(m)[1]
		if abs := href(rel, 0); abs != "" {
			return "](" + abs + ")"
		}
		return m
	})
}
