// Package scalebench measures durable research runs on a Temporal cluster: runs completed per minute with N
// worker processes (each running at most a fixed number of steps at once), the scale-out efficiency against one
// worker, and the latency a role call gains on Temporal against the same run in one process.
//
// It drives the deepresearch binary itself — worker processes, `run --temporal` submissions and one local run —
// against a loopback OpenAI-compatible fake model with a fixed latency, on the cluster and PostgreSQL state it is
// given. The product binary carries no Temporal server: `deepresearch bench scale` measures the user's own
// cluster, and the scale-test module's BenchmarkScale runs the same code against an in-process server.
package scalebench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/research/state"
)

// Config describes one benchmark. Zero fields take the defaults in brackets.
type Config struct {
	// Binary is the deepresearch executable the workers, submissions and the local run execute [this process's].
	Binary string
	// Temporal is the cluster's frontend HOST:PORT; required.
	Temporal  string
	Namespace string // ["default"]
	// TaskQueue is the base task queue [a fresh deepresearch-bench-… queue, so that no other worker of the
	// cluster takes the benchmark's steps and the benchmark's workers take no one else's].
	TaskQueue string
	// State is the shared state the workers use: a postgres:// URL; required.
	State string
	// Workers are the worker counts measured [1, 2, 4].
	Workers []int
	// Runs are the concurrent runs per configuration [8].
	Runs int
	// Concurrency is the steps each worker runs at once, the same for every configuration [2].
	Concurrency int
	// Latency is the fake model's latency per call [200ms].
	Latency time.Duration
	// Dir is the scratch folder (runs, worker folders, caches) [a temporary folder, removed].
	Dir string
	// Log receives a line per measurement as it goes; nil discards them.
	Log io.Writer
}

// Row is one worker count's measurement.
type Row struct {
	Workers int `json:"workers"`
	// Wall is the time the configuration's runs took, all submitted at once.
	Wall      time.Duration `json:"wall_ns"`
	PerMinute float64       `json:"runs_per_minute"`
	// Efficiency is runs per minute against one worker's, per worker (1 is linear scale-out).
	Efficiency float64 `json:"efficiency"`
	// Single is one run alone on these workers (the better of two, the first warming them).
	Single time.Duration `json:"single_ns"`
	// AddedPerCall is (Single − the local run) / role calls: what Temporal adds to each role call.
	AddedPerCall time.Duration `json:"added_per_call_ns"`
	// VsLocal is PerMinute against the same runs as local processes (Result.LocalPerMinute), measured in the same
	// invocation: 1 is as fast as one process per run on this machine.
	VsLocal float64 `json:"vs_local"`
}

// Result is what a benchmark measured.
type Result struct {
	Runs        int           `json:"runs"`
	Concurrency int           `json:"concurrency"`
	Latency     time.Duration `json:"latency_ns"`
	// LocalWall is the same run in one process; Calls its role calls.
	LocalWall time.Duration `json:"local_wall_ns"`
	Calls     int           `json:"calls"`
	// LocalRunsWall is the time Runs runs took as Runs local processes started at once (one process per run, no
	// Temporal, a SQLite state each); LocalPerMinute the runs per minute that makes.
	LocalRunsWall  time.Duration `json:"local_runs_wall_ns"`
	LocalPerMinute float64       `json:"local_runs_per_minute"`
	Rows           []Row         `json:"rows"`
}

func (c *Config) defaults() error {
	if c.Temporal == "" {
		return errors.New("scalebench: a Temporal frontend HOST:PORT is required")
	}
	if !state.IsPostgresURL(c.State) {
		return errors.New("scalebench: the workers need a shared state: a postgres:// URL")
	}
	if c.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("scalebench: %w", err)
		}
		c.Binary = exe
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	if c.TaskQueue == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		c.TaskQueue = "deepresearch-bench-" + hex.EncodeToString(b[:])
	}
	if len(c.Workers) == 0 {
		c.Workers = []int{1, 2, 4}
	}
	for _, n := range c.Workers {
		if n < 1 || n > 64 {
			return fmt.Errorf("scalebench: %d workers: give 1 to 64", n)
		}
	}
	if c.Runs <= 0 {
		c.Runs = 8
	}
	if c.Runs > 256 {
		return fmt.Errorf("scalebench: %d runs per configuration: at most 256", c.Runs)
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 2
	}
	if c.Latency <= 0 {
		c.Latency = 200 * time.Millisecond
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return nil
}

