package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/config"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
)

// chatRunsDir is where chat keeps the runs /deep-research starts, inside its workspace (see newChatCmd).
var chatRunsDir = filepath.Join(".deepresearch", "runs")

// runFolders are the folders runs are listed from: the runs folder, and the current directory's chat runs when
// the configuration does not send every run to one folder.
func (a *App) runFolders() []string {
	dirs := []string{a.runsDir()}
	if a.Config == nil || a.Config.Research.OutDir == "" {
		dirs = append(dirs, chatRunsDir)
		if d := a.mcpRunsDir(); d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// mcpRunsDir is where the MCP server keeps its runs unless told otherwise: the user's data folder, since a client
// starts the server in whatever folder it likes ("" when the environment names no home).
func (a *App) mcpRunsDir() string {
	if d := config.DataDir(a.getenv); d != "" {
		return filepath.Join(d, "runs")
	}
	return ""
}

// allRuns lists the runs of every run folder, newest first.
func (a *App) allRuns(dirs []string) ([]research.RunSummary, error) {
	var all []research.RunSummary
	for _, d := range dirs {
		runs, err := research.ListRuns(d)
		if err != nil {
			return nil, err
		}
		all = append(all, runs...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Created.After(all[j].Created) })
	return all, nil
}

// findRun resolves what a user names a run by: a run folder, a run id, any unique prefix of one, or nothing at
// all for the latest run.
func (a *App) findRun(arg string) (string, error) {
	if arg != "" {
		if _, err := os.Stat(filepath.Join(arg, research.StateFile)); err == nil {
			return arg, nil
		}
	}
	runs, err := a.allRuns(a.runFolders())
	if err != nil {
		return "", err
	}
	if arg == "" {
		if len(runs) == 0 {
			return "", fmt.Errorf("no runs in %s yet (start one: deepresearch run \"question\")", a.runsDir())
		}
		return runs[0].Dir, nil
	}
	var matches []research.RunSummary
	for _, r := range runs {
		if r.ID == arg {
			return r.Dir, nil
		}
		if strings.HasPrefix(r.ID, arg) {
			matches = append(matches, r)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0].Dir, nil
	case 0:
		return "", fmt.Errorf("no run %q: not a run folder, and no run id under %s starts with it (see deepresearch runs)", arg, a.runsDir())
	}
	ids := make([]string, 0, len(matches))
	for _, m := range matches {
		ids = append(ids, m.ID)
	}
	if len(ids) > 5 {
		ids = append(ids[:5], "…")
	}
	return "", fmt.Errorf("%q matches %d runs (%s): give more of the id", arg, len(matches), strings.Join(ids, ", "))
}

// runArg is the optional run argument of show and resume.
func runArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

func newRunsRmCmd(app *App) *cobra.Command {
	force, yes := new(bool), new(bool)
	cmd := &cobra.Command{
		Use:   "rm RUN...",
		Short: "Delete runs (a run id, a unique prefix of one, or a run folder); asks first unless --yes",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var dirs []string
			for _, a := range args {
				dir, err := app.findRun(a)
				if err != nil {
					return err
				}
				if !slices.Contains(dirs, dir) {
					dirs = append(dirs, dir)
				}
			}
			if !*yes {
				if !app.interactive() {
					return usageError(fmt.Errorf("runs rm deletes %d run folder(s) and nobody is at a terminal to confirm: pass --yes", len(dirs)))
				}
				for _, dir := range dirs {
					q := ""
					if info, err := research.LoadRunInfo(dir); err == nil {
						q = " — " + lexical.Clip(lexical.NormalizeSpace(info.Question), 70)
					}
					fmt.Fprintf(app.Stderr, "  %s%s\n", dir, q)
				}
				fmt.Fprintf(app.Stderr, "Delete these %d run(s)? [y/N] ", len(dirs))
				if a := readLine(app.Stdin); a != "y" && a != "yes" {
					fmt.Fprintln(app.Stderr, "nothing deleted")
					return nil
				}
			}
			for _, dir := range dirs {
				if err := removeRun(dir, *force); err != nil {
					return err
				}
				fmt.Fprintf(app.Stdout, "removed %s\n", dir)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(force, "force", "f", false, "also delete a run that is still running")
	cmd.Flags().BoolVarP(yes, "yes", "y", false, "delete without asking (needed when no terminal is there to ask)")
	return cmd
}

// removeRun deletes one run folder, refusing one that another process is writing unless forced.
func removeRun(dir string, force bool) error {
	info, err := research.LoadRunInfo(dir)
	if err == nil && info.Status == research.RunRunning && !force && time.Since(info.Updated) < time.Hour {
		return fmt.Errorf("%s is running (last event %s ago): stop it first, or pass --force", dir, time.Since(info.Updated).Round(time.Second))
	}
	if _, err := os.Stat(filepath.Join(dir, research.StateFile)); err != nil {
		return fmt.Errorf("%s is not a run folder: %w", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
}

func newRunsPruneCmd(app *App) *cobra.Command {
	var (
		olderThan    string
		dryRun, keep bool
	)
	cmd := &cobra.Command{
		Use:   "prune --older-than AGE",
		Short: "Delete runs older than AGE (e.g. 30d, 12h); --dry-run lists them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if olderThan == "" {
				return errors.New("prune needs --older-than AGE, e.g. --older-than 30d")
			}
			age, err := parseAge(olderThan)
			if err != nil {
				return fmt.Errorf("--older-than: %w", err)
			}
			runs, err := app.allRuns(app.runFolders())
			if err != nil {
				return err
			}
			cutoff := time.Now().Add(-age)
			n := 0
			for _, r := range runs {
				if r.Created.IsZero() || !r.Created.Before(cutoff) {
					continue
				}
				if keep && r.Status == research.RunDone {
					continue
				}
				if dryRun {
					fmt.Fprintf(app.Stdout, "would remove %s (%s, %s)\n", r.Dir, r.Status, r.Created.Local().Format("2006-01-02 15:04"))
					n++
					continue
				}
				if err := removeRun(r.Dir, false); err != nil {
					fmt.Fprintf(app.Stderr, "skipped %s: %v\n", r.Dir, err)
					continue
				}
				fmt.Fprintf(app.Stdout, "removed %s\n", r.Dir)
				n++
			}
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			fmt.Fprintf(app.Stdout, "%s %d run(s) older than %s\n", verb, n, olderThan)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&olderThan, "older-than", "", "age: a Go duration (72h) or days (30d)")
	f.BoolVar(&dryRun, "dry-run", false, "list what would be removed")
	f.BoolVar(&keep, "keep-done", false, "keep finished runs; remove only failed, stopped and abandoned ones")
	return cmd
}

// parseAge reads "30d" as days and anything else as a Go duration.
func parseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		var n float64
		if _, err := fmt.Sscanf(d, "%g", &n); err != nil || n <= 0 {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		return time.Duration(n * 24 * float64(time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not an age like 30d or 12h", s)
	}
	return d, nil
}

// openInViewer serves the web viewer over the run's folder on a free loopback port and opens the run's page in
// the browser ($BROWSER, else xdg-open or open when installed; otherwise the link is only printed).
func (a *App) openInViewer(cmd *cobra.Command, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(a.Stdout, "Ctrl-C stops the viewer.")
	return a.serveViewer(cmd, "127.0.0.1:0", filepath.Dir(abs), "/runs/"+filepath.Base(abs), func(link string) {
		browser := a.getenv("BROWSER")
		if browser == "" {
			for _, b := range []string{"xdg-open", "open"} {
				if p, err := exec.LookPath(b); err == nil {
					browser = p
					break
				}
			}
		}
		if browser == "" {
			return
		}
		c := exec.Command(browser, link)
		if err := c.Start(); err != nil {
			fmt.Fprintf(a.Stderr, "could not start %s: %v; open the link yourself\n", browser, err)
			return
		}
		go func() { _ = c.Wait() }()
	}, backend{}, viewerOptions{})
}
