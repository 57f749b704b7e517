package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/research/extractive/qualitybench"
)

func newBenchQualityCmd(app *App) *cobra.Command {
	var (
		format string
		zhDocs string
		goroot string
		only   []string
		keep   string
		split  string
	)
	cmd := &cobra.Command{
		Use:   "quality [--format text|json] [--zh-docs DIR] [--only ID,…] [--split tune|heldout|older]",
		Short: "Answer quality of the extractive engine: fact recall, citation grounding and time per question",
		Long: `Answers a fixed question set with the extractive engine (no language model) through the full research
graph, over corpora that ship with Go — $(go env GOROOT)/doc, the documentation of standard packages extracted
from $(go env GOROOT)/src, Go source code (src/context, sync, internal/sync) and source code in other languages
(lib/wasm/wasm_exec.js, src/runtime/runtime-gdb.py, src/runtime/cgo/*.c, src/syscall/mk*.sh) — and over the
Chinese user guide in docs/zh (embedded in the binary; --zh-docs DIR uses another folder), and over the HTML
documentation of four Debian packages of different generators (python3.11-doc: Sphinx, postgresql-doc-15:
DocBook, nodejs-doc: Node.js API docs, rust-doc: the Rust book in mdBook; under /usr/share/doc, installed by
scripts/install-test-deps). Those questions are split in two halves: "tune", which changes to the engine may be
tried against, and "heldout", which only measures (--split tune|heldout runs one half; --split older runs the
questions over the other corpora, which have no split). Per question it prints:

  recall     the share of the expected facts stated in one cited sentence of the report (every keyword of the
             fact in the same sentence, ignoring case);
  furniture  cited sentences that are page furniture: navigation, search hints, edition banners, a caption on its
             own, a comment taken out of its code block;
  grounding  the share of cited quotes found verbatim in the cited file's text, within the cited lines — it
             must be 100%, and the command fails otherwise;
  time       the wall time of the research run (indexing is reported separately).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format must be text or json, got %q", format)
			}
			res, err := qualitybench.Run(cmd.Context(), qualitybench.Options{
				GoRoot: goroot, ZHDocsDir: zhDocs, WorkDir: keep, Only: only, Split: split, Log: app.Log,
			})
			if err != nil {
				return err
			}
			if format == "json" {
				if err := writeJSON(app.Stdout, res); err != nil {
					return err
				}
			} else {
				if err := res.WriteTable(app.Stdout); err != nil {
					return err
				}
				for _, q := range res.Questions {
					if len(q.Missing) > 0 {
						fmt.Fprintf(app.Stdout, "  %s missing: %s\n", q.ID, strings.Join(q.Missing, "; "))
					}
				}
			}
			if err := res.Err(); err != nil {
				return fmt.Errorf("bench quality: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "text", "output format: text or json")
	f.StringVar(&zhDocs, "zh-docs", "", "folder of Chinese documents to use instead of the embedded guide for the zhdocs questions")
	f.StringVar(&goroot, "goroot", "", "Go installation whose doc/ and src/ are the corpora (default: go env GOROOT)")
	f.StringSliceVar(&only, "only", nil, "run only these question ids")
	f.StringVar(&split, "split", "", "run only the questions of this split: tune or heldout (Debian documentation), or older (the rest)")
	f.StringVar(&keep, "keep", "", "keep the indexes and run folders in this folder (default: a temporary folder, removed)")
	return cmd
}
