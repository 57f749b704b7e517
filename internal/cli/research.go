package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/deepresearch/deepresearch/base/atomicfile"
	"github.com/deepresearch/deepresearch/base/redact"
	"github.com/deepresearch/deepresearch/base/termsafe"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/export"
	"github.com/deepresearch/deepresearch/research/extractive"
	"github.com/deepresearch/deepresearch/sources/corpus"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

// researchFlags are the flags run and resume share.
type researchFlags struct {
	web      string
	corpora  []string
	mcpFile  string
	maxCost  float64
	maxToks  int
	maxTime  time.Duration
	rounds   int
	out      string
	engine   string
	unjudged string
	noColour bool
	follow   bool // follow links out of --corpus folders
	json     bool // the run summary as JSON on stdout
	steer    steerFlags
	from     string // the run this one follows up
}

// runSummary is what run --json prints on stdout: where the run is and what it found.
type runSummary struct {
	ID        string `json:"id"`
	Folder    string `json:"folder,omitempty"`
	Report    string `json:"report,omitempty"`
	Status    string `json:"status"`
	Citations int    `json:"citations"`
	Sources   int    `json:"sources"`
	Evidence  int    `json:"evidence"`
	CutShort  string `json:"cut_short,omitempty"`
	Error     string `json:"error,omitempty"`
}

// absPath is p made absolute when it can be, for output a script reads from another folder.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func (a *App) runsDir() string {
	if a.Config != nil && a.Config.Research.OutDir != "" {
		return a.Config.Research.OutDir
	}
	return "runs"
}

func newRunCmd(app *App) *cobra.Command {
	var (
		fl     researchFlags
		tf     temporalFlags
		detach bool
		shared string
	)
	cmd := &cobra.Command{
		Use:   `run [flags] "question"`,
		Short: "Research a question and write a cited report",
		Long: `run plans the question into sub-questions, searches the configured sources in parallel, reads the best
candidates, verifies the evidence adversarially (re-searching only what is missing) and writes a report in which
every sentence cites a quote found verbatim in a source.

Sources: --web PROVIDER (` + websearch.Help() + `),
--corpus INDEX|DIR (repeatable; a folder is indexed on the fly and the index kept), --mcp FILE (search tools of the
MCP servers in a .mcp.json file).

With no model configured (or --engine extractive) the extractive engine runs: no language model, no API key.
With a model, every sentence is also judged against its quotes on the verifier tier and published only when
the judge finds it supported; one the judge gives no verdict on, even when asked again, is removed (--unjudged
keep publishes it marked "unverified" instead).

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
				case fl.rounds < 0 || fl.rounds > research.MaxRounds:
					return fmt.Errorf("--rounds %d: give 0 (no re-search) to %d", fl.rounds, research.MaxRounds)
				case fl.rounds == 0:
					fl.rounds = -1 // the graph reads 0 as "default"; the user asked for none
				}
			}
			if fl.from != "" {
				dir, err := research.ResolveRun(app.runsDir(), fl.from)
				if err != nil {
					return usageError(fmt.Errorf("--from: %w", err))
				}
				fl.from = dir
			}
			if tf = app.temporal(tf); tf.hostPort != "" {
				if fl.from != "" {
					return usageError(errFromDurable)
				}
				return app.researchDurable(cmd, fl, tf, detach, shared, question)
			}
			return app.research(cmd, fl, question, "")
		},
	}
	addResearchFlags(cmd, &fl, true)
	addTemporalFlags(cmd, &tf)
	cmd.Flags().BoolVar(&detach, "detach", false, "with --temporal: submit, print the run id and return; Ctrl-C no longer cancels")
	cmd.Flags().StringVar(&shared, "state", "", "with --temporal: the workers' shared state, to follow the run's progress live (default $DEEPRESEARCH_STATE)")
	return cmd
}

func addResearchFlags(cmd *cobra.Command, fl *researchFlags, sources bool) {
	f := cmd.Flags()
	if sources {
		f.StringVar(&fl.web, "web", "", "search providers, comma-separated: "+strings.Join(websearch.Names(), ", "))
		f.StringArrayVar(&fl.corpora, "corpus", nil, "local corpus: an index directory or a folder to index (repeatable)")
		f.BoolVar(&fl.follow, "follow-links", false, followLinksHelp)
		f.StringVar(&fl.mcpFile, "mcp", "", `a .mcp.json file whose servers' search tools are searched ("searchTools" per server, else tools named *search*)`)
		f.IntVar(&fl.rounds, "rounds", 0, fmt.Sprintf("extra directed re-search rounds, 0 to %d (default 2)", research.MaxRounds))
		f.StringVar(&fl.out, "out", "", "run folder (default runs/<id>/)")
		f.StringVar(&fl.engine, "engine", "", "auto, llm or extractive (auto: extractive when no model is configured)")
		f.StringVar(&fl.unjudged, "unjudged", "", "a sentence the support judge gave no verdict on (after asking again): remove (default) or keep, marked unverified")
		addSteerFlags(cmd, &fl.steer)
		f.StringVar(&fl.from, "from", "", "follow up a finished run (its id or folder): reuse its documents and evidence, search only what they do not cover, link its report")
	}
	f.Float64Var(&fl.maxCost, "max-cost", 0, "cost fuse in USD: past it no new search or reading starts")
	f.IntVar(&fl.maxToks, "max-tokens", 0, "token fuse (input + output): works without prices, for local or unpriced models")
	f.DurationVar(&fl.maxTime, "max-time", 0, "time limit for searching and reading (e.g. 5m)")
	f.BoolVar(&fl.noColour, "plain", false, "plain progress lines even on a terminal")
	f.BoolVar(&fl.json, "json", false, "print the run's summary as JSON on stdout (id, folder, report, status, citations, sources, evidence); progress stays on stderr")
}

