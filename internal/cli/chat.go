package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/base/redact"
	"github.com/deepresearch/deepresearch/harness"
	"github.com/deepresearch/deepresearch/internal/chat"
	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
)

func newChatCmd(app *App) *cobra.Command {
	var dir, resume, sessions string
	var maxSteps int
	cmd := &cobra.Command{
		Use:   "chat [--workspace DIR] [--resume ID]",
		Short: "Interactive agent in the terminal, with /deep-research, /compact, /context, /cost, /clear, /sessions, /exit",
		Long: `chat is an interactive terminal agent on the shared runtime: workspace file tools, search and fetch, MCP
tools from .mcp.json, task subagents and context management. Besides talking to it you can type:

  /deep-research <question>   run the research graph (configured sources, else the workspace folder as corpus)
                              and print the report's path and summary
  /compact [instructions]     summarise the conversation now, keeping what the instructions ask for
  /context                    what fills the context window
  /cost                       tokens and money spent in this session
  /clear                      start a fresh conversation (the old one stays saved)
  /sessions                   list saved sessions: id, last update, first message, message count
  /exit                       save and quit (Ctrl-D too); Ctrl-C cancels the running turn

On a terminal the prompt is a line editor: arrows, Home/End, Ctrl-A/E/K/U/W, Up and Down through what you typed
in this and earlier chats (kept in $XDG_STATE_HOME/deepresearch/chat_history, else ~/.local/state/…, at most
1000 entries, readable by you only; a message typed with a leading space is not kept), Tab completes slash
commands and paths, a line ending in \ continues on the next, and pasted lines are sent as one message. A status
line above the prompt shows the model, how full its context window is, the spend and the session. Piped input
is read one line per message.

Sessions are saved after every turn in <workspace>/.deepresearch/sessions/, listed by /sessions and resumed
with --resume ID.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !app.verbose {
				// The chat owns the terminal: role warnings (retried JSON, a skipped source) are reported in the
				// conversation already, and raw log lines would break the display.
				app.Log = slog.New(slog.NewTextHandler(app.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
			}
			ledger := &llm.Ledger{}
			var model llm.Model
			if app.hasModel("agent") {
				m, err := app.buildModel("agent", ledger)
				if err != nil {
					return fmt.Errorf("chat needs a model: %w", err)
				}
				model = m
			}
			ws, err := openWorkspace(dir)
			if err != nil {
				return err
			}
			// Ctrl-C must cancel the running turn, not end the chat, so the chat's context ignores the root
			// context's interrupt cancellation; SIGTERM still ends it.
			ctx, cancel := context.WithCancel(context.WithoutCancel(cmd.Context()))
			defer cancel()
			interrupt := make(chan struct{}, 1)
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sig)
			go func() {
				for {
					select {
					case s := <-sig:
						if s == syscall.SIGTERM {
							cancel()
							return
						}
						select {
						case interrupt <- struct{}{}:
						default:
						}
					case <-ctx.Done():
						return
					}
				}
			}()
			rt := &harness.Runtime{}
			if model != nil {
				if rt, err = app.newRuntime(ctx, runtimeOptions{Model: model, Workspace: ws, Ledger: ledger}); err != nil {
					return err
				}
				defer rt.Close()
			}
			if sessions == "" {
				sessions = filepath.Join(ws.Root(), ".deepresearch", "sessions")
			}
			runs := app.runsDir()
			if app.Config.Research.OutDir == "" {
				// Inside the workspace, so the agent's file tools can read the reports it is told about, and in a
				// hidden folder, which corpus indexing skips, so a later /deep-research over the workspace does not
				// cite earlier reports and their stored sources.
				runs = filepath.Join(ws.Root(), ".deepresearch", "runs")
			}
			b := app.builder(runs)
			cfg := chat.Config{
				In: app.Stdin, Out: app.Stdout,
				Agent: agent.Config{
					Model: model, System: chatSystemPrompt(ws.Root()), Tools: rt.Tools, Middleware: rt.Middleware, MaxSteps: maxSteps,
				},
				Ledger: ledger, Sessions: chat.Store{Dir: sessions}, Resume: resume, Workspace: ws.Root(), Interrupt: interrupt,
				Bind: rt.Bind, NoModel: noModelHint("chat"), Redact: redact.FromEnv(app.getenv),
				Research: func(ctx context.Context, q, from string, on func(research.Event)) (*research.Report, error) {
					r := chatRequest(app.Config, ws.Root(), q, on, ledger)
					r.From = from
					return b.Run(ctx, r)
				},
			}
			if d := config.StateDir(app.getenv); d != "" {
				cfg.HistoryFile = filepath.Join(d, "chat_history")
			}
			if model != nil && rt.ContextManager() != nil {
				cfg.Compact = rt.Compact
				cfg.Context = rt.ContextReport
			}
			err = chat.Run(ctx, cfg)
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "workspace", "", "directory the agent may read and write (default: the current directory)")
	f.StringVar(&resume, "resume", "", "resume the saved session with this id")
	f.StringVar(&sessions, "sessions", "", "where sessions are saved (default <workspace>/.deepresearch/sessions)")
	f.IntVar(&maxSteps, "max-steps", 50, "maximum model calls per turn")
	f.StringVar(&app.mcpFlag, "mcp", "", mcpFlagHelp)
	return cmd
}

// chatRequest is what /deep-research asks for: the configured sources, or the workspace as the corpus when none
// are configured.
func chatRequest(cfg *config.Config, workspace, question string, on func(research.Event), ledger *llm.Ledger) request.Research {
	r := request.Research{Question: question, OnEvent: on, Ledger: ledger}
	if cfg.Sources.Web == "" && len(cfg.Sources.Corpus) == 0 && cfg.MCPFile == "" {
		r.Corpora = []string{workspace}
	}
	return r
}

func chatSystemPrompt(root string) string {
	return "You are deepresearch's interactive research assistant, working in a file workspace rooted at " + root + ". " +
		"Use the tools to look at files before answering questions about them; paths are relative to the workspace root. " +
		"Reports written by /deep-research are in the workspace's .deepresearch/runs/ folder: read report.md for the text and report.json " +
		"for the verbatim quotes behind each citation. Cite what you take from them. Answer plainly and concisely."
}
