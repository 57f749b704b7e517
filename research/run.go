package research

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/sources"
)

// Budget bounds one run. The zero value of every field means its default.
type Budget struct {
	// MaxCostUSD is the cost fuse in US dollars, read from the Ledger; 0 means no cost fuse.
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
	// MaxTokens is the token fuse (input + output, from the Ledger); 0 means no token fuse.
	MaxTokens int `json:"max_tokens,omitempty"`
	// MaxTime is the wall-time fuse for search and reading; 0 means none. When it passes, in-flight searches
	// and reads are abandoned and the run goes to synthesis, which gets StageTimeout of its own.
	MaxTime time.Duration `json:"max_time,omitempty"`
	// StageTimeout bounds each stage of each round (scope, search, read, verify, synth); default 10 minutes.
	StageTimeout time.Duration `json:"stage_timeout,omitempty"`
	// Concurrency bounds role calls in flight across the whole run (the fleet bound); default 16.
	Concurrency int `json:"concurrency,omitempty"`
	// MaxCalls caps role calls per run; default 1000. Calls past the cap fail at once with ErrCallCap.
	MaxCalls int `json:"max_calls,omitempty"`
	// Retries is how many times a failed role call is tried again; default 1. Negative means no retry.
	Retries int `json:"retries,omitempty"`
	// SynthRetries is how many times the synthesizer is asked again with the integrity problems of its draft
	// before the failing sentences are removed; default 1 (an unsupported sentence is revised once, then
	// removed). Negative means none.
	SynthRetries int `json:"synth_retries,omitempty"`
}

// Config configures one run. Zero fields take the documented defaults.
type Config struct {
	// Question is the research question. Required for Run; Resume reads it from the run folder.
	Question string
	// Roles is the engine: one complete set of role implementations. Required.
	Roles Roles
	// Fetcher reads the candidates the searchers found. Required.
	Fetcher sources.Fetcher
	// RunID names the run; default the name of OutDir when one is given, else a time-based id such as
	// 20260102-150405-a1b2c3.
	RunID string
	// OutDir is the run folder; default runs/<RunID>.
	OutDir string
	Budget Budget
	// Rounds is how many extra directed re-search rounds the verifier may ask for; default 2. Negative means none.
	Rounds int
	// MaxCandidates is how many reads the collector picks per round; default 30. A read is one analyst call: a
	// source analysed for one sub-question. A source found by several sub-questions is read for each of them
	// (counting once per sub-question here) but fetched only once, so a round fetches at most MaxCandidates
	// sources and makes at most MaxCandidates analyst calls (plus retries).
	MaxCandidates int
	// BatchSize bounds reads in flight (one analyst per source and sub-question), inside the fleet bound;
	// default 8.
	BatchSize int
	// EarlyStopWindow: reading for a sub-question stops when its last EarlyStopWindow new evidence items added
	// no new claim; default 10. Negative disables early stopping.
	EarlyStopWindow int
	// Ledger is where the roles record their spend; the cost fuse reads it. Nil means a fresh ledger (then
	// only roles that record into the same ledger are seen by the fuse).
	Ledger *llm.Ledger
	// OnEvent receives every progress event, in order. It is called from one goroutine at a time, but it must be
	// safe for concurrent use with the caller's own goroutines and must not block for long.
	OnEvent func(Event)
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
	// Secrets are values (API keys) that must never be stored or emitted: they are removed from every event
	// message and research-log entry, as are secret-shaped tokens (bearer tokens, sk-… keys, key=… parameters).
	Secrets []string
	// Unjudged decides what happens to a sentence the support judge gave no verdict on, after it was asked
	// again: UnjudgedRemove (the default; the report publishes only what the judge found supported) or
	// UnjudgedKeep (kept, visibly marked). Without a judge it has no effect.
	Unjudged string
	// Depth is how much research the question gets: DepthQuick, DepthStandard (the default), DepthDeep — rows of
	// one table (Depths) setting sub-questions, queries, candidates, reads, rounds and the default token fuse
	// together — or DepthAuto: the planner triages the question and chooses. The report says which and why.
	Depth string
	// Length is the report's length: LengthBrief, LengthStandard, LengthLong or a number of words; empty leaves it
	// to the synthesizer. The integrity check is the same at every length: when the grounded evidence is short
	// of the length asked for, the report says so rather than pad.
	Length string
	// Instructions are the person's words about audience, focus and what to leave out, shown to the planner and
	// the synthesizer (at most MaxInstructionRunes).
	Instructions string
	// Plan, when set, is the run's plan (a plan file): the planner is not asked. Its sub-questions are checked
	// and repaired as a planner's are.
	Plan *Plan
	// ReviewPlan, when set, is shown the plan before anything is searched and returns the plan to research —
	// the same, edited, with sub-questions dropped or added — or an error, which ends the run (its folder keeps
	// nothing to resume). It is not called on resume: the reviewed plan is stored.
	ReviewPlan func(ctx context.Context, p *Plan) (*Plan, error)
	// Clarify, when set, lets the planner ask the person at most MaxClarifications short questions before it
	// plans an ambiguous question (a Clarifier planner); it returns the answers, in order ("" for one left
	// unanswered). Questions and answers go to the research log. An error wrapping ErrUnanswered (no answers in
	// the time the surface waits) plans without answers; any other error ends the run.
	Clarify func(ctx context.Context, questions []string) ([]string, error)
	// From, when set, is the folder of a finished run this one follows up: its documents and accepted evidence
	// are carried into the new run (the earlier run is only read), the planner is told what it found, and the
	// report links it (see followup.go). Resume refuses it: a follow-up remembers the run it follows.
	From string
	// Settings are opaque key/values stored with the run (for example which sources were configured) so a
	// surface can rebuild the same roles on resume; see LoadRunInfo.
	Settings map[string]string
}

