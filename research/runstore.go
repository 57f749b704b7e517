package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"time"

	"github.com/deepresearch/deepresearch/base/redact"
	"github.com/deepresearch/deepresearch/research/state"
)

// Runs reads runs for the surfaces that show them (runs, show, the web viewer, the MCP server): the run folders
// under Dir and, when State names a shared PostgreSQL state, every run in it, whichever machine ran it. A run that
// has both — a durable run whose report its submitter wrote into a local folder — is read from its folder first
// and from the shared state for what the folder lacks (its state, the texts that were read).
type Runs struct {
	// Dir holds one folder per run; empty means none.
	Dir string
	// State is a shared state (postgres://…); empty means none.
	State string
}

func (r Runs) dir(id string) string {
	if r.Dir == "" {
		return ""
	}
	return filepath.Join(r.Dir, id)
}

// SharedLabel is how a summary from the shared state names where the run lives: the state's URL without its
// passwords (user information, ?password=, ?sslpassword=), so that listings served to browsers and MCP clients never carry the credential.
func SharedLabel(stateURL string) string {
	if _, err := url.Parse(stateURL); err != nil {
		return "shared state"
	}
	return redact.URL(stateURL)
}

// List lists the runs, newest first, reading every one (see Entries for a listing shown a page at a time).
func (r Runs) List(ctx context.Context) ([]RunSummary, error) {
	entries, err := r.Entries(ctx)
	if err != nil {
		return nil, err
	}
	list := make([]RunSummary, 0, len(entries))
	for _, e := range entries {
		list = append(list, e.Summary())
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Created.After(list[j].Created) })
	return list, nil
}

// RunEntry is one run of a listing, found without reading its state; Summary reads it.
type RunEntry struct {
	ID string
	// Started orders the listing (RunFolder.Started; a run of the shared state: when it was created).
	Started time.Time
	folder  *RunFolder
	shared  *RunSummary
}

// Summary reads the run's summary: from its folder, else (or when the folder cannot be read) from the shared
// state's listing.
func (e RunEntry) Summary() RunSummary {
	if e.folder != nil {
		s := LoadSummary(*e.folder)
		if s.Status != RunUnreadable || e.shared == nil {
			return s
		}
	}
	if e.shared != nil {
		return *e.shared
	}
	return RunSummary{ID: e.ID, Status: RunUnreadable, Error: "no run " + e.ID, Created: e.Started, Updated: e.Started}
}

// Entries lists the runs newest first without opening any run folder's state — a directory read and an lstat per
// folder, and one query of the shared state when there is one — so that a page of a long listing reads only the
// runs it shows (RunEntry.Summary).
func (r Runs) Entries(ctx context.Context) ([]RunEntry, error) {
	var list []RunEntry
	seen := map[string]int{}
	if r.Dir != "" {
		local, err := ListRunFolders(r.Dir)
		if err != nil {
			return nil, err
		}
		for i := range local {
			seen[local[i].ID] = len(list)
			list = append(list, RunEntry{ID: local[i].ID, Started: local[i].Started, folder: &local[i]})
		}
	}
	if r.State != "" {
		shared, err := ListSharedRuns(ctx, r.State)
		if err != nil {
			return nil, err
		}
		for i := range shared {
			if j, ok := seen[shared[i].ID]; ok {
				list[j].shared = &shared[i]
				continue
			}
			list = append(list, RunEntry{ID: shared[i].ID, Started: shared[i].Created, shared: &shared[i]})
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Started.After(list[j].Started) })
	return list, nil
}

// Info reads what a run remembers about itself.
func (r Runs) Info(ctx context.Context, id string) (*RunInfo, error) {
	var ferr error
	if d := r.dir(id); d != "" {
		info, err := LoadRunInfo(d)
		if err == nil {
			return info, nil
		}
		ferr = err
	}
	if r.State == "" {
		return nil, r.missing(id, ferr)
	}
	db, err := r.openShared(ctx, id)
	if err != nil {
		return nil, errors.Join(ferr, err)
	}
	defer db.Close()
	return readInfo(ctx, db, SharedLabel(r.State))
}

// Report reads a run's published report.
func (r Runs) Report(ctx context.Context, id string) (*Report, error) {
	var ferr error
	if d := r.dir(id); d != "" {
		rep, err := LoadReport(d)
		if err == nil {
			return rep, nil
		}
		ferr = err
	}
	if r.State == "" {
		return nil, r.missing(id, ferr)
	}
	rep, err := LoadSharedReport(ctx, r.State, id)
	if err != nil {
		return nil, errors.Join(ferr, err)
	}
	return rep, nil
}

// ReportFile returns report.md or report.json of a run as the run folder holds them.
func (r Runs) ReportFile(ctx context.Context, id, name string) ([]byte, error) {
	if name != ReportMarkdownFile && name != ReportJSONFile {
		return nil, fmt.Errorf("research: %s is not a report file", name)
	}
	var ferr error
	if d := r.dir(id); d != "" {
		b, err := ReadRunFile(d, name)
		if err == nil {
			return b, nil
		}
		ferr = err
	}
	if r.State == "" {
		return nil, ferr
	}
	rep, err := r.Report(ctx, id)
	if err != nil {
		return nil, err
	}
	if name == ReportMarkdownFile {
		return []byte(rep.Markdown), nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("research: encode report: %w", err)
	}
	return append(b, '\n'), nil
}

// SourceText returns the exact text that was read for a source during the run (see LoadSourceText); from the
// shared state, the text stored there by whichever worker read it.
func (r Runs) SourceText(ctx context.Context, id, source string) (string, error) {
	var ferr error
	if d := r.dir(id); d != "" {
		text, err := LoadSourceText(d, source)
		if err == nil {
			return text, nil
		}
		ferr = err
	}
	if r.State == "" {
		return "", ferr
	}
	db, err := r.openShared(ctx, id)
	if err != nil {
		return "", errors.Join(ferr, err)
	}
	defer db.Close()
	doc, err := findDocument(ctx, db, source)
	if err != nil {
		return "", err
	}
	text, err := db.Text(ctx, doc.Hash)
	if err != nil {
		return "", fmt.Errorf("research: text of %s: %w", source, err)
	}
	return text, nil
}

// EachEvent streams a run's recorded events (events.jsonl of its folder; the shared state keeps none) to fn, one
// line in memory at a time (see the package-level EachEvent); it stops early when ctx ends.
func (r Runs) EachEvent(ctx context.Context, id string, fn func(Event) error) error {
	d := r.dir(id)
	if d == "" {
		return fmt.Errorf("research: run %s has no folder here", id)
	}
	return EachEvent(d, func(e Event) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn(e)
	})
}

// openShared opens a run of the shared state read-only (an id the state does not hold is refused: ErrNotFound).
func (r Runs) openShared(ctx context.Context, id string) (*state.DB, error) {
	return state.OpenRunReadOnly(ctx, r.State, id)
}

func (r Runs) missing(id string, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("research: no run %s: %w", id, state.ErrNotFound)
}
