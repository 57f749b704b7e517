package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources"
)

// ---- follow-up runs (Config.From) ----
//
// A follow-up is a new run that starts from a finished one: the earlier run's state is opened read-only, its
// fetched documents (their stored texts, checked against the hashes recorded when they were read) and its
// accepted evidence are copied into the new run's state, the planner is told what the earlier run asked and
// found, a sub-question the earlier run already asked (the same words) is not searched again in the first
// round, and no source the earlier run read for it is read again. Nothing is ever fetched again: an earlier
// document is read from its carried text. The carried evidence keeps its source URL and quote verbatim, so the
// integrity check grounds it against the carried text as it grounds the run's own; an item whose text is gone or
// no longer holds its quote is dropped and counted. The earlier run is never written.

// EarlierPrefix marks the sub-question of an evidence item carried from an earlier run for a sub-question the
// follow-up did not ask again ("earlier:q2").
const EarlierPrefix = state.CarriedPrefix

// maxCarriedBytes bounds the texts one follow-up copies from the earlier run; documents past it are not carried
// (their evidence is dropped and counted).
const maxCarriedBytes = 256 << 20

// maxEarlierFindings bounds the earlier findings shown to the planner.
const maxEarlierFindings = 30

// EarlierFindings is what a follow-up's planner is told about the earlier run: its question, the sub-questions
// it asked, and a short summary of the evidence it accepted (one claim a line, at most maxEarlierFindings), so
// that it plans only what the earlier run did not cover.
type EarlierFindings struct {
	RunID        string   `json:"run_id"`
	Question     string   `json:"question"`
	SubQuestions []string `json:"sub_questions"`
	Findings     []string `json:"findings"`
}

// FollowsRef is the earlier run a follow-up started from, and what was carried over from it (Report.Follows).
type FollowsRef struct {
	RunID    string `json:"run_id"`
	Question string `json:"question"`
	// Dir is the earlier run's folder, as this machine found it.
	Dir string `json:"dir"`
	// Documents and Evidence count what was carried; Dropped counts evidence left behind because its quote could
	// no longer be checked against a stored text (the text removed, modified or past the carry bound).
	Documents int `json:"documents"`
	Evidence  int `json:"evidence"`
	Dropped   int `json:"dropped"`
	// Covered lists the follow-up's sub-questions the earlier run had already asked (not searched again).
	Covered []string `json:"covered,omitempty"`
	// reads counts the carried read markers, which are not reads of this run.
	Reads int `json:"reads,omitempty"`
}

// earlierRun is what a follow-up reads of the run it follows, loaded at once and the earlier state closed.
type earlierRun struct {
	info     *RunInfo
	dir      string
	plan     *Plan
	docs     []state.Document
	texts    map[string]string // by hash; a missing hash is a text that could not be carried
	evidence []state.Evidence  // accepted only
	reads    []string          // read step names: read:<sq>:<url>
}

