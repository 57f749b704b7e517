// Package researchtest provides a scripted role set and a local web site for testing and benchmarking the
// research graph offline.
//
// The roles decide their answers in Go (the planner returns a given plan, the searcher matches queries against
// the site's pages, the analyst quotes sentences of the fetched text, the verifier and synthesizer follow
// functions the test supplies), and then each role call goes through a real agent on a scripted model via
// llmroles.RunRole, the one typed-answer primitive: the answer travels as the model's reply, is repaired when
// malformed, validated against the schema of its type, and metered in the ledger. Faults — malformed JSON, role errors, invented quotes — are injected per role.
package researchtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/llmroles"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/fetch"
)

// Page is one page of a Site, served as Markdown.
type Page struct {
	Path  string // "/alpha/1"
	Title string
	Body  string
}

// Site is a local web site on an httptest server.
type Site struct {
	*httptest.Server
	mu    sync.Mutex
	pages []Page
	hits  map[string]int
}

// NewSite serves pages on a loopback httptest server. Close it when done.
func NewSite(pages []Page) *Site {
	s := &Site{pages: pages, hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		for _, p := range pages {
			if p.Path == r.URL.Path {
				w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
				fmt.Fprintf(w, "# %s\n\n%s\n", p.Title, p.Body)
				return
			}
		}
		http.NotFound(w, r)
	}))
	return s
}

// SiteAt describes a site served elsewhere (by a parent test process) so its pages can be searched; it serves
// nothing itself and must not be closed.
func SiteAt(url string, pages []Page) *Site {
	return &Site{Server: &httptest.Server{URL: url}, pages: pages, hits: map[string]int{}}
}

// Hits returns how many times each path was fetched.
func (s *Site) Hits() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.hits))
	for k, v := range s.hits {
		out[k] = v
	}
	return out
}

// Pages returns the site's pages.
func (s *Site) Pages() []Page { return s.pages }

// Fetcher returns a real fetcher allowed to read loopback addresses (the site).
func (s *Site) Fetcher() sources.Fetcher {
	f, err := fetch.New(&fetch.Config{AllowLoopback: true, PerHostConcurrency: 64, Timeout: 10 * time.Second})
	if err != nil {
		panic(err) // fetch.New fails only on a bad cache dir, and none is configured
	}
	return f
}

// Search returns the pages whose title and body contain every word of query, best first (most occurrences).
func (s *Site) Search(query string, limit int) []sources.Result {
	words := strings.Fields(strings.ToLower(query))
	type hit struct {
		p Page
		n int
	}
	var hits []hit
	for _, p := range s.pages {
		text := strings.ToLower(p.Title + " " + p.Body)
		n := 0
		for _, w := range words {
			c := strings.Count(text, w)
			if c == 0 {
				n = 0
				break
			}
			n += c
		}
		if n > 0 {
			hits = append(hits, hit{p, n})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].n > hits[j].n })
	var out []sources.Result
	for i, h := range hits {
		if limit > 0 && i >= limit {
			break
		}
		out = append(out, sources.Result{Title: h.p.Title, URL: s.URL + h.p.Path, Provider: "site", Score: float64(h.n)})
	}
	return out
}

// Roles is a scripted role set. Set its fields before the run; they are read concurrently afterwards.
type Roles struct {
	Model  *scripted.Model
	Ledger *llm.Ledger
	Site   *Site
	Plan   research.Plan
	// PerSource is how many sentences the analyst quotes from each source; default 3.
	PerSource int
	// PerQuery is how many hits the searcher takes per query; default 10.
	PerQuery int
	// Verify decides the verdict of each call (call counts from 1); nil passes everything.
	Verify func(call int, plan *research.Plan, pool []research.Evidence) research.Verdict
	// Synthesize writes the draft (attempt counts from 1); nil cites every accepted item once.
	Synthesize func(attempt int, in research.SynthesisInput) string
	// Invent makes the analyst add an ungrounded quote for sources whose URL it matches.
	Invent func(url string) bool
	// Fail, when it returns an error for a role call, makes that call fail before the model is asked. key is the
	// sub-question id (searcher), the URL (analyst) or "" (other roles).
	Fail func(role, key string) error
	// Delay, when set, holds a role call this long before the model is asked (honouring cancellation): a slow
	// source or a stuck role.
	Delay func(role, key string) time.Duration
	// Malformed is how many malformed JSON answers each role gives before a good one (counted across calls).
	Malformed map[string]int

	mu       sync.Mutex
	verifyN  int
	synthN   int
	calls    map[string]int
	searched []SearchCall
}

