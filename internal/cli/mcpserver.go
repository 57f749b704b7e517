package cli

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/mcpserver"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

func newMCPCmd(app *App) *cobra.Command {
	var (
		httpAddr, runs, web, mcpFile, stateFlag string
		corpora, roots                          []string
		sessionTimeout                          time.Duration
		maxSessions, maxRuns                    int
		tf                                      temporalFlags
		tok                                     tokenFlags
	)
	cmd := &cobra.Command{
		Use:   "mcp [--http 127.0.0.1:PORT] [--corpus DIR] [--web PROVIDER]",
		Short: "Serve deepresearch to MCP clients (Claude Code, Cursor, …) over stdio or Streamable HTTP",
		Long: `mcp runs deepresearch as a Model Context Protocol server. It offers one tool, deep_research (question,
sources, budget), which returns the cited Markdown report and sends progress notifications while it runs, and it
publishes past reports as resources deepresearch://runs/<id>/report.md and report.json.

By default it speaks MCP over stdin/stdout, as clients expect of a local server. With --http it serves the
Streamable HTTP transport at http://ADDR/mcp instead; a non-loopback address requires an access token
(--token-file, DEEPRESEARCH_TOKEN, or --token, which every user of the machine can read in the process list), sent
by clients as "Authorization: Bearer TOKEN". Any local process can reach an HTTP port, so over HTTP a call may
name corpora only in the folders the server shares: --root DIR (repeatable), else sources.roots in the
configuration, else the working folder and the folders already indexed, plus the default corpora. At most
--max-sessions HTTP sessions are open (an idle one makes room for a new one after 5 minutes; past that, 429) and
--max-runs deep_research calls run at once on any transport (past that, error -32000).

--corpus, --web and --mcp set the sources used when a call names none (default: the configuration's sources,
including the search tools of mcp_file's servers).

With --temporal (or temporal.host_port in the configuration) deep_research submits the run to a Temporal cluster,
sends its progress as notifications, cancels the workflow when the client cancels the call, and writes the report
into the runs folder as usual. --state postgres://… (or DEEPRESEARCH_STATE) publishes every finished run of that
shared state as a resource, whichever machine ran it; --temporal needs it.`,
		Example: `  claude mcp add deepresearch -- deepresearch mcp --corpus ~/notes
  deepresearch mcp --http 127.0.0.1:8788 --web tavily
  deepresearch mcp --temporal temporal:7233 --state postgres://research@db/research --corpus /shared/notes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runs == "" && app.Config != nil && app.Config.Research.OutDir != "" {
				runs = app.Config.Research.OutDir
			}
			if runs == "" {
				if runs = app.mcpRunsDir(); runs == "" {
					runs = app.runsDir()
				}
			}
			def := mcpDefaults(app, corpora, web, mcpFile)
			be, err := app.backend(cmd.Context(), tf, stateFlag)
			if err != nil {
				return err
			}
			defer be.close()
			run := be.run
			if run == nil {
				run = app.builder(runs).Run
			}
			cfg := mcpserver.Config{
				RunsDir: runs, State: be.state, Defaults: def, Version: Version, Log: app.Log, WebProviders: websearch.Names(),
				Start: mcpStart(run), MaxRuns: maxRuns, Clarify: app.Config.Research.Clarify && be.run == nil, // durable runs cannot ask
			}
			if httpAddr != "" {
				cfg.Roots = app.serverRoots(roots, def.Corpus...)
			}
			srv, err := mcpserver.New(cfg)
			if err != nil {
				return err
			}
			if httpAddr == "" {
				// stdout belongs to the protocol: everything else goes to stderr.
				return srv.Run(cmd.Context(), &mcpserver.StdioTransport{Log: app.Log})
			}
			token, err := tok.token(app)
			if err != nil {
				return err
			}
			if err := mcpserver.CheckBind(httpAddr, token); err != nil {
				return err
			}
			mux := http.NewServeMux()
			mux.Handle("/mcp", srv.HTTPHandler(mcpserver.HTTPConfig{Token: token, SessionTimeout: sessionTimeout, MaxSessions: maxSessions}))
			return portHint(listenAndServe(cmd.Context(), app, httpAddr, mux, func(base string) string {
				return fmt.Sprintf("%s/mcp (Streamable HTTP)", base)
			}), "--http")
		},
	}
	f := cmd.Flags()
	f.StringVar(&httpAddr, "http", "", "serve Streamable HTTP on this address instead of stdio (e.g. 127.0.0.1:8788)")
	addTokenFlags(cmd, &tok, "bearer token required by the HTTP transport")
	f.DurationVar(&sessionTimeout, "session-timeout", mcpserver.DefaultSessionTimeout, "close an HTTP session idle for this long (a negative value keeps sessions forever)")
	f.IntVar(&maxSessions, "max-sessions", mcpserver.DefaultMaxSessions, "HTTP sessions open at once; a new one past it replaces one idle for 5 minutes, or is refused (429)")
	f.IntVar(&maxRuns, "max-runs", mcpserver.DefaultMaxRuns, "deep_research calls running at once; more are refused (error -32000)")
	f.StringArrayVar(&roots, "root", nil, "over --http, a folder calls may read corpora from, with those below it (repeatable; default: sources.roots, else the working folder and the folders already indexed)")
	f.StringVar(&runs, "runs", "", "folder of run folders (default research.out_dir, else runs/ in the user's data folder: $XDG_DATA_HOME/deepresearch, ~/.local/share/deepresearch)")
	f.StringArrayVar(&corpora, "corpus", nil, "default local corpus: an index directory or a folder (repeatable)")
	f.StringVar(&web, "web", "", "default search providers, comma-separated: "+strings.Join(websearch.Names(), ", "))
	f.StringVar(&mcpFile, "mcp", "", `default MCP search sources: a .mcp.json file whose servers' search tools are searched`)
	f.StringVar(&stateFlag, "state", "", "shared state whose finished runs are published: postgres://… (default $DEEPRESEARCH_STATE, or state in the configuration)")
	addTemporalFlags(cmd, &tf)
	return cmd
}

// mcpStart runs the deep_research tool's requests through run.
func mcpStart(run runFunc) mcpserver.StartFunc {
	return func(ctx context.Context, req mcpserver.RunRequest) (*research.Report, error) {
		return run(ctx, req.Research())
	}
}

// mcpDefaults are the sources a deep_research call that names none uses: the flags', else the configuration's.
func mcpDefaults(app *App, corpora []string, web, mcpFile string) mcpserver.Sources {
	def := mcpserver.Sources{Corpus: corpora, Web: web, MCPFile: mcpFile}
	if len(def.Corpus) == 0 && def.Web == "" && def.MCPFile == "" {
		c := app.Config
		def = mcpserver.Sources{Corpus: append([]string(nil), c.Sources.Corpus...), Web: c.Sources.Web, MCPFile: c.MCPFile}
	}
	for i, c := range def.Corpus {
		if p, err := filepath.Abs(c); err == nil {
			def.Corpus[i] = p
		}
	}
	return def
}
