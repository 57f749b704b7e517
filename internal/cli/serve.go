package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/durable"
	"github.com/deepresearch/deepresearch/internal/mcpserver"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/internal/webui"
	"github.com/deepresearch/deepresearch/llm/providers"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources/corpus"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

func newServeCmd(app *App) *cobra.Command {
	var addr, runs, stateFlag string
	var tf temporalFlags
	var tok tokenFlags
	var opts viewerOptions
	var api apiFlags
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8787] [--runs DIR] [--token TOKEN] [--api --corpus DIR --web PROVIDER --mcp FILE]",
		Short: "Web viewer: start runs, watch them live, read reports and click citations to their quotes",
		Long: `serve starts the web application: a form to start a research run, a live view of the run (stages,
sub-questions, sources, evidence as it arrives, spend), the finished report whose citations open the quoted
passage highlighted in the stored source text, past runs, and report.md / report.json downloads.

It listens on 127.0.0.1 by default. Any other address requires an access token (--token-file, DEEPRESEARCH_TOKEN
or --token, which every user of the machine can read in the process list): every request must carry it, as
"Authorization: Bearer TOKEN" or through the link printed at start, which sets a cookie for this port only. Runs
use the configured engine (extractive when no model is configured).

Any local process can reach a loopback port, so the form reads corpora only from the folders the server shares,
listed on its page: --root DIR (repeatable), else sources.roots in the configuration, else the working folder and
the folders already indexed (deepresearch index), plus the configured sources.corpus. At most --max-runs runs go
at once; the form refuses more until one ends.

With --temporal (or temporal.host_port in the configuration) runs are submitted to a Temporal cluster and executed
by its workers (deepresearch worker); the page follows them live, Stop cancels the workflow, and the report is
written into the runs folder as usual. --state postgres://… (or DEEPRESEARCH_STATE, or state in the
configuration) lists and shows every run of that shared state besides the local ones, whichever machine ran it;
--temporal needs it.

--api also serves an OpenAI-compatible API at /v1 (GET /v1/models, POST /v1/chat/completions, streaming or not),
so chat UIs (Open WebUI, LibreChat, …) and OpenAI SDKs can use deepresearch as a model: the last user message is
the question, the sources are --corpus, --web and --mcp as run takes them (default: the configuration's
sources), progress streams as reasoning (reasoning_content; "reasoning_format": "think" puts it in <think> tags),
and the answer is the report with its sources and a link to it in the viewer. The models are deepresearch and
deepresearch-quick, -standard and -deep. The access token is the API key; the runs count against --max-runs.`,
		Example: `  deepresearch serve
  DEEPRESEARCH_TOKEN=$(openssl rand -hex 16) deepresearch serve --api --corpus ~/notes --addr 0.0.0.0:8787
  deepresearch serve --runs ~/research/runs
  DEEPRESEARCH_TOKEN=$(openssl rand -hex 16) deepresearch serve --addr 0.0.0.0:8787
  deepresearch serve --temporal temporal:7233 --state postgres://research@db/research`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			token, err := tok.token(app)
			if err != nil {
				return err
			}
			if err := webui.CheckBind(addr, token); err != nil {
				return err
			}
			if runs == "" {
				runs = app.runsDir()
			}
			be, err := app.backend(cmd.Context(), tf, stateFlag)
			if err != nil {
				return err
			}
			defer be.close()
			opts.token = token
			if err := api.check(cmd); err != nil {
				return err
			}
			if api.on {
				def := mcpDefaults(app, api.corpora, api.web, api.mcpFile)
				if len(def.Corpus) == 0 && def.Web == "" && def.MCPFile == "" {
					return usageError(errors.New("serve --api needs the sources its answers use: --corpus DIR, --web PROVIDER or --mcp FILE (or sources in the configuration)"))
				}
				opts.api = &def
			}
			return app.serveViewer(cmd, addr, runs, "/", nil, be, opts)
		},
	}
	addTemporalFlags(cmd, &tf)
	cmd.Flags().StringVar(&stateFlag, "state", "", "shared state to list and show runs from: postgres://… (default $DEEPRESEARCH_STATE, or state in the configuration)")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8787", "address to listen on (non-loopback needs --token)")
	cmd.Flags().StringVar(&runs, "runs", "", "folder of run folders (default runs/, or research.out_dir)")
	addTokenFlags(cmd, &tok, "access token required on every request")
	cmd.Flags().StringArrayVar(&opts.roots, "root", nil, "a folder the form may read corpora from, with those below it (repeatable; default: sources.roots, else the working folder and the folders already indexed)")
	cmd.Flags().IntVar(&opts.maxRuns, "max-runs", webui.DefaultMaxRuns, "runs going at once (the form's and the API's); more are refused")
	cmd.Flags().BoolVar(&api.on, "api", false, "also serve the OpenAI-compatible API at /v1 (models deepresearch, deepresearch-quick, -standard, -deep)")
	cmd.Flags().StringArrayVar(&api.corpora, "corpus", nil, "with --api: local corpus the answers search, an index directory or a folder (repeatable)")
	cmd.Flags().StringVar(&api.web, "web", "", "with --api: search providers the answers use, comma-separated: "+strings.Join(websearch.Names(), ", "))
	cmd.Flags().StringVar(&api.mcpFile, "mcp", "", "with --api: a .mcp.json file whose servers' search tools the answers search")
	return cmd
}