// bench is one benchmark's processes' common ground.
type bench struct {
	cfg    Config
	home   string
	docs   string
	config string
	model  *openaifake.Server
}

// command is one deepresearch process pointed at the fake model, with a home of its own.
func (b *bench) command(ctx context.Context, args ...string) (*exec.Cmd, *bytes.Buffer) {
	full := append([]string{"--config", b.config, "--provider", "openai", "--base-url", b.model.BaseURL(), "--model", "fake-research"}, args...)
	cmd := exec.CommandContext(ctx, b.cfg.Binary, full...)
	cmd.Env = append(os.Environ(), "HOME="+b.home, "XDG_CACHE_HOME="+filepath.Join(b.home, "cache"),
		"XDG_CONFIG_HOME="+filepath.Join(b.home, "config"), "OPENAI_API_KEY=fake-key",
		"DEEPRESEARCH_TEMPORAL=", "DEEPRESEARCH_STATE=")
	// Stopped with SIGTERM, as an operator stops a worker.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	return cmd, &stderr
}

func (b *bench) durable() []string {
	return []string{"--temporal", b.cfg.Temporal, "--namespace", b.cfg.Namespace, "--task-queue", b.cfg.TaskQueue}
}

// run executes one deepresearch command to its end.
func (b *bench) run(ctx context.Context, args ...string) error {
	cmd, stderr := b.command(ctx, args...)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("deepresearch %s: %w\n%s", args[0], err, tail(stderr.String()))
	}
	return nil
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

