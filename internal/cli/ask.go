package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/harness"
	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/llm"
)

// buildModel turns the configuration for a role into a metered, retrying model (request.Models), saying how to
// configure one when there is none.
func (a *App) buildModel(role string, ledger *llm.Ledger) (llm.Model, error) {
	m, err := a.models().ForRole(role, ledger)
	if errors.Is(err, request.ErrNoModel) {
		return nil, errors.New("no model configured. " + noModelHint(""))
	}
	return m, err
}

// models is the one builder of the configured models, shared by every command of this process so that an
// unknown model is explained once.
func (a *App) models() *request.Models {
	a.modelsOnce.Do(func() { a.modelBuilder = &request.Models{Config: a.Config, Warn: a.Stderr} })
	return a.modelBuilder
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
