// Package extractive implements the five research roles with no language model at all: a planner that
// decomposes the question by its grammar (question words, conjunctions, key phrases), searchers over the
// configured sources, analysts that pick evidence sentences by BM25 relevance with MMR for diversity and quote
// them verbatim, a verifier that measures coverage, flags conflicts and names gaps with reformulated queries, and
// a synthesizer that writes a structured report in which every sentence cites its evidence.
//
// It is to the LLM roles what SQLite is to PostgreSQL: smaller, honest and real. It runs on the same graph
// (research.Run) with the same state tables, snapshots, budget and resume, needs no API key and works on
// Chinese questions and documents as well as English ones.
package extractive

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/deepresearch/deepresearch/lexical/synonyms"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

// Engine is the Roles.Engine name of this package's roles.
const Engine = "extractive"

// Banner is the plain statement, in the report header, of what produced the report.
const Banner = "extractive mode — no language model"

// Config configures the extractive roles. The zero value of every field except Searchers means its default.
type Config struct {
	// Searchers are the sources searched for every sub-question (the local corpus index, web providers).
	Searchers []sources.Searcher
	// PerQuery is how many results are asked of each searcher for each query; default 8.
	PerQuery int
	// MaxCandidates caps the candidates one sub-question's search returns; default 10.
	MaxCandidates int
	// EvidencePerSource caps the evidence items an analyst takes from one source; default 4.
	EvidencePerSource int
	// MinEvidence is how many grounded items a sub-question needs to count as covered; default 2.
	MinEvidence int
	// MinSources is how many independent sources (distinct documents) a covered sub-question should draw on
	// when the sources have them; default 2.
	MinSources int
	// MinConfidence is the analyst's floor: sentences covering less of the sub-question's terms (IDF-weighted)
	// are not evidence; default 0.45.
	MinConfidence float64
	// MaxSubQuestions bounds the plan; default 5 (the planner always makes at least 3).
	MaxSubQuestions int
	// SectionItems caps the evidence quoted in one sub-question's section of the report; default 5.
	SectionItems int
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.PerQuery, 8)
	def(&c.MaxCandidates, 10)
	def(&c.EvidencePerSource, 4)
	def(&c.MinEvidence, 2)
	def(&c.MinSources, 2)
	def(&c.MaxSubQuestions, 5)
	def(&c.SectionItems, 5)
	if c.MaxSubQuestions < 3 {
		c.MaxSubQuestions = 3
	}
	if c.MinConfidence <= 0 {
		c.MinConfidence = 0.45
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// New returns the five extractive roles sharing cfg. The roles are safe for concurrent use and may serve many
// runs.
func New(cfg Config) research.Roles {
	cfg = cfg.withDefaults()
	sections := &sectionMemo{}
	vocab := newVocabulary(cfg.Searchers)
	return research.Roles{
		Engine:      Engine,
		Planner:     &Planner{cfg: cfg, vocab: vocab},
		Searcher:    &Searcher{cfg: cfg},
		Analyst:     &Analyst{cfg: cfg, sections: sections, vocab: vocab, syn: synonyms.Embedded()},
		Verifier:    &Verifier{cfg: cfg, vocab: vocab, asked: map[askKey]int{}},
		Synthesizer: &Synthesizer{cfg: cfg, sections: sections, vocab: vocab, syn: synonyms.Embedded()},
	}
}

// Verifier judges the evidence pool without a model; see Verify.
type Verifier struct {
	cfg   Config
	vocab *vocabulary // which documents repeat others (copies, aggregates); nil: none known

	mu sync.Mutex
	// asked counts, per run (its plan) and sub-question, how often a gap was already routed back to search, so a
	// sub-question the sources cannot cover better is accepted instead of re-searched for ever. Keyed by the
	// run's plan, not its question text: the same question asked again is a new run with the same rounds.
	asked map[askKey]int
}

type askKey struct {
	plan *research.Plan
	sq   string
}

// maxSections bounds the section memo; past it the memo starts afresh (an item whose section is forgotten is
// judged by its own words and title only).
const maxSections = 1 << 14

// sectionMemo remembers, for each evidence item the analyst quoted (by document and quote), the section headings
// it stands under, so the synthesizer can tell what an item is about when its sentence does not repeat the
// heading ("A send on a channel …" under "Channel communication" in "The Go Memory Model").
type sectionMemo struct {
	mu sync.Mutex
	m  map[string]memoEntry // by memoKey
}

// memoEntry is what the memo knows of one item: its headings (with the lead sentence it stands under, if any) and
// its position in its section (0 for the section's first passage, -1 when unknown).
type memoEntry struct {
	heads string
	at    int
}

// memoKey identifies an item in the memo: its document and its quote.
func memoKey(source, quote string) string { return docKey(source) + "\x00" + quote }

// put remembers an item's section headings and its position in its section, at (negative when unknown).
func (s *sectionMemo) put(source, quote, heads string, at int) {
	if s == nil || heads == "" && at < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= maxSections {
		s.m = map[string]memoEntry{}
	}
	s.m[memoKey(source, quote)] = memoEntry{heads: heads, at: max(at, -1)}
}

// at is the item's position in its section (0 for the first passage), -1 when unknown.
func (s *sectionMemo) at(source, quote string) int {
	if s == nil {
		return -1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[memoKey(source, quote)]; ok {
		return e.at
	}
	return -1
}

// section is the headings alone, without the lead sentence an item may stand under (see leadSentence): the
// identity of the item's section.
func (s *sectionMemo) section(source, quote string) string {
	h, _, _ := strings.Cut(s.get(source, quote), "\n")
	return h
}

func (s *sectionMemo) get(source, quote string) string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[memoKey(source, quote)].heads
}
