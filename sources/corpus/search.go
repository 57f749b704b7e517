package corpus

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/deepresearch/deepresearch/lexical"
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
	g, release, err := ix.acquire()
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, fmt.Errorf("corpus %s is empty: index a folder first (deepresearch index DIR)", ix.dir)
	}
	defer release()
	if ctx, err = g.scoring(ctx); err != nil {
		return nil, fmt.Errorf("corpus search %q: %w", q, err)
	}
	rq := newRankQuery(q, limit, perFile, g.queryAnalyzer())
	rq.keepCopies = ix.keepCopies
	structured, err := g.structure(ctx, &rq)
	if err != nil {
		return nil, fmt.Errorf("corpus search %q: %w", q, err)
	}
	ok := false
	var out []sources.Result
	if !structured {
		out, ok, err = g.rankCertified(ctx, rq, ix.depth)
	}
	if err != nil {
		return nil, fmt.Errorf("corpus search %q: %w", q, err)
	}
	if ok {
		ix.postingsSearches.Add(1)
		return out, nil
	}
	ix.fullSearches.Add(1)
	out, err = g.rankFull(ctx, rq)
	if err != nil {
		return nil, fmt.Errorf("corpus search %q: %w", q, err)
	}
	return out, nil
}

// rankQuery is one search: the ranking query, its cheaper part without the
// phrase clause, and how its hits become results.
type rankQuery struct {
	full, phrase   query.Query
	limit, perFile int
	want           int // hits looked at, at most
	keepCopies     bool
	text           string
	terms          []string
	analyzer       string // the name of the analyser of q
}

func newRankQuery(q string, limit, perFile int, analyzer string) rankQuery {
	words := bleve.NewMatchQuery(q)
	words.SetField("text")
	words.Analyzer = analyzer
	// The phrase clause rewards chunks where the words appear together
	// ("happens before" as a term, not two stray words).
	phrase := bleve.NewMatchPhraseQuery(q)
	phrase.SetField("text")
	phrase.Analyzer = analyzer
	phrase.SetBoost(2)
	title := bleve.NewMatchQuery(q)
	title.SetField("title")
	title.Analyzer = analyzer
	title.SetBoost(1.5)
	return rankQuery{
		full:   bleve.NewDisjunctionQuery(words, phrase, title),
		phrase: phrase,
		limit:  limit, perFile: perFile,
		want:     limit*perFile*3 + 10,
		text:     q,
		terms:    queryTerms(q),
		analyzer: analyzer,
	}
}

// rankFull ranks with the full query over the whole index: the ranking
// rankCertified reproduces.
func (g *generation) rankFull(ctx context.Context, rq rankQuery) ([]sources.Result, error) {
	req := bleve.NewSearchRequestOptions(rq.full, rq.want, 0, false)
	// Equal scores in chunk-id order, as breakTies orders them: the same in every build of the index.
	req.SortBy([]string{"-_score", "_id"})
	res, err := g.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, err
	}
	hits := make([]hit, len(res.Hits))
	for i, h := range res.Hits {
		hits[i] = hit{id: h.ID, score: h.Score}
	}
	out, _, _, err := g.results(ctx, nil, hits, rq)
	return out, err
}

// rankCertified ranks by walking the postings (see rank.go) and turns
// the hits into results. ok is false when the ranking could not be
// certified equal to rankFull's.
func (g *generation) rankCertified(ctx context.Context, rq rankQuery, d depth) (out []sources.Result, ok bool, err error) {
	r, err := openReader(g.idx)
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	kept, kth, _, ok, err := postingsRank(ctx, r, g.idx.Mapping(), rq, rq.want, d)
	if errors.Is(err, errDocID) {
		return nil, false, nil
	}
	if err != nil || !ok {
		return nil, false, err
	}
	hits := make([]hit, len(kept))
	for i, e := range kept {
		hits[i] = hit{iid: internalID(e.num), score: e.score}
	}
	sortHits(hits)
	if err := breakTies(r, hits); err != nil {
		return nil, false, err
	}
	out, consumed, exhausted, err := g.results(ctx, r, hits[:min(len(hits), rq.want)], rq)
	if err != nil {
		return nil, false, err
	}
	switch {
	case math.IsInf(kth, -1): // every matching chunk is ranked
		return out, true, nil
	case exhausted && len(hits) < rq.want: // rankFull would look further
		return nil, false, nil
	case consumed > 0 && hits[consumed-1].score > kth: // no chunk left out reaches the last hit taken
		return out, true, nil
	}
	return nil, false, nil
}