// apiFlags are serve's OpenAI-compatible API and the sources its answers use.
type apiFlags struct {
	on      bool
	corpora []string
	web     string
	mcpFile string
}

// check refuses API sources without --api: the viewer's form names its own sources.
func (a apiFlags) check(cmd *cobra.Command) error {
	if a.on {
		return nil
	}
	for _, name := range []string{"corpus", "web", "mcp"} {
		if cmd.Flags().Changed(name) {
			return usageError(fmt.Errorf("--%s sets the sources of the API's answers and needs --api (the viewer's form names its own sources)", name))
		}
	}
	return nil
}

// apiStart runs the API's completions through run over the server's sources, at the depth the model name asks
// for (a row of research's depth table); the plain model keeps the configured one.
func apiStart(run runFunc, def mcpserver.Sources) webui.APIStartFunc {
	return func(ctx context.Context, req webui.RunRequest, depth string) (*research.Report, error) {
		r := req.Research()
		r.Corpora = append([]string(nil), def.Corpus...)
		r.Web, r.MCPFile = def.Web, def.MCPFile
		if depth != "" {
			r.Depth = depth
		}
		return run(ctx, r)
	}
}

// viewerOptions are the web viewer's settings beyond its address and runs folder.
type viewerOptions struct {
	token   string
	roots   []string // --root
	maxRuns int
	api     *mcpserver.Sources // --api: the sources of the API's answers; nil: no API
}

// tokenFlags are a server's ways to be given its access token.
type tokenFlags struct{ value, file string }

func addTokenFlags(cmd *cobra.Command, t *tokenFlags, what string) {
	cmd.Flags().StringVar(&t.value, "token", "", what+"; visible to every user of this machine in the process list: prefer --token-file or $DEEPRESEARCH_TOKEN")
	cmd.Flags().StringVar(&t.file, "token-file", "", "read the access token from this file (its first line)")
}

// maxTokenFile bounds what --token-file reads.
const maxTokenFile = 4 << 10

// token is the access token: --token, else the first line of --token-file, else $DEEPRESEARCH_TOKEN; empty means
// none. Naming both flags, or a file that is empty, unreadable or not a regular file, is an error.
func (t tokenFlags) token(app *App) (string, error) {
	switch {
	case t.value != "" && t.file != "":
		return "", errors.New("give the access token once: --token or --token-file, not both")
	case t.value != "":
		return t.value, nil
	case t.file == "":
		return app.getenv("DEEPRESEARCH_TOKEN"), nil
	}
	f, err := os.OpenFile(t.file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("--token-file %s: not a regular file", t.file)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile))
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if tok := strings.TrimSpace(line); tok != "" {
		return tok, nil
	}
	return "", fmt.Errorf("--token-file %s: the file holds no token on its first line", t.file)
}

// serverRoots are the folders a server that other local processes can reach (the viewer, mcp --http) may read
// corpora from: the --root flags, else sources.roots, else the working folder and every folder already indexed;
// always with the configured sources.corpus and the server's own default corpora (extra), which the user named.
func (app *App) serverRoots(flags []string, extra ...string) []string {
	roots := flags
	if len(roots) == 0 {
		roots = app.Config.Sources.Roots
	}
	if len(roots) == 0 {
		if wd, err := os.Getwd(); err == nil {
			roots = append(roots, wd)
		}
		roots = append(roots, corpus.Indexed()...)
	}
	roots = append(append(slices.Clone(roots), app.Config.Sources.Corpus...), extra...)
	return request.NewRoots(roots...).Dirs()
}

