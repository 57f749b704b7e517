package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/deepresearch/deepresearch/internal/syncio"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

// batchQuestion is one line of a batch file: DeepResearch Bench's query format ({"id", "prompt"}); "question" is
// accepted for "prompt".
type batchQuestion struct {
	ID       string `json:"id"`
	Prompt   string `json:"prompt"`
	Question string `json:"question,omitempty"`
}

// batchResult is one line of the results file: DeepResearch Bench's article format, plus where the run's
// report.json is.
type batchResult struct {
	ID      string `json:"id"`
	Prompt  string `json:"prompt"`
	Article string `json:"article"`
	Report  string `json:"report_json,omitempty"`
}

// maxBatchLine bounds one line of a batch or results file.
const maxBatchLine = 4 << 20

func readBatch(r io.Reader) ([]batchQuestion, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxBatchLine)
	var out []batchQuestion
	seen := map[string]int{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var q batchQuestion
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			return nil, fmt.Errorf("line %d: not a JSON object with id and prompt: %v", n, err)
		}
		if q.Prompt == "" {
			q.Prompt = q.Question
		}
		q.ID, q.Prompt = strings.TrimSpace(q.ID), strings.TrimSpace(q.Prompt)
		if q.ID == "" {
			return nil, fmt.Errorf("line %d: no id", n)
		}
		if err := research.CheckQuestion(q.Prompt); err != nil {
			return nil, fmt.Errorf("line %d (id %s): %w", n, q.ID, err)
		}
		if prev, ok := seen[q.ID]; ok {
			return nil, fmt.Errorf("line %d: id %s already on line %d", n, q.ID, prev)
		}
		seen[q.ID] = n
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return out, nil
}

// doneIDs reads the ids already answered in a results file; a torn last line (a batch killed mid-write) is
// ignored and answered again.
func doneIDs(path string) (map[string]bool, error) {
	done := map[string]bool{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return done, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxBatchLine)
	for sc.Scan() {
		var r batchResult
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.ID != "" && r.Article != "" {
			done[r.ID] = true
		}
	}
	return done, sc.Err()
}

// endTornLine ends a results file's last line when a killed batch left it torn, so the next result starts a line of
// its own (the torn one is ignored by doneIDs and its question runs again).
func endTornLine(path string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, st.Size()-1); err != nil {
		return err
	}
	if last[0] != '\n' {
		_, err = w.Write([]byte{'\n'})
	}
	return err
}

