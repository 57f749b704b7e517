package request

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/deepresearch/deepresearch/internal/config"
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

// ModelFunc builds the model of one research role, metered into ledger.
type ModelFunc func(role string, ledger *llm.Ledger) (llm.Model, error)

// CorpusFunc opens (and updates) the corpus at path — an index directory, or a folder indexed on the fly —
// reporting indexing progress to onProgress when it is not nil.
type CorpusFunc func(ctx context.Context, path string, onProgress func(corpus.Progress), followLinks bool) (*corpus.Index, error)

// Builder turns requests into research configurations. Each run opens its corpora (indexing what changed) and
// closes them when it ends, so an idle server holds no index open. It is safe for concurrent use.
type Builder struct {
	// Config is the effective configuration; its sources, research limits and engine fill what a request leaves
	// zero. Required.
	Config *config.Config
	// Models builds the language-model roles; required for the llm engine.
	Models ModelFunc
	// Getenv reads API keys and service URLs; nil means os.Getenv.
	Getenv func(string) string
	// RunsDir is where new run folders go; default "runs".
	RunsDir string
	// Warn receives notes for the user (indexing figures, failed MCP servers); nil discards them.
	Warn io.Writer
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
	// OpenCorpus opens a corpus; required for requests that name one.
	OpenCorpus CorpusFunc
	// Runner executes a built configuration; nil means research.Run, or research.Resume when resumeDir is set.
	// Tests replace it to see what each surface would run.
	Runner func(ctx context.Context, cfg research.Config, resumeDir string) (*research.Report, error)
}

// Run builds r and runs (or resumes) it to the end.
func (b *Builder) Run(ctx context.Context, r Research) (*research.Report, error) {
	cfg, cleanup, err := b.Build(ctx, r)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	return b.Start(ctx, cfg, r.ResumeDir)
}

// Start runs a built configuration (resumes the run in resumeDir when set) with the Runner.
func (b *Builder) Start(ctx context.Context, cfg research.Config, resumeDir string) (*research.Report, error) {
	if b.Runner != nil {
		return b.Runner(ctx, cfg, resumeDir)
	}
	if resumeDir != "" {
		return research.Resume(ctx, resumeDir, cfg)
	}
	return research.Run(ctx, cfg)
}

