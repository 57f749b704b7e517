package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/mcptools/mcpsearch"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/extractive"
	"github.com/deepresearch/deepresearch/research/llmroles"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/corpus"
	"github.com/deepresearch/deepresearch/sources/fetch"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

// researchFlags are the flags run and resume share.
type researchFlags struct {
	web      string
	corpora  []string
	mcpFile  string
	maxCost  float64
	maxTime  time.Duration
	rounds   int
	out      string
	engine   string
	noColour bool
}

// Settings keys stored with a run so resume rebuilds the same sources and engine.
const (
	settingWeb    = "web"
	settingCorpus = "corpus"
	settingMCP    = "mcp"
	settingEngine = "engine"
)

func (a *App) runsDir() string {
	if a.Config != nil && a.Config.Research.OutDir != "" {
		return a.Config.Research.OutDir
	}
	return "runs"
}

func newRunCmd(app *App) *cobra.Command {
	var fl researchFlags
	cmd := &cobra.Command{
		Use:   `run [flags] "question"`,
		Short: "Research a question and write a cited report",
		Long: `run plans the question into sub-questions, searches the configured sources in parallel, reads the best
candidates, verifies the evidence adversarially (re-searching only what is missing) and writes a report in which
every sentence cites a quote found verbatim in a source.

Sources: --web PROVIDER (tavily, brave, searxng, exa), --corpus INDEX|DIR (repeatable; a folder is indexed on the
fly and the index kept), --mcp FILE (search tools of the MCP servers in a .mcp.json file).

With no model configured (or --engine extractive) the extractive engine runs: no language model, no API key.

The run folder (default runs/<id>/) receives report.md, report.json, state.db (evidence pool, citation map,
research log), evidence.roundN.json and verdict.roundN.json snapshots, events.jsonl and the texts that were read.
An interrupted run continues with "deepresearch resume".`,
		Example: `  deepresearch run --corpus "$(go env GOROOT)/doc" "What does the Go memory model guarantee about channel communication?"
  deepresearch run --web tavily --max-cost 0.50 --rounds 1 "How do CRDTs handle concurrent deletes?"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			question := strings.TrimSpace(strings.Join(args, " "))
			if question == "" {
				return errors.New(`run needs a question, e.g. deepresearch run --corpus DIR "What does X guarantee about Y?"`)
			}
			if cmd.Flags().Changed("rounds") {
				switch {
				case fl.rounds < 0:
					return fmt.Errorf("--rounds %d: give 0 (no re-search) or more", fl.rounds)
				case fl.rounds == 0:
					fl.rounds = -1 // the graph reads 0 as "default"; the user asked for none
				}
			}
			return app.research(cmd, fl, question, "")
		},
	}
	addResearchFlags(cmd, &fl, true)
	return cmd
}

func addResearchFlags(cmd *cobra.Command, fl *researchFlags, sources bool) {
	f := cmd.Flags()
	if sources {
		f.StringVar(&fl.web, "web", "", "web search provider: "+strings.Join(websearch.Names(), ", "))
		f.StringArrayVar(&fl.corpora, "corpus", nil, "local corpus: an index directory or a folder to index (repeatable)")
		f.StringVar(&fl.mcpFile, "mcp", "", `a .mcp.json file whose servers' search tools are searched ("searchTools" per server, else tools named *search*)`)
		f.IntVar(&fl.rounds, "rounds", 0, "extra directed re-search rounds (default 2)")
		f.StringVar(&fl.out, "out", "", "run folder (default runs/<id>/)")
		f.StringVar(&fl.engine, "engine", "", "auto, llm or extractive (auto: extractive when no model is configured)")
	}
	f.Float64Var(&fl.maxCost, "max-cost", 0, "cost fuse in USD: past it no new search or reading starts")
	f.DurationVar(&fl.maxTime, "max-time", 0, "time limit for searching and reading (e.g. 5m)")
	f.BoolVar(&fl.noColour, "plain", false, "plain progress lines even on a terminal")
}