// serveViewer serves the web viewer over the runs folder until the command's context ends, printing the link to
// page; opened, when set, is told that link once the server listens.
func (app *App) serveViewer(cmd *cobra.Command, addr, runs, page string, opened func(link string), be backend, opts viewerOptions) error {
	token := opts.token
	b := app.builder(runs)
	run := be.run
	if run == nil {
		run = b.Run
	}
	defCorpus := ""
	if len(app.Config.Sources.Corpus) > 0 {
		defCorpus = app.Config.Sources.Corpus[0]
	}
	// The form offers only the web providers that can run here (a key or instance configured, or none needed).
	var web []string
	for _, name := range websearch.Names() {
		if _, err := websearch.New(name, websearch.Config{Getenv: app.getenv}); err == nil {
			web = append(web, name)
		}
	}
	wc := webui.Config{
		RunsDir: runs, State: be.state, Token: token, WebProviders: web, DefaultCorpus: defCorpus, Log: app.Log, Engine: app.engineDescription(be.run != nil),
		Roots: app.serverRoots(opts.roots), MaxRuns: opts.maxRuns,
		CheckWeb: func(name string) error {
			_, err := websearch.New(name, websearch.Config{Getenv: app.getenv})
			return err
		},
		Start: webStart(run), Cancel: be.cancel,
		Clarify: app.Config.Research.Clarify, ClarifyWait: app.Config.Research.ClarifyTimeout,
	}
	if be.run != nil {
		wc.AskUnavailable = "they run on Temporal workers"
	}
	if opts.api != nil {
		wc.API = &webui.APIConfig{Start: apiStart(run, *opts.api)}
	}
	srv, err := webui.New(wc)
	if err != nil {
		return err
	}
	defer srv.Close()
	return portHint(listenAndServe(cmd.Context(), app, addr, srv.Handler(), func(base string) string {
		link := base + page
		if token != "" {
			link += "?token=" + token
		}
		if opened != nil {
			opened(link)
		}
		if opts.api != nil {
			link += fmt.Sprintf("\ndeepresearch: OpenAI-compatible API at %s/v1 (models %s; the access token is the API key)", base, apiModelNames())
		}
		return link
	}), "--addr")
}

// engineDescription says which engine and models a run started here uses: the configured model of each tier, or
// the extractive engine; durable: the workers', whose configuration this process does not see.
func (app *App) engineDescription(durable bool) string {
	if durable {
		return "the Temporal workers' engine and models"
	}
	c := app.Config
	if c == nil || !c.HasModel() || c.Research.Engine == "extractive" {
		return "the extractive engine (no language model configured)"
	}
	var parts []string
	seen := map[string]bool{}
	for _, tier := range providers.Tiers() {
		s := c.ModelForTier(tier)
		m := s.Provider + " " + s.Model
		if !seen[m] {
			seen[m] = true
			parts = append(parts, tier+": "+m)
		}
	}
	if len(parts) == 1 {
		return strings.SplitN(parts[0], ": ", 2)[1]
	}
	return strings.Join(parts, " · ")
}

// portHint adds to a refusal of an address in use the flag that picks another one.
func portHint(err error, flag string) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w: another program (perhaps another deepresearch) serves there; pick another address with %s HOST:PORT (port 0: any free port)", err, flag)
	}
	return err
}

func apiModelNames() string { return strings.Join(webui.ModelNames(), ", ") }

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

// runFunc executes one research request to its report: the request builder in this process, or
// durableRunner on Temporal.
type runFunc func(ctx context.Context, req request.Research) (*research.Report, error)

// webStart runs the web viewer's requests through run.
func webStart(run runFunc) webui.StartFunc {
	return func(ctx context.Context, req webui.RunRequest) (*research.Report, error) {
		return run(ctx, req.Research())
	}
}

// backend is where a long-lived surface (the viewer, the MCP server) runs research and reads runs from.
type backend struct {
	state string  // shared state, or empty
	run   runFunc // nil: in this process
	// cancel stops a durable run of the shared state by its id (the workflow's cancellation, as the viewer's own
	// runs are stopped); nil without Temporal.
	cancel func(ctx context.Context, runID string) error
	close  func()
}

// backend connects a surface to its configured Temporal cluster and shared state, failing at once — with the
// address in the message — when either cannot be reached.
func (app *App) backend(ctx context.Context, tf temporalFlags, stateFlag string) (backend, error) {
	be := backend{close: func() {}}
	url, err := app.sharedState(ctx, stateFlag)
	if err != nil {
		return be, err
	}
	be.state = url
	tf = app.temporal(tf)
	if tf.hostPort == "" {
		return be, nil
	}
	if url == "" {
		return be, errors.New("--temporal needs the shared state its workers use: --state postgres://… (or DEEPRESEARCH_STATE)")
	}
	c, err := app.temporalClient(tf)
	if err != nil {
		return be, err
	}
	be.run, be.close = durableRunner(c, tf, url), c.Close
	be.cancel = func(ctx context.Context, runID string) error {
		if err := durable.Cancel(ctx, c, runID); err != nil {
			return err
		}
		return research.MarkSharedStopped(ctx, url, runID)
	}
	return be, nil
}