// Resolve fills what r leaves zero from the configuration (or, when resuming, from the run's recorded settings),
// picks the engine and makes corpus paths absolute, then validates the result. It opens nothing.
func (b *Builder) Resolve(r Research) (Research, error) {
	if r.ResumeDir != "" {
		info, err := research.LoadRunInfo(r.ResumeDir)
		if err != nil {
			return r, err
		}
		s := info.Settings
		r.Web, r.MCPFile, r.Engine, r.Corpora = s[SettingWeb], s[SettingMCP], s[SettingEngine], nil
		r.FollowLinks = s[SettingFollowLinks] == "true"
		if c := s[SettingCorpus]; c != "" {
			if err := json.Unmarshal([]byte(c), &r.Corpora); err != nil {
				return r, fmt.Errorf("run %s: stored corpus setting: %w", r.ResumeDir, err)
			}
		}
		// A run folder is untrusted input: the .mcp.json it names starts programs, so only one the user has
		// configured or whose folder they trust is started again.
		if f := r.MCPFile; f != "" && f != b.Config.MCPFile && !config.NewTrust(b.getenv).Trusted(filepath.Dir(f)) {
			fmt.Fprintf(b.warn(), "note: not starting the MCP servers of %s, which run folder %s names: that folder is not trusted (deepresearch trust %s)\n",
				f, r.ResumeDir, filepath.Dir(f))
			r.MCPFile = ""
		}
	} else {
		if r.From != "" {
			dir, err := research.ResolveRun(b.runsDir(), r.From)
			if err != nil {
				return r, err
			}
			r.From = dir
		}
		cfg := b.Config
		if !r.HasSources() {
			r.Web, r.Corpora, r.MCPFile = cfg.Sources.Web, append([]string(nil), cfg.Sources.Corpus...), cfg.MCPFile
		}
		// What the request leaves zero, the configuration's research settings fill.
		rc, bd := cfg.Research, &r.Budget
		r.Engine = cmp.Or(r.Engine, rc.Engine)
		r.Rounds = cmp.Or(r.Rounds, rc.Rounds)
		r.MaxCandidates = cmp.Or(r.MaxCandidates, rc.MaxCandidates)
		r.Unjudged = cmp.Or(r.Unjudged, rc.Unjudged)
		r.Depth = cmp.Or(r.Depth, rc.Depth)
		r.Length = cmp.Or(r.Length, rc.Length)
		bd.MaxCostUSD = cmp.Or(bd.MaxCostUSD, rc.MaxCostUSD)
		bd.MaxTokens = cmp.Or(bd.MaxTokens, rc.MaxTokens)
		bd.MaxTime = cmp.Or(bd.MaxTime, rc.MaxTime)
		bd.Concurrency = cmp.Or(bd.Concurrency, rc.Concurrency)
		bd.MaxCalls = cmp.Or(bd.MaxCalls, rc.MaxCalls)
		abs := make([]string, len(r.Corpora))
		for i, c := range r.Corpora {
			abs[i] = c
			if p, err := filepath.Abs(c); err == nil && strings.TrimSpace(c) != "" {
				abs[i] = p
			}
		}
		r.Corpora = abs
	}
	if err := r.Validate(); err != nil {
		return r, err
	}
	engine, err := b.chooseEngine(r.Engine)
	if err != nil {
		return r, err
	}
	r.Engine = engine
	if r.Depth == "" && r.ResumeDir == "" {
		// auto needs a planner that triages: the language-model planner does; the extractive one does not.
		r.Depth = research.DepthStandard
		if engine == llmroles.Engine {
			r.Depth = research.DepthAuto
		}
	}
	if !r.HasSources() {
		return r, errors.New("no sources: name a corpus folder (--corpus DIR), a web search provider (--web " +
			strings.Join(websearch.Names(), ", ") + ") or an MCP file (--mcp FILE), or set sources in the configuration")
	}
	return r, nil
}

// Build resolves r and opens what it names: the corpora (indexing a folder on the fly, with the progress sent to
// r.OnEvent as index events), the web search provider, the MCP servers whose search tools become sources, the
// fetcher and the engine's roles. cleanup releases what the run holds (indexes, MCP servers); call it when the
// run is over, also after an error of research.Run.
func (b *Builder) Build(ctx context.Context, r Research) (cfg research.Config, cleanup func(), err error) {
	r, err = b.Resolve(r)
	if err != nil {
		return research.Config{}, nil, err
	}
	var closers []func() error
	release := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			_ = closers[i]()
		}
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	var searchers []sources.Searcher
	var ixs corpusFetchers
	r = r.Named() // index events carry the run id
	open := b.OpenCorpus
	if open == nil && len(r.Corpora) > 0 {
		return research.Config{}, nil, errors.New("request: no corpus opener configured")
	}
	for _, c := range r.Corpora {
		var onProgress func(corpus.Progress)
		if r.OnEvent != nil {
			onEvent, runID := r.OnEvent, r.RunID
			onProgress = func(p corpus.Progress) { onEvent(IndexEvent(runID, p)) }
		}
		ix, err := open(ctx, c, onProgress, r.FollowLinks)
		if err != nil {
			return research.Config{}, nil, err
		}
		closers = append(closers, ix.Close)
		searchers = append(searchers, ix)
		ixs = append(ixs, ix)
	}
	webNames, err := websearch.ParseList(r.Web)
	if err != nil {
		return research.Config{}, nil, err
	}
	for _, name := range webNames {
		ws, err := websearch.New(name, websearch.Config{Getenv: b.getenv, Logger: b.Log})
		if err != nil {
			return research.Config{}, nil, err
		}
		searchers = append(searchers, ws)
	}
	if r.MCPFile != "" {
		ss, closeMCP, err := b.mcpSearchers(ctx, r.MCPFile)
		if err != nil {
			return research.Config{}, nil, err
		}
		closers = append(closers, closeMCP)
		searchers = append(searchers, ss...)
	}
	if len(searchers) == 0 {
		return research.Config{}, nil, errors.New("no usable search source")
	}
	// The web fetcher reads any http(s) candidate, whichever searcher found it; corpus indexes serve file:// URLs.
	web, err := fetch.New(&fetch.Config{Logger: b.Log, AllowHosts: b.Config.Sources.AllowHosts, CacheDir: b.Config.Sources.CacheDir})
	if err != nil {
		return research.Config{}, nil, err
	}
	router := sources.Router{Web: web}
	if len(ixs) > 0 {
		router.Corpus = ixs
	}
	ledger := r.Ledger
	if ledger == nil {
		ledger = &llm.Ledger{}
	}
	roles, models, err := b.roles(r.Engine, searchers, ledger)
	if err != nil {
		return research.Config{}, nil, err
	}
	b.warnUnpriced(models, r.Budget)
	cfg = research.Config{
		Question: r.Question, Roles: roles, Fetcher: router, RunID: r.RunID, OutDir: r.OutDir, Budget: r.Budget,
		Rounds: r.Rounds, MaxCandidates: r.MaxCandidates, Unjudged: r.Unjudged, Ledger: ledger, OnEvent: r.OnEvent, Log: b.Log,
		Depth: r.Depth, Length: r.Length, Instructions: r.Instructions, Plan: r.Plan, ReviewPlan: r.ReviewPlan, Clarify: r.Clarify,
		From: r.From, Settings: Settings(r), Secrets: b.Config.Secrets(),
	}
	if r.ResumeDir == "" {
		if cfg.OutDir == "" {
			cfg.OutDir = filepath.Join(b.runsDir(), cfg.RunID) // named above
		}
		if err := os.MkdirAll(filepath.Dir(cfg.OutDir), 0o755); err != nil {
			return research.Config{}, nil, fmt.Errorf("run folder: %w", err)
		}
	}
	return cfg, release, nil
}

