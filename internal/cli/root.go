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
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/deepresearch/deepresearch/base/redact"
	"github.com/deepresearch/deepresearch/base/termsafe"
	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm/providers"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

// Version and Commit may be stamped at build time, for builds without module or VCS information (-buildvcs=false,
// a source tarball): -ldflags "-X github.com/deepresearch/deepresearch/internal/cli.Version=v1.2.3
// -X github.com/deepresearch/deepresearch/internal/cli.Commit=abc1234". Otherwise the build info supplies them.
var (
	Version = "dev"
	Commit  = ""
)

// versionString is what --version and `deepresearch version` print: the module version (or the stamped one) and
// the VCS revision it was built from, with "+dirty" for a build from modified sources.
func versionString() string {
	v, commit, dirty := Version, Commit, false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if commit == "" {
					commit = s.Value
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if len(commit) > 12 {
		commit = commit[:12]
	}
	switch {
	case commit != "" && dirty:
		return v + " (commit " + commit + "+dirty)"
	case commit != "":
		return v + " (commit " + commit + ")"
	}
	return v
}

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
	// runner, when set, executes research configurations instead of research.Run/Resume (tests).
	runner func(ctx context.Context, cfg research.Config, resumeDir string) (*research.Report, error)
	// localTrusted says the working folder's deepresearch.yaml and .mcp.json may take effect (see
	// decideLocalTrust).
	localTrusted bool
	// Providers is the model provider table; nil means providers.Builtin().
	Providers *providers.Table
	// modelBuilder builds the configured models (models()).
	modelBuilder *request.Models
	modelsOnce   sync.Once
}

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	return mainWith(ctx, &App{Getenv: getenv}, args, stdin, stdout, stderr)
}

// mainWith is Main for an App that carries more than the environment (a provider table of its own, in tests).
func mainWith(ctx context.Context, app *App, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Everything printed may hold text from outside (pages, corpus files and their names, questions, model
	// output): both streams go through the one sanitising printer, so no control sequence reaches the terminal.
	// The progress displays draw their own escapes on the writer beneath and sanitise what they draw.
	out, errw := termsafe.NewWriter(stdout), termsafe.NewWriter(stderr)
	defer out.Flush()
	defer errw.Flush()
	app.Stdin, app.Stdout, app.Stderr = stdin, out, errw
	root := NewRootCmd(app)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(out)
	root.SetErr(errw)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(errw, "error:", redact.New(app.secrets()...).Scrub(err.Error()))
		return exitCode(ctx, err)
	}
	return ExitOK
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
		Version:       versionString(),
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
	root.SetVersionTemplate("deepresearch {{.Version}}\n")
	root.SetFlagErrorFunc(suggestFlag)
	pf := root.PersistentFlags()
	pf.StringVar(&app.configFile, "config", "", "configuration file (default ./deepresearch.yaml in a trusted folder, then the user config dir)")
	pf.StringVar(&app.overrides.Provider, "provider", "", "model provider: "+strings.Join(app.Providers.Names(), ", ")+" (openai: any OpenAI-compatible server, with --base-url)")
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
		newWorkerCmd(app),
		newBatchCmd(app),
		newRunsCmd(app),
		newShowCmd(app),
		newBenchCmd(app),
		newServeCmd(app),
		newMCPCmd(app),
		newChatCmd(app),
		newTrustCmd(app),
		newProbeCmd(app),
	)
	typedArgErrors(root)
	return root
}

// typedArgErrors marks the refusals of every command's argument check (too many, too few) as bad usage, so that
// the exit code does not depend on the wording of cobra's messages.
func typedArgErrors(c *cobra.Command) {
	if orig := c.Args; orig != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := orig(cmd, args); err != nil {
				return usageError(err)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		typedArgErrors(sub)
	}
}

// annotationInspect marks commands that only show the configuration; they run even when it is incomplete, so
// that a user can look at what is wrong.
const annotationInspect = "inspect"

