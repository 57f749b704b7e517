// Package export turns a finished run's report into the files people share and cite from: the sources as a
// bibliography (BibTeX, CSL-JSON, RIS), with the authors, year, venue and DOI/arXiv/PubMed ids that scholarly
// search providers recorded, and the access date for everything else.
package export

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

// Format is an export format's name, as `show --format` takes it.
type Format string

// The bibliography formats.
const (
	BibTeX  Format = "bibtex"
	CSLJSON Format = "csljson"
	RIS     Format = "ris"
)

// entry is one source as every bibliography format needs it.
type entry struct {
	key      string
	n        int // the source's number in the report's Sources list
	title    string
	url      string
	work     sources.Work
	accessed time.Time
	local    bool // a file of the user's own corpus
}

// entries lists the report's sources, each with a citation key unique in the list ("ongaro2014", "ongaro2014a",
// else "source3").
func entries(rep *research.Report) []entry {
	accessed := rep.Finished
	if accessed.IsZero() {
		accessed = rep.Created
	}
	used := map[string]int{}
	out := make([]entry, 0, len(rep.Sources))
	for i, s := range rep.Sources {
		e := entry{n: i + 1, title: strings.TrimSpace(s.Title), url: s.URL, accessed: accessed}
		if s.Work != nil {
			e.work = *s.Work
		}
		if e.title == "" {
			e.title = s.URL
		}
		if u, err := url.Parse(s.URL); err == nil && u.Scheme == "file" {
			e.local = true
		}
		base := keyBase(e)
		if n := used[base]; n > 0 {
			e.key = fmt.Sprintf("%s%c", base, 'a'+rune(n-1)%26)
		} else {
			e.key = base
		}
		used[base]++
		out = append(out, e)
	}
	return out
}

// keyBase is the first author's last name and the year, letters and digits only; "sourceN" without them.
func keyBase(e entry) string {
	if len(e.work.Authors) > 0 && e.work.Year != 0 {
		name := e.work.Authors[0]
		if f := strings.Fields(name); len(f) > 0 {
			name = f[len(f)-1]
			if len([]rune(name)) <= 2 && len(f) > 1 { // "Smith J": the initials come last
				name = f[0]
			}
		}
		var b strings.Builder
		for _, r := range strings.ToLower(name) {
			if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
				b.WriteRune(r)
			}
		}
		if b.Len() > 0 {
			return fmt.Sprintf("%s%d", b.String(), e.work.Year)
		}
	}
	return fmt.Sprintf("source%d", e.n)
}

// Bibliography renders the report's sources in format f.
func Bibliography(rep *research.Report, f Format) ([]byte, error) {
	es := entries(rep)
	switch f {
	case BibTeX:
		return bibtex(es), nil
	case CSLJSON:
		return csljson(es)
	case RIS:
		return ris(es), nil
	}
	return nil, fmt.Errorf("export: unknown bibliography format %q (known: bibtex, csljson, ris)", f)
}