// Settings are what a run records so that a resume rebuilds the same sources and engine.
func Settings(r Research) map[string]string {
	corpusJSON, _ := json.Marshal(r.Corpora)
	if r.Corpora == nil {
		corpusJSON = []byte("[]")
	}
	s := map[string]string{SettingWeb: r.Web, SettingCorpus: string(corpusJSON), SettingMCP: r.MCPFile,
		SettingEngine: r.Engine}
	if r.FollowLinks {
		s[SettingFollowLinks] = "true"
	}
	return s
}

func (b *Builder) getenv(k string) string {
	if b.Getenv != nil {
		return b.Getenv(k)
	}
	return os.Getenv(k)
}

func (b *Builder) runsDir() string {
	if b.RunsDir != "" {
		return b.RunsDir
	}
	return "runs"
}

func (b *Builder) warn() io.Writer {
	if b.Warn != nil {
		return b.Warn
	}
	return io.Discard
}

// chooseEngine resolves auto: the extractive engine when no model is configured.
func (b *Builder) chooseEngine(engine string) (string, error) {
	switch engine {
	case "", EngineAuto:
		if b.Config.HasModel() {
			return llmroles.Engine, nil
		}
		return extractive.Engine, nil
	case llmroles.Engine:
		if !b.Config.HasModel() {
			return "", errors.New("engine llm needs a model: pass --provider and --model (and --base-url for a local server), or use the extractive engine")
		}
		return engine, nil
	case extractive.Engine:
		return engine, nil
	}
	return "", fmt.Errorf("unknown engine %q: want auto, llm or extractive", engine)
}