// SearchCall records one searcher call.
type SearchCall struct {
	SubQuestion string
	Queries     []string
}

// NewModel returns the scripted model the roles talk through: it echoes the answer the role put in its prompt,
// or a malformed one while a fault is pending. Latency simulates a remote model.
func (r *Roles) NewModel(latency time.Duration) *scripted.Model {
	info := llm.Info{Provider: "scripted", Name: "scripted-research", Price: llm.Price{Input: 1, Output: 4}}
	var opts []scripted.Option
	if latency > 0 {
		opts = append(opts, scripted.WithLatency(latency))
	}
	r.Model = scripted.New(info, r.reply, opts...)
	return r.Model
}

const answerMark = "\nANSWER:\n"

// schemaMark starts the JSON Schema llmroles.RunRole appends to every prompt.
const schemaMark = "\n\nReply with a single JSON"

func (r *Roles) reply(_ context.Context, req *llm.Request) (*llm.Response, error) {
	var first string
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser {
			first = m.Content
			break
		}
	}
	role := ""
	if i := strings.Index(first, "ROLE: "); i >= 0 {
		role = strings.Fields(first[i+6:])[0]
	}
	i := strings.Index(first, answerMark)
	if i < 0 {
		return nil, errors.New("researchtest: prompt has no scripted answer")
	}
	answer, _, _ := strings.Cut(first[i+len(answerMark):], schemaMark) // the schema RunRole appends
	r.mu.Lock()
	bad := r.Malformed[role] > 0
	if bad {
		r.Malformed[role]--
	}
	r.mu.Unlock()
	if bad {
		return scripted.Reply("Sure! Here is the JSON you asked for: {\"oops\": [1, 2,"), nil
	}
	return scripted.Reply("```json\n" + answer + "\n```"), nil
}

// Set returns the role set for research.Config.
func (r *Roles) Set() research.Roles {
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	return research.Roles{Engine: "scripted", Planner: planner{r}, Searcher: searcher{r}, Analyst: analyst{r},
		Verifier: verifier{r}, Synthesizer: synthesizer{r}}
}

// Calls returns how many times each role was called.
func (r *Roles) Calls() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.calls {
		out[k] = v
	}
	return out
}

// Searches returns every searcher call in order.
func (r *Roles) Searches() []SearchCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]SearchCall(nil), r.searched...)
}

func (r *Roles) count(role string) {
	r.mu.Lock()
	r.calls[role]++
	r.mu.Unlock()
}

// ask sends the decided answer through an agent on the scripted model and decodes what comes back.
func ask[T any](ctx context.Context, r *Roles, role, key string, answer any) (T, error) {
	var zero T
	r.count(role)
	if r.Fail != nil {
		if err := r.Fail(role, key); err != nil {
			return zero, err
		}
	}
	if r.Delay != nil {
		if d := r.Delay(role, key); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return zero, ctx.Err()
			case <-t.C:
			}
		}
	}
	b, err := json.Marshal(answer)
	if err != nil {
		return zero, err
	}
	prompt := "ROLE: " + role + "\nKEY: " + key + answerMark + string(b)
	var model llm.Model = r.Model
	if r.Ledger != nil {
		model = llm.Metered(model, r.Ledger, role)
	}
	return llmroles.RunRole[T](ctx, llmroles.RoleSpec{Name: role, Model: model,
		System: "You are the " + role + " of a research team. Answer in JSON.", Logger: slog.New(slog.DiscardHandler)}, prompt)
}

