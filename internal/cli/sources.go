package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/deepresearch/deepresearch/base/termsafe"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/corpus"
	"github.com/deepresearch/deepresearch/sources/fetch"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

func (a *App) getenv(k string) string {
	if a.Getenv != nil {
		return a.Getenv(k)
	}
	return os.Getenv(k)
}

func newIndexCmd(app *App) *cobra.Command {
	var (
		indexDir string
		verbose  bool
		follow   bool
	)
	cmd := &cobra.Command{
		Use:   "index [--index DIR] [-v] PATH...",
		Short: "Build or update a local full-text index over documents and source code",
		Long: `index builds a persistent full-text index (Bleve) over the documents and source code under each PATH:
` + corpus.SupportedTypes() + `.
Hidden, vendored (node_modules, vendor) and generated files and what .gitignore excludes are skipped,
as git skips them: in a git work tree the .gitignore files above PATH up to the folder holding .git, and
.git/info/exclude, apply too. A PATH that those rules exclude is still indexed, since it was asked for by
name; the rules still apply to what is inside it. Symbolic links to files and folders outside PATH are
skipped and counted (--follow-links follows them), so that a cloned repository cannot bring files from
elsewhere into reports; links inside PATH are indexed once.
Re-running it is incremental: unchanged files are skipped (same modification time, size and inode, or failing
that the same content hash; a file changed just before it was indexed is hashed again), changed files are
re-indexed and deleted files are dropped. Files found not to be documents only by reading them (binary or
UTF-16 content, generated, too much text, failing to extract) are remembered and read again only once they
change; every run reports them by that outcome, not as unchanged. It reports how many files were indexed,
unchanged, skipped by type, too large, binary, excluded or failed; -v lists every file with its outcome.

Any number of deepresearch processes may use the same index at once; an update waits for another one in
progress. Without --index the index of a single PATH lives in the user cache directory, where
"deepresearch search --corpus PATH" finds it again.`,
		Example: `  deepresearch index ~/notes
  deepresearch index -v "$(go env GOROOT)/src/context"
  deepresearch index --index ./idx "$(go env GOROOT)/doc"
  deepresearch search --corpus ./idx "happens before"`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("index needs at least one PATH: deepresearch index ~/notes")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// Check every path first: a typo must not leave an empty index behind in the cache.
			for _, p := range args {
				if _, err := os.Stat(p); err != nil {
					return fmt.Errorf("index %s: %w", p, errors.Unwrap(err))
				}
			}
			dir := indexDir
			if dir == "" {
				if len(args) > 1 {
					return errors.New("index: several paths need --index DIR to say where the shared index goes")
				}
				dir = corpus.DefaultDir(args[0])
			}
			prog := newIndexProgress(app.Stderr)
			ix, err := corpus.OpenWith(dir, &corpus.Options{Logger: app.Log, Progress: prog.update, FollowLinks: follow})
			if err != nil {
				return err
			}
			defer ix.Close()
			st, err := ix.Add(cmd.Context(), args...)
			prog.finish()
			printStats(app.Stdout, app.Stderr, ix, st, verbose)
			if err != nil {
				return err
			}
			if ix.ChunkCount() == 0 {
				return emptyCorpusError(strings.Join(args, ", "), ix, st)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&indexDir, "index", "", "index directory (default: per-folder index in the user cache dir)")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "list every file with its outcome")
	cmd.Flags().BoolVar(&follow, "follow-links", false, followLinksHelp)
	return cmd
}

// emptyCorpusError says that a folder holds nothing the corpus can index (or only files without any text), and
// what it does index.
func emptyCorpusError(target string, ix *corpus.Index, st corpus.Stats) error {
	skipped := skippedSummary(st)
	if n := ix.DocCount(); n > 0 {
		skipped = strings.TrimSuffix(fmt.Sprintf("%d without any text, %s", n, skipped), ", ")
	}
	if skipped == "" {
		skipped = "no files found"
	}
	return fmt.Errorf("corpus %s holds no document deepresearch can index (%s); supported: %s",
		target, skipped, corpus.SupportedTypes())
}

