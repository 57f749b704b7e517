package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/bench/contextbench"
)

func newBenchContextCmd(app *App) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "context [--format text|json]",
		Short: "Context engineering on a 20-call heavy-MCP-traffic scenario: deepagents vs claude-code vs hybrid",
		Long: `Runs a deterministic 20-call task in which every MCP-style tool call returns about 40,000 characters of
mostly irrelevant text holding a few planted facts, on a scripted model, once per context preset: with a
128K-token window, then beside 300 MCP tools deferred behind tool_search in a 128K and a 32K window. For each it
prints the input tokens billed over the whole task, the peak prompt, the compactions and summary calls, the
share of tool results the model saw, the share of tool output recoverable from disk, and the share of planted
facts that stood in the prompt of the model call right after the result that carried them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format must be text or json, got %q", format)
			}
			rows, err := contextbench.Run(cmd.Context(), contextbench.Options{})
			if err != nil {
				return err
			}
			if format == "json" {
				return writeJSON(app.Stdout, rows)
			}
			fmt.Fprint(app.Stdout, contextbench.FormatTable(rows))
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}