// results turns ranked chunks into search results, at most perFile a file
// and limit in all. It reports how many hits it looked at and whether it ran
// out of hits before reaching limit.
func (g *generation) results(ctx context.Context, r index.IndexReader, hits []hit, rq rankQuery) (out []sources.Result, consumed int, exhausted bool, err error) {
	limit, perFile := rq.limit, rq.perFile
	if err := g.demoteRedundant(r, hits); err != nil {
		return nil, 0, false, err
	}
	perPath := map[string]int{}
	files := map[string]*storedFile{}
	var copies copyTracker
	for i := range hits {
		h := &hits[i]
		consumed++
		if h.id == "" {
			if h.id, err = r.ExternalID(h.iid); err != nil {
				return nil, 0, false, err
			}
		}
		path, start, end, ok := parseChunkID(h.id)
		if !ok || perPath[path] >= perFile {
			continue
		}
		f, err := g.cachedFile(files, path)
		if err != nil {
			return nil, 0, false, err
		}
		text, ok := f.lines(start, end)
		if !ok {
			continue
		}
		res := sources.Result{
			Title:    f.meta.Title,
			URL:      h.id,
			Snippet:  snippet(text, rq.terms, 300),
			Date:     f.meta.ModTime,
			Provider: "corpus",
			Score:    h.score,
		}
		j, act := 0, copyNew
		if !rq.keepCopies {
			focus := ""
			if g.info.Redundant[path] != "" {
				focus = res.Snippet
			}
			j, act = copies.add(path, len(f.body), text, focus)
		}
		if act == copyNew && !rq.keepCopies && g.info.Redundant[path] != "" {
			// A passage of an aggregate or a copy that no specific page's hit holds (their chunks are cut elsewhere,
			// and ranked apart; a page's Markdown source is wrapped and marked up otherwise): the page it was taken
			// from is looked up and cited in its place, at its rank.
			sp, ok, err := g.specificPage(ctx, res.Snippet, text, rq.text, files)
			if err != nil {
				return nil, 0, false, err
			}
			switch {
			case ok && slices.ContainsFunc(out, func(o sources.Result) bool { return o.URL == sp.id }):
				copies.removed(j) // that chunk is a result already
				act = copySkip
			case ok:
				// Past the page's own share of results, if need be: the hit was to be a result either way.
				res.Title, res.URL, res.Date = sp.file.meta.Title, sp.id, sp.file.meta.ModTime
				res.Snippet = snippet(sp.text, rq.terms, 300)
				perPath[path]++ // the aggregate still gives at most its share of hits
				path = sp.path
				copies.kept[j] = keptPassage{path: sp.path, size: len(sp.file.body), terms: lexical.Tokenize(sp.text), copies: 1}
			}
		}
		switch act {
		case copyNew:
			perPath[path]++
			out = append(out, res)
		case copyReplace:
			// The same passage in a shorter, more specific document: the page a reader would open takes the
			// aggregate's place (and rank).
			old, _, _, _ := parseChunkID(out[j].URL)
			perPath[old]--
			perPath[path]++
			res.Score = out[j].Score
			out[j] = res
		case copyBoilerplate:
			old, _, _, _ := parseChunkID(out[j].URL)
			perPath[old]--
			out = slices.Delete(out, j, j+1)
			copies.removed(j)
		}
		if len(out) >= limit {
			return out, consumed, false, nil
		}
	}
	return out, consumed, true, nil
}