// ResolveRun finds a run folder from what a person typed: the id (or a unique prefix of it) of a run in runsDir,
// else a folder holding a state.db. It refuses with ErrBadInput when there is no such run.
func ResolveRun(runsDir, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", fmt.Errorf("%w: no run named", ErrBadInput)
	}
	plain := !strings.ContainsAny(ref, `/\`) && ref != "." && ref != ".."
	if runsDir != "" && plain {
		if st, err := os.Stat(filepath.Join(runsDir, ref, StateFile)); err == nil && st.Mode().IsRegular() {
			return filepath.Abs(filepath.Join(runsDir, ref))
		}
		if folders, err := ListRunFolders(runsDir); err == nil {
			var hits []string
			for _, f := range folders {
				if strings.HasPrefix(f.ID, ref) {
					hits = append(hits, f.Dir)
				}
			}
			if len(hits) == 1 {
				return filepath.Abs(hits[0])
			}
			if len(hits) > 1 {
				return "", fmt.Errorf("%w: %d runs start with %q; give more of the id", ErrBadInput, len(hits), ref)
			}
		}
	}
	if st, err := os.Stat(filepath.Join(ref, StateFile)); err == nil && st.Mode().IsRegular() {
		return filepath.Abs(ref)
	}
	return "", fmt.Errorf("%w: no run %q (neither a run folder nor a run id under %s)", ErrBadInput, ref, runsDir)
}

// loadEarlier opens the run in dir read-only and reads what a follow-up carries. Only a finished run can be
// followed (one cut short by a fuse is finished: its evidence is grounded and verified as far as it went); a run
// still going, stopped or failed is refused, since its pool has not been verified — resume it first.
func loadEarlier(ctx context.Context, dir string) (*earlierRun, error) {
	if _, err := os.Stat(filepath.Join(dir, StateFile)); err != nil {
		return nil, fmt.Errorf("%w: follow up %s: not a run folder (no %s)", ErrBadInput, dir, StateFile)
	}
	db, err := state.OpenFinished(ctx, filepath.Join(dir, StateFile))
	if err != nil {
		return nil, fmt.Errorf("research: follow up %s: its state cannot be read: %w", dir, err)
	}
	defer db.Close()
	info, err := readInfo(ctx, db, dir)
	if err != nil {
		return nil, fmt.Errorf("research: follow up %s: %w", dir, err)
	}
	if info.Status != RunDone {
		return nil, fmt.Errorf("%w: follow up %s: the run is %s; only a finished run can be followed up (resume it first)",
			ErrBadInput, info.ID, info.Status)
	}
	e := &earlierRun{info: info, dir: dir, texts: map[string]string{}}
	var plan Plan
	if ok, err := db.Step(ctx, "scope", &plan); err != nil {
		return nil, fmt.Errorf("research: follow up %s: its plan cannot be read: %w", dir, err)
	} else if ok {
		e.plan = &plan
	}
	if e.evidence, err = db.Evidence(ctx, state.Accepted); err != nil {
		return nil, fmt.Errorf("research: follow up %s: its evidence cannot be read: %w", dir, err)
	}
	if e.docs, err = db.Documents(ctx); err != nil {
		return nil, fmt.Errorf("research: follow up %s: its documents cannot be read: %w", dir, err)
	}
	if e.reads, err = db.StepNames(ctx, "read:"); err != nil {
		return nil, fmt.Errorf("research: follow up %s: %w", dir, err)
	}
	total := 0
	for _, d := range e.docs {
		if _, ok := e.texts[d.Hash]; ok {
			continue
		}
		text, err := ReadRunFile(dir, d.Path)
		if err != nil || sources.HashText(string(text)) != d.Hash || total+len(text) > maxCarriedBytes {
			continue // not carried: its evidence is dropped and counted
		}
		total += len(text)
		e.texts[d.Hash] = string(text)
	}
	return e, nil
}

// findings summarises the earlier run for the planner.
func (e *earlierRun) findings() *EarlierFindings {
	f := &EarlierFindings{RunID: e.info.ID, Question: e.info.Question}
	if e.plan != nil {
		for _, sq := range e.plan.SubQuestions {
			f.SubQuestions = append(f.SubQuestions, sq.Question)
		}
	}
	for _, ev := range e.evidence {
		if len(f.Findings) == maxEarlierFindings {
			break
		}
		f.Findings = append(f.Findings, lexical.Clip(oneLine(ev.Claim), 200))
	}
	return f
}

// followStart is called for a fresh run with Config.From: it loads (and so checks) the earlier run before any
// folder is created.
func (r *runner) followStart(ctx context.Context) error {
	if r.cfg.From == "" {
		return nil
	}
	dir, err := filepath.Abs(r.cfg.From)
	if err != nil {
		return fmt.Errorf("research: follow up %s: %w", r.cfg.From, err)
	}
	e, err := loadEarlier(ctx, dir)
	if err != nil {
		return err
	}
	r.earlier = e
	return nil
}

// saveFollows records which run this one follows, so that a resume carries from it and the report links it.
func (r *runner) saveFollows(ctx context.Context) error {
	if r.earlier == nil {
		return nil
	}
	ref := FollowsRef{RunID: r.earlier.info.ID, Question: r.earlier.info.Question, Dir: r.earlier.dir}
	b, _ := json.Marshal(ref)
	return r.db.SetMeta(ctx, "follows", string(b))
}

// follows reads the stored FollowsRef; nil for a run that follows none.
func (r *runner) follows(ctx context.Context) *FollowsRef {
	v, ok, err := r.db.Meta(ctx, "follows")
	if err != nil || !ok || v == "" {
		return nil
	}
	var ref FollowsRef
	if json.Unmarshal([]byte(v), &ref) != nil || ref.RunID == "" {
		return nil
	}
	return &ref
}

// planEarlier is what the planner is told about the earlier run; nil when the run follows none.
func (r *runner) planEarlier(ctx context.Context) (*EarlierFindings, error) {
	e, err := r.earlierRun(ctx)
	if err != nil || e == nil {
		return nil, err
	}
	return e.findings(), nil
}

// earlierRun returns the earlier run, loading it again when a resumed follow-up has not carried it yet.
func (r *runner) earlierRun(ctx context.Context) (*earlierRun, error) {
	if r.earlier != nil {
		return r.earlier, nil
	}
	ref := r.follows(ctx)
	if ref == nil {
		return nil, nil
	}
	e, err := loadEarlier(ctx, ref.Dir)
	if err != nil {
		return nil, err
	}
	r.earlier = e
	return e, nil
}

// carry copies the earlier run's documents and accepted evidence into this run, before the plan is stored (so
// that a crash in between carries again, idempotently: documents and evidence are keyed). A sub-question of p
// the earlier run asked in the same words is covered: its evidence is carried under it, it is not searched in
// the first round when the earlier run found evidence for it, and the sources the earlier run read for it are
// not read for it again (the same reading would find the same).
func (r *runner) carry(ctx context.Context, p *Plan) error {
	e, err := r.earlierRun(ctx)
	if err != nil || e == nil {
		return err
	}
	ref := FollowsRef{RunID: e.info.ID, Question: e.info.Question, Dir: e.dir}
	// Earlier sub-question id → the follow-up's sub-question asking the same.
	same := map[string]string{}
	if e.plan != nil {
		asked := map[string]string{}
		for _, sq := range p.SubQuestions {
			asked[sameQuestion(sq.Question)] = sq.ID
		}
		for _, sq := range e.plan.SubQuestions {
			if id, ok := asked[sameQuestion(sq.Question)]; ok {
				same[sq.ID] = id
			}
		}
	}
	for _, d := range e.docs {
		text, ok := e.texts[d.Hash]
		if !ok {
			continue
		}
		rel := filepath.Join(DocsDir, d.Hash+".txt")
		if err := writeRunFile(r.dir, rel, []byte(text)); err != nil {
			return storeErr(ctx, fmt.Errorf("carry %s: %w", d.URL, err))
		}
		d.Path = rel
		if err := r.db.PutDocument(ctx, d); err != nil {
			return storeErr(ctx, err)
		}
		ref.Documents++
	}
	withEvidence := map[string]bool{}
	for _, ev := range e.evidence {
		if err := r.groundCarried(ctx, ev); err != nil {
			ref.Dropped++
			r.logf(ctx, StageScope, 0, "", "carry dropped", fmt.Sprintf("%s from run %s: %v", ev.ID, e.info.ID, err), nil)
			continue
		}
		sq := ev.SubQuestion
		if id, ok := same[sq]; ok {
			sq = id
			withEvidence[id] = true
		} else if !strings.HasPrefix(sq, EarlierPrefix) {
			sq = EarlierPrefix + sq
		}
		ev.SubQuestion, ev.Round, ev.Status, ev.Reason = sq, 1, state.Accepted, ""
		if _, _, err := r.db.AddEvidence(ctx, ev); err != nil {
			return storeErr(ctx, err)
		}
		ref.Evidence++
	}
	b := r.db.Batch()
	for _, sq := range p.SubQuestions {
		if !withEvidence[sq.ID] {
			continue
		}
		ref.Covered = append(ref.Covered, sq.ID)
		if err := b.MarkStep(searchStep(1, sq.ID), []Candidate{}); err != nil {
			return err
		}
	}
	for _, name := range e.reads {
		old, u, ok := strings.Cut(strings.TrimPrefix(name, "read:"), ":")
		if id, asked := same[old]; ok && asked {
			if err := b.MarkStep(readStep(id, u), map[string]string{"carried_from": e.info.ID}); err != nil {
				return err
			}
			ref.Reads++
		}
	}
	enc, _ := json.Marshal(ref)
	b.SetMeta("follows", string(enc))
	if err := b.Commit(ctx); err != nil {
		return storeErr(ctx, err)
	}
	detail := fmt.Sprintf("from run %s (%s): %d documents, %d evidence items; %d items dropped (their quote could no longer be checked against a stored text)",
		e.info.ID, e.info.Question, ref.Documents, ref.Evidence, ref.Dropped)
	if len(ref.Covered) > 0 {
		detail += "; already covered, not searched again: " + strings.Join(ref.Covered, ", ")
	}
	r.logf(ctx, StageScope, 0, "", "carried over", detail, nil)
	return nil
}

// groundCarried checks an earlier item against the text this run now holds, as the integrity check will.
func (r *runner) groundCarried(ctx context.Context, ev state.Evidence) error {
	e := fromState(ev)
	e.Status = StatusAccepted
	return checkEvidence(map[string]Evidence{e.ID: e}, func(source string) (*docEntry, error) {
		return r.storedDocument(ctx, source)
	}, e.ID)
}

// sameQuestion is the form in which two sub-questions are compared: case and white space aside.
func sameQuestion(q string) string {
	return strings.ToLower(lexical.NormalizeSpace(q))
}

// carried is how many search and read markers a follow-up carried over from its earlier run (one search
// marker for each sub-question covered), which the run's own searches and reads do not include.
func (r *runner) carried(ctx context.Context) (searches, reads int) {
	if ref := r.follows(ctx); ref != nil {
		return len(ref.Covered), ref.Reads
	}
	return 0, 0
}

// followsHeader is the report's line under the engine line, linking the earlier report by a relative path.
func (r *runner) followsHeader(ctx context.Context, lang string) (string, *FollowsRef) {
	ref := r.follows(ctx)
	if ref == nil {
		return "", nil
	}
	link := filepath.Join(ref.Dir, ReportMarkdownFile)
	if abs, err := filepath.Abs(r.dir); err == nil {
		if rel, err := filepath.Rel(abs, link); err == nil {
			link = rel
		}
	}
	tx := followTexts[lang]
	if tx.header == "" {
		tx = followTexts["en"]
	}
	line := fmt.Sprintf(tx.header, escapeLinkText(ref.RunID), filepath.ToSlash(link), oneLine(ref.Question))
	return ">\n> " + line + "\n", ref
}

// followsHowMade is the line of "How this report was made" saying what was carried.
func followsHowMade(ref *FollowsRef, lang string) string {
	if ref == nil {
		return ""
	}
	tx := followTexts[lang]
	if tx.carried == "" {
		tx = followTexts["en"]
	}
	return "- " + fmt.Sprintf(tx.carried, ref.RunID, ref.Evidence, ref.Documents, ref.Dropped) + "\n"
}

var followTexts = map[string]struct{ header, carried string }{
	"en": {header: "Follows up on run [%s](%s): %s",
		carried: "carried from run %s: %d evidence items from %d documents; %d dropped because their quote could no longer be checked against the stored text"},
	"zh": {header: "接续运行 [%s](%s)：%s",
		carried: "沿用运行 %s 的证据 %d 条（来自 %d 个文档）；%d 条因引文已无法与保存的文本核对而舍弃"},
}

// errFollowResume refuses Config.From on Resume: a follow-up remembers the run it follows.
var errFollowResume = errors.New("research: a resumed run keeps the run it follows; From applies to a new run only")