func newResumeCmd(app *App) *cobra.Command {
	var fl researchFlags
	cmd := &cobra.Command{
		Use:   "resume <run-dir-or-id>",
		Short: "Continue an interrupted run from its last completed step",
		Long: `resume continues a run that was interrupted (Ctrl-C, crash, kill -9) from its last completed step: the
plan, search results, fetched texts and evidence already stored are re-used, nothing is done twice and no evidence
is duplicated. The run's sources and engine are rebuilt from what the run folder recorded.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := app.findRun(args[0])
			if err != nil {
				return err
			}
			return app.research(cmd, fl, "", dir)
		},
	}
	addResearchFlags(cmd, &fl, false)
	return cmd
}

func newRunsCmd(app *App) *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List research runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				dir = app.runsDir()
			}
			runs, err := research.ListRuns(dir)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(app.Stdout)
				enc.SetIndent("", "  ")
				if runs == nil {
					runs = []research.RunSummary{}
				}
				return enc.Encode(runs)
			}
			if len(runs) == 0 {
				fmt.Fprintf(app.Stdout, "no runs in %s (start one: deepresearch run \"question\")\n", dir)
				return nil
			}
			tw := tabwriter.NewWriter(app.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tSTARTED\tSTATUS\tENGINE\tEVIDENCE\tQUESTION")
			for _, r := range runs {
				status := r.Status
				if r.CutShort != "" {
					status += " (cut short)"
				}
				started, question := "-", r.Question
				if !r.Created.IsZero() {
					started = r.Created.Local().Format("2006-01-02 15:04")
				}
				if r.Status == research.RunUnreadable {
					question = "cannot be read: " + r.Error
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, started, status, r.Engine, r.Evidence,
					lexical.Clip(lexical.NormalizeSpace(question), 69))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "folder holding the runs (default runs/)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newShowCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show <run-dir-or-id>",
		Short: "Print a run's report",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := app.findRun(args[0])
			if err != nil {
				return err
			}
			rep, err := research.LoadReport(dir)
			if err != nil {
				if info, ierr := research.LoadRunInfo(dir); ierr == nil && info.Status != research.RunDone {
					return fmt.Errorf("run %s is %s with %d evidence items and no report yet; continue it with: deepresearch resume %s",
						info.ID, info.Status, info.Evidence, dir)
				}
				return err
			}
			if asJSON {
				enc := json.NewEncoder(app.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			fmt.Fprint(app.Stdout, rep.Markdown)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print report.json")
	return cmd
}

// findRun resolves a run folder or a run id under the runs folder.
func (a *App) findRun(arg string) (string, error) {
	if _, err := os.Stat(filepath.Join(arg, research.StateFile)); err == nil {
		return arg, nil
	}
	dir := filepath.Join(a.runsDir(), arg)
	if _, err := os.Stat(filepath.Join(dir, research.StateFile)); err == nil {
		return dir, nil
	}
	return "", fmt.Errorf("no run %q: not a run folder, and not a run id under %s (see deepresearch runs)", arg, a.runsDir())
}

// research runs (resumeDir empty) or resumes a research graph with live progress.
func (a *App) research(cmd *cobra.Command, fl researchFlags, question, resumeDir string) error {
	ctx := cmd.Context()
	if err := research.CheckCost(fl.maxCost); err != nil {
		return fmt.Errorf("--max-cost: %w", err)
	}
	if err := research.CheckTime(fl.maxTime); err != nil {
		return fmt.Errorf("--max-time: %w", err)
	}
	if resumeDir == "" {
		if err := research.CheckQuestion(question); err != nil {
			return err
		}
	}
	var settings map[string]string
	if resumeDir != "" {
		info, err := research.LoadRunInfo(resumeDir)
		if err != nil {
			return err
		}
		if info.Status == research.RunDone {
			fmt.Fprintf(a.Stdout, "run %s is already finished: %s\n", info.ID, filepath.Join(resumeDir, research.ReportMarkdownFile))
			return nil
		}
		settings = info.Settings
		if settings == nil {
			settings = map[string]string{}
		}
		fl.web, fl.mcpFile, fl.engine = settings[settingWeb], settings[settingMCP], settings[settingEngine]
		_ = json.Unmarshal([]byte(settings[settingCorpus]), &fl.corpora)
	} else {
		rc := a.Config.Research
		if fl.web == "" && len(fl.corpora) == 0 && fl.mcpFile == "" {
			fl.web, fl.corpora, fl.mcpFile = a.Config.Sources.Web, a.Config.Sources.Corpus, a.Config.MCPFile
		}
		if fl.engine == "" {
			fl.engine = rc.Engine
		}
		if fl.rounds == 0 {
			fl.rounds = rc.Rounds
		}
		if fl.maxCost == 0 {
			fl.maxCost = rc.MaxCostUSD
		}
		if fl.maxTime == 0 {
			fl.maxTime = rc.MaxTime
		}
		engine, err := a.chooseEngine(fl.engine)
		if err != nil {
			return err
		}
		fl.engine = engine
		abs := make([]string, len(fl.corpora))
		for i, c := range fl.corpora {
			if p, err := filepath.Abs(c); err == nil {
				abs[i] = p
			} else {
				abs[i] = c
			}
		}
		fl.corpora = abs
		corpusJSON, _ := json.Marshal(fl.corpora)
		settings = map[string]string{settingWeb: fl.web, settingCorpus: string(corpusJSON), settingMCP: fl.mcpFile,
			settingEngine: fl.engine}
	}
	if fl.web == "" && len(fl.corpora) == 0 && fl.mcpFile == "" {
		return errors.New("no sources: pass --corpus DIR (a folder of documents), --web PROVIDER (" +
			strings.Join(websearch.Names(), ", ") + ") or --mcp FILE, or set sources in the configuration")
	}

	ledger := &llm.Ledger{}
	src, err := a.openSources(cmd, fl)
	if err != nil {
		return err
	}
	defer src.Close()
	roles, err := a.buildRoles(fl.engine, src.searchers, ledger)
	if err != nil {
		return err
	}

	disp := newProgressDisplay(a.Stderr, roles.Engine, fl.noColour)
	cfg := research.Config{
		Question: question, Roles: roles, Fetcher: src.fetcher, OutDir: fl.out, Ledger: ledger,
		Rounds: fl.rounds, OnEvent: disp.Event, Log: a.Log, Settings: settings, Secrets: a.secrets(),
		Budget: research.Budget{MaxCostUSD: fl.maxCost, MaxTime: fl.maxTime},
	}
	if resumeDir == "" {
		rc := a.Config.Research
		cfg.Budget.MaxTokens, cfg.Budget.Concurrency, cfg.Budget.MaxCalls = rc.MaxTokens, rc.Concurrency, rc.MaxCalls
		cfg.MaxCandidates = rc.MaxCandidates
		if cfg.OutDir == "" {
			cfg.RunID = research.NewRunID()
			cfg.OutDir = filepath.Join(a.runsDir(), cfg.RunID)
		}
	}
	var rep *research.Report
	if resumeDir != "" {
		rep, err = research.Resume(ctx, resumeDir, cfg)
	} else {
		rep, err = research.Run(ctx, cfg)
	}
	disp.Finish()
	if err != nil {
		dir := resumeDir
		if dir == "" {
			dir = cfg.OutDir
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted; continue with: deepresearch resume %s", dir)
		}
		return fmt.Errorf("%w (the run folder %s keeps what was done; deepresearch resume %s retries)", err, dir, dir)
	}
	if rep.CutShort != "" {
		fmt.Fprintf(a.Stderr, "note: the run was cut short: %s\n", rep.CutShort)
	}
	fmt.Fprintf(a.Stderr, "%d citations from %d sources · %d evidence items · %s\n", len(rep.Citations), len(rep.Sources),
		rep.Stats.EvidenceAccepted, spendLine(rep.Stats.Calls, rep.Stats.Tokens, rep.Stats.CostUSD))
	fmt.Fprintln(a.Stdout, filepath.Join(rep.Dir, research.ReportMarkdownFile))
	return nil
}

// chooseEngine resolves auto: the extractive engine when no model is configured.
func (a *App) chooseEngine(engine string) (string, error) {
	switch engine {
	case "", "auto":
		if a.Config.HasModel() {
			return llmroles.Engine, nil
		}
		return extractive.Engine, nil
	case llmroles.Engine:
		if !a.Config.HasModel() {
			return "", errors.New("--engine llm needs a model: pass --provider and --model (and --base-url for a local server), or use --engine extractive")
		}
		return engine, nil
	case extractive.Engine:
		return engine, nil
	}
	return "", fmt.Errorf("unknown engine %q: want auto, llm or extractive", engine)
}

// buildRoles returns the role set of an engine. LLM roles get one metered model per role, on the tier the
// configuration assigns it, so the cost fuse sees every call.
func (a *App) buildRoles(engine string, searchers []sources.Searcher, ledger *llm.Ledger) (research.Roles, error) {
	switch engine {
	case extractive.Engine:
		return extractive.New(extractive.Config{Searchers: searchers, Log: a.Log}), nil
	case llmroles.Engine:
		cfg := llmroles.Config{Sources: searchers, Logger: a.Log}
		for _, r := range []struct {
			role string
			m    *llm.Model
		}{
			{llmroles.RolePlanner, &cfg.Planner}, {llmroles.RoleSearcher, &cfg.Searcher},
			{llmroles.RoleAnalyst, &cfg.Analyst}, {llmroles.RoleVerifier, &cfg.Verifier},
			{llmroles.RoleSynthesizer, &cfg.Synthesizer},
		} {
			m, err := a.buildModel(r.role, ledger)
			if err != nil {
				return research.Roles{}, err
			}
			*r.m = m
		}
		return llmroles.New(cfg), nil
	}
	return research.Roles{}, fmt.Errorf("unknown engine %q", engine)
}

// researchSources are the opened searchers and the fetcher serving their URLs.
type researchSources struct {
	searchers []sources.Searcher
	fetcher   sources.Fetcher
	closers   []func() error
}

func (s *researchSources) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		_ = s.closers[i]()
	}
}

func (a *App) openSources(cmd *cobra.Command, fl researchFlags) (*researchSources, error) {
	src := &researchSources{}
	ok := false
	defer func() {
		if !ok {
			src.Close()
		}
	}()
	router := sources.Router{}
	var corpora corpusFetchers
	for _, c := range fl.corpora {
		ix, err := openCorpus(a, cmd, c)
		if err != nil {
			return nil, err
		}
		src.closers = append(src.closers, ix.Close)
		src.searchers = append(src.searchers, ix)
		corpora = append(corpora, ix)
	}
	if len(corpora) > 0 {
		router.Corpus = corpora
	}
	if fl.web != "" {
		ws, err := websearch.New(fl.web, websearch.Config{Getenv: a.getenv, Logger: a.Log})
		if err != nil {
			return nil, err
		}
		src.searchers = append(src.searchers, ws)
	}
	if fl.mcpFile != "" {
		f, err := mcptools.Load(fl.mcpFile, a.getenv)
		if err != nil {
			return nil, err
		}
		mgr := mcptools.Start(cmd.Context(), f, mcptools.Options{Logger: a.Log})
		src.closers = append(src.closers, mgr.Close)
		for _, fail := range mgr.Failures() {
			fmt.Fprintf(a.Stderr, "warning: MCP server %s: %v\n", fail.Server, fail.Err)
		}
		n := 0
		for _, t := range mgr.AllTools() {
			if mt, ok := t.(*mcptools.Tool); ok && mt.IsSearchSource() {
				src.searchers = append(src.searchers, mcpsearch.New(t, mcpsearch.Config{}))
				n++
			}
		}
		if n == 0 {
			fmt.Fprintf(a.Stderr, "warning: no search tool among the MCP servers of %s\n", fl.mcpFile)
		}
	}
	// The web fetcher reads any http(s) candidate, whichever searcher found it.
	wcfg := &fetch.Config{Logger: a.Log}
	if a.Config != nil {
		wcfg.AllowHosts, wcfg.CacheDir = a.Config.Sources.AllowHosts, a.Config.Sources.CacheDir
	}
	web, err := fetch.New(wcfg)
	if err != nil {
		return nil, err
	}
	router.Web = web
	src.fetcher = router
	if len(src.searchers) == 0 {
		return nil, errors.New("no usable search source")
	}
	ok = true
	return src, nil
}

// corpusFetchers serves file:// URLs from whichever of several corpus indexes holds the file.
type corpusFetchers []*corpus.Index

func (c corpusFetchers) Fetch(ctx context.Context, url string) (*sources.Document, error) {
	var errs []error
	for _, ix := range c {
		doc, err := ix.Fetch(ctx, url)
		if err == nil {
			return doc, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// ---- live progress ----

// progressDisplay shows a run's progress: a block redrawn in place on a terminal, plain lines otherwise.
type progressDisplay struct {
	w      io.Writer
	tty    bool
	fd     int
	engine string

	mu       sync.Mutex
	last     research.Event
	stage    string
	msg      string
	lines    int
	drawn    time.Time
	finished bool
}

func newProgressDisplay(w io.Writer, engine string, plain bool) *progressDisplay {
	d := &progressDisplay{w: w, engine: engine, fd: -1}
	if f, ok := w.(*os.File); ok && !plain {
		d.tty = term.IsTerminal(int(f.Fd()))
		d.fd = int(f.Fd())
	}
	return d
}

func engineLabel(engine string) string {
	if engine == extractive.Engine {
		return "extractive mode — no language model"
	}
	return engine
}

func spendLine(calls, tokens int, cost float64) string {
	return fmt.Sprintf("%d calls · %s tokens · $%.4f", calls, humanCount(tokens), cost)
}

func humanCount(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// Event receives research events; it is called one event at a time.
func (d *progressDisplay) Event(e research.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.last = e
	if e.Stage != research.StageRun {
		d.stage = e.Stage
	}
	line := describe(e)
	if line != "" {
		d.msg = line
	}
	if d.tty {
		important := e.Kind == research.EventStageStart || e.Kind == research.EventCutShort || e.Kind == research.EventRunDone
		if important || time.Since(d.drawn) > 100*time.Millisecond {
			d.draw()
		}
		return
	}
	if line != "" {
		fmt.Fprintf(d.w, "%s %-6s %s\n", e.Time.Format("15:04:05"), e.Stage, line)
	}
}

func (d *progressDisplay) draw() {
	p := d.last.Progress
	var b strings.Builder
	if d.lines > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", d.lines)
	}
	stage := d.stage
	if p.Round > 0 && stage != research.StageScope {
		stage += fmt.Sprintf(" (round %d)", p.Round)
	}
	rows := []string{
		fmt.Sprintf("deepresearch · run %s · %s", d.last.RunID, engineLabel(d.engine)),
		fmt.Sprintf("  stage: %-20s sub-questions: %d   searches: %d", stage, p.SubQuestions, p.Searches),
		fmt.Sprintf("  sources read: %d of %d candidates (%d pending)   evidence: %d (%d rejected)", p.SourcesRead,
			p.Candidates, p.ReadsPending, p.Evidence, p.Rejected),
		fmt.Sprintf("  spend: %s   in flight: %d", spendLine(p.Calls, p.Tokens, p.CostUSD), p.InFlight),
		"  " + lexical.Clip(lexical.NormalizeSpace(d.msg), 99),
	}
	width := 0
	if w, _, err := term.GetSize(d.fd); err == nil {
		width = w
	}
	for _, r := range rows {
		if width > 1 {
			r = clipWidth(r, width-1) // a wrapped row would break the cursor-up redraw
		}
		b.WriteString(r + "\n")
	}
	d.lines = len(rows)
	d.drawn = time.Now()
	fmt.Fprint(d.w, b.String())
}

// Finish draws the final state.
func (d *progressDisplay) Finish() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tty && !d.finished && d.last.RunID != "" {
		d.draw()
	}
	d.finished = true
}

// describe turns an event into one progress line ("" for events not worth a line of their own).
func describe(e research.Event) string {
	p := e.Progress
	switch e.Kind {
	case research.EventRunStart:
		return fmt.Sprintf("run %s: %s", e.RunID, e.Message)
	case research.EventResumed:
		return fmt.Sprintf("run %s resumed (%d evidence items kept)", e.RunID, p.Evidence)
	case research.EventPlan:
		var qs []string
		if e.Plan != nil {
			for _, sq := range e.Plan.SubQuestions {
				qs = append(qs, sq.ID+" "+sq.Question)
			}
		}
		return fmt.Sprintf("%d sub-questions: %s", e.Count, strings.Join(qs, " · "))
	case research.EventStageStart:
		if e.Round > 0 {
			return fmt.Sprintf("round %d", e.Round)
		}
		return "started"
	case research.EventSearch:
		return fmt.Sprintf("%s: %d hits (%s)", e.SubQuestion, e.Count, lexical.Clip(lexical.NormalizeSpace(e.Message), 59))
	case research.EventCandidates:
		return fmt.Sprintf("%d candidates picked", e.Count)
	case research.EventRead:
		return fmt.Sprintf("%s for %s: +%d evidence (%d in the pool, %d sources read)", lexical.Clip(lexical.NormalizeSpace(e.URL), 69), e.SubQuestion, e.Count, p.Evidence, p.SourcesRead)
	case research.EventEarlyStop:
		return fmt.Sprintf("early stop for %s: %s", e.SubQuestion, e.Message)
	case research.EventVerdict:
		if e.Verdict != nil && e.Verdict.Pass {
			return fmt.Sprintf("verdict: pass (%d rejected)", len(e.Verdict.Rejected))
		}
		return fmt.Sprintf("verdict: %d gaps", e.Count)
	case research.EventResearch:
		return e.Message
	case research.EventIntegrity:
		return e.Message
	case research.EventCutShort:
		return "cut short: " + e.Message
	case research.EventError:
		where := e.SubQuestion
		if e.URL != "" {
			where = e.URL
		}
		return fmt.Sprintf("error %s %s: %s", where, lexical.Clip(lexical.NormalizeSpace(e.Message), 59), lexical.Clip(lexical.NormalizeSpace(e.Err), 119))
	case research.EventReportReady:
		return fmt.Sprintf("report with %d citations: %s", e.Count, e.Message)
	case research.EventRunFailed:
		return "failed: " + e.Err
	}
	return ""
}

// clipWidth cuts s to at most w terminal columns, counting East Asian wide characters as two.
func clipWidth(s string, w int) string {
	cols := 0
	for i, r := range s {
		c := 1
		if r >= 0x1100 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hangul, r) || unicode.Is(unicode.Hiragana, r) ||
			unicode.Is(unicode.Katakana, r) || (r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xff60)) {
			c = 2
		}
		if cols+c > w {
			return s[:i]
		}
		cols += c
	}
	return s
}