// specificChunk is a chunk of a document the index found no copy of, with its text.
type specificChunk struct {
	id, path, text string
	file           *storedFile
}

// specificPages bounds the chunks specificPage looks at: the page a passage was taken from ranks first or near it
// for a query made of the passage itself.
const specificPages = 5

// maxPassedOver bounds the hits on redundant documents specificPage reads past to reach the specific pages: a
// folder of stub pages may hold hundreds, none of which holds a passage of the content.
const maxPassedOver = 20

// specificPage finds the chunk of a specific page that holds passage, the part of a redundant document's chunk (a
// print-all or "all APIs" page, a page's Markdown source) a search found, and every word of query the chunk
// matched: it queries the index with the passage's own words and takes the first chunk of a document that repeats
// no other which holds the passage (ShingleContainment at or above dupContainment) and those words, alone or with
// the lines of one more chunk's length after or before it. The redundant document's own text — an aggregate's
// heading, a source's generator notes — has no such chunk. files caches the stored files read.
func (g *generation) specificPage(ctx context.Context, passage, chunkText, query string, files map[string]*storedFile) (specificChunk, bool, error) {
	want := lexical.Tokenize(passage)
	if len(want) == 0 {
		return specificChunk{}, false, nil
	}
	inChunk := map[string]bool{}
	for _, t := range lexical.Tokenize(chunkText) {
		inChunk[t] = true
	}
	var matched []string
	for _, t := range lexical.Tokenize(query) {
		if inChunk[t] {
			matched = append(matched, t)
		}
	}
	// The aggregate and the copies among the first hits are passed over, but only so many of them.
	req := bleve.NewSearchRequestOptions(matchIn("text", passage, 1, g.queryAnalyzer()), specificPages+min(len(g.info.Redundant), maxPassedOver), 0, false)
	req.SortBy([]string{"-_score", "_id"})
	res, err := g.idx.SearchInContext(ctx, req)
	if err != nil {
		return specificChunk{}, false, fmt.Errorf("corpus: the page of a redundant document's passage: %w", err)
	}
	looked := 0
	for _, h := range res.Hits {
		path, start, end, ok := parseChunkID(h.ID)
		if !ok || g.info.Redundant[path] != "" {
			continue
		}
		if looked++; looked > specificPages {
			break
		}
		f, err := g.cachedFile(files, path)
		if err != nil {
			return specificChunk{}, false, err
		}
		// The page's chunks are cut at places of their own: the passage may run from this chunk into the next one,
		// or into this one from the one before; the chunk is the page's place either way.
		n, last := end-start+1, f.lineCount()
		for _, w := range [][2]int{{start, end}, {start, min(end+n, last)}, {max(start-n, 1), end}} {
			text, ok := f.lines(w[0], w[1])
			if !ok {
				continue
			}
			terms := lexical.Tokenize(text)
			if lexical.ShingleContainment(terms, want) >= dupContainment && !slices.ContainsFunc(matched, func(t string) bool { return !slices.Contains(terms, t) }) {
				return specificChunk{id: h.ID, path: path, text: text, file: f}, true, nil
			}
		}
	}
	return specificChunk{}, false, nil
}

// cachedFile is the stored file at path, read once per search: files holds those read so far.
func (g *generation) cachedFile(files map[string]*storedFile, path string) (*storedFile, error) {
	if f := files[path]; f != nil {
		return f, nil
	}
	f, err := g.file(path)
	if err != nil {
		return nil, err
	}
	files[path] = f
	return f, nil
}