func newResumeCmd(app *App) *cobra.Command {
	var (
		fl researchFlags
		tf temporalFlags
	)
	cmd := &cobra.Command{
		Use:   "resume [RUN]",
		Short: "Continue an interrupted run from its last completed step",
		Long: `resume continues a run that was interrupted (Ctrl-C, crash, kill -9) from its last completed step: the
plan, search results, fetched texts and evidence already stored are re-used, nothing is done twice and no evidence
is duplicated. The run's sources and engine are rebuilt from what the run folder recorded.

RUN is a run folder, a run id or any unique prefix of one; without it, the latest run.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Only the flag: a configured cluster does not make every local run folder a durable run.
			if tf.hostPort != "" {
				tf = app.temporal(tf)
				if len(args) == 0 {
					return errors.New("resume --temporal needs the run id")
				}
				return app.describeDurable(cmd, tf, args[0])
			}
			dir, err := app.findRun(runArg(args))
			if err != nil {
				return err
			}
			return app.research(cmd, fl, "", dir)
		},
	}
	addResearchFlags(cmd, &fl, false)
	addTemporalFlags(cmd, &tf)
	return cmd
}

func newRunsCmd(app *App) *cobra.Command {
	var dir, shared, status string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List research runs (also those chat started here); runs rm, runs prune, runs cancel",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dirs := app.runFolders()
			if dir != "" {
				dirs = []string{dir}
			} else {
				dir = app.runsDir()
			}
			runs, err := app.allRuns(dirs)
			if err != nil {
				return err
			}
			// A shared state adds every run in it that is not here already, whichever machine ran it.
			if url := app.stateURL(shared); url != "" {
				dir += " or the shared state"
				more, err := research.Runs{State: url}.List(cmd.Context())
				if err != nil {
					err = fmt.Errorf("shared state %s cannot be read: %w", research.SharedLabel(url), err)
				}
				if err != nil && shared != "" {
					return err
				}
				if err != nil {
					// From the environment or configuration: the local runs are still worth listing.
					fmt.Fprintf(app.Stderr, "warning: the shared state cannot be read, listing local runs only: %s\n",
						redact.New(app.secrets()...).Scrub(err.Error()))
				}
				have := map[string]bool{}
				for _, r := range runs {
					have[r.ID] = true
				}
				for _, r := range more {
					if !have[r.ID] {
						runs = append(runs, r)
					}
				}
				sort.SliceStable(runs, func(i, j int) bool { return runs[i].Created.After(runs[j].Created) })
			}
			if status != "" {
				kept := runs[:0]
				for _, r := range runs {
					if r.Status == status {
						kept = append(kept, r)
					}
				}
				runs = kept
				dir += " with status " + status
			}
			if asJSON {
				if runs == nil {
					runs = []research.RunSummary{}
				}
				return writeJSON(app.Stdout, runs)
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
			if err := tw.Flush(); err != nil {
				return err
			}
			// Why a run failed, in full: a durable run whose worker could not serve it says so here.
			for _, r := range runs {
				if r.Status == research.RunFailed && r.Error != "" {
					fmt.Fprintf(app.Stdout, "%s failed: %s\n", r.ID, lexical.NormalizeSpace(r.Error))
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "folder holding the runs (default runs/, and .deepresearch/runs/ of chat)")
	cmd.Flags().StringVar(&shared, "state", "", "also list the runs of a shared state (postgres://…, as workers use; default $DEEPRESEARCH_STATE, or state in the configuration)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().StringVar(&status, "status", "", "list only the runs with this status: running, done, failed, stopped, unreadable")
	cmd.AddCommand(newRunsRmCmd(app), newRunsPruneCmd(app), newRunsCancelCmd(app))
	return cmd
}

func newShowCmd(app *App) *cobra.Command {
	var asJSON, open, events bool
	var shared, format, output string
	cmd := &cobra.Command{
		Use:   "show [RUN]",
		Short: "Print a run's report (RUN: folder, id or unique id prefix; default the latest run)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if shared != "" && len(args) == 0 {
				return errors.New("show --state needs the run id")
			}
			if asJSON {
				format = "json"
			}
			if _, err := export.Parse(format); err != nil {
				return usageError(fmt.Errorf("--format %q: want one of %s", format, export.Names()))
			}
			// The shared state (--state first; from the environment or configuration, after the local runs).
			_, ferr := app.findRun(runArg(args))
			if url := app.stateURL(shared); url != "" && len(args) == 1 && (shared != "" || ferr != nil) {
				if events {
					return app.showSharedEvents(cmd.Context(), url, args[0])
				}
				rep, err := research.Runs{State: url}.Report(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return app.writeFormat(cmd.Context(), rep, format, output)
			}
			dir, err := app.findRun(runArg(args))
			if err != nil {
				return err
			}
			if open {
				return app.openInViewer(cmd, dir)
			}
			if events {
				enc := json.NewEncoder(app.Stdout)
				return research.EachEvent(dir, func(e research.Event) error { return enc.Encode(e) })
			}
			rep, err := research.LoadReport(dir)
			if err != nil {
				info, ierr := research.LoadRunInfo(dir)
				switch {
				case ierr == nil && info.Status == research.RunDone:
					// A finished run: resume cannot help; report.json, if kept, gives report.md back.
					restored, _, rerr := research.RestoreReport(dir)
					if rerr != nil {
						return rerr
					}
					return app.writeFormat(cmd.Context(), restored, format, output)
				case ierr == nil:
					return fmt.Errorf("run %s is %s with %d evidence items and no report yet; continue it with: deepresearch resume %s",
						info.ID, info.Status, info.Evidence, dir)
				default:
					return fmt.Errorf("%s has no report, and its state cannot be read: %w", dir, ierr)
				}
			}
			return app.writeFormat(cmd.Context(), rep, format, output)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print report.json (the same as --format json)")
	cmd.Flags().StringVar(&format, "format", "md", "what to print: "+export.Names()+
		" (html: one self-contained file; docx: citations as footnotes; pdf: printed by headless Chromium; bibtex, csljson and ris: the report's sources as a bibliography)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of stdout (docx and pdf are not sent to a terminal)")
	cmd.Flags().BoolVar(&open, "open", false, "open the run in the web viewer (served on 127.0.0.1 until Ctrl-C)")
	cmd.Flags().StringVar(&shared, "state", "", "read the run from a shared state (postgres://…, as workers use)")
	cmd.Flags().BoolVar(&events, "events", false, "print the run's events (its progress so far), one JSON object a line")
	return cmd
}

// showSharedEvents prints the events every worker stored for a run in a shared state.
func (a *App) showSharedEvents(ctx context.Context, url, runID string) error {
	feed := research.NewEventFeed(url, runID)
	defer feed.Close()
	var all []research.Event
	for {
		evs, err := feed.Next(ctx)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			break
		}
		all = append(all, evs...)
	}
	if len(all) == 0 {
		return fmt.Errorf("run %s: no events in the shared state (is the run id right?)", runID)
	}
	return writeEvents(a.Stdout, all)
}

func writeEvents(w io.Writer, evs []research.Event) error {
	enc := json.NewEncoder(w)
	for _, e := range evs {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// builder returns the request builder every research surface uses, over runsDir ("" means the configured runs
// folder).
func (a *App) builder(runsDir string) *request.Builder {
	if runsDir == "" {
		runsDir = a.runsDir()
	}
	return &request.Builder{Config: a.Config, Models: a.buildModel, Getenv: a.getenv, RunsDir: runsDir, Warn: a.Stderr,
		Log: a.Log, Runner: a.runner,
		OpenCorpus: func(ctx context.Context, path string, onProgress func(corpus.Progress), followLinks bool) (*corpus.Index, error) {
			return openCorpusWith(ctx, a, path, onProgress, followLinks)
		}}
}

// request is what run's and resume's flags ask for.
func (fl researchFlags) request(question, resumeDir string) request.Research {
	return request.Research{
		Question: question, Corpora: fl.corpora, FollowLinks: fl.follow, Web: fl.web, MCPFile: fl.mcpFile, Engine: fl.engine,
		Budget: research.Budget{MaxCostUSD: fl.maxCost, MaxTokens: fl.maxToks, MaxTime: fl.maxTime}, Rounds: fl.rounds, OutDir: fl.out,
		Unjudged: fl.unjudged, ResumeDir: resumeDir, Depth: fl.steer.depth, Length: fl.steer.length,
		Instructions: fl.steer.instructions, From: fl.from,
	}
}

// research runs (resumeDir empty) or resumes a research graph with live progress.
func (a *App) research(cmd *cobra.Command, fl researchFlags, question, resumeDir string) error {
	ctx := cmd.Context()
	if err := research.CheckCost(fl.maxCost); err != nil {
		return fmt.Errorf("--max-cost: %w", err)
	}
	if fl.maxToks < 0 {
		return fmt.Errorf("--max-tokens: %d is negative; give a token count, or 0 for no token fuse", fl.maxToks)
	}
	if err := research.CheckTime(fl.maxTime); err != nil {
		return fmt.Errorf("--max-time: %w", err)
	}
	if err := research.CheckUnjudged(fl.unjudged); err != nil {
		return fmt.Errorf("--unjudged: %w", err)
	}
	if err := fl.steer.check(); err != nil {
		return err
	}
	if resumeDir != "" {
		info, err := research.LoadRunInfo(resumeDir)
		if err != nil {
			return err
		}
		if info.Status == research.RunDone {
			_, restored, err := research.RestoreReport(resumeDir)
			if err != nil {
				return err
			}
			how := "already finished"
			if restored {
				how += "; its report.md was written again from report.json"
			}
			fmt.Fprintf(a.Stdout, "run %s is %s: %s\n", info.ID, how, filepath.Join(resumeDir, research.ReportMarkdownFile))
			return nil
		}
	}
	b := a.builder("")
	req := fl.request(question, resumeDir)
	var asker *terminalIO
	var clarify bool
	if resumeDir == "" {
		var err error
		if asker, clarify, err = a.steer(cmd, fl.steer, &req); err != nil {
			return err
		}
	}
	cfg, cleanup, err := b.Build(ctx, req)
	if err != nil {
		if ctx.Err() != nil && resumeDir == "" {
			// Stopped while a corpus folder was indexed: no run began, so there is no folder to resume.
			return fmt.Errorf("interrupted before the run began, so there is nothing to resume: %w", err)
		}
		return err
	}
	defer cleanup()
	disp := newProgressDisplay(a.Stderr, cfg.Roles.Engine, fl.noColour)
	cfg.OnEvent = disp.Event
	if asker != nil {
		if fl.steer.review {
			cfg.ReviewPlan = func(ctx context.Context, p *research.Plan) (*research.Plan, error) {
				return asker.reviewPlan(ctx, cfg.OutDir, p)
			}
		}
		if clarify {
			cfg.Clarify = asker.answer // asked only when the planner can clarify and finds the question ambiguous
		}
	}
	rep, err := b.Start(ctx, cfg, resumeDir)
	disp.Finish()
	if err != nil {
		dir := resumeDir
		if dir == "" {
			dir = cfg.OutDir // the builder named the run and its folder
		}
		if fl.json {
			sum := runSummary{ID: cmp.Or(cfg.RunID, filepath.Base(dir)), Folder: absPath(dir), Status: research.RunFailed, Error: err.Error()}
			if ctx.Err() != nil {
				sum.Status = research.RunStopped
			}
			if info, ierr := research.LoadRunInfo(dir); ierr == nil {
				sum.ID = info.ID
			}
			writeJSON(a.Stdout, redactSummary(a, sum))
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
		rep.Stats.EvidenceAccepted, spendLine(rep.Engine, rep.Stats.Calls, rep.Stats.Tokens, rep.Stats.CostUSD))
	return a.finished(fl, rep, rep.Dir)
}

// finished prints where a finished run's report is — its path, or with --json the run summary — and refuses a
// report that cites nothing (exit 3), which a script must not take for an answer.
func (a *App) finished(fl researchFlags, rep *research.Report, dir string) error {
	path := filepath.Join(dir, research.ReportMarkdownFile)
	if fl.json {
		if err := writeJSON(a.Stdout, runSummary{ID: rep.RunID, Folder: absPath(dir), Report: absPath(path), Status: research.RunDone,
			Citations: len(rep.Citations), Sources: len(rep.Sources), Evidence: rep.Stats.EvidenceAccepted, CutShort: rep.CutShort}); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(a.Stdout, path)
	}
	if len(rep.Citations) == 0 {
		return nothingError(fmt.Errorf("the report cites nothing: the sources searched held no evidence for the question (%s says what was searched)", path))
	}
	return nil
}

// redactSummary removes the API keys from a summary's error, as from every printed error.
func redactSummary(a *App, s runSummary) runSummary {
	s.Error = redact.New(a.secrets()...).Scrub(s.Error)
	return s
}

// ---- live progress ----

// progressDisplay shows a run's progress: a block redrawn in place on a terminal, plain lines otherwise.
type progressDisplay struct {
	w      io.Writer
	tty    bool
	fd     int
	engine string

	mu       sync.Mutex
	start    time.Time // the first event
	reading  time.Time // the first read of the run, from which the reads' pace is measured
	last     research.Event
	stage    string
	msg      string
	lines    int
	drawn    time.Time
	finished bool
	// pending is a plain error line held back one event: when the run fails with that very error next, the line
	// is dropped, so the failure is printed once (by the command's own error message).
	pending    string
	pendingErr string
}

func newProgressDisplay(w io.Writer, engine string, plain bool) *progressDisplay {
	d := &progressDisplay{w: w, engine: engine, fd: -1}
	if f, ok := termsafe.Unwrap(w).(*os.File); ok && !plain {
		d.tty = term.IsTerminal(int(f.Fd()))
		d.fd = int(f.Fd())
		if d.tty {
			d.w = f // the display draws with its own escapes; what it draws is sanitised (draw)
		}
	}
	return d
}

func engineLabel(engine string) string {
	if engine == extractive.Engine {
		return "extractive mode — no language model"
	}
	return engine
}

// spendLine says what a run spent: model calls, tokens and cost, or, for the extractive engine, which calls no
// model, its steps.
func spendLine(engine string, calls, tokens int, cost float64) string {
	if engine == extractive.Engine {
		return fmt.Sprintf("%d steps · no model calls, no cost", calls)
	}
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
	if d.start.IsZero() {
		d.start = time.Now()
	}
	if d.reading.IsZero() && e.Stage == research.StageRead {
		d.reading = time.Now()
	}
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
	if d.pending != "" {
		fatal := (e.Kind == research.EventRunFailed || e.Kind == research.EventRunStopped) && e.Err != "" && d.pendingErr != "" && strings.Contains(e.Err, d.pendingErr)
		if !fatal {
			fmt.Fprint(d.w, d.pending)
		}
		d.pending, d.pendingErr = "", ""
	}
	switch {
	case line == "" || e.Kind == research.EventRunFailed || e.Kind == research.EventRunStopped:
		// The command reports the failure itself.
	case e.Kind == research.EventError:
		d.pending, d.pendingErr = fmt.Sprintf("%s %-6s %s\n", e.Time.Format("15:04:05"), e.Stage, line), e.Err
	default:
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
	reads := ""
	if !d.reading.IsZero() && p.ReadsPending > 0 {
		reads = "   reading: " + progressETA(time.Since(d.reading), p.SourcesRead, p.SourcesRead+p.ReadsPending)
	}
	rows := []string{
		fmt.Sprintf("deepresearch · run %s · %s · %s", termsafe.Line(d.last.RunID), engineLabel(d.engine), roundDuration(time.Since(d.start))),
		fmt.Sprintf("  stage: %-20s sub-questions: %d   searches: %d", stage, p.SubQuestions, p.Searches),
		fmt.Sprintf("  sources read: %d of %d candidates (%d pending)   evidence: %d (%d rejected)%s", p.SourcesRead,
			p.Candidates, p.ReadsPending, p.Evidence, p.Rejected, reads),
		fmt.Sprintf("  spend: %s   in flight: %d", spendLine(d.engine, p.Calls, p.Tokens, p.CostUSD), p.InFlight),
		"  " + termsafe.Line(lexical.Clip(lexical.NormalizeSpace(d.msg), 99)),
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
	if d.pending != "" {
		fmt.Fprint(d.w, d.pending)
		d.pending = ""
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
	case research.EventOutage:
		return e.Message
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
		return "failed"
	case research.EventRunStopped:
		return "stopped"
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

// writeFormat prints the report in an export format (export.Formats: the report as Markdown, JSON, HTML, DOCX or
// PDF, or its sources as a bibliography) to stdout, or with output to that file. A binary format is not sent to a
// terminal.
func (app *App) writeFormat(ctx context.Context, rep *research.Report, format, output string) error {
	f, err := export.Parse(format)
	if err != nil {
		return usageError(fmt.Errorf("--format %q: want one of %s", format, export.Names()))
	}
	if output == "" && f.Binary() {
		if o, ok := termsafe.Unwrap(app.Stdout).(*os.File); ok && term.IsTerminal(int(o.Fd())) {
			return usageError(fmt.Errorf("--format %s is a binary file: name it with --output report%s (or redirect stdout)", f, f.Ext()))
		}
	}
	b, err := export.Render(ctx, rep, f, nil)
	if err != nil {
		return err
	}
	if output != "" {
		if err := atomicfile.Write(output, b, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(app.Stderr, "wrote %s (%s, %d bytes)\n", output, f, len(b))
		return nil
	}
	_, err = app.Stdout.Write(b)
	return err
}

// writeJSON prints v as indented JSON, the form of every command's --json and --format json.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
