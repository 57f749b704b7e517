package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/webui"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/corpus"
	"github.com/deepresearch/deepresearch/sources/fetch"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

func newServeCmd(app *App) *cobra.Command {
	var addr, runs, token string
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8787] [--runs DIR] [--token TOKEN]",
		Short: "Web viewer: start runs, watch them live, read reports and click citations to their quotes",
		Long: `serve starts the web application: a form to start a research run, a live view of the run (stages,
sub-questions, sources, evidence as it arrives, spend), the finished report whose citations open the quoted
passage highlighted in the stored source text, past runs, and report.md / report.json downloads.

It listens on 127.0.0.1 by default. Any other address requires an access token (--token or DEEPRESEARCH_TOKEN):
every request must carry it, as "Authorization: Bearer TOKEN" or through the link printed at start, which sets a
cookie. Runs use the configured engine (extractive when no model is configured).`,
		Example: `  deepresearch serve
  deepresearch serve --runs ~/research/runs
  DEEPRESEARCH_TOKEN=$(openssl rand -hex 16) deepresearch serve --addr 0.0.0.0:8787`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if token == "" {
				token = app.getenv("DEEPRESEARCH_TOKEN")
			}
			if err := webui.CheckBind(addr, token); err != nil {
				return err
			}
			if runs == "" {
				runs = app.runsDir()
			}
			starter := newResearchStarter(app, cmd)
			defer starter.Close()
			defCorpus := ""
			if len(app.Config.Sources.Corpus) > 0 {
				defCorpus = app.Config.Sources.Corpus[0]
			}
			srv, err := webui.New(webui.Config{
				RunsDir: runs, Token: token, WebProviders: websearch.Names(), DefaultCorpus: defCorpus, Log: app.Log,
				Start: func(ctx context.Context, req webui.RunRequest) (*research.Report, error) {
					p := startParams{Question: req.Question, Web: req.Web, Budget: req.Budget, Rounds: req.Rounds,
						RunID: req.RunID, OutDir: req.OutDir, OnEvent: req.OnEvent}
					if req.Corpus != "" {
						p.Corpora = []string{req.Corpus}
					}
					return starter.Run(ctx, p)
				},
			})
			if err != nil {
				return err
			}
			defer srv.Close()
			return listenAndServe(cmd.Context(), app, addr, srv.Handler(), func(base string) string {
				if token != "" {
					return base + "/?token=" + token
				}
				return base + "/"
			})
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8787", "address to listen on (non-loopback needs --token)")
	cmd.Flags().StringVar(&runs, "runs", "", "folder of run folders (default runs/, or research.out_dir)")
	cmd.Flags().StringVar(&token, "token", "", "access token required on every request (default $DEEPRESEARCH_TOKEN)")
	return cmd
}

// listenAndServe serves h on addr until ctx ends, printing the address users should open.
func listenAndServe(ctx context.Context, app *App, addr string, h http.Handler, link func(base string) string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(app.Stdout, "deepresearch: serving on %s\n", link("http://"+ln.Addr().String()))
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Event streams never end on their own; Shutdown waits for them until the timeout, then Close cuts them.
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	return nil
}

// startParams is one run requested by an interactive surface (web viewer, MCP tool, chat).
type startParams struct {
	Question string
	Corpora  []string
	Web      string
	Budget   research.Budget
	Rounds   int
	RunID    string
	OutDir   string
	OnEvent  func(research.Event)
	// Ledger records the run's model spend; nil means a fresh one.
	Ledger *llm.Ledger
}

// researchStarter runs research for the long-lived surfaces. Each run opens its corpora (indexing what changed)
// and closes them when it ends: an idle server holds no index open, and opening one is cheap because readers
// open the current generation read-only and never wait for a writer.
type researchStarter struct {
	app *App
	cmd *cobra.Command
}

func newResearchStarter(app *App, cmd *cobra.Command) *researchStarter {
	return &researchStarter{app: app, cmd: cmd}
}