// What happens to sentences the support judge gave no verdict on (Config.Unjudged).
const (
	UnjudgedRemove = "remove"
	UnjudgedKeep   = "keep"
)

// CheckUnjudged refuses an Unjudged choice other than "", UnjudgedRemove and UnjudgedKeep.
func CheckUnjudged(v string) error {
	switch v {
	case "", UnjudgedRemove, UnjudgedKeep:
		return nil
	}
	return fmt.Errorf("%w: unjudged %q: give %s or %s", ErrBadInput, v, UnjudgedRemove, UnjudgedKeep)
}

// Stage names, as written in the research log and events.
const (
	StageScope  = "scope"
	StageSearch = "search"
	StageRead   = "read"
	StageVerify = "verify"
	StageSynth  = "synth"
	// StageIndex marks events about indexing a local corpus before the run starts searching.
	StageIndex = "index"
	// StageRun marks events about the run as a whole (start, cut short, done).
	StageRun = "run"
)

// Event kinds.
const (
	EventRunStart    = "run_start"
	EventRunDone     = "run_done"
	EventRunFailed   = "run_failed"
	EventRunStopped  = "run_stopped" // the caller cancelled the run; its folder can be resumed
	EventStageStart  = "stage_start"
	EventStageDone   = "stage_done"
	EventPlan        = "plan"
	EventClarify     = "clarify"     // the planner asks the person (Message: the questions, one a line)
	EventUnanswered  = "unanswered"  // the person gave no answers in time (ErrUnanswered); Message says why
	EventSearch      = "search"      // one sub-question searched (Count = hits)
	EventCandidates  = "candidates"  // the collector picked (Count = picked)
	EventRead        = "read"        // one source read (Count = evidence accepted from it)
	EventSkip        = "skip"        // a source not read (early stop, fuse, duplicate) — Message says why
	EventEvidence    = "evidence"    // an evidence item entered the pool
	EventUngrounded  = "ungrounded"  // an evidence item refused: quote not in the fetched text
	EventInstruction = "instruction" // an evidence item refused: its quote addresses the reader or the model
	EventEarlyStop   = "early_stop"  // reading for a sub-question stopped
	EventVerdict     = "verdict"
	EventResearch    = "research"  // directed re-search for the gapped sub-questions
	EventIntegrity   = "integrity" // the integrity check refused parts of a draft
	EventCutShort    = "cut_short"
	EventError       = "error" // a role call or fetch failed (after retries); never silent
	EventRetry       = "retry"
	// EventOutage: something the run depends on (the state store, the durable engine) cannot be reached; its
	// steps are tried again. Message says what, Err the failure; a Message without Err says it is back.
	EventOutage      = "outage"
	EventSpend       = "spend"
	EventResumed     = "resumed"
	EventReportReady = "report"
)

// EventIndexProgress reports corpus indexing before a run searches: Count files done of Total.
const EventIndexProgress = "index_progress"

