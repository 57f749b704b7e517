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

	"github.com/deepresearch/deepresearch/base/syncio"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

// batchQuestion is one line of a batch file: DeepResearch Bench's query format ({"id", "prompt"}); "question" is
// accepted for "prompt". The id is a JSON string or number (the benchmark's own query.jsonl numbers its
// questions), kept as given (Raw) and written back so; ID is its text.
type batchQuestion struct {
	Raw      json.RawMessage `json:"id"`
	Prompt   string          `json:"prompt"`
	Question string          `json:"question,omitempty"`
	ID       string          `json:"-"`
}

// batchResult is one line of the results file: DeepResearch Bench's article format, plus where the run's
// report.json is.
type batchResult struct {
	ID      json.RawMessage `json:"id"`
	Prompt  string          `json:"prompt"`
	Article string          `json:"article"`
	Report  string          `json:"report_json,omitempty"`
}

// maxBatchLine bounds one line of a batch or results file.
const maxBatchLine = 4 << 20

// batchID reads a question's id: a JSON string (its text, trimmed) or a JSON number (its literal); raw is the id
// as the file gives it, compacted.
func batchID(raw json.RawMessage) (text string, compact json.RawMessage, err error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, errors.New("no id")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", nil, err
		}
		if s = strings.TrimSpace(s); s == "" {
			return "", nil, errors.New("no id")
		}
		b, _ := json.Marshal(s)
		return s, b, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return "", nil, err
		}
		return n.String(), json.RawMessage(n.String()), nil
	}
	return "", nil, fmt.Errorf("id %s: want a string or a number", lexical.Clip(string(raw), 40))
}

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
		q.Prompt = strings.TrimSpace(q.Prompt)
		var err error
		if q.ID, q.Raw, err = batchID(q.Raw); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if err := research.CheckQuestion(q.Prompt); err != nil {
			return nil, fmt.Errorf("line %d (id %s): %w", n, q.ID, err)
		}
		// 1 and "1" are one id: the benchmark's tools compare ids by value, whichever way a file writes them.
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

// answered is the key of a question in a results file: its id and its prompt, so that a results file reused
// for another question file whose ids repeat answers the new questions rather than skip them.
func answered(id, prompt string) string { return id + "\x00" + prompt }

// doneIDs reads the questions already answered in a results file (see answered); a torn last line (a batch
// killed mid-write) is ignored and answered again.
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
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Article == "" {
			continue
		}
		if id, _, err := batchID(r.ID); err == nil {
			done[answered(id, strings.TrimSpace(r.Prompt))] = true
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

// batchDir is the run folder of a batch question: its id made safe as a folder name, under the runs folder,
// then a hash of the question file's identity (its absolute path), the id and the prompt — the run id of a batch
// question is this folder's name, so a question answers only itself: not the question another file, or an edited
// line, gives the same id.
func batchDir(runs, source string, q batchQuestion) string {
	var b strings.Builder
	for _, r := range q.ID {
		if r == '-' || r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	name := strings.Trim(b.String(), ".")
	if name == "" {
		name = "_"
	}
	return filepath.Join(runs, "batch", name+"-"+state.RunSchemaSuffix(source+"\x00"+q.ID+"\x00"+q.Prompt))
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
own tools can score them. An id is a string or a number, written back as given. Each question's run folder (and
run id) is <runs>/batch/<id>-<hash of the question file's path, the id and the prompt>, so another file reusing an
id, or an edited prompt, is a new run; a batch started again skips the questions (id and prompt) already in --out
and resumes their interrupted runs.`,
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
				if !done[answered(q.ID, q.Prompt)] {
					todo = append(todo, q)
				}
			}
			source, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(app.Stderr, "batch: %d questions, %d already answered, %d to run\n", len(qs), len(qs)-len(todo), len(todo))
			if app.Config != nil && app.Config.Research.Clarify {
				// A batch runs unattended: nothing waits on a person, whatever the configuration lets other runs ask.
				fmt.Fprintln(app.Stderr, "batch: asks no clarifying questions (research.clarify is set): each question is planned as written")
			}
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
				rep, err := app.batchOne(ctx, fl, source, q, c, tf)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failed++
					fmt.Fprintf(app.Stderr, "batch: [%d/%d] %s failed: %v\n", finished, len(qs), q.ID, err)
					return struct{}{}, err
				}
				line, _ := json.Marshal(batchResult{ID: q.Raw, Prompt: q.Prompt, Article: rep.Markdown,
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
// run id derived from the question file, the question's id and its prompt — batchDir — so a batch started again
// attaches to the run already there).
func (a *App) batchOne(ctx context.Context, fl researchFlags, source string, q batchQuestion, c client.Client, tf temporalFlags) (*research.Report, error) {
	dir := batchDir(a.runsDir(), source, q)
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