// skippedSummary lists the files not indexed by outcome, with the most frequent unsupported extensions.
func skippedSummary(st corpus.Stats) string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	if st.SkippedType > 0 {
		exts := map[string]int{}
		for _, f := range st.Files {
			if f.Outcome == corpus.SkippedType {
				exts[f.Detail]++
			}
		}
		keys := make([]string, 0, len(exts))
		for k := range exts {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if exts[keys[i]] != exts[keys[j]] {
				return exts[keys[i]] > exts[keys[j]]
			}
			return keys[i] < keys[j]
		})
		var top []string
		for i, k := range keys {
			if i == 5 {
				top = append(top, "…")
				break
			}
			top = append(top, fmt.Sprintf("%s ×%d", k, exts[k]))
		}
		parts = append(parts, fmt.Sprintf("%d of an unsupported type (%s)", st.SkippedType, strings.Join(top, ", ")))
	}
	add(st.TooLarge, "too large")
	add(st.Binary, "binary")
	add(st.Excluded, "excluded (hidden, vendored, generated or .gitignore'd)")
	add(st.LinksOutside, "links to outside the folder (--follow-links follows them)")
	add(len(st.Failed), "failed")
	return strings.Join(parts, ", ")
}

func printStats(out, errw io.Writer, ix *corpus.Index, st corpus.Stats, verbose bool) {
	for _, f := range st.Failed {
		fmt.Fprintf(errw, "warning: not indexed: %v\n", f)
	}
	if verbose {
		files := slices.Clone(st.Files) // in path order, not the order the files were looked at in
		slices.SortStableFunc(files, func(a, b corpus.FileOutcome) int { return strings.Compare(a.Path, b.Path) })
		for _, f := range files {
			line := fmt.Sprintf("  %-16s %s", f.Outcome, f.Path)
			if f.Detail != "" && f.Outcome != corpus.Failed {
				line += " (" + f.Detail + ")"
			}
			fmt.Fprintln(out, line)
		}
	}
	fmt.Fprintf(out, "index %s: %d indexed (%d added, %d updated), %d unchanged, %d removed; %d chunks written; %d documents in the index\n",
		ix.Dir(), st.Added+st.Updated, st.Added, st.Updated, st.Unchanged, st.Removed, st.Chunks, ix.DocCount())
	if s := skippedSummary(st); s != "" {
		hint := ""
		if !verbose {
			hint = " (-v lists the files)"
		}
		fmt.Fprintf(out, "not indexed: %s%s\n", s, hint)
	}
	waited := ""
	if st.Waited > 100*time.Millisecond {
		waited = fmt.Sprintf(", %s of it waiting for another process", st.Waited.Round(time.Millisecond))
	}
	fmt.Fprintf(out, "took %s (%.0f documents/s%s)\n", st.Elapsed.Round(time.Millisecond), st.DocsPerSec, waited)
}

// indexProgress shows an index update's progress on a terminal (one line redrawn in place), or as a few plain
// lines otherwise; it stays silent for updates that finish within a second, except to say it is waiting for
// another process.
type indexProgress struct {
	w        io.Writer
	tty      bool
	mu       sync.Mutex
	start    time.Time
	last     time.Time
	drawn    bool
	toldWait bool
}

func newIndexProgress(w io.Writer) *indexProgress {
	p := &indexProgress{w: w, start: time.Now()}
	if f, ok := termsafe.Unwrap(w).(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty, p.w = true, f // drawn with its own escapes; the line it draws is sanitised (update)
	}
	return p
}

func (p *indexProgress) update(pr corpus.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var line string
	waiting := pr.Phase == "waiting"
	switch {
	case waiting:
		line = fmt.Sprintf("indexing %s: waiting for another deepresearch process to finish indexing it…", pr.Root)
		if pr.Total > 0 {
			line += fmt.Sprintf(" (it has done %d/%d files)", pr.Done, pr.Total)
		}
	case pr.Phase == "indexing":
		line = fmt.Sprintf("indexing %s: %d/%d files (%s)", pr.Root, pr.Done, pr.Total, progressETA(time.Since(p.start), pr.Done, pr.Total))
	default:
		return
	}
	if !waiting && time.Since(p.start) < time.Second {
		return
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s", termsafe.Line(line))
		p.drawn = true
		return
	}
	// Plain lines: the wait when it begins, then a line every 5 s and the last file.
	if (waiting && !p.toldWait) || time.Since(p.last) >= 5*time.Second || (!waiting && pr.Total > 0 && pr.Done == pr.Total) {
		fmt.Fprintln(p.w, line)
		p.last = time.Now()
	}
	p.toldWait = p.toldWait || waiting
}