type planner struct{ r *Roles }

func (p planner) Plan(ctx context.Context, question string) (*research.Plan, error) {
	plan := p.r.Plan
	plan.Question = question
	out, err := ask[research.Plan](ctx, p.r, "planner", "", plan)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

type searcher struct{ r *Roles }

func (s searcher) Search(ctx context.Context, sq research.SubQuestion, queries []string) ([]research.Candidate, error) {
	s.r.mu.Lock()
	s.r.searched = append(s.r.searched, SearchCall{SubQuestion: sq.ID, Queries: append([]string(nil), queries...)})
	s.r.mu.Unlock()
	per := s.r.PerQuery
	if per <= 0 {
		per = 10
	}
	var cands []research.Candidate
	for _, q := range queries {
		for _, res := range s.r.Site.Search(q, per) {
			cands = append(cands, research.Candidate{Result: res, SubQuestion: sq.ID, Query: q})
		}
	}
	if cands == nil {
		cands = []research.Candidate{}
	}
	return ask[[]research.Candidate](ctx, s.r, "searcher", sq.ID, cands)
}

type analyst struct{ r *Roles }

func (a analyst) Analyze(ctx context.Context, sq research.SubQuestion, doc *sources.Document) ([]research.Evidence, error) {
	per := a.r.PerSource
	if per <= 0 {
		per = 3
	}
	items := []research.Evidence{}
	for _, line := range strings.Split(doc.Text, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, s := range publish.SplitSentences(line) {
			if len(items) >= per {
				break
			}
			if len([]rune(lexical.NormalizeSpace(s))) < publish.MinQuoteRunes {
				continue
			}
			items = append(items, research.Evidence{SubQuestion: sq.ID, Claim: s, Quote: s, Source: doc.URL, Confidence: 0.8})
		}
	}
	if a.r.Invent != nil && a.r.Invent(doc.URL) {
		items = append(items, research.Evidence{SubQuestion: sq.ID, Claim: "An invented fact.",
			Quote: "This sentence appears nowhere in the source text at all.", Source: doc.URL, Confidence: 0.9})
	}
	return ask[[]research.Evidence](ctx, a.r, "analyst", doc.URL, items)
}

type verifier struct{ r *Roles }

func (v verifier) Verify(ctx context.Context, plan *research.Plan, pool []research.Evidence) (*research.Verdict, error) {
	v.r.mu.Lock()
	v.r.verifyN++
	n := v.r.verifyN
	v.r.mu.Unlock()
	verdict := research.Verdict{Pass: true}
	if v.r.Verify != nil {
		verdict = v.r.Verify(n, plan, pool)
	}
	out, err := ask[research.Verdict](ctx, v.r, "verifier", "", verdict)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

type synthesizer struct{ r *Roles }

func (s synthesizer) Synthesize(ctx context.Context, in research.SynthesisInput) (*research.Draft, error) {
	s.r.mu.Lock()
	s.r.synthN++
	n := s.r.synthN
	s.r.mu.Unlock()
	md := ""
	if s.r.Synthesize != nil {
		md = s.r.Synthesize(n, in)
	} else {
		md = CiteAll(in)
	}
	type draft struct {
		Markdown string `json:"markdown"`
	}
	out, err := ask[draft](ctx, s.r, "synthesizer", "", draft{md})
	if err != nil {
		return nil, err
	}
	return &research.Draft{Markdown: out.Markdown}, nil
}

// CiteAll writes a draft with a section per sub-question and one sentence per accepted evidence item, each
// citing its item.
func CiteAll(in research.SynthesisInput) string {
	var b strings.Builder
	b.WriteString("# " + in.Plan.Question + "\n\n")
	for _, sq := range in.Plan.SubQuestions {
		b.WriteString("## " + sq.Question + "\n\n")
		for _, e := range in.Evidence {
			if e.SubQuestion == sq.ID {
				claim := strings.TrimRight(strings.TrimSpace(e.Claim), ".")
				fmt.Fprintf(&b, "%s [%s].\n", claim, e.ID)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
