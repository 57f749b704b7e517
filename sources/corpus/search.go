package corpus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/deepresearch/deepresearch/sources"
)

var (
	_ sources.Searcher = (*Index)(nil)
	_ sources.Fetcher  = (*Index)(nil)
)

// Name implements sources.Searcher.
func (ix *Index) Name() string { return "corpus" }

// Bounds on one query, whoever wrote it (a user, a model, a 1 MB question): the index sees at most
// maxQueryWords words and maxQueryRunes characters of it, and at most maxResults results come back.
const (
	maxQueryWords = 32
	maxQueryRunes = 256
	maxResults    = 1000
)

// capQuery keeps the first maxQueryWords words and maxQueryRunes characters of q.
func capQuery(q string) string {
	if f := strings.Fields(q); len(f) > maxQueryWords {
		q = strings.Join(f[:maxQueryWords], " ")
	}
	if r := []rune(q); len(r) > maxQueryRunes {
		q = string(r[:maxQueryRunes])
	}
	return q
}

// Search implements sources.Searcher. Results are chunks, best first, at
// most PerFile per file; each URL is a file:// URL with a line anchor.
func (ix *Index) Search(ctx context.Context, q string, limit int) ([]sources.Result, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return nil, errors.New("corpus search: empty query")
	}
	q = capQuery(q)
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, maxResults)
	perFile := ix.PerFile
	if perFile <= 0 {
		perFile = 2
	}
	words := bleve.NewMatchQuery(q)
	words.SetField("text")
	words.Analyzer = analyzerName
	// The phrase clause rewards chunks where the words appear together
	// ("happens before" as a term, not two stray words).
	phrase := bleve.NewMatchPhraseQuery(q)
	phrase.SetField("text")
	phrase.Analyzer = analyzerName
	phrase.SetBoost(2)
	title := bleve.NewMatchQuery(q)
	title.SetField("title")
	title.Analyzer = analyzerName
	title.SetBoost(1.5)
	bq := bleve.NewDisjunctionQuery([]query.Query{words, phrase, title}...)

	g, release, err := ix.acquire()
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, fmt.Errorf("corpus %s is empty: index a folder first (deepresearch index DIR)", ix.dir)
	}
	defer release()
	req := bleve.NewSearchRequestOptions(bq, limit*perFile*3+10, 0, false)
	res, err := g.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("corpus search %q: %w", q, err)
	}
	terms := queryTerms(q)
	perPath := map[string]int{}
	files := map[string]*storedFile{}
	var out []sources.Result
	for _, h := range res.Hits {
		path, start, end, ok := parseChunkID(h.ID)
		if !ok || perPath[path] >= perFile {
			continue
		}
		f := files[path]
		if f == nil {
			if f, err = g.file(path); err != nil {
				return nil, fmt.Errorf("corpus search %q: %w", q, err)
			}
			files[path] = f
		}
		text, ok := f.lines(start, end)
		if !ok {
			continue
		}
		perPath[path]++
		out = append(out, sources.Result{
			Title:    f.meta.Title,
			URL:      h.ID,
			Snippet:  snippet(text, terms, 300),
			Date:     f.meta.ModTime,
			Provider: "corpus",
			Score:    h.Score,
		})
		if len(out) >= limit {
			break
		}
	}
	return out, nil
}

// storedFile is a file document read back from the index.
type storedFile struct {
	meta fileMeta
	body string
}

// lines returns lines start..end (1-based, inclusive) of the file's text.
func (f *storedFile) lines(start, end int) (string, bool) {
	ls := splitLines(f.body)
	if start < 1 || end < start || end > len(ls) {
		return "", false
	}
	return strings.Join(ls[start-1:end], "\n"), true
}

// file loads the stored text and metadata of path.
func (g *generation) file(path string) (*storedFile, error) {
	doc, err := g.texts.Document(FileURL(path, 0, 0))
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, fmt.Errorf("%s is not in the index (re-run deepresearch index)", path)
	}
	f := &storedFile{}
	var meta []byte
	doc.VisitFields(func(fl index.Field) {
		switch fl.Name() {
		case "meta":
			meta = fl.Value()
		case "body":
			f.body = string(fl.Value())
		}
	})
	if err := json.Unmarshal(meta, &f.meta); err != nil {
		return nil, fmt.Errorf("%s: stored metadata: %w", path, err)
	}
	return f, nil
}

// parseChunkID splits a chunk id (a file URL with a line anchor) into the
// path and the line range.
func parseChunkID(id string) (path string, start, end int, ok bool) {
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "file" {
		return "", 0, 0, false
	}
	m := anchorRE.FindStringSubmatch(u.Fragment)
	if m == nil || m[2] == "" {
		return "", 0, 0, false
	}
	start, _ = strconv.Atoi(m[1])
	end, _ = strconv.Atoi(m[2])
	return filepath.FromSlash(u.Path), start, end, true
}

