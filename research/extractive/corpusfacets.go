package extractive

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/sources"
)

// Corpus-facet bounds: how many hits of the question's own search are looked at, how many section headings
// become sub-questions, and the longest heading that reads as a topic (longer lines are sentences).
const (
	facetHits      = 6
	maxHeadFacets  = 2
	maxFacetHeadRs = 60
	// facetScoreShare is the least share of the best hit's score a hit needs for its section to be a facet.
	facetScoreShare = 0.5
)

// headFacet is a section of the corpus that the question's search lands in: its heading and its document.
type headFacet struct {
	Heading, Title string
}

// headingAnchorRE is a Markdown heading's explicit anchor ("## Assembler {#assembler}").
var headingAnchorRE = regexp.MustCompile(`\s*\{#[^}]*\}\s*$`)

// corpusFacets is the corpus-facet heuristic: the section headings under which the question's own search finds
// its best hits are the facets the sources themselves give the topic ("Select statements" in the specification
// for a question about select, "三种预设" for one about the presets). A heading counts when it names a facet of the
// question (facetHeading) and, when the question names an API, that API (namesOne). Only sources that can also
// fetch what they find (a local corpus index) are asked; a failing source adds nothing. It also returns every
// heading of the documents it read, the corpus's own names for topics (see corpusTopic).
func (p *Planner) corpusFacets(ctx context.Context, question, query string, keys map[string]bool) (out []headFacet, heads []string) {
	if len(keys) == 0 || strings.TrimSpace(query) == "" {
		return nil, nil
	}
	names := nameTerms(question)
	seen := map[string]bool{}
	for _, src := range p.cfg.Searchers {
		f, ok := src.(sources.Fetcher)
		if !ok {
			continue
		}
		hits, err := src.Search(ctx, query, facetHits)
		if err != nil {
			p.cfg.Log.Debug("corpus facets: search failed", "query", query, "err", err)
			continue
		}
		docs := map[string]*sources.Document{}
		// The titles of all the documents found: their words are the corpus's domain ("Go" over the Go
		// documentation), not a facet of the question.
		var titles []string
		for _, h := range hits {
			titles = append(titles, h.Title)
		}
		domain := strings.Join(titles, " ")
		for _, h := range hits {
			// Only the strong hits: a section the search ranks far below the best is a passing mention.
			if len(hits) > 0 && h.Score < facetScoreShare*hits[0].Score {
				break
			}
			base, _, _ := strings.Cut(h.URL, "#")
			doc, ok := docs[base]
			if !ok {
				if doc, err = f.Fetch(ctx, h.URL); err != nil {
					p.cfg.Log.Debug("corpus facets: fetch failed", "url", h.URL, "err", err)
				}
				docs[base] = doc
				if doc != nil {
					for _, hd := range headings(doc.Text) {
						heads = append(heads, plainText(headingAnchorRE.ReplaceAllString(hd.Text, "")))
					}
				}
			}
			if doc == nil {
				continue
			}
			head := sectionHeading(h.URL, doc.Text, keys)
			if head == "" || seen[head] || !facetHeading(head, doc.Title+" "+domain, keys) || !namesOne(head, names) {
				continue
			}
			seen[head] = true
			out = append(out, headFacet{Heading: head, Title: strings.TrimSpace(doc.Title)})
			if len(out) >= maxHeadFacets {
				return out, heads
			}
		}
	}
	return out, heads
}

