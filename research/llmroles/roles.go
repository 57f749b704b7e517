package llmroles

import (
	"log/slog"
	"sync"
	"time"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

// Role names (research's), used in errors, logs, event sessions and as keys of Config.Tools.
const (
	RolePlanner     = research.RolePlanner
	RoleSearcher    = research.RoleSearcher
	RoleAnalyst     = research.RoleAnalyst
	RoleVerifier    = research.RoleVerifier
	RoleSynthesizer = research.RoleSynthesizer
)

// Engine is the name of this role set in research.Roles.
const Engine = "llm"

// Config configures the LLM roles. Each model is the one its tier resolved to (planner, verifier and
// synthesizer strong; analyst mid; searcher fast). A nil model makes that role fail with a clear error.
type Config struct {
	Planner, Searcher, Analyst, Verifier, Synthesizer llm.Model
	// Sources are the search providers the searcher role queries.
	Sources []sources.Searcher
	// Tools are extra tools offered to a role's agent, keyed by role name (RolePlanner, …).
	Tools map[string][]agent.Tool
	// Middleware returns fresh middleware (context management) for one agent of a role; nil means none.
	Middleware func(role string) []agent.Middleware
	Observer   agent.Observer
	Logger     *slog.Logger
	Limits     Limits
	// Now is the clock that tells the roles today's date; nil means time.Now.
	Now func() time.Time
}

// Limits bounds the roles. Zero values mean the defaults in brackets.
type Limits struct {
	MinSubQuestions int // fewest sub-questions a plan may have [3]
	MaxSubQuestions int // most sub-questions kept [6]
	MaxQueries      int // most query variants kept per sub-question [4]
	// ResultsPerQuery is asked of every provider for every query [8].
	ResultsPerQuery int
	// Picks is the most candidates the searcher returns per sub-question [8].
	Picks int
	// SearchConcurrency bounds concurrent provider calls within one searcher [4].
	SearchConcurrency int
	// MaxReasks bounds re-asks after unusable answers [2]; negative means none.
	MaxReasks int
	// MaxSteps bounds model calls per attempt [8].
	MaxSteps int
	// MaxOutputTokens caps each answer [provider default].
	MaxOutputTokens int
	// WindowTokens caps the document text per analyst call [12,000, and the model's window].
	WindowTokens int
	// MaxWindows is the most windows of one document the analyst reads [8].
	MaxWindows int
	// PoolTokens caps the evidence shown to the verifier and synthesizer [the model's window].
	PoolTokens int
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MinSubQuestions, 3)
	def(&l.MaxSubQuestions, 6)
	l.MaxSubQuestions = max(l.MaxSubQuestions, l.MinSubQuestions)
	def(&l.MaxQueries, 4)
	def(&l.ResultsPerQuery, 8)
	def(&l.Picks, 8)
	def(&l.SearchConcurrency, 4)
	def(&l.MaxSteps, defaultMaxSteps)
	def(&l.WindowTokens, 12_000)
	def(&l.MaxWindows, 8)
	return l
}

// set holds the configuration shared by the five role values.
type set struct {
	cfg    Config
	lim    Limits
	logger *slog.Logger
	// unknownWindow warns once per role set about a model whose context window nobody knows.
	unknownWindow sync.Once
	// reads are the analyst's windows read so far, each sent to the model once.
	reads windowReads
}

// New returns the LLM role set. The roles are stateless between calls and safe for concurrent use: every call
// runs a fresh agent.
func New(cfg Config) research.Roles {
	s := &set{cfg: cfg, lim: cfg.Limits.withDefaults(), logger: cfg.Logger}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	return research.Roles{
		Engine:      Engine,
		Planner:     &Planner{s},
		Searcher:    &Searcher{s},
		Analyst:     &Analyst{s},
		Verifier:    &Verifier{s},
		Synthesizer: &Synthesizer{s},
	}
}

// today is the current date, told to every role: models otherwise assume their training cut-off is the present.
func (s *set) today() string {
	now := time.Now
	if s.cfg.Now != nil {
		now = s.cfg.Now
	}
	return now().UTC().Format("2006-01-02")
}

func (s *set) spec(role string, m llm.Model, system string) RoleSpec {
	var mw []agent.Middleware
	if s.cfg.Middleware != nil {
		mw = s.cfg.Middleware(role)
	}
	// Every role is told the date: models otherwise take their training cut-off for the present.
	system += "\nToday's date is " + s.today() + "."
	return RoleSpec{
		Name: role, Model: m, System: system, Tools: s.cfg.Tools[role], Middleware: mw,
		MaxSteps: s.lim.MaxSteps, MaxReasks: s.cfg.Limits.MaxReasks, MaxTokens: s.lim.MaxOutputTokens,
		Observer: s.cfg.Observer, Logger: s.logger,
	}
}
