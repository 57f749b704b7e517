package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/durable"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/internal/webui"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

func newServeCmd(app *App) *cobra.Command {
	var addr, runs, token, stateFlag string
	var tf temporalFlags
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8787] [--runs DIR] [--token TOKEN]",
		Short: "Web viewer: start runs, watch them live, read reports and click citations to their quotes",
		Long: `serve starts the web application: a form to start a research run, a live view of the run (stages,
sub-questions, sources, evidence as it arrives, spend), the finished report whose citations open the quoted
passage highlighted in the stored source text, past runs, and report.md / report.json downloads.

It listens on 127.0.0.1 by default. Any other address requires an access token (--token or DEEPRESEARCH_TOKEN):
every request must carry it, as "Authorization: Bearer TOKEN" or through the link printed at start, which sets a
cookie. Runs use the configured engine (extractive when no model is configured).

With --temporal (or temporal.host_port in the configuration) runs are submitted to a Temporal cluster and executed
by its workers (deepresearch worker); the page follows them live, Stop cancels the workflow, and the report is
written into the runs folder as usual. --state postgres://… (or DEEPRESEARCH_STATE, or state in the
configuration) lists and shows every run of that shared state besides the local ones, whichever machine ran it;
--temporal needs it.`,
		Example: `  deepresearch serve
  deepresearch serve --runs ~/research/runs
  DEEPRESEARCH_TOKEN=$(openssl rand -hex 16) deepresearch serve --addr 0.0.0.0:8787
  deepresearch serve --temporal temporal:7233 --state postgres://research@db/research`,
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
			be, err := app.backend(cmd.Context(), tf, stateFlag)
			if err != nil {
				return err
			}
			defer be.close()
			return app.serveViewer(cmd, addr, runs, token, "/", nil, be)
		},
	}
	addTemporalFlags(cmd, &tf)
	cmd.Flags().StringVar(&stateFlag, "state", "", "shared state to list and show runs from: postgres://… (default $DEEPRESEARCH_STATE, or state in the configuration)")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8787", "address to listen on (non-loopback needs --token)")
	cmd.Flags().StringVar(&runs, "runs", "", "folder of run folders (default runs/, or research.out_dir)")
	cmd.Flags().StringVar(&token, "token", "", "access token required on every request (default $DEEPRESEARCH_TOKEN)")
	return cmd
}

// serveViewer serves the web viewer over the runs folder until the command's context ends, printing the link to
// page; opened, when set, is told that link once the server listens.
func (app *App) serveViewer(cmd *cobra.Command, addr, runs, token, page string, opened func(link string), be backend) error {
	b := app.builder(runs)
	run := be.run
	if run == nil {
		run = b.Run
	}
	defCorpus := ""
	if len(app.Config.Sources.Corpus) > 0 {
		defCorpus = app.Config.Sources.Corpus[0]
	}
	srv, err := webui.New(webui.Config{
		RunsDir: runs, State: be.state, Token: token, WebProviders: websearch.Names(), DefaultCorpus: defCorpus, Log: app.Log,
		CheckWeb: func(name string) error {
			_, err := websearch.New(name, websearch.Config{Getenv: app.getenv})
			return err
		},
		Start: webStart(run), Cancel: be.cancel,
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	return listenAndServe(cmd.Context(), app, addr, srv.Handler(), func(base string) string {
		link := base + page
		if token != "" {
			link += "?token=" + token
		}
		if opened != nil {
			opened(link)
		}
		return link
	})
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
