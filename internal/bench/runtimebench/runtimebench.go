// Package runtimebench measures the agent loop itself: an instant fake model that asks for one trivial tool call
// per step for N steps, then answers; no network, no tokenizer, no latency. The cost per step is what the
// runtime adds around a model call and a tool call, with and without the hybrid context manager.
package runtimebench

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"time"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/internal/bench/benchcpu"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/workspace"
)

// Steps are the loop lengths measured.
var Steps = []int{10, 100, 1000}

// Model is the instant fake model: for the first N calls it asks for the echo tool with the step number (so the
// loop detector never fires), then it answers. It allocates what a real adapter would return, nothing else.
type Model struct {
	N     int
	calls int
	info  llm.Info
}

// NewModel returns a model answering after n tool steps.
func NewModel(n int) *Model {
	return &Model{N: n, info: llm.Info{Name: "instant", ContextWindow: 1 << 30, MaxOutput: 4096}}
}

// Reset starts a new run.
func (m *Model) Reset() { m.calls = 0 }

// Info implements llm.Model.
func (m *Model) Info() llm.Info { return m.info }

// Generate implements llm.Model.
func (m *Model) Generate(_ context.Context, _ *llm.Request) (*llm.Response, error) {
	m.calls++
	if m.calls > m.N {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "done"}, StopReason: llm.StopEnd}, nil
	}
	s := strconv.Itoa(m.calls)
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
		{ID: "call_" + s, Name: "echo", Arguments: `{"text":"step ` + s + `"}`}}}, StopReason: llm.StopToolUse}, nil
}

// EchoInput is the trivial tool's input.
type EchoInput struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

// EchoTool is the trivial tool: it returns its input.
func EchoTool() agent.Tool {
	return agent.NewTool("echo", "Echo the text back.", func(_ context.Context, in EchoInput) (string, error) {
		return in.Text, nil
	})
}

// Loop is one configured agent run of N steps, ready to be repeated.
type Loop struct {
	model *Model
	mw    []agent.Middleware
	tools []agent.Tool
}

// NewLoop prepares a loop of n steps; with hybrid, the hybrid context manager is the middleware (workspace in
// dir, no memory store, no AGENTS.md).
func NewLoop(n int, hybrid bool, dir string) (*Loop, error) {
	l := &Loop{model: NewModel(n), tools: []agent.Tool{EchoTool()}}
	if hybrid {
		ws, err := workspace.New(dir, workspace.Config{})
		if err != nil {
			return nil, err
		}
		m, err := contextmgr.New(ws, contextmgr.Config{NoMemory: true, NoProjectMemory: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return nil, err
		}
		l.mw = append(l.mw, m)
	}
	return l, nil
}

// Run runs the loop once with a fresh agent.
func (l *Loop) Run(ctx context.Context) error {
	l.model.Reset()
	a, err := agent.New(agent.Config{Model: l.model, System: "You are a benchmark.", Tools: l.tools, Middleware: l.mw,
		MaxSteps: l.model.N + 1, SessionID: "bench"})
	if err != nil {
		return err
	}
	out, err := a.Run(ctx, "echo the steps")
	if err != nil {
		return err
	}
	if out != "done" {
		return fmt.Errorf("runtimebench: answer %q", out)
	}
	return nil
}

// Figures are the cost per step of one loop configuration.
type Figures struct {
	Steps     int     `json:"steps"`
	NsPerStep float64 `json:"ns_per_step"`
	// CPUNsPerStep is the process's CPU time per step (all threads, the garbage collector's included); on a
	// machine busy with other work it is steadier than wall time. 0 where not measured.
	CPUNsPerStep  float64 `json:"cpu_ns_per_step"`
	AllocsPerStep float64 `json:"allocs_per_step"`
	BytesPerStep  float64 `json:"bytes_per_step"`
	Runs          int     `json:"runs"`
}

// Measure repeats run (a whole loop of n steps) for at least minTime (and 3 runs) after one warm-up run, and
// returns the mean cost per step. Both sides of the comparison are measured by this one function.
func Measure(n int, minTime time.Duration, run func() error) (Figures, error) {
	if err := run(); err != nil {
		return Figures{}, err
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start, cpu := time.Now(), benchcpu.Process()
	runs := 0
	for runs < 3 || time.Since(start) < minTime {
		if err := run(); err != nil {
			return Figures{}, err
		}
		runs++
	}
	elapsed, cpu := time.Since(start), benchcpu.Process()-cpu
	runtime.ReadMemStats(&after)
	steps := float64(runs * n)
	return Figures{Steps: n, Runs: runs, NsPerStep: float64(elapsed.Nanoseconds()) / steps, CPUNsPerStep: float64(cpu.Nanoseconds()) / steps,
		AllocsPerStep: float64(after.Mallocs-before.Mallocs) / steps, BytesPerStep: float64(after.TotalAlloc-before.TotalAlloc) / steps}, nil
}

// Row is one N with and without the hybrid context manager.
type Row struct {
	Steps  int     `json:"steps"`
	Plain  Figures `json:"plain"`
	Hybrid Figures `json:"hybrid"`
}

// Run measures every N of Steps, best of count measurements each (the machine may be busy).
func Run(ctx context.Context, dir string, count int, minTime time.Duration) ([]Row, error) {
	var rows []Row
	for _, n := range Steps {
		row := Row{Steps: n}
		for _, hybrid := range []bool{false, true} {
			l, err := NewLoop(n, hybrid, dir)
			if err != nil {
				return nil, err
			}
			best, err := Best(count, func() (Figures, error) { return Measure(n, minTime, func() error { return l.Run(ctx) }) })
			if err != nil {
				return nil, err
			}
			if hybrid {
				row.Hybrid = best
			} else {
				row.Plain = best
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Best returns the fastest of count measurements: least CPU time per step where it is measured (wall time
// includes waiting for a core on a busy machine), else least wall time.
func Best(count int, measure func() (Figures, error)) (Figures, error) {
	var best Figures
	for i := range max(count, 1) {
		f, err := measure()
		if err != nil {
			return Figures{}, err
		}
		faster := f.NsPerStep < best.NsPerStep
		if f.CPUNsPerStep > 0 && best.CPUNsPerStep > 0 {
			faster = f.CPUNsPerStep < best.CPUNsPerStep
		}
		if i == 0 || faster {
			best = f
		}
	}
	return best, nil
}

// Cell renders figures for a table.
func (f Figures) Cell() string {
	return fmt.Sprintf("%.1f µs/step (CPU %.1f µs), %.0f allocs, %.1f KB", f.NsPerStep/1000, f.CPUNsPerStep/1000, f.AllocsPerStep, f.BytesPerStep/1024)
}
