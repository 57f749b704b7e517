package research

import (
	"context"

	"github.com/deepresearch/deepresearch/sources"
)

// SubQuestion is one facet of the research question, produced by the planner.
type SubQuestion struct {
	ID          string   `json:"id"` // "q1", "q2", …
	Question    string   `json:"question"`
	Queries     []string `json:"queries"`                // query variants for search
	SourceTypes []string `json:"source_types,omitempty"` // expected kinds of source (docs, papers, news, …)
	Criteria    string   `json:"criteria,omitempty"`     // what evidence would answer it
}

// Plan is the Scope stage's output.
type Plan struct {
	Question     string        `json:"question"`
	Language     string        `json:"language"` // BCP-47-ish code of the question ("en", "zh"); the report is written in it
	SubQuestions []SubQuestion `json:"sub_questions"`
	// Depth is the depth the run used (a row of Depths) and DepthReason why: asked for, or the planner's triage.
	Depth       string `json:"depth,omitempty"`
	DepthReason string `json:"depth_reason,omitempty"`
}

// Candidate is a search hit picked for reading.
type Candidate struct {
	sources.Result
	SubQuestion string `json:"sub_question"`
	Query       string `json:"query"`
}

// Evidence status values.
const (
	StatusAccepted = "accepted"
	StatusRejected = "rejected"
)

// Evidence is one grounded item of the evidence pool: a claim and the verbatim quote from a source that supports
// it.
type Evidence struct {
	ID          string  `json:"id"` // "e1", "e2", … assigned by the pool
	SubQuestion string  `json:"sub_question"`
	Claim       string  `json:"claim"`
	Quote       string  `json:"quote"`  // verbatim from the fetched text
	Source      string  `json:"source"` // URL or file anchor (file:///path#L3-L9)
	Title       string  `json:"title,omitempty"`
	Confidence  float64 `json:"confidence"`
	Round       int     `json:"round"`
	Status      string  `json:"status"`
	Reason      string  `json:"reason,omitempty"` // why it was rejected
}

// Gap is something the verifier found missing, routed back to search for one sub-question.
type Gap struct {
	SubQuestion string   `json:"sub_question"`
	Missing     string   `json:"missing"`
	Queries     []string `json:"queries"`
}

// Rejection is the verifier's refusal of one evidence item.
type Rejection struct {
	EvidenceID string `json:"evidence_id"`
	Reason     string `json:"reason"`
}

// Conflict records sources that disagree.
type Conflict struct {
	SubQuestion string   `json:"sub_question"`
	Description string   `json:"description"`
	EvidenceIDs []string `json:"evidence_ids"`
}

// Verdict is the Adversarial Verify stage's output.
type Verdict struct {
	Pass      bool        `json:"pass"`
	Gaps      []Gap       `json:"gaps"`
	Rejected  []Rejection `json:"rejected"`
	Conflicts []Conflict  `json:"conflicts"`
	Notes     string      `json:"notes,omitempty"`
}

// SynthesisInput is what the synthesizer sees: only accepted evidence, never conversation history.
type SynthesisInput struct {
	Plan     *Plan
	Evidence []Evidence
	Verdict  *Verdict
	// Problems lists what the integrity check refused in the previous draft; empty on the first attempt.
	Problems []string
	// CutShort explains why the run stopped early (budget fuse, time), empty otherwise.
	CutShort string
	// Words is the report length asked for, in words (0: none); Instructions are the person's words about
	// audience, focus and what to leave out.
	Words        int
	Instructions string
}

// Draft is the synthesizer's Markdown. It cites evidence by id in square brackets — "[e3]" or "[e3, e7]" — which
// the report renderer turns into numbered citations through the citation map.
type Draft struct {
	Markdown string
	// Loops counts the drafts of this synthesis (its re-asks included) that had fallen into a loop — repeating
	// themselves until the output limit — and were stopped rather than continued.
	Loops int
	// Repeats counts the sentences removed from the draft because they repeated an earlier one.
	Repeats int
	// NotCovered marks a draft that answers that the sources do not cover the question (a "not covered" line and
	// no citation): the report publishes it as it is instead of listing the run's evidence in its place, which is
	// what a draft none of whose sentences could be published gets.
	NotCovered bool
}

