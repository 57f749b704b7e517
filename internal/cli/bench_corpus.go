package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/bench/corpusbench"
)

func newBenchCorpusCmd(app *App) *cobra.Command {
	var (
		format, keep string
		docs         []int
		queries      int
		noCLI        bool
	)
	cmd := &cobra.Command{
		Use:   "corpus [--docs 10000,100000] [--format text|json]",
		Short: "The corpus index at scale: indexing rate, disk, open, no-op re-index, search latency, beside ripgrep",
		Long: `Generates synthetic Markdown folders (about 2.3 KB a document, Zipf-distributed vocabulary) of each size,
indexes them and prints: indexing time and rate, index size on disk, the benchmark's peak RSS, the time to open
the index (what every command-line search and run pays first), a no-op re-index (median of three), in-process
search p50/p95 over 50 queries of two to four words and how many of them had to run the full ranking query over
the whole index (the others are ranked by rescoring candidates), the command-line "deepresearch search --corpus
INDEX" p50, and a ripgrep scan of the same files for the same words (when rg is installed).`,
		Example: `  deepresearch bench corpus --docs 10000
  deepresearch bench corpus --docs 10000,100000 --keep /tmp/corpusbench`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format must be text or json, got %q", format)
			}
			opts := corpusbench.Options{Docs: docs, WorkDir: keep, Queries: queries,
				Progress: func(s string) { fmt.Fprintln(app.Stderr, s) }}
			if !noCLI {
				if exe, err := os.Executable(); err == nil {
					opts.Binary = exe
				}
			}
			rows, err := corpusbench.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if format == "json" {
				return writeJSON(app.Stdout, rows)
			}
			fmt.Fprint(app.Stdout, corpusbench.FormatTable(rows))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "text", "output format: text or json")
	f.IntSliceVar(&docs, "docs", []int{10_000, 100_000}, "corpus sizes to measure")
	f.IntVar(&queries, "queries", 50, "search queries timed per size")
	f.StringVar(&keep, "keep", "", "keep the generated folders and indexes in this folder (and reuse the folders)")
	f.BoolVar(&noCLI, "no-cli", false, "skip timing the command-line search")
	return cmd
}