// corpusTopic is the defined-term heuristic: the topic a facet sub-question asks about, cut to the longest
// leading words that a heading of the corpus names ("select statement" of "select statement choose", under
// "Select statements"; "iota" of "iota represent", under "Iota"), since the grammar cannot tell a verb from a
// noun and the corpus's headings are its names for its topics. A single word counts only when a heading is that
// word alone. The topic stays whole when a heading names all of it, or none names a part.
func corpusTopic(topic string, heads []string) string {
	words := strings.Fields(topic)
	if len(words) < 2 || hasCJK(topic) {
		return topic
	}
	var headTerms []map[string]bool
	for _, h := range heads {
		m := map[string]bool{}
		for _, t := range lexical.Tokenize(h) {
			m[t] = true
		}
		headTerms = append(headTerms, m)
	}
	named := func(ws []string) bool {
		ts := lexical.Tokenize(strings.Join(ws, " "))
		if len(ts) == 0 {
			return false
		}
		for _, m := range headTerms {
			all := true
			for _, t := range ts {
				all = all && m[t]
			}
			if all && (len(ws) > 1 || len(m) == len(uniq(ts))) {
				return true
			}
		}
		return false
	}
	if named(words) {
		return topic
	}
	for n := len(words) - 1; n >= 1; n-- {
		if named(words[:n]) {
			return strings.Join(words[:n], " ")
		}
	}
	return topic
}

// sectionHeading is the text of the heading of the section the hit is about: of the sections the URL's #Lx-Ly
// lines overlap (a search chunk is cut by size and may span two), the one whose overlapping text holds the most
// of the query's terms. "" when the URL has no line anchor or the best part stands under no heading.
func sectionHeading(rawURL, text string, keys map[string]bool) string {
	if !strings.Contains(rawURL, "#L") {
		return ""
	}
	lo, hi, _, _ := region(rawURL, text)
	heads := headings(text)
	best, bestN := "", -1
	for k := -1; k < len(heads); k++ {
		start, end := 0, len(text)
		if k >= 0 {
			start = heads[k].Start
		}
		if k+1 < len(heads) {
			end = heads[k+1].Start
		}
		s, e := max(start, lo), min(end, hi)
		if s >= e {
			continue
		}
		n := 0
		for _, t := range lexical.Tokenize(text[s:e]) {
			if keys[t] {
				n++
			}
		}
		if n > bestN {
			best, bestN = "", n
			if k >= 0 {
				best = heads[k].Text
			}
		}
	}
	best = plainText(headingAnchorRE.ReplaceAllString(best, ""))
	return strings.TrimRight(best, ":：")
}

// apiHeadingRE is the heading of an API's documentation: "type Map", "func (Reader) Read", "func WithCancel".
var apiHeadingRE = regexp.MustCompile(`^(?:func|type)\s+(?:\([^)]*\)\s*)?([\pL\pN_]+)`)

// facetHeading reports a heading that names a facet of the question: at least half of what it says is the
// question's — counted in Latin words and in Chinese characters (a character counts as the question's when a
// two-character word holding it is) — leaving out the document title's words, which every section of the
// document shares ("Go" in "Go 1.22" under "Go, Backwards Compatibility, and GODEBUG"). The heading of an API's
// documentation says only its name ("Go" of "func (WaitGroup) Go"). A heading longer than a topic, or the title
// itself, is no facet.
func facetHeading(head, title string, keys map[string]bool) bool {
	if utf8.RuneCountInString(head) > maxFacetHeadRs || strings.HasPrefix(strings.ToLower(strings.TrimSpace(title)), strings.ToLower(head)) {
		return false
	}
	topic := head
	if m := apiHeadingRE.FindStringSubmatch(head); m != nil {
		topic = m[1]
	}
	inTitle := map[string]bool{}
	for _, t := range lexical.Tokenize(title) {
		inTitle[t] = true
	}
	var total, shared int
	for _, t := range uniq(lexical.Tokenize(topic)) {
		if r, _ := utf8.DecodeRuneInString(t); lexical.IsCJK(r) || facetTerms[t] || inTitle[t] {
			continue
		}
		total++
		if keys[t] || derivedForm(t, keys) {
			shared++
		}
	}
	rs := []rune(topic)
	for k, r := range rs {
		if !lexical.IsCJK(r) {
			continue
		}
		var words []string
		if k > 0 && lexical.IsCJK(rs[k-1]) {
			words = append(words, string(rs[k-1:k+1]))
		}
		if k+1 < len(rs) && lexical.IsCJK(rs[k+1]) {
			words = append(words, string(rs[k:k+2]))
		}
		title, ours := false, false
		for _, w := range words {
			title = title || inTitle[w]
			ours = ours || keys[w]
		}
		if title || facetTerms[string(r)] {
			continue
		}
		total++
		if ours {
			shared++
		}
	}
	return shared > 0 && 2*shared >= total
}

