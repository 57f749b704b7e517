package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/bench/tokenbench"
	"github.com/deepresearch/deepresearch/research"
)

func newBenchTokensCmd(app *App) *cobra.Command {
	var (
		format string
		only   string
		depths string
		follow string
	)
	cmd := &cobra.Command{
		Use:   "tokens [--format text|json] [--only ID,…]",
		Short: "Tokens, calls and cost per stage of the language-model path, with an honest scripted model",
		Long: `Runs the research graph with the language-model roles for a fixed set of questions over
$(go env GOROOT)/doc (the first is the README's), default settings, against a scripted OpenAI-compatible model that
quotes its sources verbatim, through the real OpenAI adapter. Prints input and output tokens, model calls and cost
(at the catalogue's prices of ` + tokenbench.PriceModel + `) per stage, and the fact recall of each report.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format must be text or json, got %q", format)
			}
			cfg := tokenbench.Config{FollowUp: strings.TrimSpace(follow)}
			if only != "" {
				cfg.Questions = strings.Split(only, ",")
			}
			if depths != "" {
				cfg.Depths = strings.Split(depths, ",")
				for _, d := range cfg.Depths {
					if err := research.CheckDepth(d); err != nil {
						return usageError(fmt.Errorf("--depth: %w", err))
					}
				}
			}
			res, err := tokenbench.Run(cmd.Context(), cfg)
			if err != nil {
				return fmt.Errorf("bench tokens: %w", err)
			}
			if format == "json" {
				return writeJSON(app.Stdout, res)
			}
			return res.WriteTable(app.Stdout)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	cmd.Flags().StringVar(&depths, "depth", "", "comma-separated depths to run every question at ("+strings.Join(research.DepthNames(), ", ")+"; default: the default depth)")
	cmd.Flags().StringVar(&follow, "follow-up", "", "a follow-up question, asked after the first question as a fresh run and as a follow-up of it (run --from)")
	cmd.Flags().StringVar(&only, "only", "", "comma-separated question ids (default: "+strings.Join(tokenbench.DefaultQuestions, ",")+")")
	return cmd
}
