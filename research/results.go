package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/deepresearch/deepresearch/research/state"
)

// ListRuns lists the run folders directly under dir, newest first; each ID is the folder's name, the handle
// every surface finds it by. Folders without a state.db are skipped; one whose state cannot be read is listed
// with status RunUnreadable and the reason in Error. A missing dir is an empty list. It reads every run's state;
// a listing that shows a page of runs finds them with ListRunFolders and reads only those with LoadSummary.
func ListRuns(dir string) ([]RunSummary, error) {
	folders, err := ListRunFolders(dir)
	if err != nil {
		return nil, err
	}
	out := make([]RunSummary, 0, len(folders))
	for _, f := range folders {
		out = append(out, LoadSummary(f))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out, nil
}

// RunFolder is a run folder found without opening its state: enough to order a listing, so that a page of it
// reads only the runs it shows.
type RunFolder struct {
	// ID is the folder's name.
	ID  string
	Dir string
	// Started orders the listing: the time in the run's id (NewRunID), else the modification time of its state
	// file (a folder named with --out or renamed).
	Started time.Time
}

// ListRunFolders lists the run folders directly under dir — those holding a state.db — newest first, reading no
// run's state: one directory read, and one lstat per folder. A missing dir is an empty list.
func ListRunFolders(dir string) ([]RunFolder, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("research: list runs in %s: %w", dir, err)
	}
	var out []RunFolder
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		runDir := filepath.Join(dir, e.Name())
		st, err := os.Lstat(filepath.Join(runDir, StateFile))
		if err != nil {
			continue
		}
		f := RunFolder{ID: e.Name(), Dir: runDir, Started: st.ModTime()}
		if t, ok := RunIDTime(e.Name()); ok {
			f.Started = t
		}
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Started.Equal(out[j].Started) {
			return out[i].Started.After(out[j].Started)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// LoadSummary reads one run folder's summary; a folder whose state cannot be read is RunUnreadable, with the
// reason in Error, dated by the folder.
func LoadSummary(f RunFolder) RunSummary {
	info, err := LoadRunInfo(f.Dir)
	if err != nil {
		// A corrupt or foreign folder: listed as such, dated by the folder, with the reason.
		u := RunSummary{ID: f.ID, Dir: f.Dir, Status: RunUnreadable, Error: err.Error(), Created: f.Started, Updated: f.Started}
		if fi, err := os.Stat(f.Dir); err == nil {
			u.Created, u.Updated = fi.ModTime(), fi.ModTime()
		}
		return u
	}
	// Runs are addressed by their folder's name (show <id>, the viewer, MCP resources), which differs from the
	// recorded id when the folder was named with --out or renamed.
	info.ID = f.ID
	return info.RunSummary
}

// LoadRunInfo reads how a run was started and where it stands. It may be called while the run is writing.
func LoadRunInfo(runDir string) (*RunInfo, error) {
	ctx := context.Background()
	db, err := state.OpenReadOnly(ctx, filepath.Join(runDir, StateFile))
	if err != nil {
		return nil, fmt.Errorf("research: %s is not a run folder: %w", runDir, err)
	}
	defer db.Close()
	return readInfo(ctx, db, runDir)
}

func readInfo(ctx context.Context, db *state.DB, runDir string) (*RunInfo, error) {
	get := func(k string) string {
		v, _, _ := db.Meta(ctx, k)
		return v
	}
	info := &RunInfo{RunSummary: RunSummary{
		ID: get("run_id"), Dir: runDir, Question: get("question"), Engine: get("engine"), Status: get("status"),
		Error: get("error"), CutShort: get("cut_short"),
	}}
	if info.ID == "" {
		return nil, fmt.Errorf("research: %s holds no run", runDir)
	}
	info.Created, _ = time.Parse(time.RFC3339Nano, get("created"))
	info.Updated = info.Created
	if st, err := os.Stat(filepath.Join(runDir, EventsFile)); err == nil {
		info.Updated = st.ModTime()
	}
	var rc runConfig
	_ = json.Unmarshal([]byte(get("config")), &rc)
	info.Budget, info.Rounds = rc.Budget, rc.Rounds
	_ = json.Unmarshal([]byte(get("settings")), &info.Settings)
	if pool, err := db.Evidence(ctx, state.Accepted); err == nil {
		info.Evidence = len(pool)
	}
	return info, nil
}

// LoadReport reads a finished run's report.json.
func LoadReport(runDir string) (*Report, error) {
	b, err := ReadRunFile(runDir, ReportJSONFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("research: %s has no report yet (is the run finished? try resume)", runDir)
	}
	if err != nil {
		return nil, fmt.Errorf("research: read report: %w", err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("research: %s: %w", ReportJSONFile, err)
	}
	rep.Dir = runDir
	return &rep, nil
}

// ErrReportGone marks a finished run whose report.json was removed: the run folder keeps no other copy of the
// report, and resuming cannot write it again (the run is finished).
var ErrReportGone = errors.New("the report was removed")

// RestoreReport makes a finished run's report files whole again: report.md is written again from report.json
// when it was removed or changed. restored says whether it had to. Without report.json the error wraps
// ErrReportGone and says what still works.
func RestoreReport(runDir string) (rep *Report, restored bool, err error) {
	b, err := ReadRunFile(runDir, ReportJSONFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, fmt.Errorf("research: %s finished, but its %s was removed and the folder keeps no other copy of the report (%w); its evidence and research log are still in %s (deepresearch show --events); run the question again for a new report",
			runDir, ReportJSONFile, ErrReportGone, StateFile)
	}
	if err != nil {
		return nil, false, fmt.Errorf("research: read report: %w", err)
	}
	rep = &Report{}
	if err := json.Unmarshal(b, rep); err != nil {
		return nil, false, fmt.Errorf("research: %s: %w", ReportJSONFile, err)
	}
	rep.Dir = runDir
	md, err := ReadRunFile(runDir, ReportMarkdownFile)
	if err == nil && string(md) == rep.Markdown {
		return rep, false, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, false, fmt.Errorf("research: %s: %w", ReportMarkdownFile, err)
	}
	if err := writeRunFile(runDir, ReportMarkdownFile, []byte(rep.Markdown)); err != nil {
		return nil, false, fmt.Errorf("research: restore %s: %w", ReportMarkdownFile, err)
	}
	return rep, true, nil
}

// LoadSourceText returns the exact text that was read for url during the run — the text its quotes were checked
// against. The URL may be given in any form NormalizeURL maps to the same source. A file anchor the run did not
// fetch under (a quote's own lines, file:///x#L120-L122, inside the chunk file:///x#L100-L180 that was read)
// resolves to the stored text of the same file: the narrowest fetched anchor containing those lines, else the
// whole file, else the first fetch of that file.
func LoadSourceText(runDir, url string) (string, error) {
	ctx := context.Background()
	db, err := state.OpenReadOnly(ctx, filepath.Join(runDir, StateFile))
	if err != nil {
		return "", fmt.Errorf("research: %s is not a run folder: %w", runDir, err)
	}
	defer db.Close()
	doc, err := findDocument(ctx, db, url)
	if err != nil {
		return "", err
	}
	b, err := ReadRunFile(runDir, doc.Path)
	if err != nil {
		return "", fmt.Errorf("research: text of %s: %w", url, err)
	}
	return string(b), nil
}

// findDocument looks up the document read for url, resolving a file anchor as LoadSourceText describes.
func findDocument(ctx context.Context, db *state.DB, url string) (*state.Document, error) {
	doc, err := db.Document(ctx, url)
	if errors.Is(err, state.ErrNotFound) {
		docs, lerr := db.Documents(ctx)
		if lerr != nil {
			return nil, lerr
		}
		if d := pickDocument(docs, url); d != nil {
			doc, err = d, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("research: source %s was not read in this run: %w", url, err)
	}
	return doc, nil
}

// MaxLoadedEvents bounds the events LoadEvents holds; EachEvent streams any number.
const MaxLoadedEvents = 100_000

// errEnough stops a stream that has what it needs.
var errEnough = errors.New("enough")

// LoadEvents reads a run's events.jsonl, skipping a torn last line, refusing one with more than
// MaxLoadedEvents events (EachEvent streams them instead).
func LoadEvents(runDir string) ([]Event, error) {
	var out []Event
	err := EachEvent(runDir, func(e Event) error {
		if len(out) == MaxLoadedEvents {
			return errEnough
		}
		out = append(out, e)
		return nil
	})
	if errors.Is(err, errEnough) {
		return nil, fmt.Errorf("research: events of %s: more than %d events; stream them instead", runDir, MaxLoadedEvents)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EachEvent calls fn with each event of a run folder's events.jsonl, in order, streaming the file: memory holds
// one line (at most runfolder.MaxLineBytes; a longer line is skipped) whatever the file's size. A line that does
// not parse (a torn last line) is skipped; an error from fn stops the stream and is returned as it is.
func EachEvent(runDir string, fn func(Event) error) error {
	var fnErr error
	err := eachEvent(runDir, func(e Event) error {
		if err := fn(e); err != nil {
			fnErr = err
			return err
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("research: events of %s: %w", runDir, err)
	}
	return nil
}

// openRun opens a run folder's state read-only; the run may be writing meanwhile.
func openRun(runDir string) (*state.DB, error) {
	db, err := state.OpenReadOnly(context.Background(), filepath.Join(runDir, StateFile))
	if err != nil {
		return nil, fmt.Errorf("research: %s is not a run folder: %w", runDir, err)
	}
	return db, nil
}

// LoadEvidence reads a run's evidence pool — accepted and rejected items, in the order they were found — also
// while the run is in progress.
func LoadEvidence(runDir string) ([]Evidence, error) {
	db, err := openRun(runDir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Evidence(context.Background(), "")
	if err != nil {
		return nil, err
	}
	out := make([]Evidence, len(rows))
	for i, e := range rows {
		out[i] = fromState(e)
	}
	return out, nil
}

// LoadLog reads a run's research log: every stage's decisions, gaps, retries, timings and spend.
func LoadLog(runDir string) ([]state.LogEntry, error) {
	db, err := openRun(runDir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Log(context.Background(), "")
}

// LoadPlan reads a run's plan; it fails while the run has not finished its Scope stage.
func LoadPlan(runDir string) (*Plan, error) {
	db, err := openRun(runDir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var p Plan
	ok, err := db.Step(context.Background(), "scope", &p)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("research: %s has no plan yet", runDir)
	}
	return &p, nil
}
