// Package corpusbench measures the corpus index at scale on synthetic Markdown folders: indexing rate, disk and
// memory, the cost of opening the index, a no-op re-index, in-process and command-line search latency, and a
// ripgrep scan of the same files for comparison.
package corpusbench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/deepresearch/deepresearch/internal/bench/benchcpu"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

// Options configures Run; zero values mean defaults.
type Options struct {
	// Docs lists the corpus sizes to measure (default 10,000 and 100,000).
	Docs []int
	// WorkDir holds the generated folders and indexes (default: a temporary folder, removed afterwards).
	WorkDir string
	// Binary is the deepresearch executable timed for command-line search ("" skips that column).
	Binary string
	// Queries is the number of search queries timed per size (default 50).
	Queries int
	// Progress receives a line per step ("" never).
	Progress func(string)
}

// Row is one corpus size.
type Row struct {
	Docs          int     `json:"docs"`
	IndexSecs     float64 `json:"index_s"`
	DocsPerSec    float64 `json:"docs_per_s"`
	DiskMB        float64 `json:"disk_mb"`
	SourceMB      float64 `json:"source_mb"`
	PeakRSSMB     float64 `json:"peak_rss_mb"`
	OpenMs        float64 `json:"open_ms"`
	NoopReindexMs float64 `json:"noop_reindex_ms"`
	SearchP50Ms   float64 `json:"search_p50_ms"`
	SearchP95Ms   float64 `json:"search_p95_ms"`
	// NoopCPUMs and SearchCPUMs are the CPU time (user + system, all threads) of a no-op re-index and of one
	// search: what the wall-clock figures come to on an idle machine.
	NoopCPUMs   float64 `json:"noop_reindex_cpu_ms"`
	SearchCPUMs float64 `json:"search_cpu_ms"`
	// FullQueries counts the timed searches whose two-pass ranking could not be certified and that ran the full
	// query over the whole index instead.
	FullQueries  int     `json:"full_queries"`
	Queries      int     `json:"queries"`
	CLISearchP50 float64 `json:"cli_search_p50_ms"`
	RipgrepP50Ms float64 `json:"ripgrep_p50_ms"`
}

// words is the vocabulary of the synthetic documents, drawn with a Zipf distribution so that some words are
// common and most are rare, as in prose.
var words = strings.Fields(`the of and to in is that for it as with was on be by this are or from at an which
have not has but were can all their more also one other been its two may some would when there these into only
time new first used such most between after over many any through system memory model goroutine channel
synchronization happens before after lock mutex atomic value compiler runtime garbage collector heap stack
pointer interface method struct field type package import module version release build test benchmark profile
trace scheduler thread process signal file network socket buffer reader writer error panic recover defer select
range slice map string byte rune integer float complex constant variable function closure generic parameter
constraint inference embedding composite literal expression statement declaration scope block label goto break
continue return switch case default fallthrough iota nil true false append copy delete len cap make new close
print println unsafe reflect sync context cancel deadline timeout value key request response handler server
client header cookie session token encoding decoding marshal unmarshal json xml yaml protocol buffer schema
index search query result ranking score document chunk corpus anchor citation evidence quote source report
planner verifier synthesizer analyst searcher budget fuse round question answer claim gap conflict`)

func genDoc(r *rand.Rand, z *rand.Zipf, i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Document %d: %s %s\n\n", i, words[z.Uint64()], words[z.Uint64()])
	for b.Len() < 2300 {
		n := 8 + r.IntN(14)
		for j := range n {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[z.Uint64()])
		}
		b.WriteString(".")
		if r.IntN(4) == 0 {
			b.WriteString("\n\n")
		} else {
			b.WriteString(" ")
		}
	}
	b.WriteString("\n")
	return b.String()
}

// generate writes n synthetic documents under dir (100 per folder) unless they are there already.
func generate(dir string, n int) error {
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return nil
	}
	r := rand.New(rand.NewPCG(1, uint64(n)))
	z := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%04d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("doc%06d.md", i)), []byte(genDoc(r, z, i)), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644)
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}

func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p)
	return float64(s[i].Microseconds()) / 1000
}

// queries picks n queries of two to four vocabulary words, the mix of terms a searcher sends.
func queries(n int) []string {
	r := rand.New(rand.NewPCG(7, 7))
	z := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	out := make([]string, n)
	for i := range out {
		k := 2 + r.IntN(3)
		q := make([]string, k)
		for j := range q {
			q[j] = words[20+int(z.Uint64())%(len(words)-20)] // skip the commonest function words
		}
		out[i] = strings.Join(q, " ")
	}
	return out
}

