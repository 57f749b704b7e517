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
		httpAddr, runs, token, web string
		corpora                    []string
		sessionTimeout             time.Duration
	)
	cmd := &cobra.Command{
		Use:   "mcp [--http 127.0.0.1:PORT] [--corpus DIR] [--web PROVIDER]",
		Short: "Serve deepresearch to MCP clients (Claude Code, Cursor, …) over stdio or Streamable HTTP",
		Long: `mcp runs deepresearch as a Model Context Protocol server. It offers one tool, deep_research (question,
sources, budget), which returns the cited Markdown report and sends progress notifications while it runs, and it
publishes past reports as resources deepresearch://runs/<id>/report.md and report.json.

By default it speaks MCP over stdin/stdout, as clients expect of a local server. With --http it serves the
Streamable HTTP transport at http://ADDR/mcp instead; a non-loopback address requires --token (or
DEEPRESEARCH_TOKEN), sent by clients as "Authorization: Bearer TOKEN".

--corpus and --web set the sources used when a call names none (default: the configuration's sources).`,
		Example: `  claude mcp add deepresearch -- deepresearch mcp --corpus ~/notes
  deepresearch mcp --http 127.0.0.1:8788 --web tavily`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runs == "" {
				runs = app.runsDir()
			}
			def := mcpserver.Sources{Corpus: corpora, Web: web}
			if len(def.Corpus) == 0 && def.Web == "" {
				def = mcpserver.Sources{Corpus: append([]string(nil), app.Config.Sources.Corpus...), Web: app.Config.Sources.Web}
			}
			for i, c := range def.Corpus {
				if p, err := filepath.Abs(c); err == nil {
					def.Corpus[i] = p
				}
			}
			starter := newResearchStarter(app, cmd)
			defer starter.Close()
			srv, err := mcpserver.New(mcpserver.Config{
				RunsDir: runs, Defaults: def, Version: Version, Log: app.Log, WebProviders: websearch.Names(),
				Start: func(ctx context.Context, req mcpserver.RunRequest) (*research.Report, error) {
					return starter.Run(ctx, startParams{Question: req.Question, Corpora: req.Sources.Corpus, Web: req.Sources.Web,
						Budget: req.Budget, Rounds: req.Rounds, RunID: req.RunID, OutDir: req.OutDir, OnEvent: req.OnEvent})
				},
			})
			if err != nil {
				return err
			}
			if httpAddr == "" {
				// stdout belongs to the protocol: everything else goes to stderr.
				return srv.Run(cmd.Context(), &mcpserver.StdioTransport{Log: app.Log})
			}
			if token == "" {
				token = app.getenv("DEEPRESEARCH_TOKEN")
			}
			if err := mcpserver.CheckBind(httpAddr, token); err != nil {
				return err
			}
			mux := http.NewServeMux()
			mux.Handle("/mcp", srv.HTTPHandler(mcpserver.HTTPConfig{Token: token, SessionTimeout: sessionTimeout}))
			return listenAndServe(cmd.Context(), app, httpAddr, mux, func(base string) string {
				return fmt.Sprintf("%s/mcp (Streamable HTTP)", base)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&httpAddr, "http", "", "serve Streamable HTTP on this address instead of stdio (e.g. 127.0.0.1:8788)")
	f.StringVar(&token, "token", "", "bearer token required by the HTTP transport (default $DEEPRESEARCH_TOKEN)")
	f.DurationVar(&sessionTimeout, "session-timeout", mcpserver.DefaultSessionTimeout, "close an HTTP session idle for this long (a negative value keeps sessions forever)")
	f.StringVar(&runs, "runs", "", "folder of run folders (default runs/, or research.out_dir)")
	f.StringArrayVar(&corpora, "corpus", nil, "default local corpus: an index directory or a folder (repeatable)")
	f.StringVar(&web, "web", "", "default web search provider: "+strings.Join(websearch.Names(), ", "))
	return cmd
}