// demoteRedundant ranks the hits on documents the index found redundant (copies and aggregates, see
// redundantDocs) at redundantWeight of their score, keeping the order of equal scores. The scores are changed in
// place, so that a caller comparing the last hit taken with what was left unranked compares what was ranked.
func (g *generation) demoteRedundant(r index.IndexReader, hits []hit) error {
	if len(g.info.Redundant) == 0 {
		return nil
	}
	changed := false
	for i := range hits {
		h := &hits[i]
		if h.id == "" {
			id, err := r.ExternalID(h.iid)
			if err != nil {
				return err
			}
			h.id = id
		}
		if path, _, _, ok := parseChunkID(h.id); ok && g.info.Redundant[path] != "" {
			h.score *= redundantWeight
			changed = true
		}
	}
	if changed {
		slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	}
	return nil
}

// Near-duplicate documents. A print-all page (the whole book on one page, "all APIs" on one page) repeats the
// passages of the specific pages, and a folder of old-edition stubs repeats one notice on every page. Among one
// search's hits, a passage found in another document (ShingleContainment of their terms at or above
// dupContainment) is kept once, from the shortest document holding it — the specific page, not the aggregate —
// and a passage found in boilerplateCopies documents or more is site boilerplate and kept from none.
const (
	dupContainment    = 0.8
	boilerplateCopies = 3
)

type copyAction int

const (
	copyNew         copyAction = iota // a passage no earlier result holds: append it
	copyReplace                       // the same passage as result j, in a shorter document: replace j
	copySkip                          // the same passage as result j, in a longer document: drop it
	copyBoilerplate                   // the passage of result j is boilerplate: remove j
)

// copyTracker remembers the passages of the results so far.
type copyTracker struct {
	kept []keptPassage // parallel to the results
	gone [][]string    // the terms of boilerplate passages
}

type keptPassage struct {
	path   string
	size   int // the document's length: shorter is more specific
	terms  []string
	copies int // documents holding the passage
}

// add classifies the passage text of a hit on path, a document of size bytes, against the results so far. focus
// is set for a document the index found redundant (a copy, an aggregate: see redundantDocs): the lines where the
// search found the hit, which make it a copy of a kept result already when that result holds them — the chunks
// of an aggregate are cut elsewhere than those of the pages it repeats.
func (c *copyTracker) add(path string, size int, text, focus string) (int, copyAction) {
	terms := lexical.Tokenize(text)
	if focus != "" {
		ft := lexical.Tokenize(focus)
		for j := range c.kept {
			if c.kept[j].path != path && lexical.ShingleContainment(c.kept[j].terms, ft) >= dupContainment {
				return j, copySkip
			}
		}
	}
	for _, g := range c.gone {
		if lexical.ShingleContainment(g, terms) >= dupContainment {
			return -1, copySkip
		}
	}
	for j := range c.kept {
		k := &c.kept[j]
		if k.path == path || lexical.ShingleContainment(k.terms, terms) < dupContainment {
			continue
		}
		k.copies++
		if k.copies >= boilerplateCopies {
			c.gone = append(c.gone, k.terms)
			return j, copyBoilerplate
		}
		if size < k.size {
			k.path, k.size, k.terms = path, size, terms
			return j, copyReplace
		}
		return j, copySkip
	}
	c.kept = append(c.kept, keptPassage{path: path, size: size, terms: terms, copies: 1})
	return len(c.kept) - 1, copyNew
}

// removed forgets result j, which was taken out of the results.
func (c *copyTracker) removed(j int) { c.kept = slices.Delete(c.kept, j, j+1) }

// SearchStats counts how searches were ranked.
type SearchStats struct {
	Postings int64 // ranked by walking the postings, certified equal to the full query
	Full     int64 // ranked by the full query over the whole index
}

// SearchStats reports how this Index's searches were ranked so far.
func (ix *Index) SearchStats() SearchStats {
	return SearchStats{Postings: ix.postingsSearches.Load(), Full: ix.fullSearches.Load()}
}

// storedFile is a file document read back from the index.
type storedFile struct {
	meta fileMeta
	body string
}

// lineCount is how many lines the file's text has.
func (f *storedFile) lineCount() int { return len(splitLines(f.body)) }

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