// nameTerms are the terms naming the APIs a question names: the last part of each name of the domain in it
// ("mutex" for sync.Mutex).
func nameTerms(question string) []string {
	var out []string
	for _, w := range nameWords(question) {
		out = append(out, w[len(w)-1])
	}
	return uniq(out)
}

// nameWords are the names of the domain a question names, each as the words of its last part spelled out in
// prose, then the term itself: "HashMap" is ["hash", "map", "hashmap"], "sync.Mutex" ["mutex", "mutex"].
func nameWords(question string) [][]string {
	var out [][]string
	seen := map[string]bool{}
	generic := map[string]bool{} // a word with type parameters after it ("Weak<T>", "Box<T>") is a type's name
	for _, m := range typeParamsRE.FindAllStringSubmatch(question, -1) {
		generic[m[1]] = true
	}
	for _, w := range wordRE.FindAllString(question, -1) {
		w = strings.TrimRight(w, ".")
		if !nameLike(w) && !generic[w] || hasCJK(w) {
			continue
		}
		ts := lexical.Tokenize(identSplitter.Replace(w))
		if len(ts) == 0 || seen[ts[len(ts)-1]] {
			continue
		}
		last := ts[len(ts)-1]
		seen[last] = true
		out = append(out, append(lexical.Tokenize(strings.Join(camelWords(lastSegment(w)), " ")), last))
	}
	return out
}

// typeParamsRE is a name with type parameters: "Weak<T>", "HashMap<K, V>".
var typeParamsRE = regexp.MustCompile(`\b(\p{Lu}[\p{L}\p{N}_]*)<[\p{L}\p{N}_, ]+>`)

// lastSegment is the last part of a qualified name ("Mutex" of sync.Mutex).
func lastSegment(w string) string {
	if i := strings.LastIndexAny(w, "./_"); i >= 0 && i < len(w)-1 {
		return w[i+1:]
	}
	return w
}

// camelWords splits a CamelCase name at its word boundaries: "HashMap" → Hash, Map; "HTTPServer" → HTTP,
// Server. A name of one word is returned alone.
func camelWords(w string) []string {
	rs := []rune(w)
	var out []string
	start := 0
	for i := 1; i < len(rs); i++ {
		lowerToUpper := unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i])
		acronymEnd := i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i+1])
		if lowerToUpper || acronymEnd {
			out = append(out, string(rs[start:i]))
			start = i
		}
	}
	return append(out, string(rs[start:]))
}

// namesOne reports a heading that holds one of the question's names, or any heading when the question names
// none: a question about sync.Mutex is not answered under "type Value" because both speak of zero values.
func namesOne(head string, names []string) bool {
	if len(names) == 0 {
		return true
	}
	for _, t := range lexical.Tokenize(head) {
		if slices.Contains(names, t) {
			return true
		}
	}
	return false
}

// derivedForm reports a term that one of keys begins (or that begins one of keys) over at least 5 letters: the
// stemmer leaves derivations apart ("creat" of created, "creation"), a heading and a question often use two of them.
func derivedForm(t string, keys map[string]bool) bool {
	if len(t) < 5 {
		return false
	}
	for k := range keys {
		short, long := k, t
		if len(short) > len(long) {
			short, long = long, short
		}
		if len(short) >= 5 && strings.HasPrefix(long, short) {
			return true
		}
	}
	return false
}

// keyTerms are the index terms of the question's key phrases and of their English renderings.
func keyTerms(phrases []string, v *vocabulary) map[string]bool {
	m := map[string]bool{}
	for _, ph := range phrases {
		for _, x := range []string{ph, translateFor(v, ph)} {
			for _, t := range lexical.Tokenize(x) {
				if !facetTerms[t] {
					m[t] = true
				}
			}
		}
	}
	return m
}
