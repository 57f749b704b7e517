package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/harness"
	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/providers"
)

// buildModel turns the configuration for a role into a metered, retrying model.
func (a *App) buildModel(role string, ledger *llm.Ledger) (llm.Model, error) {
	spec := a.Config.ModelFor(role)
	if spec.Provider == "" || spec.Model == "" {
		return nil, errors.New("no model configured. " + noModelHint(""))
	}
	m, err := a.modelFromSpec(spec, ledger, role)
	if err != nil {
		return nil, fmt.Errorf("model for %s: %w", role, err)
	}
	return m, nil
}

// hasModel says whether a model is configured for the role.
func (a *App) hasModel(role string) bool {
	spec := a.Config.ModelFor(role)
	return spec.Provider != "" && spec.Model != ""
}

// noModelHint says how to configure a model, with a local (Ollama) and a hosted example, for the command named.
func noModelHint(command string) string {
	if command == "" {
		command = "ask"
	}
	return fmt.Sprintf("Configure one with flags, e.g. a local model with Ollama: deepresearch %s --provider ollama --model qwen3 "+
		"(after ollama pull qwen3), or a hosted one: OPENAI_API_KEY=… deepresearch %s --provider openai --model gpt-4.1; "+
		"or once for all commands in deepresearch.yaml: model: {provider: ollama, model: qwen3}. "+
		"Without a model, deepresearch run \"question\" researches with the extractive engine.", command, command)
}

// modelFromSpec builds a retrying model, metered into ledger (when non-nil) under label.
func (a *App) modelFromSpec(spec config.ModelSpec, ledger *llm.Ledger, label string) (llm.Model, error) {
	cfg := a.Config
	key, keyEnv := a.apiKey(spec)
	if key == "" && spec.BaseURL == "" && keyEnv != "" {
		// A hosted service's default endpoint always wants a key; failing here beats an opaque 401 (or, offline,
		// a DNS error) from the first model call.
		return nil, fmt.Errorf("%s model %s: no API key: set %s (keys are read only from the environment), or pass --base-url for a local server",
			spec.Provider, spec.Model, keyEnv)
	}
	ps := providers.Spec{
		Provider: spec.Provider, Model: spec.Model, BaseURL: spec.BaseURL, APIKey: key,
		Retry: llm.RetryConfig{MaxAttempts: cfg.Retry.MaxAttempts, CallTimeout: cfg.Retry.CallTimeout},
	}
	ps.Override = overrideFor(cfg, spec.Model)
	m, err := providers.New(ps)
	if err != nil {
		return nil, err
	}
	a.warnUnknownModel(ps)
	if ledger != nil {
		m = llm.Metered(m, ledger, label)
	}
	return m, nil
}

// apiKey returns the key for a model spec and the environment variable it belongs in ("" when the endpoint
// needs none, such as a local server preset). A named OpenAI-compatible service (deepseek, openrouter, qwen) gets
// its own variable first, so that an OPENAI_API_KEY that happens to be set is never sent to another company.
func (a *App) apiKey(spec config.ModelSpec) (key, env string) {
	if spec.APIKeyEnv != "" {
		return a.Config.Env(spec.APIKeyEnv), spec.APIKeyEnv
	}
	provider := strings.ToLower(spec.Provider)
	switch provider {
	case "openai", "":
		return a.Config.APIKey(spec), "OPENAI_API_KEY"
	case "anthropic":
		return a.Config.APIKey(spec), "ANTHROPIC_API_KEY"
	}
	p, ok := providers.LookupPreset(provider)
	if !ok || p.KeyEnv == "" {
		return a.Config.APIKey(spec), ""
	}
	return a.Config.Env(p.KeyEnv), p.KeyEnv
}

func newAskCmd(app *App) *cobra.Command {
	var dir string
	var maxSteps int
	cmd := &cobra.Command{
		Use:   "ask [--workspace DIR] PROMPT",
		Short: "Run one tool-using agent over a workspace and print its answer",
		Args: func(_ *cobra.Command, args []string) error {
			if strings.TrimSpace(strings.Join(args, " ")) == "" {
				return errors.New(`ask needs a prompt: deepresearch ask "what do the files here say about X?"`)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ledger := &llm.Ledger{}
			model, err := app.buildModel("agent", ledger)
			if err != nil {
				return err
			}
			ws, err := openWorkspace(dir)
			if err != nil {
				return err
			}
			rt, err := app.newRuntime(cmd.Context(), runtimeOptions{Model: model, Workspace: ws, Ledger: ledger})
			if err != nil {
				return err
			}
			defer rt.Close()
			ag, err := agent.New(agent.Config{
				Model:      model,
				System:     askSystemPrompt(ws.Root()),
				Tools:      rt.Tools,
				Middleware: rt.Middleware,
				MaxSteps:   maxSteps,
				Observer:   harness.Observer(app.Stderr, app.verbose),
			})
			if err != nil {
				return err
			}
			// Unquoted words are one prompt, as a shell user means them.
			answer, runErr := ag.Run(cmd.Context(), strings.Join(args, " "))
			if answer != "" {
				fmt.Fprintln(app.Stdout, answer)
			}
			printUsage(app.Stderr, ledger)
			return runErr
		},
	}
	cmd.Flags().StringVar(&dir, "workspace", "", "directory the agent may read and write (default: the current directory)")
	cmd.Flags().IntVar(&maxSteps, "max-steps", 50, "maximum model calls")
	cmd.Flags().StringVar(&app.mcpFlag, "mcp", "", mcpFlagHelp)
	return cmd
}

func askSystemPrompt(root string) string {
	return "You are a careful assistant working in a file workspace rooted at " + root + ". " +
		"Use the tools to look at files before answering questions about them. Paths are relative to the workspace root. " +
		"When you are done, answer plainly and concisely."
}

func printUsage(w interface{ Write([]byte) (int, error) }, l *llm.Ledger) {
	u, cost, calls := l.Totals()
	fmt.Fprintf(w, "usage: %d calls, %d input tokens (%d cache read, %d cache write), %d output tokens, $%.4f\n",
		calls, u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens, cost)
}

// warnUnknownModel says once per model, on stderr, what an unknown model name means: no context window and no
// prices, so context management guesses and the cost fuse cannot trip; and how to declare the model.
func (a *App) warnUnknownModel(ps providers.Spec) {
	if _, declared := a.Config.Models[ps.Model]; declared || providers.Describe(ps).Known {
		return
	}
	if _, dup := a.warnedModels.LoadOrStore(ps.Provider+"/"+ps.Model, true); dup {
		return
	}
	fmt.Fprintf(a.Stderr, "warning: model %q is not in the built-in catalogue: its context window and prices are unknown, so "+
		"the context manager assumes 32,000 tokens and spend counts as $0 (--max-cost cannot trip). Declare it in the config file:\n"+
		"  models:\n    %s: {context_window: 32768, input_price: 0, output_price: 0}   # prices in USD per million tokens\n",
		ps.Model, ps.Model)
}
