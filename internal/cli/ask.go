package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"deepresearch/agent"
	"deepresearch/internal/config"
	"deepresearch/llm"
	"deepresearch/llm/providers"
	"deepresearch/workspace"
)

// buildModel turns the configuration for a role into a metered, retrying model.
func (a *App) buildModel(role string, ledger *llm.Ledger) (llm.Model, error) {
	spec := a.Config.ModelFor(role)
	if spec.Provider == "" || spec.Model == "" {
		return nil, errors.New("no model configured: pass --provider and --model (and --base-url for a local server), or set them in the config file")
	}
	m, err := a.modelFromSpec(spec, ledger, role)
	if err != nil {
		return nil, fmt.Errorf("model for %s: %w", role, err)
	}
	return m, nil
}

// modelFromSpec builds a retrying model, metered into ledger (when non-nil) under label.
func (a *App) modelFromSpec(spec config.ModelSpec, ledger *llm.Ledger, label string) (llm.Model, error) {
	cfg := a.Config
	ps := providers.Spec{
		Provider: spec.Provider, Model: spec.Model, BaseURL: spec.BaseURL, APIKey: cfg.APIKey(spec),
		Retry: llm.RetryConfig{MaxAttempts: cfg.Retry.MaxAttempts, CallTimeout: cfg.Retry.CallTimeout},
	}
	ps.Override = overrideFor(cfg, spec.Model)
	m, err := providers.New(ps)
	if err != nil {
		return nil, err
	}
	if ledger != nil {
		m = llm.Metered(m, ledger, label)
	}
	return m, nil
}

func newAskCmd(app *App) *cobra.Command {
	var dir string
	var maxSteps int
	cmd := &cobra.Command{
		Use:   "ask [--workspace DIR] PROMPT",
		Short: "Run one tool-using agent over a workspace and print its answer",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ledger := &llm.Ledger{}
			model, err := app.buildModel("agent", ledger)
			if err != nil {
				return err
			}
			if dir == "" {
				if dir, err = os.Getwd(); err != nil {
					return err
				}
			}
			ws, err := workspace.New(dir, workspace.Config{})
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
				Observer:   rt.Observer(app.Stderr, app.verbose),
			})
			if err != nil {
				return err
			}
			answer, runErr := ag.Run(cmd.Context(), args[0])
			if answer != "" {
				fmt.Fprintln(app.Stdout, answer)
			}
			printUsage(app.Stderr, ledger)
			return runErr
		},
	}
	cmd.Flags().StringVar(&dir, "workspace", "", "directory the agent may read and write (default: the current directory)")
	cmd.Flags().IntVar(&maxSteps, "max-steps", 50, "maximum model calls")
	cmd.Flags().StringVar(&app.mcpFlag, "mcp", "", "a .mcp.json file of MCP servers (default: mcp_file from the configuration, else ./.mcp.json when present)")
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