// batchDir is the run folder of a batch question: its id made safe as a folder name, under the runs folder.
func batchDir(runs, id string) string {
	var b strings.Builder
	for _, r := range id {
		if r == '-' || r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := strings.Trim(b.String(), ".")
	if name == "" {
		name = "_"
	}
	return filepath.Join(runs, "batch", name+"-"+state.RunSchemaSuffix(id))
}

func newBatchCmd(app *App) *cobra.Command {
	var (
		fl          researchFlags
		tf          temporalFlags
		out         string
		concurrency int
	)
	cmd := &cobra.Command{
		Use:   "batch questions.jsonl --out results.jsonl",
		Short: "Research many questions: JSON lines in (DeepResearch Bench's {id, prompt}), articles out",
		Long: `batch runs the research graph for every line of a JSON-lines file — DeepResearch Bench's query format,
{"id": …, "prompt": …} — at most --concurrency at once, and appends {"id", "prompt", "article"} lines (the
benchmark's article format, plus the path of each run's report.json) to --out as each finishes, so the benchmark's
own tools can score them. Each question's run folder is <runs>/batch/<id>-…; a batch started again skips the ids
already in --out and resumes their interrupted runs.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("batch needs --out results.jsonl")
			}
			if concurrency < 1 || concurrency > 64 {
				return fmt.Errorf("--concurrency %d: give 1 to 64", concurrency)
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			qs, err := readBatch(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			done, err := doneIDs(out)
			if err != nil {
				return fmt.Errorf("%s: %w", out, err)
			}
			var todo []batchQuestion
			for _, q := range qs {
				if !done[q.ID] {
					todo = append(todo, q)
				}
			}
			fmt.Fprintf(app.Stderr, "batch: %d questions, %d already answered, %d to run\n", len(qs), len(qs)-len(todo), len(todo))
			w, err := os.OpenFile(out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			defer w.Close()
			if err := endTornLine(out, w); err != nil {
				return err
			}
			var c client.Client
			if tf = app.temporal(tf); tf.hostPort != "" {
				if c, err = app.temporalClient(tf); err != nil {
					return err
				}
				defer c.Close()
			}
			// Questions run in parallel and each reports on the terminal (corpus indexing, errors): one writer at a time.
			app.Stderr = syncio.NewWriter(app.Stderr)
			var mu sync.Mutex
			finished, failed := len(qs)-len(todo), 0
			_, errs := research.FanOut(cmd.Context(), todo, concurrency, func(ctx context.Context, q batchQuestion) (struct{}, error) {
				rep, err := app.batchOne(ctx, fl, q, c, tf)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failed++
					fmt.Fprintf(app.Stderr, "batch: [%d/%d] %s failed: %v\n", finished, len(qs), q.ID, err)
					return struct{}{}, err
				}
				line, _ := json.Marshal(batchResult{ID: q.ID, Prompt: q.Prompt, Article: rep.Markdown,
					Report: filepath.Join(rep.Dir, research.ReportJSONFile)})
				if _, err := w.Write(append(line, '\n')); err != nil {
					return struct{}{}, err
				}
				if err := w.Sync(); err != nil {
					return struct{}{}, err
				}
				finished++
				fmt.Fprintf(app.Stderr, "batch: [%d/%d] %s done (%d citations)\n", finished, len(qs), q.ID, len(rep.Citations))
				return struct{}{}, nil
			})
			if err := cmd.Context().Err(); err != nil {
				return fmt.Errorf("interrupted; run the same command again to continue")
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d questions failed (first: %v); run the same command again to retry them", failed, len(todo), errors.Join(errs...))
			}
			fmt.Fprintln(app.Stdout, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.web, "web", "", "search providers, comma-separated: "+strings.Join(websearch.Names(), ", "))
	f.StringArrayVar(&fl.corpora, "corpus", nil, "local corpus: an index directory or a folder to index (repeatable)")
	f.StringVar(&fl.mcpFile, "mcp", "", "a .mcp.json file whose servers' search tools are searched")
	f.StringVar(&fl.engine, "engine", "", "auto, llm or extractive")
	f.Float64Var(&fl.maxCost, "max-cost", 0, "cost fuse per run in USD")
	f.DurationVar(&fl.maxTime, "max-time", 0, "time limit per run for searching and reading")
	f.StringVar(&out, "out", "", "results file (JSON lines, appended)")
	addTemporalFlags(cmd, &tf)
	cmd.Flags().IntVar(&concurrency, "concurrency", 2, "runs at once")
	return cmd
}

// batchOne runs (or resumes) one batch question quietly: in this process, or on Temporal when c is set (under a
// run id derived from the question's id, so a batch started again attaches to the run already there).
func (a *App) batchOne(ctx context.Context, fl researchFlags, q batchQuestion, c client.Client, tf temporalFlags) (*research.Report, error) {
	dir := batchDir(a.runsDir(), q.ID)
	if c != nil {
		req := fl.request(q.Prompt, "")
		req.RunID = "batch-" + filepath.Base(dir)
		d, err := submitDurable(ctx, c, tf, "", req)
		if err != nil {
			return nil, err
		}
		// Not cancelled when the batch is interrupted: the same batch started again attaches to the run.
		return d.follow(ctx, dir, false, nil)
	}
	resume := ""
	if _, err := os.Stat(filepath.Join(dir, research.StateFile)); err == nil {
		resume = dir
		if info, err := research.LoadRunInfo(dir); err == nil && info.Status == research.RunDone {
			return research.LoadReport(dir)
		}
	}
	b := a.builder("")
	req := fl.request(q.Prompt, resume)
	if resume == "" {
		req.OutDir = dir
	}
	cfg, cleanup, err := b.Build(ctx, req)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	return b.Start(ctx, cfg, resume)
}
