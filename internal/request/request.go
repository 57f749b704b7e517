// Package request is the one way every surface starts research: `deepresearch run` and `resume`, the web viewer
// (`serve`), the MCP server's deep_research tool and chat's /deep-research all describe a run as a Research and
// hand it to a Builder, which turns it into a research.Config — engine, searchers, fetcher, budget, rounds,
// resume settings — with the configuration's values filling whatever the request leaves zero. A source, limit or
// engine option added here therefore works the same on every surface.
package request

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
)

// MaxCorpora bounds the corpus folders one request may name.
const MaxCorpora = 16

// Settings keys stored with a run, so that a resume rebuilds the same sources and engine.
const (
	SettingWeb    = "web"
	SettingCorpus = "corpus"
	SettingMCP    = "mcp"
	SettingEngine = "engine"
	// SettingFollowLinks is "true" when the corpus folders were indexed following symbolic links out of them.
	SettingFollowLinks = "follow_links"
)

// Engine choices. EngineAuto picks the language-model roles when a model is configured, the extractive roles
// otherwise.
const (
	EngineAuto = "auto"
)

// Research is one research run as any surface asks for it. Zero fields take the configuration's values, then the
// research package's defaults.
type Research struct {
	// Question is the research question; required unless ResumeDir is set.
	Question string `json:"question,omitempty"`
	// Corpora are local corpus folders or index directories to search.
	Corpora []string `json:"corpora,omitempty"`
	// FollowLinks follows symbolic links out of the corpus folders indexed
	// for the run; by default they are skipped and counted.
	FollowLinks bool `json:"follow_links,omitempty"`
	// Web names the search providers, comma-separated ("tavily", "arxiv,openalex"; see websearch.Names).
	Web string `json:"web,omitempty"`
	// MCPFile is a .mcp.json file whose servers' search tools are searched.
	MCPFile string `json:"mcp_file,omitempty"`
	// Engine is auto, llm or extractive; empty means the configured engine.
	Engine string `json:"engine,omitempty"`
	// Budget: zero fields take the configuration's research limits.
	Budget research.Budget `json:"budget"`
	// Rounds is how many directed re-search rounds the verifier may ask for: 0 means the configured number,
	// negative means none.
	Rounds int `json:"rounds,omitempty"`
	// MaxCandidates is how many reads the collector picks per round; 0 means the configured number.
	MaxCandidates int `json:"max_candidates,omitempty"`
	// Unjudged is what happens to a sentence the support judge gave no verdict on: research.UnjudgedRemove or
	// research.UnjudgedKeep (kept, marked); empty means the configured choice, else remove.
	Unjudged string `json:"unjudged,omitempty"`
	// Depth is quick, standard, deep or auto (the planner triages the question; the default with a model);
	// empty means the configured depth, else auto with a model and standard without (research.Config.Depth).
	Depth string `json:"depth,omitempty"`
	// Length is the report's length: brief, standard, long or a number of words; empty means the configured
	// length, else none asked for (research.Config.Length).
	Length string `json:"length,omitempty"`
	// Instructions are the person's words about audience, focus and what to leave out.
	Instructions string `json:"instructions,omitempty"`
	// Plan, when set, is the plan to research (a plan file); the planner is not asked.
	Plan *research.Plan `json:"plan,omitempty"`
	// RunID and OutDir name the run and its folder; empty means a new id under the Builder's RunsDir.
	RunID  string `json:"run_id,omitempty"`
	OutDir string `json:"out_dir,omitempty"`
	// From, when set, makes the run a follow-up of a finished run: a run id (or unique prefix) in the Builder's
	// RunsDir, or a run folder. Its documents and evidence are carried over (research.Config.From). Surfaces
	// that serve remote clients accept an id only (CheckRunID).
	From string `json:"from,omitempty"`
	// ResumeDir, when set, continues the run in that folder: its question, sources and engine are the ones it
	// recorded, and the sources above are ignored.
	ResumeDir string `json:"resume_dir,omitempty"`
	// ReviewPlan and Clarify, when set, ask the person about the plan and the question (research.Config):
	// surfaces that can ask someone set them — a terminal, an MCP client that offers elicitation.
	ReviewPlan func(ctx context.Context, p *research.Plan) (*research.Plan, error) `json:"-"`
	Clarify    func(ctx context.Context, questions []string) ([]string, error)     `json:"-"`
	// OnEvent receives every progress event (research.Config.OnEvent).
	OnEvent func(research.Event) `json:"-"`
	// Ledger records the run's model spend; nil means a fresh one.
	Ledger *llm.Ledger `json:"-"`
}

// HasSources reports whether the request names any source.
func (r Research) HasSources() bool {
	return len(r.Corpora) > 0 || r.Web != "" || r.MCPFile != ""
}

// Named returns r with a run id: its own, or a new one when it names neither an id nor a folder (whose name is
// the run's id). It is the one place a run id is made for a request.
func (r Research) Named() Research {
	if r.ResumeDir == "" && r.OutDir == "" && r.RunID == "" {
		r.RunID = research.NewRunID()
	}
	return r
}

// Validate refuses a request no surface may start: an empty or over-long question (unless resuming), limits that
// cannot mean anything, too many corpus folders. It is the one check every surface shares; the messages name the
// field, not a flag, so each surface can show them as they are.
func (r Research) Validate() error {
	var errs []error
	if r.ResumeDir == "" {
		if err := research.CheckQuestion(r.Question); err != nil {
			errs = append(errs, err)
		}
	}
	if err := r.Budget.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := research.CheckRounds(r.Rounds); err != nil {
		errs = append(errs, err)
	}
	if err := research.CheckUnjudged(r.Unjudged); err != nil {
		errs = append(errs, err)
	}
	if err := research.CheckDepth(r.Depth); err != nil {
		errs = append(errs, err)
	}
	if err := research.CheckLength(r.Length); err != nil {
		errs = append(errs, err)
	}
	if err := research.CheckInstructions(r.Instructions); err != nil {
		errs = append(errs, err)
	}
	if r.From != "" && r.ResumeDir != "" {
		errs = append(errs, fmt.Errorf("%w: a resumed run keeps the run it follows; from applies to a new run only", research.ErrBadInput))
	}
	if r.MaxCandidates < 0 {
		errs = append(errs, fmt.Errorf("%w: max candidates %d is negative (0 means the default)", research.ErrBadInput, r.MaxCandidates))
	}
	if len(r.Corpora) > MaxCorpora {
		errs = append(errs, fmt.Errorf("%w: %d corpus folders; the limit is %d", research.ErrBadInput, len(r.Corpora), MaxCorpora))
	}
	for _, c := range r.Corpora {
		if strings.TrimSpace(c) == "" {
			errs = append(errs, fmt.Errorf("%w: an empty corpus path", research.ErrBadInput))
			break
		}
	}
	return errors.Join(errs...)
}

// CheckRunID refuses a run reference that is not a plain run id (or prefix): the form a remote client (the web
// viewer's form, an MCP client) may name a run by, so that it cannot point the server at a folder of its choice.
func CheckRunID(id string) error {
	id = strings.TrimSpace(id)
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`) || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) || len(id) > 200 {
		return fmt.Errorf("%w: from %q: give the id of a run", research.ErrBadInput, id)
	}
	return nil
}