// Run measures each corpus size in turn.
func Run(ctx context.Context, opts Options) ([]Row, error) {
	if len(opts.Docs) == 0 {
		opts.Docs = []int{10_000, 100_000}
	}
	if opts.Queries <= 0 {
		opts.Queries = 50
	}
	say := func(format string, args ...any) {
		if opts.Progress != nil {
			opts.Progress(fmt.Sprintf(format, args...))
		}
	}
	work := opts.WorkDir
	if work == "" {
		tmp, err := os.MkdirTemp("", "corpusbench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		work = tmp
	}
	rg, _ := exec.LookPath("rg")
	qs := queries(opts.Queries)
	var rows []Row
	for _, n := range opts.Docs {
		row := Row{Docs: n}
		src := filepath.Join(work, fmt.Sprintf("docs-%d", n))
		idxDir := filepath.Join(work, fmt.Sprintf("index-%d", n))
		say("generating %d documents in %s", n, src)
		if err := generate(src, n); err != nil {
			return nil, fmt.Errorf("generate: %w", err)
		}
		if sz, err := dirSize(src); err == nil {
			row.SourceMB = float64(sz) / 1e6
		}
		if err := os.RemoveAll(idxDir); err != nil {
			return nil, err
		}
		say("indexing %d documents", n)
		ix, err := corpus.Open(idxDir)
		if err != nil {
			return nil, err
		}
		st, err := ix.Add(ctx, src)
		ix.Close()
		if err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		row.IndexSecs, row.DocsPerSec = st.Elapsed.Seconds(), st.DocsPerSec
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
			row.PeakRSSMB = float64(ru.Maxrss) / 1024 // kilobytes on Linux
		}
		if sz, err := dirSize(idxDir); err == nil {
			row.DiskMB = float64(sz) / 1e6
		}

		// Opening: what every CLI search and run pays first.
		var opens []time.Duration
		for range 7 {
			runtime.GC()
			t0 := time.Now()
			ix, err := corpus.Open(idxDir)
			if err != nil {
				return nil, err
			}
			if ix.DocCount() != n {
				ix.Close()
				return nil, fmt.Errorf("index holds %d documents, want %d", ix.DocCount(), n)
			}
			opens = append(opens, time.Since(t0))
			ix.Close()
		}
		row.OpenMs = percentile(opens, 0.5)

		ix, err = corpus.Open(idxDir)
		if err != nil {
			return nil, err
		}
		var noops []time.Duration
		c0 := benchcpu.Process()
		for range 3 {
			t0 := time.Now()
			st, err = ix.Add(ctx, src)
			if err != nil || st.Added+st.Updated != 0 {
				ix.Close()
				return nil, fmt.Errorf("no-op re-index: %+v %v", st, err)
			}
			noops = append(noops, time.Since(t0))
		}
		row.NoopReindexMs = percentile(noops, 0.5)
		row.NoopCPUMs = float64((benchcpu.Process() - c0).Microseconds()) / 1000 / 3

		say("searching (%d queries)", len(qs))
		var lat []time.Duration
		warm := ix.SearchStats()
		for _, q := range qs { // warm once, as a server would be
			if _, err := ix.Search(ctx, q, 10); err != nil {
				ix.Close()
				return nil, err
			}
		}
		c0 = benchcpu.Process()
		for _, q := range qs {
			t0 := time.Now()
			if _, err := ix.Search(ctx, q, 10); err != nil {
				ix.Close()
				return nil, err
			}
			lat = append(lat, time.Since(t0))
		}
		row.SearchCPUMs = float64((benchcpu.Process() - c0).Microseconds()) / 1000 / float64(len(qs))
		ss := ix.SearchStats()
		ix.Close()
		row.SearchP50Ms, row.SearchP95Ms = percentile(lat, 0.5), percentile(lat, 0.95)
		row.Queries, row.FullQueries = len(qs), int(ss.Full-warm.Full)/2 // the queries ran twice

		few := qs[:min(len(qs), 15)]
		if opts.Binary != "" {
			say("command-line search (%d queries)", len(few))
			var cl []time.Duration
			for _, q := range few {
				t0 := time.Now()
				out, err := exec.CommandContext(ctx, opts.Binary, "search", "--corpus", idxDir, "-n", "10", q).CombinedOutput()
				if err != nil {
					return nil, fmt.Errorf("deepresearch search: %v\n%s", err, out)
				}
				cl = append(cl, time.Since(t0))
			}
			row.CLISearchP50 = percentile(cl, 0.5)
		}
		if rg != "" {
			say("ripgrep (%d queries)", len(few))
			var rl []time.Duration
			for _, q := range few {
				args := []string{"-i", "-l", "-F"}
				for _, w := range strings.Fields(q) {
					args = append(args, "-e", w)
				}
				t0 := time.Now()
				err := exec.CommandContext(ctx, rg, append(args, src)...).Run()
				var ee *exec.ExitError
				if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: no match
					return nil, fmt.Errorf("rg: %w", err)
				}
				rl = append(rl, time.Since(t0))
			}
			row.RipgrepP50Ms = percentile(rl, 0.5)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// FormatTable renders rows as an aligned table.
func FormatTable(rows []Row) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "docs\tsource MB\tindex s\tdocs/s\tindex MB\tpeak RSS MB\topen ms\tno-op re-index ms (CPU)\tsearch p50 ms\tsearch p95 ms\tsearch CPU ms\tfull-query searches\tCLI search p50 ms\tripgrep p50 ms")
	na := func(v float64) string {
		if v == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1f", v)
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%.0f\t%.1f\t%.0f\t%.0f\t%.0f\t%.1f\t%.0f (%.0f)\t%.1f\t%.1f\t%.1f\t%d/%d\t%s\t%s\n", r.Docs, r.SourceMB,
			r.IndexSecs, r.DocsPerSec, r.DiskMB, r.PeakRSSMB, r.OpenMs, r.NoopReindexMs, r.NoopCPUMs, r.SearchP50Ms, r.SearchP95Ms,
			r.SearchCPUMs, r.FullQueries, r.Queries,
			na(r.CLISearchP50), na(r.RipgrepP50Ms))
	}
	tw.Flush()
	return b.String()
}
