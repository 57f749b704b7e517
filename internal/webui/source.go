package webui

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/export"
	"github.com/deepresearch/deepresearch/research/publish"
)

// sourcePage shows one evidence item inside the text that was read for it.
type sourcePage struct {
	Title    string
	ID       string
	Question string
	// Citation is the report's [N] that led here, 0 when opened from an evidence id.
	Citation int
	Index    int // 1-based position of this evidence item in the citation
	Count    int
	Prev     string
	Next     string
	Ev       research.Evidence
	// Link is the original URL when it can be opened from a browser; FilePath and Lines describe a file anchor.
	Link string
	// AtQuote opens the source at the quote (a text fragment), for web pages and HTML files.
	AtQuote  string
	FilePath string
	Lines    string
	Before   string
	Quote    string
	After    string
	Found    bool
	TextErr  string
	L        labels
}

func (s *Server) loadReport(ctx context.Context, w http.ResponseWriter, id string) (*research.Report, bool) {
	rep, err := s.store.Report(ctx, id)
	if err != nil {
		s.renderNotFound(w, fmt.Sprintf("Run %s has no report yet (%v).", id, err))
		return nil, false
	}
	return rep, true
}

func (s *Server) handleCite(w http.ResponseWriter, r *http.Request) {
	id, ok := s.pathID(w, r)
	if !ok {
		return
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil {
		http.Error(w, "bad citation number", http.StatusBadRequest)
		return
	}
	rep, ok := s.loadReport(r.Context(), w, id)
	if !ok {
		return
	}
	var cit *research.Citation
	for i := range rep.Citations {
		if rep.Citations[i].N == n {
			cit = &rep.Citations[i]
		}
	}
	if cit == nil || len(cit.EvidenceIDs) == 0 {
		s.renderNotFound(w, fmt.Sprintf("The report of run %s has no citation [%d].", id, n))
		return
	}
	i := 0
	if v, err := strconv.Atoi(r.URL.Query().Get("i")); err == nil && v >= 0 && v < len(cit.EvidenceIDs) {
		i = v
	}
	ev, found := findEvidence(rep, cit.EvidenceIDs[i])
	if !found {
		s.renderNotFound(w, fmt.Sprintf("Citation [%d] points to evidence %s, which the report does not contain.", n, cit.EvidenceIDs[i]))
		return
	}
	p := s.sourcePage(r.Context(), id, rep, ev)
	p.Citation, p.Index, p.Count = n, i+1, len(cit.EvidenceIDs)
	base := fmt.Sprintf("/runs/%s/cite/%d", id, n)
	if i > 0 {
		p.Prev = fmt.Sprintf("%s?i=%d", base, i-1)
	}
	if i+1 < len(cit.EvidenceIDs) {
		p.Next = fmt.Sprintf("%s?i=%d", base, i+1)
	}
	s.render(w, http.StatusOK, "source.html", p)
}

func (s *Server) handleEvidence(w http.ResponseWriter, r *http.Request) {
	id, ok := s.pathID(w, r)
	if !ok {
		return
	}
	rep, ok := s.loadReport(r.Context(), w, id)
	if !ok {
		return
	}
	ev, found := findEvidence(rep, r.PathValue("eid"))
	if !found {
		s.renderNotFound(w, fmt.Sprintf("The report of run %s has no evidence %s.", id, r.PathValue("eid")))
		return
	}
	s.render(w, http.StatusOK, "source.html", s.sourcePage(r.Context(), id, rep, ev))
}

// lineLabel turns a corpus anchor ("L52-L61", "L69-L69", "L7") into what a reader expects: "lines 52–61",
// "line 69". Anything else is shown as it is.
func lineLabel(fragment string) string {
	from, to, isRange := strings.Cut(fragment, "-")
	from, to = strings.TrimPrefix(from, "L"), strings.TrimPrefix(to, "L")
	if from == "" {
		return ""
	}
	if !isRange || from == to {
		return "line " + from
	}
	return "lines " + from + "–" + to
}

func findEvidence(rep *research.Report, eid string) (research.Evidence, bool) {
	for _, e := range rep.Evidence {
		if e.ID == eid {
			return e, true
		}
	}
	return research.Evidence{}, false
}

func (s *Server) sourcePage(ctx context.Context, id string, rep *research.Report, ev research.Evidence) sourcePage {
	p := sourcePage{Title: "Source · " + sourceName(ev), ID: id, Question: rep.Question, Ev: ev, Index: 1, Count: 1, L: labelsFor(rep.Language, rep.Question)}
	if u, ok := research.TextFragmentURL(ev.Source, ev.Quote); ok && export.SafeHref(u) {
		p.AtQuote = u // a page served over HTTP may not link file:// URLs
	}
	if u, err := url.Parse(ev.Source); err == nil {
		switch u.Scheme {
		case "http", "https":
			p.Link = ev.Source
		case "file":
			p.FilePath = u.Path
			p.Lines = lineLabel(u.Fragment)
		}
	}
	text, err := s.store.SourceText(ctx, id, ev.Source)
	if err != nil {
		p.TextErr = err.Error()
		p.Quote = ev.Quote
		return p
	}
	start, end, ok := locateQuote(text, ev.Quote)
	if !ok {
		p.Before = text
		return p
	}
	p.Found = true
	p.Before, p.Quote, p.After = text[:start], text[start:end], text[end:]
	return p
}

func sourceName(ev research.Evidence) string {
	if ev.Title != "" {
		return ev.Title
	}
	return ev.Source
}

// locateQuote finds quote in text the way the graph grounds it — runs of whitespace count as one space — and
// returns the byte range of the match in the original text. Failing that, it retries ignoring case, so a quote
// the graph accepted is still shown even if its check was more lenient.
func locateQuote(text, quote string) (int, int, bool) {
	// An elided quote is located by its fragments: from the first one's start to the last one's end.
	if fs := publish.QuoteFragments(quote); len(fs) > 1 {
		a, _, ok := locateQuote(text, fs[0])
		if !ok {
			return 0, 0, false
		}
		_, z, ok := locateQuote(text[a:], fs[len(fs)-1])
		return a, a + z, ok
	}
	for _, fold := range []bool{false, true} {
		nq, _ := normalize(strings.TrimSpace(quote), fold)
		if nq == "" {
			return 0, 0, false
		}
		nt, off := normalize(text, fold)
		i := strings.Index(nt, nq)
		if i < 0 {
			continue
		}
		start, end := off[i], off[i+len(nq)]
		// The match may end inside a collapsed whitespace run; do not highlight trailing whitespace.
		for end > start {
			r, size := utf8.DecodeLastRuneInString(text[:end])
			if !unicode.IsSpace(r) {
				break
			}
			end -= size
		}
		return start, end, true
	}
	return 0, 0, false
}

// normalize collapses whitespace runs to one space (and folds case if asked). off[i] is the byte offset in s of
// normalised byte i; off[len(n)] is len(s) or the start of a trailing whitespace run.
func normalize(s string, fold bool) (string, []int) {
	var b strings.Builder
	off := make([]int, 0, len(s)+1)
	space := false
	for i, r := range s {
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
				off = append(off, i)
			}
			space = true
			continue
		}
		space = false
		if fold {
			r = unicode.ToLower(r)
		}
		n := utf8.RuneLen(r)
		if n < 0 {
			n = 1
			r = utf8.RuneError
		}
		b.WriteRune(r)
		for k := 0; k < n; k++ {
			off = append(off, i)
		}
	}
	off = append(off, len(s))
	return b.String(), off
}
