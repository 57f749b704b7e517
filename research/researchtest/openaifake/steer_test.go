package openaifake_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/openai"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/llmroles"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources"
)

// steerRun runs the whole graph against the fake over the kiln pages with cfg's steering options.
func steerRun(t *testing.T, fake openaifake.Config, cfg research.Config) (*research.Report, *openaifake.Server, error) {
	t.Helper()
	srv := openaifake.New(t, fake)
	rep, err := steerRunOn(t, srv, cfg)
	return rep, srv, err
}

// steerRunOn is steerRun against a fake already started.
func steerRunOn(t *testing.T, srv *openaifake.Server, cfg research.Config) (*research.Report, error) {
	t.Helper()
	site := openaifake.KilnSite(t)
	m, err := openai.New(openai.Config{Model: "fake-research", BaseURL: srv.BaseURL(), APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	ledger := &llm.Ledger{}
	model := llm.Metered(llm.WithRetry(m, llm.RetryConfig{CallTimeout: 5 * time.Second,
		Sleep: func(context.Context, time.Duration) error { return nil }}), ledger, "fake")
	cfg.Roles = llmroles.New(llmroles.Config{Planner: model, Searcher: model, Analyst: model, Verifier: model,
		Synthesizer: model, Sources: []sources.Searcher{anyWord{site}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	cfg.Fetcher, cfg.Ledger = site.Fetcher(), ledger
	if cfg.OutDir == "" {
		cfg.OutDir = filepath.Join(t.TempDir(), "run")
	}
	return research.Run(t.Context(), cfg)
}

// anyWord searches the site for pages holding any of the query's words of four letters or more, the pages with
// the most first: a search engine's recall, where the site's own search wants every word.
type anyWord struct{ *researchtest.Site }

func (anyWord) Name() string { return "site" }
func (s anyWord) Search(_ context.Context, q string, limit int) ([]sources.Result, error) {
	seen := map[string]float64{}
	var out []sources.Result
	for _, w := range strings.Fields(strings.ToLower(strings.Trim(q, "?"))) {
		if len(w) < 4 {
			continue
		}
		for _, r := range s.Site.Search(strings.Trim(w, "?,.:"), 0) {
			if _, ok := seen[r.URL]; !ok {
				out = append(out, r)
			}
			seen[r.URL] += r.Score
		}
	}
	for i := range out {
		out[i].Score = seen[out[i].URL]
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func tokensOf(srv *openaifake.Server) int {
	p, c := srv.Usage()
	return p + c
}

// TestDepthInProportion: the depth table sets the breadth of a run together. A short factual question at auto
// is triaged quick by the planner — one sub-question, no verifier, well under half of standard's tokens — and the
// footer says so and why; a broad question at deep plans more sub-questions and reads more sources than at
// standard; no run spends past its depth's token budget.
func TestDepthInProportion(t *testing.T) {
	const factual = "What does a Kestrel kiln cost?"
	auto, autoSrv, err := steerRun(t, openaifake.Config{GapSubQuestion: -1}, research.Config{Question: factual, Depth: research.DepthAuto})
	if err != nil {
		t.Fatal(err)
	}
	std, stdSrv, err := steerRun(t, openaifake.Config{GapSubQuestion: -1}, research.Config{Question: factual, Depth: research.DepthStandard})
	if err != nil {
		t.Fatal(err)
	}
	if auto.Depth != research.DepthQuick || !strings.Contains(auto.DepthReason, "chosen by the planner") {
		t.Fatalf("auto used depth %q (%s), want quick chosen by the planner", auto.Depth, auto.DepthReason)
	}
	if !strings.Contains(auto.Markdown, "- depth: quick (chosen by the planner: ") {
		t.Errorf("the footer does not say which depth was used and why:\n%s", auto.Markdown)
	}
	if auto.Stats.SubQuestions > 2 || autoSrv.Count(openaifake.RoleVerifier) != 0 {
		t.Errorf("quick ran %d sub-questions and %d verifier calls", auto.Stats.SubQuestions, autoSrv.Count(openaifake.RoleVerifier))
	}
	// On four short pages the fixed costs (the plan, one draft) weigh more than on real documents, where bench
	// tokens measures the quarter; here quick must still cost well under half.
	if a, s := tokensOf(autoSrv), tokensOf(stdSrv); a*2 > s {
		t.Errorf("the factual question at auto cost %d tokens, more than half of standard's %d", a, s)
	}
	if len(auto.Citations) == 0 || !strings.Contains(auto.Markdown, "euros") {
		t.Errorf("the quick report does not answer the question:\n%s", auto.Markdown)
	}

	const broad = "How does the Kestrel solar kiln work, how fast does it dry timber, and what does it cost?"
	stdB, stdBSrv, err := steerRun(t, openaifake.Config{GapSubQuestion: -1}, research.Config{Question: broad, Depth: research.DepthStandard})
	if err != nil {
		t.Fatal(err)
	}
	deep, deepSrv, err := steerRun(t, openaifake.Config{GapSubQuestion: -1}, research.Config{Question: broad, Depth: research.DepthDeep})
	if err != nil {
		t.Fatal(err)
	}
	if deep.Stats.SubQuestions <= stdB.Stats.SubQuestions || deep.Stats.SourcesRead*2 < stdB.Stats.SourcesRead*3 {
		t.Errorf("deep: %d sub-questions, %d reads; standard: %d, %d — deep should read at least 1.5 times as many",
			deep.Stats.SubQuestions, deep.Stats.SourcesRead, stdB.Stats.SubQuestions, stdB.Stats.SourcesRead)
	}
	for _, r := range []struct {
		rep *research.Report
		srv *openaifake.Server
	}{{auto, autoSrv}, {std, stdSrv}, {stdB, stdBSrv}, {deep, deepSrv}} {
		d, _ := research.DepthOf(r.rep.Depth)
		if n := tokensOf(r.srv); n > d.MaxTokens || r.rep.CutShort != "" {
			t.Errorf("%s depth spent %d tokens of its %d budget (cut short: %q)", d.Name, n, d.MaxTokens, r.rep.CutShort)
		}
	}
}

// TestJunkTriageFallsBackToStandard: a planner whose triage is no depth of the table (and whose reason is two
// thousand characters) does not steer the run anywhere odd: the run is standard and the footer says why, with
// the reason clipped.
func TestJunkTriageFallsBackToStandard(t *testing.T) {
	rep, _, err := steerRun(t, openaifake.Config{GapSubQuestion: -1, Misbehave: openaifake.Misbehaviour{JunkTriage: true}},
		research.Config{Question: "What does a Kestrel kiln cost?", Depth: research.DepthAuto})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Depth != research.DepthStandard || !strings.Contains(rep.DepthReason, "is not a depth, so standard") {
		t.Fatalf("junk triage gave depth %q (%s)", rep.Depth, rep.DepthReason)
	}
	if len(rep.DepthReason) > 400 || strings.Contains(rep.Markdown, "because because") {
		t.Errorf("the junk reason reached the report (%d characters)", len(rep.DepthReason))
	}
}

// TestAGivenTokenBudgetBeatsTheDepth: a limit the caller sets wins over the depth's default: a token fuse far
// below quick's budget trips, and the report says so.
func TestAGivenTokenBudgetBeatsTheDepth(t *testing.T) {
	rep, _, err := steerRun(t, openaifake.Config{GapSubQuestion: -1},
		research.Config{Question: openaifake.KilnQuestion, Depth: research.DepthDeep, Budget: research.Budget{MaxTokens: 1500}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.CutShort, "1500-token budget") {
		t.Fatalf("cut short %q, want the caller's token fuse", rep.CutShort)
	}
}

// TestDepthIsChecked: a depth outside the table is refused before a run folder exists.
func TestDepthIsChecked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	_, _, err := steerRun(t, openaifake.Config{}, research.Config{Question: "What?", Depth: "bottomless", OutDir: dir})
	if err == nil || !strings.Contains(err.Error(), `depth "bottomless"`) {
		t.Fatalf("err = %v", err)
	}
}

// TestLengthAndInstructionsReachPlannerAndSynthesizer: the length and the instructions asked for are in the
// planner's and the synthesizer's prompts. The integrity check is the same at every length: asked for a long
// report over four short pages, the run publishes what its evidence supports and says it is short of the
// length; asked for a short one, the honest model writes less, and nothing says it is short.
func TestLengthAndInstructionsReachPlannerAndSynthesizer(t *testing.T) {
	const instructions = "For a carpenter choosing a kiln; leave out the electricity figures."
	long, srv, err := steerRun(t, openaifake.Config{GapSubQuestion: -1},
		research.Config{Question: openaifake.KilnQuestion, Length: research.LengthLong, Instructions: instructions})
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{openaifake.RolePlanner, openaifake.RoleSynthesizer} {
		seen := false
		for _, c := range srv.Calls() {
			if c.Role == role {
				seen = true
				if c.Words != 1800 || c.Instructions != instructions {
					t.Errorf("%s call: length %d, instructions %q", role, c.Words, c.Instructions)
				}
			}
		}
		if !seen {
			t.Fatalf("no %s call", role)
		}
	}
	if long.ShortOf != 1800 || !strings.Contains(long.Markdown, "of the about 1800 asked for: the grounded evidence") {
		t.Errorf("a long report over little evidence does not say it is short (short_of %d):\n%s", long.ShortOf, long.Markdown)
	}
	plain, _, err := steerRun(t, openaifake.Config{GapSubQuestion: -1}, research.Config{Question: openaifake.KilnQuestion})
	if err != nil {
		t.Fatal(err)
	}
	short, _, err := steerRun(t, openaifake.Config{GapSubQuestion: -1}, research.Config{Question: openaifake.KilnQuestion, Length: "50"})
	if err != nil {
		t.Fatal(err)
	}
	if len(short.Citations) >= len(plain.Citations) || short.ShortOf != 0 || plain.ShortOf != 0 {
		t.Errorf("50 words: %d citations (short of %d); no length: %d citations (short of %d)",
			len(short.Citations), short.ShortOf, len(plain.Citations), plain.ShortOf)
	}
	if strings.Contains(plain.Markdown, "asked for:") {
		t.Errorf("a report with no length asked for says it is short")
	}
}

// TestBadLengthsAreRefused: a length that is not brief, standard, long or a number of words in range, and
// instructions too long or holding control characters, are refused before a folder exists.
func TestBadLengthsAreRefused(t *testing.T) {
	for _, tc := range []struct{ length, instructions, want string }{
		{"huge", "", `length "huge"`},
		{"10", "", "length 10 words"},
		{"999999999999999999999", "", "length"},
		{"", strings.Repeat("x", research.MaxInstructionRunes+1), "the instructions have"},
		{"", "be brief\x1b[2J", "control character"},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		_, _, err := steerRun(t, openaifake.Config{}, research.Config{Question: "What?", Length: tc.length, Instructions: tc.instructions, OutDir: dir})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("length %q: err = %v, want %q", tc.length, err, tc.want)
		}
	}
}

// TestThePlanIsReviewedBeforeAnythingIsSearched: the review sees the planner's plan before any search, and the
// run researches what it returns — a sub-question dropped, one added — which plan.yaml then holds; a review that
// fails ends the run with nothing searched. A given plan (a plan file) is researched without asking the planner.
func TestThePlanIsReviewedBeforeAnythingIsSearched(t *testing.T) {
	searchedBefore := -1
	dir := filepath.Join(t.TempDir(), "run")
	srv := openaifake.New(t, openaifake.Config{GapSubQuestion: -1})
	rep, err := steerRunOn(t, srv, research.Config{
		Question: openaifake.KilnQuestion, OutDir: dir,
		ReviewPlan: func(_ context.Context, p *research.Plan) (*research.Plan, error) {
			searchedBefore = srv.Count(openaifake.RoleSearcher)
			if len(p.SubQuestions) != 3 {
				t.Errorf("the review was shown %d sub-questions", len(p.SubQuestions))
			}
			p.SubQuestions = append(p.SubQuestions[:2], research.SubQuestion{Question: "How many days did oak planks need in December and January?",
				Queries: []string{"winter season December January"}})
			return p, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if searchedBefore != 0 {
		t.Errorf("%d searches ran before the review", searchedBefore)
	}
	saved, err := research.ParsePlan(mustRead(t, filepath.Join(dir, research.PlanFile)))
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.SubQuestions) != 3 || saved.SubQuestions[2].Question != "How many days did oak planks need in December and January?" {
		t.Errorf("plan.yaml holds %+v", saved.SubQuestions)
	}
	if !strings.Contains(rep.Markdown, "71 days") {
		t.Errorf("the added sub-question was not researched:\n%s", rep.Markdown)
	}

	// A review that ends the run: nothing searched.
	_, srv, err = steerRun(t, openaifake.Config{GapSubQuestion: -1}, research.Config{Question: openaifake.KilnQuestion,
		ReviewPlan: func(context.Context, *research.Plan) (*research.Plan, error) { return nil, errors.New("declined") }})
	if err == nil || !strings.Contains(err.Error(), "declined") || srv.Count(openaifake.RoleSearcher) != 0 {
		t.Fatalf("err %v, %d searches", err, srv.Count(openaifake.RoleSearcher))
	}
	// A review that empties the plan is refused, not researched.
	_, _, err = steerRun(t, openaifake.Config{GapSubQuestion: -1}, research.Config{Question: openaifake.KilnQuestion,
		ReviewPlan: func(_ context.Context, p *research.Plan) (*research.Plan, error) { p.SubQuestions = nil; return p, nil }})
	if err == nil || !strings.Contains(err.Error(), "the reviewed plan has no sub-questions") {
		t.Fatalf("err %v", err)
	}

	// A given plan: the planner is not asked.
	given, err := research.ParsePlan([]byte("- How much do the materials of a Kestrel kiln cost in euros?\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep, srv, err = steerRun(t, openaifake.Config{GapSubQuestion: -1}, research.Config{Question: openaifake.KilnQuestion, Plan: given, Depth: research.DepthAuto})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count(openaifake.RolePlanner) != 0 || rep.Stats.SubQuestions != 1 || !strings.Contains(rep.Markdown, "2,400 euros") ||
		!strings.Contains(rep.DepthReason, "a given plan is not triaged") {
		t.Errorf("given plan: %d planner calls, %d sub-questions, depth %s (%s)", srv.Count(openaifake.RolePlanner), rep.Stats.SubQuestions, rep.Depth, rep.DepthReason)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestClarifyingQuestionsAreBoundedAndRecorded: a planner that asks ten questions (some empty, some twice) puts
// at most three to the person; their answers reach the plan and the research log. A planner with nothing to ask
// asks nothing, and a run with no one to ask (no Clarify) never asks the planner.
func TestClarifyingQuestionsAreBoundedAndRecorded(t *testing.T) {
	var put []string
	dir := filepath.Join(t.TempDir(), "run")
	_, _, err := steerRun(t, openaifake.Config{GapSubQuestion: -1, Misbehave: openaifake.Misbehaviour{ClarifyFlood: true}},
		research.Config{Question: "What does a Kestrel kiln cost?", OutDir: dir,
			Clarify: func(_ context.Context, qs []string) ([]string, error) {
				put = qs
				return []string{"materials only"}, nil // fewer answers than questions: the rest stay open
			}})
	if err != nil {
		t.Fatal(err)
	}
	if len(put) != research.MaxClarifications || put[0] == put[1] || put[0] == "" {
		t.Fatalf("put %q to the person", put)
	}
	// The plan is the place to look: the report shows only the sections its evidence landed in.
	plan, err := os.ReadFile(filepath.Join(dir, research.PlanFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(plan), "materials only") {
		t.Errorf("the answer did not reach the plan:\n%s", plan)
	}
	log := researchLog(t, dir)
	if !strings.Contains(log, "clarified: "+put[0]+" → materials only") || !strings.Contains(log, "(no answer)") {
		t.Errorf("the research log does not record the questions and answers:\n%s", log)
	}

	_, srv, err := steerRun(t, openaifake.Config{GapSubQuestion: -1, Clarify: []string{"Which kiln?"}},
		research.Config{Question: "What does a Kestrel kiln cost?"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range srv.Calls() {
		if c.Clarify {
			t.Fatal("the planner was asked to clarify with no one to answer")
		}
	}
}

// researchLog is the run's research log, one "decision: detail" a line.
func researchLog(t *testing.T, dir string) string {
	t.Helper()
	db, err := state.OpenReadOnly(t.Context(), filepath.Join(dir, research.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries, err := db.Log(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.Decision + ": " + e.Detail + "\n")
	}
	return b.String()
}

// TestUnansweredAndHostileAnswers: a surface that gave up waiting (research.ErrUnanswered) lets the run plan
// without answers and say so in the research log and its events, where any other error would end it; answers
// with control bytes and line breaks reach the planner and the log as one clean line, clipped.
func TestUnansweredAndHostileAnswers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	var events []research.Event
	rep, _, err := steerRun(t, openaifake.Config{GapSubQuestion: -1, Clarify: []string{"Which kiln do you mean?"}},
		research.Config{Question: "What does a Kestrel kiln cost?", OutDir: dir,
			OnEvent: func(e research.Event) { events = append(events, e) },
			Clarify: func(context.Context, []string) ([]string, error) {
				return nil, fmt.Errorf("%w within 10m0s", research.ErrUnanswered)
			}})
	if err != nil || rep == nil {
		t.Fatalf("an unanswered run failed: %v", err)
	}
	log := researchLog(t, dir)
	if !strings.Contains(log, "clarify unanswered: the clarifying questions were not answered within 10m0s; planning without answers") ||
		!strings.Contains(log, "clarified: Which kiln do you mean? → (no answer)") {
		t.Errorf("the research log does not say the questions went unanswered:\n%s", log)
	}
	said := false
	for _, e := range events {
		said = said || (e.Kind == research.EventUnanswered && strings.Contains(e.Message, "within 10m0s"))
	}
	if !said {
		t.Error("no unanswered event")
	}

	_, _, err = steerRun(t, openaifake.Config{GapSubQuestion: -1, Clarify: []string{"Which kiln do you mean?"}},
		research.Config{Question: "What does a Kestrel kiln cost?",
			Clarify: func(context.Context, []string) ([]string, error) { return nil, errors.New("the person left") }})
	if err == nil || !strings.Contains(err.Error(), "the person left") {
		t.Errorf("another error from Clarify: %v", err)
	}

	dir = filepath.Join(t.TempDir(), "run")
	_, _, err = steerRun(t, openaifake.Config{GapSubQuestion: -1, Clarify: []string{"Which kiln do you mean?"}},
		research.Config{Question: "What does a Kestrel kiln cost?", OutDir: dir,
			Clarify: func(context.Context, []string) ([]string, error) {
				return []string{"the \x1b[31mKestrel\x00 solar\nkiln\u0085 " + strings.Repeat("x", 3*research.MaxAnswerRunes)}, nil
			}})
	if err != nil {
		t.Fatal(err)
	}
	log = researchLog(t, dir)
	_, got, _ := strings.Cut(log, "clarified: Which kiln do you mean? → ")
	got, _, _ = strings.Cut(got, "\n")
	if !strings.HasPrefix(got, "the [31mKestrel solar kiln xxx") || strings.ContainsAny(got, "\x1b\x00\u0085") ||
		len([]rune(got)) > research.MaxAnswerRunes+1 {
		t.Errorf("the answer reached the log as %q", got)
	}
}