// Run measures. The benchmark's runs stay in the shared state (their run ids are listed by `runs --state`).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	dir := cfg.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "deepresearch-scalebench-")
		if err != nil {
			return nil, fmt.Errorf("scalebench: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	fake := openaifake.Kiln()
	fake.Latency = cfg.Latency
	b := &bench{cfg: cfg, home: filepath.Join(dir, "home"), docs: filepath.Join(dir, "docs"), config: filepath.Join(dir, "deepresearch.yaml"),
		model: openaifake.Start(fake)}
	defer b.model.Close()
	if err := os.MkdirAll(b.docs, 0o755); err != nil {
		return nil, fmt.Errorf("scalebench: %w", err)
	}
	for name, text := range openaifake.KilnDocs {
		if err := os.WriteFile(filepath.Join(b.docs, name), []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("scalebench: %w", err)
		}
	}
	if err := os.WriteFile(b.config, []byte("models:\n  fake-research:\n    context_window: 32000\n    input_price: 2.5\n    output_price: 10\n"), 0o644); err != nil {
		return nil, fmt.Errorf("scalebench: %w", err)
	}
	res := &Result{Runs: cfg.Runs, Concurrency: cfg.Concurrency, Latency: cfg.Latency}
	question := openaifake.KilnQuestion

	// In one process: the same question, the same fake model; the first run builds the corpus index, as a
	// worker's first step would, and is not counted.
	local := func(name string) (time.Duration, int, error) {
		out := filepath.Join(dir, name)
		start := time.Now()
		if err := b.run(ctx, "run", "--corpus", b.docs, "--out", out, question); err != nil {
			return 0, 0, err
		}
		wall := time.Since(start)
		rep, err := research.LoadReport(out)
		if err != nil {
			return 0, 0, err
		}
		return wall, rep.Stats.Calls, nil
	}
	if _, _, err := local("local-warm"); err != nil {
		return nil, err
	}
	var err error
	if res.LocalWall, res.Calls, err = local("local"); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Log, "local run: %.2fs, %d role calls\n", res.LocalWall.Seconds(), res.Calls)
	// The same runs as local processes, all at once: the throughput the workers are held against.
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, cfg.Runs)
	for i := range cfg.Runs {
		wg.Go(func() { _, _, errs[i] = local(fmt.Sprintf("local-%d", i)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	res.LocalRunsWall = time.Since(start)
	res.LocalPerMinute = float64(cfg.Runs) / res.LocalRunsWall.Minutes()
	fmt.Fprintf(cfg.Log, "%d local processes: %.1fs, %.1f runs/minute\n", cfg.Runs, res.LocalRunsWall.Seconds(), res.LocalPerMinute)

	for _, n := range cfg.Workers {
		row, err := b.measure(ctx, dir, n, question)
		if err != nil {
			return nil, err
		}
		if len(res.Rows) > 0 {
			first := res.Rows[0]
			row.Efficiency = row.PerMinute / (first.PerMinute / float64(first.Workers) * float64(n))
		} else {
			row.Efficiency = 1
		}
		row.AddedPerCall = (row.Single - res.LocalWall) / time.Duration(max(res.Calls, 1))
		row.VsLocal = row.PerMinute / res.LocalPerMinute
		res.Rows = append(res.Rows, row)
		fmt.Fprintf(cfg.Log, "%d workers: %d runs in %.1fs, %.1f runs/minute\n", n, cfg.Runs, row.Wall.Seconds(), row.PerMinute)
	}
	return res, nil
}

// measure starts n workers, runs one run alone twice, then cfg.Runs runs at once, and stops the workers.
func (b *bench) measure(ctx context.Context, dir string, n int, question string) (Row, error) {
	row := Row{Workers: n}
	wctx, stop := context.WithCancel(ctx)
	type worker struct {
		cmd    *exec.Cmd
		stderr *bytes.Buffer
	}
	var ws []worker
	defer func() {
		stop()
		for _, w := range ws {
			_ = w.cmd.Wait()
		}
	}()
	for i := range n {
		args := append([]string{"worker"}, b.durable()...)
		args = append(args, "--state", b.cfg.State, "--dir", filepath.Join(dir, fmt.Sprintf("w%d-%d", n, i)),
			"--concurrency", fmt.Sprint(b.cfg.Concurrency))
		cmd, stderr := b.command(wctx, args...)
		if err := cmd.Start(); err != nil {
			return row, fmt.Errorf("scalebench: start worker: %w", err)
		}
		ws = append(ws, worker{cmd, stderr})
	}
	submit := func(name string) error {
		args := append([]string{"run"}, b.durable()...)
		args = append(args, "--corpus", b.docs, "--out", filepath.Join(dir, name), question)
		err := b.run(ctx, args...)
		if err != nil && len(ws) > 0 {
			err = fmt.Errorf("%w\nworker 0:\n%s", err, tail(ws[0].stderr.String()))
		}
		return err
	}
	row.Single = time.Duration(1 << 62)
	for i := range 2 {
		t0 := time.Now()
		if err := submit(fmt.Sprintf("single%d-%d", n, i)); err != nil {
			return row, err
		}
		row.Single = min(row.Single, time.Since(t0))
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, b.cfg.Runs)
	for i := range b.cfg.Runs {
		wg.Go(func() { errs[i] = submit(fmt.Sprintf("r%d-%d", n, i)) })
	}
	wg.Wait()
	row.Wall = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return row, err
	}
	row.PerMinute = float64(b.cfg.Runs) / row.Wall.Minutes()
	return row, nil
}

// Markdown is the result as the table docs/benchmarks.md shows.
func (r *Result) Markdown() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d runs per configuration, %d steps per worker at once, model latency %s; a local run: %.2fs, %d role calls; "+
		"the %d runs as %d local processes at once: %.1fs, %.1f runs/minute\n\n",
		r.Runs, r.Concurrency, r.Latency, r.LocalWall.Seconds(), r.Calls, r.Runs, r.Runs, r.LocalRunsWall.Seconds(), r.LocalPerMinute)
	fmt.Fprintln(&sb, "| workers | wall | runs/minute | vs local processes | scale-out efficiency | one run alone | added per role call |")
	fmt.Fprintln(&sb, "|---:|---:|---:|---:|---:|---:|---:|")
	for _, row := range r.Rows {
		fmt.Fprintf(&sb, "| %d | %.1fs | %.1f | %.2f× | %.0f%% | %.2fs | %d ms |\n", row.Workers, row.Wall.Seconds(), row.PerMinute,
			row.VsLocal, 100*row.Efficiency, row.Single.Seconds(), row.AddedPerCall.Milliseconds())
	}
	return sb.String()
}
