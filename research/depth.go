package research

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research/state"
)

// Depth names, the values of Config.Depth. DepthAuto lets the planner triage the question and choose one of the
// other three; an empty Depth means DepthStandard.
const (
	DepthAuto     = "auto"
	DepthQuick    = "quick"
	DepthStandard = "standard"
	DepthDeep     = "deep"
)

// DepthSettings is one row of the depth table: how much research a question of that depth gets. Every figure
// is a default: a limit the caller sets itself (Config.Rounds, Config.MaxCandidates, Budget.MaxTokens) wins.
type DepthSettings struct {
	Name string `json:"name"`
	// MinSubQuestions to MaxSubQuestions is the planner's range; a plan past the maximum is trimmed.
	MinSubQuestions int `json:"min_sub_questions"`
	MaxSubQuestions int `json:"max_sub_questions"`
	// Queries is the most search queries kept per sub-question.
	Queries int `json:"queries"`
	// Candidates is the most search hits of one sub-question the collector considers in a round.
	Candidates int `json:"candidates"`
	// Reads is how many reads (analyst calls) the collector picks per round: Config.MaxCandidates.
	Reads int `json:"reads"`
	// Rounds is how many directed re-search rounds the verifier may ask for; negative means none.
	Rounds int `json:"rounds"`
	// MaxTokens is the default token fuse (input + output).
	MaxTokens int `json:"max_tokens"`
	// SkipVerify leaves out the adversarial verifier (and so the re-search rounds): the integrity check and the
	// support judge still decide every published sentence.
	SkipVerify bool `json:"skip_verify,omitempty"`
	// SynthRetries is the default of Budget.SynthRetries: how often a refused draft is revised before what
	// fails is removed (negative: never).
	SynthRetries int `json:"synth_retries"`
	// For says which questions the depth suits, in the words the planner is shown when it triages.
	For string `json:"for"`
}

// depthTable is the one table of depths. Standard is the graph's long-standing breadth.
var depthTable = []DepthSettings{
	{Name: DepthQuick, MinSubQuestions: 1, MaxSubQuestions: 2, Queries: 2, Candidates: 1, Reads: 2, Rounds: -1,
		MaxTokens: 60_000, SkipVerify: true, SynthRetries: -1, For: "a single fact, definition, date, number or yes/no answer that one good source settles"},
	{Name: DepthStandard, MinSubQuestions: 3, MaxSubQuestions: 6, Queries: 4, Candidates: 30, Reads: 30, Rounds: 2,
		MaxTokens: 600_000, For: "a question with a few facets: how something works, why, what it guarantees, its trade-offs"},
	{Name: DepthDeep, MinSubQuestions: 5, MaxSubQuestions: MaxSubQuestions, Queries: 6, Candidates: 40, Reads: 60, Rounds: 3,
		MaxTokens: 2_000_000, For: "a broad survey, a comparison of several things, a question whose answer needs many independent sources"},
}

// Depths returns the depth table, quick to deep.
func Depths() []DepthSettings { return append([]DepthSettings(nil), depthTable...) }

// DepthNames lists the depths a caller may ask for, auto first.
func DepthNames() []string { return []string{DepthAuto, DepthQuick, DepthStandard, DepthDeep} }

// DepthOf returns the settings of a depth; "" is DepthStandard. ok is false for auto and unknown names.
func DepthOf(name string) (DepthSettings, bool) {
	if name == "" {
		name = DepthStandard
	}
	for _, d := range depthTable {
		if d.Name == name {
			return d, true
		}
	}
	return DepthSettings{}, false
}

// CheckDepth refuses a depth other than "", auto, quick, standard and deep.
func CheckDepth(name string) error {
	if name == "" || name == DepthAuto {
		return nil
	}
	if _, ok := DepthOf(name); ok {
		return nil
	}
	return fmt.Errorf("%w: depth %q: give %s", ErrBadInput, name, strings.Join(DepthNames(), ", "))
}

// maxDepthReasonRunes bounds the planner's reason for its triage, which the report's footer quotes.
const maxDepthReasonRunes = 240

// resolveDepth decides the depth a run uses from the depth asked for and the planner's triage, and says why.
// A triage that names no depth of the table (model output: junk, empty, another word) falls back to standard.
func resolveDepth(asked, triage, reason string) (DepthSettings, string) {
	if asked != DepthAuto {
		d, _ := DepthOf(asked)
		if asked == "" {
			return d, "the default depth"
		}
		return d, "asked for"
	}
	reason = lexical.Clip(strings.Join(strings.Fields(reason), " "), maxDepthReasonRunes)
	t := strings.ToLower(strings.TrimSpace(triage))
	if d, ok := DepthOf(t); ok && t != "" {
		if reason == "" {
			return d, "chosen by the planner"
		}
		return d, "chosen by the planner: " + reason
	}
	d, _ := DepthOf(DepthStandard)
	if t == "" {
		return d, "auto: the planner did not triage the question, so standard"
	}
	return d, fmt.Sprintf("auto: the planner's triage %q is not a depth, so standard", lexical.Clip(triage, 40))
}

// depthLimits fills what the caller left zero in rc from d: rounds, reads per round and the token fuse.
func depthLimits(rc runConfig, d DepthSettings) runConfig {
	if rc.Rounds == 0 {
		rc.Rounds = d.Rounds
	}
	if rc.MaxCandidates == 0 {
		rc.MaxCandidates = d.Reads
	}
	if rc.Budget.MaxTokens == 0 {
		rc.Budget.MaxTokens = d.MaxTokens
	}
	if rc.Budget.SynthRetries == 0 {
		rc.Budget.SynthRetries = d.SynthRetries
	}
	return rc
}

// runConfig is the part of cfg a run stores.
func (cfg Config) runConfig() runConfig {
	return runConfig{Budget: cfg.Budget, Rounds: cfg.Rounds, MaxCandidates: cfg.MaxCandidates,
		BatchSize: cfg.BatchSize, EarlyStopWindow: cfg.EarlyStopWindow, Unjudged: cfg.Unjudged,
		Depth: cfg.Depth, Length: cfg.Length, Instructions: strings.TrimSpace(cfg.Instructions)}
}

// storedConfig is the configuration a run was started with: as asked for ("given"), or — for a run recorded
// before the depth table — the effective one.
func storedConfig(ctx context.Context, db *state.DB) runConfig {
	var rc runConfig
	for _, k := range []string{"given", "config"} {
		if v, ok, _ := db.Meta(ctx, k); ok {
			_ = json.Unmarshal([]byte(v), &rc)
			return rc
		}
	}
	return rc
}

// setConfig sets the run's configuration as asked for and the effective one, with the limits of the depth
// asked for (standard until the planner has triaged an auto run).
func (r *runner) setConfig(rc runConfig) {
	r.given = rc
	d, ok := DepthOf(rc.Depth)
	if !ok {
		d, _ = DepthOf(DepthStandard)
	}
	r.depth = d
	r.rc = defaults(depthLimits(rc, d))
	r.rc.Budget = capped(r.rc.Budget, r.ceiling)
}

// applyDepth sets the limits of the depth the plan settled on.
func (r *runner) applyDepth(p *Plan) {
	d, ok := DepthOf(p.Depth)
	if !ok {
		d, _ = DepthOf(DepthStandard)
	}
	r.depth = d
	r.rc = defaults(depthLimits(r.given, d))
	r.rc.Budget = capped(r.rc.Budget, r.ceiling)
}