func (p *indexProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// openCorpus opens an index directory, or indexes a document folder on the
// fly into its default index (kept for next time). A folder without any
// indexable document is an error that names the supported types.
func openCorpus(app *App, cmd *cobra.Command, target string, followLinks bool) (*corpus.Index, error) {
	return openCorpusWith(cmd.Context(), app, target, nil, followLinks)
}

// followLinksHelp is the --follow-links flag's help, the same on every command that indexes.
const followLinksHelp = "follow symbolic links to files and folders outside the indexed folder (default: skip and count them)"

// openCorpusWith is openCorpus reporting indexing progress to onProgress as well as to the terminal.
func openCorpusWith(ctx context.Context, app *App, target string, onProgress func(corpus.Progress), followLinks bool) (*corpus.Index, error) {
	if corpus.IsIndex(target) {
		return corpus.OpenWith(target, &corpus.Options{Logger: app.Log})
	}
	info, err := os.Stat(target)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", target, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("corpus %s: not a folder or an index directory", target)
	}
	prog := newIndexProgress(app.Stderr)
	report := prog.update
	if onProgress != nil {
		report = func(p corpus.Progress) {
			prog.update(p)
			onProgress(p)
		}
	}
	ix, err := corpus.OpenWith(corpus.DefaultDir(target), &corpus.Options{Logger: app.Log, Progress: report, FollowLinks: followLinks})
	if err != nil {
		return nil, err
	}
	st, err := ix.Add(ctx, target)
	prog.finish()
	if err != nil {
		ix.Close()
		return nil, err
	}
	if st.Added+st.Updated+st.Removed > 0 || len(st.Failed) > 0 {
		printStats(app.Stderr, app.Stderr, ix, st, false)
	}
	if ix.ChunkCount() == 0 {
		err := emptyCorpusError(target, ix, st)
		ix.Close()
		return nil, err
	}
	return ix, nil
}