// bibtexEscape makes text safe inside a braced BibTeX field: the characters TeX treats specially are escaped, and
// braces are escaped so that text from a source can never close the field or open a new entry.
func bibtexEscape(s string) string {
	s = oneLine(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\textbackslash{}`)
		case '{', '}', '%', '&', '$', '#', '_':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '~':
			b.WriteString(`\textasciitilde{}`)
		case '^':
			b.WriteString(`\textasciicircum{}`)
		case '@':
			b.WriteString(`{@}`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// bibtexURL is a URL as the url package takes it: only the characters that would end the field are escaped.
func bibtexURL(s string) string {
	s = oneLine(s)
	r := strings.NewReplacer(`\`, `%5C`, "{", "%7B", "}", "%7D", " ", "%20")
	return r.Replace(s)
}

// oneLine folds white space and drops control characters.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func bibtex(es []entry) []byte {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString("\n")
		}
		kind := "misc"
		if e.work.Venue != "" || e.work.DOI != "" {
			kind = "article"
		}
		fmt.Fprintf(&b, "@%s{%s,\n", kind, e.key)
		field := func(name, value string) {
			if value != "" {
				fmt.Fprintf(&b, "  %s = {%s},\n", name, value)
			}
		}
		field("title", "{"+bibtexEscape(e.title)+"}") // double braces keep the title's capitals
		if len(e.work.Authors) > 0 {
			as := make([]string, len(e.work.Authors))
			for j, a := range e.work.Authors {
				as[j] = bibtexEscape(a)
			}
			field("author", strings.Join(as, " and "))
		}
		if e.work.Year != 0 {
			field("year", fmt.Sprint(e.work.Year))
		}
		if kind == "article" {
			field("journal", bibtexEscape(e.work.Venue))
		}
		field("doi", bibtexEscape(e.work.DOI))
		if e.work.ArXiv != "" {
			field("eprint", bibtexEscape(e.work.ArXiv))
			field("archiveprefix", "arXiv")
		}
		field("pmid", bibtexEscape(e.work.PMID))
		field("pmcid", bibtexEscape(e.work.PMCID))
		field("url", bibtexURL(e.url))
		field("urldate", e.accessed.UTC().Format("2006-01-02"))
		if e.local {
			field("note", "Local file")
		}
		b.WriteString("}\n")
	}
	return []byte(b.String())
}

type cslDate struct {
	DateParts [][]int `json:"date-parts"`
}

type cslName struct {
	Literal string `json:"literal"`
}

type cslItem struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Title     string    `json:"title"`
	Author    []cslName `json:"author,omitempty"`
	Issued    *cslDate  `json:"issued,omitempty"`
	Container string    `json:"container-title,omitempty"`
	DOI       string    `json:"DOI,omitempty"`
	PMID      string    `json:"PMID,omitempty"`
	PMCID     string    `json:"PMCID,omitempty"`
	URL       string    `json:"URL,omitempty"`
	Accessed  *cslDate  `json:"accessed,omitempty"`
	Number    string    `json:"number,omitempty"`
	Publisher string    `json:"publisher,omitempty"`
	Note      string    `json:"note,omitempty"`
}

func csljson(es []entry) ([]byte, error) {
	items := make([]cslItem, 0, len(es))
	for _, e := range es {
		it := cslItem{ID: e.key, Type: "webpage", Title: oneLine(e.title), URL: e.url, DOI: e.work.DOI, PMID: e.work.PMID,
			PMCID: e.work.PMCID, Container: oneLine(e.work.Venue)}
		switch {
		case e.work.Venue != "" || e.work.DOI != "":
			it.Type = "article-journal"
		case e.work.ArXiv != "":
			it.Type = "article"
		case e.local:
			it.Type = "document"
		}
		if e.work.ArXiv != "" {
			it.Number, it.Publisher = "arXiv:"+e.work.ArXiv, "arXiv"
		}
		for _, a := range e.work.Authors {
			it.Author = append(it.Author, cslName{Literal: oneLine(a)})
		}
		if e.work.Year != 0 {
			it.Issued = &cslDate{DateParts: [][]int{{e.work.Year}}}
		}
		a := e.accessed.UTC()
		it.Accessed = &cslDate{DateParts: [][]int{{a.Year(), int(a.Month()), a.Day()}}}
		items = append(items, it)
	}
	b, err := json.MarshalIndent(items, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("export: CSL-JSON: %w", err)
	}
	return append(b, '\n'), nil
}

// ris writes RIS records: "TAG  - value" lines, one record per source ending in "ER  - ".
func ris(es []entry) []byte {
	var b strings.Builder
	for _, e := range es {
		kind := "ELEC"
		switch {
		case e.work.Venue != "" || e.work.DOI != "":
			kind = "JOUR"
		case e.work.ArXiv != "":
			kind = "GEN"
		}
		line := func(tag, value string) {
			if value = oneLine(value); value != "" {
				fmt.Fprintf(&b, "%s  - %s\r\n", tag, value)
			}
		}
		line("TY", kind)
		line("ID", e.key)
		line("TI", e.title)
		for _, a := range e.work.Authors {
			line("AU", a)
		}
		if e.work.Year != 0 {
			line("PY", fmt.Sprint(e.work.Year))
		}
		line("JO", e.work.Venue)
		line("DO", e.work.DOI)
		if e.work.ArXiv != "" {
			line("M1", "arXiv:"+e.work.ArXiv)
		}
		line("AN", e.work.PMID)
		line("UR", e.url)
		line("Y2", e.accessed.UTC().Format("2006/01/02"))
		if e.local {
			line("N1", "Local file")
		}
		b.WriteString("ER  - \r\n")
	}
	return []byte(b.String())
}
