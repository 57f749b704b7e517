// Package cli is deepresearch's command line: it parses flags, loads configuration and hands off to the library
// packages. It holds no business logic.
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"deepresearch/internal/config"
)

// Version is set at build time with -ldflags "-X deepresearch/internal/cli.Version=v1.2.3".
var Version = "dev"

// App carries what every command needs.
type App struct {
	Config *config.Config
	Log    *slog.Logger
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string

	configFile string
	overrides  config.Overrides
	verbose    bool
	// mcpFlag is the --mcp value of the agent commands (ask, chat); it overrides mcp_file.
	mcpFlag string
}

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	app := &App{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv}
	root := NewRootCmd(app)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	return 0
}

// NewRootCmd builds the command tree.
func NewRootCmd(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "deepresearch",
		Short: "Deep research with cited, verifiable reports — from the web, your documents, or both",
		Long: `deepresearch plans a research question, searches in parallel, reads the sources, verifies the
evidence adversarially and writes a report in which every sentence cites a verbatim quote.

It works with any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp, DeepSeek, Qwen, OpenRouter)
and with Anthropic; with no model configured it runs its extractive engine, which needs no API key.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return app.load()
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&app.configFile, "config", "", "configuration file (default ./deepresearch.yaml, then the user config dir)")
	pf.StringVar(&app.overrides.Provider, "provider", "", "model provider: openai (any OpenAI-compatible server) or anthropic")
	pf.StringVar(&app.overrides.Model, "model", "", "model name")
	pf.StringVar(&app.overrides.BaseURL, "base-url", "", "API base URL (for Ollama, vLLM, DeepSeek, OpenRouter, …)")
	pf.BoolVarP(&app.verbose, "verbose", "v", false, "log debug details to stderr")

	root.AddCommand(
		newVersionCmd(app),
		newConfigCmd(app),
		newModelsCmd(app),
		newAskCmd(app),
		newToolsCmd(app),
		newIndexCmd(app),
		newSearchCmd(app),
		newFetchCmd(app),
		newRunCmd(app),
		newResumeCmd(app),
		newRunsCmd(app),
		newShowCmd(app),
		newBenchCmd(app),
		newServeCmd(app),
		newMCPCmd(app),
		newChatCmd(app),
	)
	return root
}

func (a *App) load() error {
	getenv := a.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	level := slog.LevelWarn
	if a.verbose {
		level = slog.LevelDebug
	}
	a.Log = slog.New(slog.NewTextHandler(a.Stderr, &slog.HandlerOptions{Level: level}))
	file := a.configFile
	if file == "" {
		file = config.DefaultFile()
	}
	cfg, err := config.Load(file, getenv)
	if err != nil {
		return err
	}
	cfg.Apply(a.overrides)
	if a.mcpFlag != "" {
		cfg.MCPFile = a.mcpFlag
	}
	a.Config = cfg
	return nil
}

func newVersionCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := Version
			if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				v = bi.Main.Version
			}
			fmt.Fprintf(app.Stdout, "deepresearch %s\n", v)
			return nil
		},
	}
}

func newConfigCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Inspect the configuration"}
	cmd.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration (secrets masked)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := app.Config.Show()
			if err != nil {
				return err
			}
			fmt.Fprint(app.Stdout, s)
			return nil
		},
	})
	return cmd
}

func newBenchCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Reproducible benchmarks that print figures"}
	cmd.AddCommand(newBenchContextCmd(app), newBenchQualityCmd(app), newBenchGraphCmd(app))
	return cmd
}