// checkModel refuses a half-configured model. Without it, "--model gpt-4.1" with no provider (or a provider with
// no model) would be silently ignored: run would fall back to the extractive engine and ask would claim that no
// model is configured.
func checkModel(cfg *config.Config) error {
	d := cfg.Default
	if slices.Contains(websearch.Names(), strings.ToLower(d.Provider)) {
		return fmt.Errorf("%q is a web search provider: pass it as --web %s (--provider names the model provider: %s)",
			d.Provider, strings.ToLower(d.Provider), strings.Join(cfg.Providers.Names(), ", "))
	}
	var tierProvider, tierModel bool
	for _, t := range cfg.Tiers {
		tierProvider = tierProvider || t.Provider != ""
		tierModel = tierModel || t.Model != ""
	}
	switch {
	case d.Model != "" && d.Provider == "" && !tierProvider:
		return fmt.Errorf("model %q has no provider: add --provider (%s) or set DEEPRESEARCH_PROVIDER or model.provider in the config file",
			d.Model, strings.Join(cfg.Providers.Names(), ", "))
	case d.Provider != "" && d.Model == "" && !tierModel:
		hint := ""
		if p, ok := cfg.Providers.Lookup(d.Provider); ok && p.Suggested() != "" {
			hint = " (suggested: " + p.Suggested() + ")"
		}
		return fmt.Errorf("provider %q has no model: add --model NAME or set DEEPRESEARCH_MODEL or model.model in the config file%s", d.Provider, hint)
	}
	for _, spec := range append([]config.ModelSpec{d}, tierSpecs(cfg)...) {
		if spec.Provider == "" {
			continue
		}
		if !slices.Contains(cfg.Providers.Names(), strings.ToLower(spec.Provider)) {
			return fmt.Errorf("unknown provider %q: want one of %s (any OpenAI-compatible server is openai with --base-url)",
				spec.Provider, strings.Join(cfg.Providers.Names(), ", "))
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
	if !a.verbose {
		a.Log = slog.New(&calmLog{Handler: a.Log.Handler(), ctx: cmd.Context()})
	}
	a.decideLocalTrust(cmd, getenv)
	file := a.configFile
	if file == "" {
		file = config.DefaultFile(getenv, a.localTrusted)
	}
	cfg, err := config.LoadWith(file, getenv, a.Providers)
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
			fmt.Fprintf(app.Stdout, "deepresearch %s\n", versionString())
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
	cmd.AddCommand(newBenchContextCmd(app), newBenchQualityCmd(app), newBenchGraphCmd(app), newBenchTokensCmd(app), newBenchCorpusCmd(app), newBenchRuntimeCmd(app), newBenchScaleCmd(app))
	return cmd
}

// suggestFlag adds "did you mean --x?" to an unknown flag, as cobra does for a misspelt command.
func suggestFlag(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return usageError(fmt.Errorf("%w\nSee '%s --help'.", err, cmd.CommandPath()))
	}
	name, _, _ = strings.Cut(name, "=")
	best, bestD := "", 3
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := lexical.EditDistance([]rune(name), []rune(f.Name))
		if strings.HasPrefix(f.Name, name) && len(name) >= 3 {
			d = min(d, 1)
		}
		if d < bestD || d == bestD && f.Name < best {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if best == "" || bestD >= len([]rune(name)) {
		return usageError(fmt.Errorf("%w\nSee '%s --help'.", err, cmd.CommandPath()))
	}
	return usageError(fmt.Errorf("%w\nDid you mean --%s?", err, best))
}

// calmLog keeps raw log lines off the terminal where the command says the same thing itself: nothing after the
// command's context ends (Ctrl-C: the interrupted steps' errors are the interruption, which the command reports
// once), and not the research roles' unknown-window warning, which request.Models gives in full. -v shows all.
type calmLog struct {
	slog.Handler
	ctx context.Context
}

func (h *calmLog) Handle(ctx context.Context, r slog.Record) error {
	if h.ctx != nil && h.ctx.Err() != nil {
		return nil
	}
	if strings.HasPrefix(r.Message, "the model's context window is unknown") {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *calmLog) WithAttrs(a []slog.Attr) slog.Handler {
	return &calmLog{Handler: h.Handler.WithAttrs(a), ctx: h.ctx}
}

func (h *calmLog) WithGroup(n string) slog.Handler {
	return &calmLog{Handler: h.Handler.WithGroup(n), ctx: h.ctx}
}