func newSearchCmd(app *App) *cobra.Command {
	var (
		provider, corpusDir string
		n                   int
		asJSON, follow      bool
	)
	cmd := &cobra.Command{
		Use:   `search [--web NAME | --corpus INDEX|DIR] [-n N] "query"`,
		Short: "Search the web or a local corpus and print ranked results",
		Long: `search prints ranked results (title, URL or file anchor, snippet) from one source:

  --web ` + strings.Join(websearch.Names(), "|") + `   a web search API; each reads the environment:
      ` + websearch.Help() + `
  --corpus INDEX|DIR   a local index built by "deepresearch index", or a folder, which is indexed on the fly and
                       kept in the user cache dir

Without either, sources.web from the configuration is used, then sources.corpus.`,
		Example: `  deepresearch search --corpus "$(go env GOROOT)/doc" "happens before"
  deepresearch search --web searxng -n 5 "bleve cjk analyzer"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			query := strings.Join(args, " ")
			if provider == "" && corpusDir == "" {
				switch {
				case app.Config != nil && app.Config.Sources.Web != "":
					provider = app.Config.Sources.Web
				case app.Config != nil && len(app.Config.Sources.Corpus) > 0:
					corpusDir = app.Config.Sources.Corpus[0]
				default:
					return errors.New("search: no source: pass --web NAME (" + strings.Join(websearch.Names(), ", ") +
						") or --corpus DIR, or set sources.web in the configuration")
				}
			}
			var s sources.Searcher
			if corpusDir != "" {
				ix, err := openCorpus(app, cmd, corpusDir, follow)
				if err != nil {
					return err
				}
				defer ix.Close()
				s = ix
			} else {
				ws, err := websearch.New(provider, websearch.Config{Getenv: app.getenv, Logger: app.Log})
				if err != nil {
					return err
				}
				s = ws
			}
			rs, err := s.Search(cmd.Context(), query, n)
			if err != nil {
				return err
			}
			if asJSON {
				if rs == nil {
					rs = []sources.Result{}
				}
				return writeJSON(app.Stdout, rs)
			}
			if len(rs) == 0 {
				fmt.Fprintf(app.Stdout, "no results from %s for %q\n", s.Name(), query)
				return nil
			}
			for i, r := range rs {
				fmt.Fprintf(app.Stdout, "%d. %s\n   %s\n", i+1, r.Title, r.URL)
				meta := []string{r.Provider, fmt.Sprintf("score %.3f", r.Score)}
				if !r.Date.IsZero() {
					meta = append(meta, r.Date.Format("2006-01-02"))
				}
				fmt.Fprintf(app.Stdout, "   [%s]\n", strings.Join(meta, " · "))
				if w := r.Work.String(); w != "" {
					fmt.Fprintf(app.Stdout, "   %s\n", w)
				}
				if r.Snippet != "" {
					fmt.Fprintf(app.Stdout, "   %s\n", r.Snippet)
				}
				fmt.Fprintln(app.Stdout)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&provider, "web", "", "web search provider: "+strings.Join(websearch.Names(), ", ")+" (the same flag as run's; --provider is the model provider)")
	f.StringVar(&corpusDir, "corpus", "", "local index directory, or a folder to index on the fly")
	f.BoolVar(&follow, "follow-links", false, followLinksHelp)
	f.IntVarP(&n, "n", "n", 10, "number of results")
	f.BoolVar(&asJSON, "json", false, "print results as JSON")
	cmd.MarkFlagsMutuallyExclusive("web", "corpus")
	return cmd
}

func newFetchCmd(app *App) *cobra.Command {
	var (
		allowHosts []string
		corpusDir  string
		timeout    time.Duration
		maxBytes   int64
		wrap       bool
	)
	cmd := &cobra.Command{
		Use:   "fetch [--allow-host H] URL",
		Short: "Fetch a URL and print the extracted Markdown (or why it was refused)",
		Long: `fetch retrieves one source exactly as a research run would: main content extracted from HTML and
rendered as Markdown, text from PDF, plain text and Markdown passed through. Loopback, private, link-local and
cloud-metadata addresses are refused (also after redirects and DNS resolution) unless the host is opened with
--allow-host (or sources.allow_hosts in the configuration).

file:// URLs from corpus search results are read from the index given with --corpus.`,
		Example: `  deepresearch fetch https://go.dev/ref/mem
  deepresearch fetch --allow-host wiki.intranet.example http://wiki.intranet.example/page
  deepresearch fetch --corpus ./idx 'file:///usr/local/go/doc/go_mem.html#L52-L61'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := &fetch.Config{AllowHosts: allowHosts, Timeout: timeout, MaxBytes: maxBytes, Logger: app.Log}
			if app.Config != nil {
				cfg.AllowHosts = append(cfg.AllowHosts, app.Config.Sources.AllowHosts...)
				cfg.CacheDir = app.Config.Sources.CacheDir
			}
			web, err := fetch.New(cfg)
			if err != nil {
				return err
			}
			router := sources.Router{Web: web}
			if corpusDir == "" && app.Config != nil && len(app.Config.Sources.Corpus) > 0 {
				corpusDir = app.Config.Sources.Corpus[0]
			}
			if corpusDir == "" && strings.HasPrefix(strings.ToLower(args[0]), "file:") {
				return fmt.Errorf("fetch %s: file:// URLs are read from a corpus index: pass --corpus INDEX|DIR", args[0])
			}
			if corpusDir != "" && strings.HasPrefix(strings.ToLower(args[0]), "file:") {
				ix, err := openCorpus(app, cmd, corpusDir, false)
				if err != nil {
					return err
				}
				defer ix.Close()
				router.Corpus = ix
			}
			doc, err := router.Fetch(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			via := ""
			if doc.FinalURL != "" && doc.FinalURL != doc.URL {
				via = " → " + doc.FinalURL
			}
			fmt.Fprintf(app.Stderr, "fetched %s%s: %s, %d characters, sha256 %s\n", doc.URL, via, doc.ContentType, len(doc.Text), doc.Hash)
			if doc.Truncated {
				fmt.Fprintf(app.Stderr, "note: the body exceeded the size limit; the text below is only the part that was read\n")
			}
			if wrap {
				fmt.Fprintln(app.Stdout, sources.WrapUntrusted(doc))
				return nil
			}
			if doc.Title != "" && !strings.HasPrefix(doc.Text, "# ") {
				fmt.Fprintf(app.Stdout, "# %s\n\n", doc.Title)
			}
			fmt.Fprint(app.Stdout, doc.Text)
			if !strings.HasSuffix(doc.Text, "\n") {
				fmt.Fprintln(app.Stdout)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&allowHosts, "allow-host", nil, "open a host the safety rules would refuse (repeatable; *.example.com for a domain)")
	f.StringVar(&corpusDir, "corpus", "", "index (or folder) serving file:// URLs")
	f.DurationVar(&timeout, "timeout", 0, "total time limit (default 30s)")
	f.Int64Var(&maxBytes, "max-bytes", 0, "body size limit in bytes (default 5 MiB)")
	f.BoolVar(&wrap, "wrap", false, "print the text wrapped as untrusted source material, as prompts see it")
	return cmd
}