// Progress is a snapshot of the run's counters, carried by every event so displays need no state of their own.
type Progress struct {
	Round        int     `json:"round"`
	SubQuestions int     `json:"sub_questions"`
	Searches     int     `json:"searches"`
	Candidates   int     `json:"candidates"`
	SourcesRead  int     `json:"sources_read"`
	ReadsPending int     `json:"reads_pending"`
	Evidence     int     `json:"evidence"`
	Rejected     int     `json:"rejected"`
	Calls        int     `json:"calls"`
	InFlight     int     `json:"in_flight"`
	Tokens       int     `json:"tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// Event is one step of a run. Every event is appended to events.jsonl in the run folder (the run's time-travel
// record) and passed to Config.OnEvent.
type Event struct {
	Seq         int64     `json:"seq"`
	Time        time.Time `json:"time"`
	RunID       string    `json:"run_id"`
	Stage       string    `json:"stage"`
	Kind        string    `json:"kind"`
	Round       int       `json:"round,omitempty"`
	SubQuestion string    `json:"sub_question,omitempty"`
	URL         string    `json:"url,omitempty"`
	Message     string    `json:"message,omitempty"`
	Count       int       `json:"count,omitempty"`
	Total       int       `json:"total,omitempty"` // with Count, for progress (index_progress)
	Err         string    `json:"error,omitempty"`
	// Exactly one of the following is set for the kinds that carry a payload.
	Plan      *Plan      `json:"plan,omitempty"`
	Evidence  *Evidence  `json:"evidence,omitempty"`
	Candidate *Candidate `json:"candidate,omitempty"`
	Verdict   *Verdict   `json:"verdict,omitempty"`
	Progress  Progress   `json:"progress"`
}

// Citation is one numbered marker of the published report: [N] stands for these evidence items.
type Citation struct {
	N           int      `json:"n"`
	EvidenceIDs []string `json:"evidence_ids"`
}

// Conclusion is one entry of the citation map: a published sentence, the evidence it cites and their sources.
type Conclusion struct {
	ID          string   `json:"id"` // "c1", "c2", …
	Text        string   `json:"text"`
	EvidenceIDs []string `json:"evidence_ids"`
	Sources     []string `json:"sources"`
}

// SourceRef is one entry of the report's Sources list.
type SourceRef struct {
	URL         string   `json:"url"`
	Title       string   `json:"title,omitempty"`
	Citations   []int    `json:"citations"` // citation numbers that point into this source
	EvidenceIDs []string `json:"evidence_ids"`
	// Work is the bibliographic record a scholarly search provider gave for the source; nil for other sources.
	Work *sources.Work `json:"work,omitempty"`
}

// Stats summarises a run.
type Stats struct {
	Rounds           int `json:"rounds"`
	SubQuestions     int `json:"sub_questions"`
	Searches         int `json:"searches"`
	Candidates       int `json:"candidates"`
	SourcesRead      int `json:"sources_read"` // reads: (sub-question, source) pairs analysed
	FetchErrors      int `json:"fetch_errors"`
	RoleErrors       int `json:"role_errors"`
	EvidenceAccepted int `json:"evidence_accepted"`
	EvidenceRejected int `json:"evidence_rejected"`
	Ungrounded       int `json:"ungrounded"`
	EarlyStops       int `json:"early_stops"`
	// QuotesGrounded counts the quotes found verbatim in their sources: the evidence pool, accepted and
	// rejected, and the quotes refused as instructions.
	QuotesGrounded int `json:"quotes_grounded"`
	// InstructionsRefused counts grounded quotes refused as evidence because they address the reader or the
	// model (publish.InstructionLike).
	InstructionsRefused int `json:"instructions_refused"`
	SentencesRemoved    int `json:"sentences_removed"`
	// RemovedByCause counts the removed sentences by cause (CauseUnsupported, CauseUnjudged, …).
	RemovedByCause map[string]int `json:"removed_by_cause,omitempty"`
	// Judge is what the support judge said about the published draft; nil when no judge is configured.
	Judge *publish.JudgeStats `json:"judge,omitempty"`
	// SourcesUnreadable counts documents whose fetch or reading failed for good.
	SourcesUnreadable int `json:"sources_unreadable"`
	// DraftsRefused counts synthesizer drafts the integrity check sent back.
	DraftsRefused int `json:"drafts_refused"`
	// DegenerateDrafts counts synthesizer drafts stopped because they had fallen into a loop (repeating themselves
	// until the output limit) instead of being continued; RepeatedSentences counts the sentences removed from
	// drafts as repeats of earlier ones, before any judgement.
	DegenerateDrafts  int `json:"degenerate_drafts,omitempty"`
	RepeatedSentences int `json:"repeated_sentences,omitempty"`
	// FusesTripped counts the reasons the run was cut short (cost, tokens, time, call cap, stage timeouts).
	FusesTripped    int `json:"fuses_tripped"`
	SynthAttempts   int `json:"synth_attempts"`
	Calls           int `json:"calls"`
	PeakConcurrency int `json:"peak_concurrency"`
	Tokens          int `json:"tokens"`
	// TokensEstimated is the part of Tokens counted with a tokenizer because the server reported no usage.
	TokensEstimated int           `json:"tokens_estimated,omitempty"`
	CostUSD         float64       `json:"cost_usd"`
	Duration        time.Duration `json:"duration_ns"`
}

// Report is a finished run: the published Markdown and everything needed to check it. It is also report.json.
type Report struct {
	RunID    string `json:"run_id"`
	Question string `json:"question"`
	Language string `json:"language"`
	Engine   string `json:"engine"`
	// Markdown is the published report: numbered citations, a Sources list, the engine header and, when the
	// fuse fired, the cut-short note.
	Markdown string `json:"report"`
	// Citations maps each number [N] of Markdown to evidence ids.
	Citations []Citation `json:"citations"`
	// CitationMap maps each published sentence to its evidence and sources.
	CitationMap []Conclusion `json:"citation_map"`
	// Evidence is the whole pool: the accepted items (the only ones the report may cite; every one grounded)
	// and those the verifier rejected, with its reasons.
	Evidence []Evidence  `json:"evidence"`
	Sources  []SourceRef `json:"sources"`
	// CutShort says why the run stopped before its evidence was complete; empty when it was not cut short.
	CutShort string `json:"cut_short,omitempty"`
	// Removed lists the sentences the integrity check refused to publish; Removals gives each one's cause.
	Removed  []string          `json:"removed,omitempty"`
	Removals []publish.Removal `json:"removals,omitempty"`
	// Depth is the depth the run used and DepthReason why (asked for, or the planner's triage).
	Depth       string `json:"depth,omitempty"`
	DepthReason string `json:"depth_reason,omitempty"`
	// ShortOf is the length asked for, in words, when the published report fell well short of it (the
	// evidence supported no more); 0 otherwise.
	ShortOf int `json:"short_of,omitempty"`
	// Follows is the earlier run a follow-up started from and what it carried; nil for other runs.
	Follows  *FollowsRef `json:"follows,omitempty"`
	Dir      string      `json:"-"`
	Created  time.Time   `json:"created"`
	Finished time.Time   `json:"finished"`
	Stats    Stats       `json:"stats"`
}

// CitedEvidence returns the ids of the evidence items the published report cites, each once, in citation order.
// It is the "evidence cited" figure; len(r.Evidence) is the pool the run gathered.
func (r *Report) CitedEvidence() []string {
	seen := map[string]bool{}
	var ids []string
	for _, c := range r.Citations {
		for _, id := range c.EvidenceIDs {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// Run status values of RunSummary.Status.
const (
	RunRunning    = "running" // started and not finished: in progress or interrupted (resumable)
	RunDone       = "done"
	RunFailed     = "failed"
	RunStopped    = "stopped"    // cancelled by its caller; resumable as it stands
	RunUnreadable = "unreadable" // a folder with a state.db that cannot be read (corrupt, or not deepresearch's)
)

// RunSummary is one line of ListRuns.
type RunSummary struct {
	ID       string    `json:"id"`
	Dir      string    `json:"dir"`
	Question string    `json:"question"`
	Engine   string    `json:"engine"`
	Status   string    `json:"status"`
	Error    string    `json:"error,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	Evidence int       `json:"evidence"`
	CutShort string    `json:"cut_short,omitempty"`
}

// RunInfo is what a run folder remembers about how the run was started.
type RunInfo struct {
	RunSummary
	Settings map[string]string `json:"settings,omitempty"`
	Budget   Budget            `json:"budget"`
	Rounds   int               `json:"rounds"`
}

// File names inside a run folder.
const (
	ReportMarkdownFile = "report.md"
	ReportJSONFile     = "report.json"
	StateFile          = "state.db"
	EventsFile         = "events.jsonl"
	DocsDir            = "docs"
)

// Run executes the research graph for cfg.Question and writes the run folder: report.md, report.json, the SQLite
// state, per-round snapshots and events.jsonl. If ctx is cancelled the folder is left resumable and the error
// is returned; Resume continues it.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	return run(ctx, cfg, "")
}

// Resume continues an interrupted run in runDir from its last completed step, re-using its plan, search
// results, fetched documents and evidence. cfg supplies what is not stored (roles, fetcher, ledger, callbacks);
// its Question, RunID and OutDir are ignored, and zero budget fields take the stored values. Resuming a
// finished run returns its report.
func Resume(ctx context.Context, runDir string, cfg Config) (*Report, error) {
	return run(ctx, cfg, runDir)
}