// roles returns the role set of an engine. Language-model roles get one metered model per role, on the tier the
// configuration assigns it, so the cost fuse sees every call.
func (b *Builder) roles(engine string, searchers []sources.Searcher, ledger *llm.Ledger) (research.Roles, []llm.Model, error) {
	switch engine {
	case extractive.Engine:
		return extractive.New(extractive.Config{Searchers: searchers, Log: b.Log}), nil, nil
	case llmroles.Engine:
		if b.Models == nil {
			return research.Roles{}, nil, errors.New("request: no model builder configured for the llm engine")
		}
		var models []llm.Model
		cfg := llmroles.Config{Sources: searchers, Logger: b.Log}
		for _, r := range []struct {
			role string
			m    *llm.Model
		}{
			{llmroles.RolePlanner, &cfg.Planner}, {llmroles.RoleSearcher, &cfg.Searcher},
			{llmroles.RoleAnalyst, &cfg.Analyst}, {llmroles.RoleVerifier, &cfg.Verifier},
			{llmroles.RoleSynthesizer, &cfg.Synthesizer},
		} {
			m, err := b.Models(r.role, ledger)
			if err != nil {
				return research.Roles{}, nil, err
			}
			*r.m = m
			models = append(models, m)
		}
		return llmroles.New(cfg), models, nil
	}
	return research.Roles{}, nil, fmt.Errorf("unknown engine %q", engine)
}

// warnUnpriced says when the cost fuse cannot see a model's spend: a model without a price (unknown to the
// catalogue, or a local model) costs $0 to the ledger, so only a token fuse (max_tokens) can stop it.
func (b *Builder) warnUnpriced(models []llm.Model, budget research.Budget) {
	if budget.MaxCostUSD <= 0 {
		return
	}
	seen := map[string]bool{}
	for _, m := range models {
		info := m.Info()
		if info.Price.Input > 0 || info.Price.Output > 0 || seen[info.Name] {
			continue
		}
		seen[info.Name] = true
		hint := "no token fuse is set: pass --max-tokens or set research.max_tokens in the configuration"
		if budget.MaxTokens > 0 {
			hint = fmt.Sprintf("the token fuse of %d tokens still applies", budget.MaxTokens)
		}
		fmt.Fprintf(b.warn(), "warning: the cost fuse of $%.2f cannot price model %s (no price in the catalogue or the configuration: set models.%s.input_price and output_price); %s\n",
			budget.MaxCostUSD, info.Name, info.Name, hint)
	}
}

// mcpSearchers starts the MCP servers of file and returns their search tools as searchers.
func (b *Builder) mcpSearchers(ctx context.Context, file string) ([]sources.Searcher, func() error, error) {
	f, err := mcptools.Load(file, b.getenv)
	if err != nil {
		return nil, nil, err
	}
	mgr := mcptools.Start(ctx, f, mcptools.Options{Logger: b.Log})
	for _, fail := range mgr.Failures() {
		fmt.Fprintf(b.warn(), "warning: MCP server %s: %v\n", fail.Server, fail.Err)
	}
	var out []sources.Searcher
	for _, t := range mgr.AllTools() {
		if mt, ok := t.(*mcptools.Tool); ok && mt.IsSearchSource() {
			out = append(out, mcpsearch.New(t, mcpsearch.Config{}))
		}
	}
	if len(out) == 0 {
		fmt.Fprintf(b.warn(), "warning: no search tool among the MCP servers of %s\n", file)
	}
	return out, mgr.Close, nil
}

// IndexEvent turns corpus indexing progress into a run event, so that every surface showing a run's events
// (terminal, viewer, MCP progress) shows indexing too.
func IndexEvent(runID string, p corpus.Progress) research.Event {
	e := research.Event{Time: time.Now().UTC(), RunID: runID, Stage: research.StageIndex, Kind: research.EventIndexProgress,
		Count: p.Done, Total: p.Total, URL: corpus.FileURL(p.Path, 0, 0)}
	if p.Path == "" {
		e.URL = ""
	}
	switch p.Phase {
	case "waiting":
		e.Message = fmt.Sprintf("waiting for another deepresearch process to finish indexing %s", p.Root)
		if p.Total > 0 {
			e.Message += fmt.Sprintf(" (it has done %d/%d files)", p.Done, p.Total)
		}
	case "scanning":
		e.Message = fmt.Sprintf("scanning %s", p.Root)
	case "done":
		e.Message = fmt.Sprintf("indexed %s", p.Root)
	default:
		e.Message = fmt.Sprintf("indexing %s: %d/%d files", p.Root, p.Done, p.Total)
	}
	return e
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
