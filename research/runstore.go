package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"

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
// password, so that listings served to browsers and MCP clients never carry the credential.
func SharedLabel(stateURL string) string {
	u, err := url.Parse(stateURL)
	if err != nil {
		return "shared state"
	}
	return u.Redacted()
}

// List lists the runs, newest first.
func (r Runs) List(ctx context.Context) ([]RunSummary, error) {
	var list []RunSummary
	seen := map[string]int{}
	if r.Dir != "" {
		local, err := ListRuns(r.Dir)
		if err != nil {
			return nil, err
		}
		for _, s := range local {
			seen[s.ID] = len(list)
			list = append(list, s)
		}
	}
	if r.State != "" {
		shared, err := ListSharedRuns(ctx, r.State)
		if err != nil {
			return nil, err
		}
		for _, s := range shared {
			if i, ok := seen[s.ID]; ok && list[i].Status != RunUnreadable {
				continue
			}
			if i, ok := seen[s.ID]; ok {
				list[i] = s
				continue
			}
			list = append(list, s)
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Created.After(list[j].Created) })
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