// queryTerms splits a query into lower-case words for snippet selection;
// CJK runs are kept whole and also split into bigrams.
func queryTerms(q string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		out = append(out, f)
		rs := []rune(f)
		if len(rs) > 2 && unicode.Is(unicode.Han, rs[0]) {
			for i := 0; i+2 <= len(rs); i++ {
				out = append(out, string(rs[i:i+2]))
			}
		} else if len(rs) > 5 {
			// crude stem so "happens" finds "happen" and "happened"
			out = append(out, string(rs[:len(rs)-2]))
		}
	}
	return out
}

// snippet picks the line where the query terms are densest and returns up
// to n runes starting a little before the first match.
func snippet(text string, terms []string, n int) string {
	lines := strings.Split(text, "\n")
	best, bestScore := 0, -1
	for i, l := range lines {
		ll := strings.ToLower(l)
		s := 0
		for _, t := range terms {
			s += strings.Count(ll, t)
		}
		if s > bestScore && strings.TrimSpace(l) != "" {
			best, bestScore = i, s
		}
	}
	rest := strings.Join(lines[best:], " ")
	if bestScore > 0 {
		ll := strings.ToLower(rest)
		first := len(ll)
		for _, t := range terms {
			if k := strings.Index(ll, t); k >= 0 && k < first {
				first = k
			}
		}
		if first > 80 && first < len(rest) {
			cut := first - 60
			for cut > 0 && !utf8.RuneStart(rest[cut]) {
				cut--
			}
			if sp := strings.IndexByte(rest[cut:first], ' '); sp >= 0 {
				cut += sp + 1
			}
			rest = "…" + rest[cut:]
		}
	}
	rest = strings.Join(strings.Fields(rest), " ")
	if utf8.RuneCountInString(rest) > n {
		r := []rune(rest)
		rest = string(r[:n]) + "…"
	}
	return rest
}

var anchorRE = regexp.MustCompile(`^L(\d+)(?:-L(\d+))?$`)

// Fetch implements sources.Fetcher for file:// URLs of indexed files. It
// returns the whole extracted text as it was indexed, so the line anchor in
// a search result points at the same lines of Document.Text. Files outside
// the indexed roots are refused.
func (ix *Index) Fetch(ctx context.Context, rawURL string) (*sources.Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	if u.Scheme != "file" {
		return nil, fmt.Errorf("fetch %s: corpus serves only file:// URLs", rawURL)
	}
	if u.Host != "" && u.Host != "localhost" {
		return nil, fmt.Errorf("fetch %s: file URL names a remote host %q", rawURL, u.Host)
	}
	p := filepath.FromSlash(u.Path)
	if !filepath.IsAbs(p) {
		return nil, fmt.Errorf("fetch %s: file URL path must be absolute", rawURL)
	}
	p = filepath.Clean(p)
	g, release, err := ix.acquire()
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	if g == nil {
		return nil, fmt.Errorf("fetch %s: the corpus %s is empty", rawURL, ix.dir)
	}
	defer release()
	under := false
	for _, r := range g.info.Roots {
		if p == r || strings.HasPrefix(p, r+string(filepath.Separator)) {
			under = true
			break
		}
	}
	if !under {
		return nil, fmt.Errorf("fetch %s: refused: %s is outside the indexed folders", rawURL, p)
	}
	f, err := g.file(p)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	e := f.meta
	if u.Fragment != "" {
		m := anchorRE.FindStringSubmatch(u.Fragment)
		if m == nil {
			return nil, fmt.Errorf("fetch %s: bad line anchor %q (want #L12-L40)", rawURL, u.Fragment)
		}
		end := m[2]
		if end == "" {
			end = m[1]
		}
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(end)
		if a < 1 || b < a || b > e.Lines {
			return nil, fmt.Errorf("fetch %s: line anchor %q outside the document (%d lines)", rawURL, u.Fragment, e.Lines)
		}
	}
	text := f.body
	if sources.HashText(text) != e.TextHash {
		return nil, fmt.Errorf("fetch %s: the stored text is corrupt; re-run deepresearch index", rawURL)
	}
	return &sources.Document{
		URL:         rawURL,
		FinalURL:    FileURL(p, 0, 0),
		Title:       e.Title,
		Text:        text,
		ContentType: e.ContentType,
		Hash:        e.TextHash,
		FetchedAt:   time.Now().UTC(),
		Published:   e.ModTime,
	}, nil
}