// Close is kept for the surfaces' shutdown path; runs close their own indexes.
func (s *researchStarter) Close() {}

// index opens (and updates) the corpus at path for one run, reporting indexing progress as run events.
func (s *researchStarter) index(ctx context.Context, path string, p startParams) (*corpus.Index, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", path, err)
	}
	var onProgress func(corpus.Progress)
	if p.OnEvent != nil {
		onProgress = func(pr corpus.Progress) { p.OnEvent(indexEvent(p.RunID, pr)) }
	}
	return openCorpusWith(ctx, s.app, abs, onProgress)
}

// Run executes one research run with the configured engine over the requested sources.
func (s *researchStarter) Run(ctx context.Context, p startParams) (*research.Report, error) {
	a := s.app
	if len(p.Corpora) == 0 && p.Web == "" {
		return nil, errors.New("no sources: name a corpus folder or a web search provider")
	}
	engine, err := a.chooseEngine(a.Config.Research.Engine)
	if err != nil {
		return nil, err
	}
	var searchers []sources.Searcher
	var ixs corpusFetchers
	abs := make([]string, 0, len(p.Corpora))
	defer func() {
		for _, ix := range ixs {
			ix.Close()
		}
	}()
	for _, c := range p.Corpora {
		ix, err := s.index(ctx, c, p)
		if err != nil {
			return nil, err
		}
		searchers = append(searchers, ix)
		ixs = append(ixs, ix)
		if pa, err := filepath.Abs(c); err == nil {
			c = pa
		}
		abs = append(abs, c)
	}
	if p.Web != "" {
		ws, err := websearch.New(p.Web, websearch.Config{Getenv: a.getenv, Logger: a.Log})
		if err != nil {
			return nil, err
		}
		searchers = append(searchers, ws)
	}
	wcfg := &fetch.Config{Logger: a.Log, AllowHosts: a.Config.Sources.AllowHosts, CacheDir: a.Config.Sources.CacheDir}
	web, err := fetch.New(wcfg)
	if err != nil {
		return nil, err
	}
	router := sources.Router{Web: web}
	if len(ixs) > 0 {
		router.Corpus = ixs
	}
	ledger := p.Ledger
	if ledger == nil {
		ledger = &llm.Ledger{}
	}
	roles, err := a.buildRoles(engine, searchers, ledger)
	if err != nil {
		return nil, err
	}
	rc := a.Config.Research
	b := p.Budget
	if b.MaxCostUSD == 0 {
		b.MaxCostUSD = rc.MaxCostUSD
	}
	if b.MaxTokens == 0 {
		b.MaxTokens = rc.MaxTokens
	}
	if b.MaxTime == 0 {
		b.MaxTime = rc.MaxTime
	}
	if b.Concurrency == 0 {
		b.Concurrency = rc.Concurrency
	}
	if b.MaxCalls == 0 {
		b.MaxCalls = rc.MaxCalls
	}
	rounds := p.Rounds
	if rounds == 0 {
		rounds = rc.Rounds
	}
	// The same settings as `deepresearch run` stores, so `deepresearch resume` can continue these runs too.
	corpusJSON, _ := json.Marshal(abs)
	cfg := research.Config{
		Question: p.Question, Roles: roles, Fetcher: router, RunID: p.RunID, OutDir: p.OutDir, Budget: b, Rounds: rounds,
		MaxCandidates: rc.MaxCandidates, Ledger: ledger, OnEvent: p.OnEvent, Log: a.Log, Secrets: a.secrets(),
		Settings: map[string]string{settingWeb: p.Web, settingCorpus: string(corpusJSON), settingEngine: engine},
	}
	if cfg.OutDir != "" {
		if err := os.MkdirAll(filepath.Dir(cfg.OutDir), 0o755); err != nil {
			return nil, err
		}
	}
	return research.Run(ctx, cfg)
}
