package export_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/export"
	"github.com/deepresearch/deepresearch/research/extractive"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

func sampleReport() *research.Report {
	return &research.Report{
		Finished: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Sources: []research.SourceRef{
			{URL: "http://arxiv.org/pdf/2101.00001v2", Title: "In Search of an Understandable Consensus Algorithm",
				Work: &sources.Work{Authors: []string{"Diego Ongaro", "John Ousterhout"}, Year: 2014, Venue: "USENIX ATC",
					DOI: "10.5555/raft", ArXiv: "2101.00001v2"}},
			{URL: "https://example.org/raft", Title: "Raft notes"},
			{URL: "https://pubmed.ncbi.nlm.nih.gov/1/", Title: "Another by Ongaro",
				Work: &sources.Work{Authors: []string{"Ongaro D"}, Year: 2014, PMID: "1"}},
			{URL: "file:///home/u/notes/raft.md", Title: "raft.md"},
			// A hostile title: it tries to close the field, open an entry of its own and inject TeX and RIS tags.
			{URL: "https://evil.example/x?a={b}", Title: "}, note = {pwned}}\n@misc{evil,\r\nER  - \\input{/etc/passwd} 100% $x$"},
		},
	}
}

func TestBibTeX(t *testing.T) {
	b, err := export.Bibliography(sampleReport(), export.BibTeX)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	for _, want := range []string{
		"@article{ongaro2014,\n", "title = {{In Search of an Understandable Consensus Algorithm}}",
		"author = {Diego Ongaro and John Ousterhout}", "year = {2014}", "journal = {USENIX ATC}", "doi = {10.5555/raft}",
		"eprint = {2101.00001v2}", "archiveprefix = {arXiv}", "urldate = {2026-11-30}",
		"@misc{source2,\n", "url = {https://example.org/raft}",
		"@misc{ongaro2014a,\n", "pmid = {1}",
		"@misc{source4,\n", "note = {Local file}",
		"url = {https://evil.example/x?a=%7Bb%7D}",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("BibTeX lacks %q:\n%s", want, out)
		}
	}
	// Every entry's braces balance, and there are exactly as many entries as sources: the hostile title opened
	// none and closed nothing early.
	entries := 0
	depth := 0
	for i := 0; i < len(out); i++ {
		switch c := out[i]; {
		case c == '\\':
			i++ // an escaped character
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth < 0 {
				t.Fatalf("a brace closes more than was opened at %d:\n%s", i, out)
			}
		case c == '@' && depth == 0:
			entries++
		}
	}
	if depth != 0 || entries != 5 {
		t.Errorf("depth %d, %d entries: want 0 and 5:\n%s", depth, entries, out)
	}
	if strings.Contains(out, `\input`) {
		t.Errorf("a TeX command from a source survived:\n%s", out)
	}
}

func TestCSLJSON(t *testing.T) {
	b, err := export.Bibliography(sampleReport(), export.CSLJSON)
	if err != nil {
		t.Fatal(err)
	}
	var items []map[string]any
	if err := json.Unmarshal(b, &items); err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	if len(items) != 5 {
		t.Fatalf("%d items", len(items))
	}
	first := items[0]
	if first["id"] != "ongaro2014" || first["type"] != "article-journal" || first["DOI"] != "10.5555/raft" ||
		first["number"] != "arXiv:2101.00001v2" || first["container-title"] != "USENIX ATC" {
		t.Errorf("first item %v", first)
	}
	if got := first["author"].([]any)[1].(map[string]any)["literal"]; got != "John Ousterhout" {
		t.Errorf("second author %v", got)
	}
	if got := first["issued"].(map[string]any)["date-parts"].([]any)[0].([]any)[0]; got != float64(2014) {
		t.Errorf("issued %v", got)
	}
	if items[1]["type"] != "webpage" || items[3]["type"] != "document" {
		t.Errorf("types %v %v", items[1]["type"], items[3]["type"])
	}
	if strings.ContainsAny(items[4]["title"].(string), "\r\n") {
		t.Errorf("title keeps line breaks: %q", items[4]["title"])
	}
}

func TestRIS(t *testing.T) {
	b, err := export.Bibliography(sampleReport(), export.RIS)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	records := strings.Split(strings.TrimSuffix(out, "ER  - \r\n"), "ER  - \r\n")
	if len(records) != 5 {
		t.Fatalf("%d records:\n%s", len(records), out)
	}
	for _, want := range []string{"TY  - JOUR\r\nID  - ongaro2014\r\nTI  - In Search", "AU  - Diego Ongaro\r\nAU  - John Ousterhout\r\n",
		"PY  - 2014\r\n", "DO  - 10.5555/raft\r\n", "M1  - arXiv:2101.00001v2\r\n", "Y2  - 2026/11/30\r\n", "TY  - ELEC\r\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("RIS lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\r\n"), "\r\n") {
		if len(line) < 6 || line[2:6] != "  - " {
			t.Errorf("line %q is not a RIS tag line", line)
		}
	}
}

func TestUnknownFormat(t *testing.T) {
	if _, err := export.Bibliography(sampleReport(), "endnote"); err == nil || !strings.Contains(err.Error(), "bibtex") {
		t.Fatalf("err %v", err)
	}
}

// withWork is a search provider that, like the scholarly ones, attaches a bibliographic record to each result.
type withWork struct{ sources.Searcher }

func (w withWork) Search(ctx context.Context, q string, n int) ([]sources.Result, error) {
	rs, err := w.Searcher.Search(ctx, q, n)
	for i := range rs {
		rs[i].Work = &sources.Work{Authors: []string{"Karl von Frisch"}, Year: 1967, Venue: "Belknap Press", DOI: "10.1000/dance"}
	}
	return rs, err
}

// A run's report carries each source's bibliographic record from the search that found it, into the export.
func TestRunCarriesWorksIntoTheBibliography(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	text := "# The waggle dance\n\nA forager honeybee performs the waggle dance to tell its nestmates the direction and " +
		"distance of a food source.\n\nThe duration of the waggle run encodes the distance to the flowers.\n"
	if err := os.WriteFile(filepath.Join(docs, "dance.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := corpus.OpenWith(filepath.Join(dir, "index"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Add(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	rep, err := research.Run(t.Context(), research.Config{
		Question: "How does the waggle dance tell honeybees where the flowers are?",
		Roles:    extractive.New(extractive.Config{Searchers: []sources.Searcher{withWork{ix}}}),
		Fetcher:  sources.Router{Corpus: ix},
		OutDir:   filepath.Join(dir, "run"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sources) == 0 {
		t.Fatal("no sources")
	}
	for _, s := range rep.Sources {
		if s.Work == nil || s.Work.DOI != "10.1000/dance" {
			t.Errorf("source %s has work %+v", s.URL, s.Work)
		}
	}
	loaded, err := research.LoadReport(filepath.Join(dir, "run"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := export.Bibliography(loaded, export.BibTeX)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "doi = {10.1000/dance}") || !strings.Contains(string(b), "@article{frisch1967,") {
		t.Errorf("bibliography from report.json:\n%s", b)
	}
}