// Planner decomposes the question (Scope stage). Implementations are safe for concurrent use.
type Planner interface {
	Plan(ctx context.Context, question string) (*Plan, error)
}

// PlanRequest is what a planner is asked: the question and how the person steering the run wants it planned.
type PlanRequest struct {
	Question string
	// Depth is the depth asked for. DepthAuto asks the planner to triage the question first — set Plan.Depth to
	// one of quick, standard or deep and Plan.DepthReason to why — and to plan within that depth's range.
	Depth string
	// MinSubQuestions to MaxSubQuestions and MaxQueries are the fixed depth's range (zero with DepthAuto).
	MinSubQuestions, MaxSubQuestions, MaxQueries int
	// Words is the report length asked for (0: none); Instructions the person's words about audience and focus.
	Words        int
	Instructions string
	// Clarifications are the questions the planner asked the person before planning, with their answers.
	Clarifications []Clarification
	// Earlier, in a follow-up run, is what the earlier run asked and found: plan only what it does not cover.
	Earlier *EarlierFindings
}

// Clarification is one question put to the person before planning, and the answer (empty: not answered).
type Clarification struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// RequestPlanner is a Planner that honours a PlanRequest: depth triage, length, instructions, clarifications.
// A Planner without it is asked the bare question and triages nothing (an auto run then uses standard).
type RequestPlanner interface {
	PlanRequest(ctx context.Context, req PlanRequest) (*Plan, error)
}

// MaxClarifications bounds the questions a planner may ask before planning.
const MaxClarifications = 3

// Clarifier is a Planner that can tell an ambiguous question (which product, which period, which audience?) and
// ask the person about it before planning: it returns at most MaxClarifications short questions, none when the
// question is clear.
type Clarifier interface {
	Clarify(ctx context.Context, req PlanRequest) ([]string, error)
}

// Searcher finds candidate sources for one sub-question (Parallel Search stage). When some of its sources fail
// and others answer, it returns the candidates found together with the error: the graph keeps the candidates
// and reports the error in the research log and as an EventError.
type Searcher interface {
	Search(ctx context.Context, sq SubQuestion, queries []string) ([]Candidate, error)
}

// Analyst extracts evidence from one fetched source (Fetch & Read stage). Quotes it returns are checked
// verbatim against doc.Text by the graph; ungrounded ones never enter the pool.
type Analyst interface {
	Analyze(ctx context.Context, sq SubQuestion, doc *sources.Document) ([]Evidence, error)
}

// Verifier judges the whole pool (Adversarial Verify stage).
type Verifier interface {
	Verify(ctx context.Context, plan *Plan, pool []Evidence) (*Verdict, error)
}

// Synthesizer writes the report (Synthesize stage).
type Synthesizer interface {
	Synthesize(ctx context.Context, in SynthesisInput) (*Draft, error)
}

// PlanKnower is implemented by a role that uses the run's plan beyond the call in hand (the language-model analyst
// asks each read about every sub-question, so that a window is read once for all of them). A session — a step
// run apart from the scope step, as a durable run's activity is — hands such a role the plan it read from the
// state, as the planner's own call does in a run in one process.
type PlanKnower interface {
	KnowPlan(plan *Plan)
}

// Role names: the configuration's roles: map gives each a model tier, and a graph step that calls a role's
// model (Step.Role) runs on that tier.
const (
	RolePlanner     = "planner"
	RoleSearcher    = "searcher"
	RoleAnalyst     = "analyst"
	RoleVerifier    = "verifier"
	RoleSynthesizer = "synthesizer"
)

// Roles is one complete set of role implementations; the graph is the same whichever set runs it.
type Roles struct {
	// Engine names the set ("llm", "extractive"); it is shown in progress and the report header.
	Engine      string
	Planner     Planner
	Searcher    Searcher
	Analyst     Analyst
	Verifier    Verifier
	Synthesizer Synthesizer
}
