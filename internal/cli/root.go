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
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/llm/providers"
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
	// localTrusted says the working folder's deepresearch.yaml and .mcp.json may take effect (see
	// decideLocalTrust).
	localTrusted bool
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
			if err := app.load(cmd); err != nil {
				return err
			}
			if cmd.Annotations[annotationInspect] != "" {
				return nil
			}
			return checkModel(app.Config)
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&app.configFile, "config", "", "configuration file (default ./deepresearch.yaml in a trusted folder, then the user config dir)")
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
		newTrustCmd(app),
	)
	return root
}

// annotationInspect marks commands that only show the configuration; they run even when it is incomplete, so
// that a user can look at what is wrong.
const annotationInspect = "inspect"

// checkModel refuses a half-configured model. Without it, "--model gpt-4.1" with no provider (or a provider with
// no model) would be silently ignored: run would fall back to the extractive engine and ask would claim that no
// model is configured.
func checkModel(cfg *config.Config) error {
	d := cfg.Default
	var tierProvider, tierModel bool
	for _, t := range cfg.Tiers {
		tierProvider = tierProvider || t.Provider != ""
		tierModel = tierModel || t.Model != ""
	}
	switch {
	case d.Model != "" && d.Provider == "" && !tierProvider:
		return fmt.Errorf("model %q has no provider: add --provider (%s) or set DEEPRESEARCH_PROVIDER or model.provider in the config file",
			d.Model, strings.Join(providers.Names(), ", "))
	case d.Provider != "" && d.Model == "" && !tierModel:
		return fmt.Errorf("provider %q has no model: add --model NAME or set DEEPRESEARCH_MODEL or model.model in the config file", d.Provider)
	}
	for _, spec := range append([]config.ModelSpec{d}, tierSpecs(cfg)...) {
		if spec.Provider == "" {
			continue
		}
		if !slices.Contains(providers.Names(), strings.ToLower(spec.Provider)) {
			return fmt.Errorf("unknown provider %q: want one of %s (any OpenAI-compatible server is openai with --base-url)",
				spec.Provider, strings.Join(providers.Names(), ", "))
		}
	}
	return nil
}

// tierSpecs lists the tiers' own model specs in a stable order.
func tierSpecs(cfg *config.Config) []config.ModelSpec {
	names := make([]string, 0, len(cfg.Tiers))
	for n := range cfg.Tiers {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]config.ModelSpec, 0, len(names))
	for _, n := range names {
		out = append(out, cfg.Tiers[n])
	}
	return out
}

func (a *App) load(cmd *cobra.Command) error {
	getenv := a.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	level := slog.LevelWarn
	if a.verbose {
		level = slog.LevelDebug
	}
	a.Log = slog.New(slog.NewTextHandler(a.Stderr, &slog.HandlerOptions{Level: level}))
	a.decideLocalTrust(cmd, getenv)
	file := a.configFile
	if file == "" {
		file = config.DefaultFile(getenv, a.localTrusted)
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
		Use:         "version",
		Short:       "Print the version",
		Annotations: map[string]string{annotationInspect: "yes"},
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
		Use:         "show",
		Short:       "Print the effective configuration (secrets masked)",
		Annotations: map[string]string{annotationInspect: "yes"},
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
	cmd.AddCommand(newBenchContextCmd(app), newBenchQualityCmd(app), newBenchGraphCmd(app), newBenchRuntimeCmd(app))
	return cmd
}
