package contextmgr_test

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/internal/bench/contextbench"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/workspace"
)

// invariantScenarios are the scenario numbers the invariants are checked on every run; a number that once
// failed stays here as a regression case (the fuzzer also saves failing inputs under testdata/fuzz).
var invariantScenarios = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}

// FuzzContextInvariants drives a real agent with lazy tool schemas and the context manager through a random
// scenario — window 8K–200K, 0–500 MCP tools, tool results of 0–200,000 characters, any preset, several turns,
// manual /compact — and checks after every step:
//
//  1. every tool result is in the request right after it was produced: whole, or as an excerpt naming the file
//     that holds it whole;
//  2. no request exceeds the window minus the output reserve, and the manager's Account of the request is what
//     the request carries;
//  3. a summary is in the request after the compaction that made it (never dropped before the model saw it);
//  4. with recoverable clearing and a history file, every tool result can be found on disk byte for byte at the
//     end (or is still whole in the context);
//  5. /compact never makes the context larger;
//
// and that summary requests carry the pinned AGENTS.md.
func FuzzContextInvariants(f *testing.F) {
	for _, s := range invariantScenarios {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, n uint64) {
		runInvariantScenario(t, n)
	})
}

type scenario struct {
	window, maxOutput, mcpTools int
	preset                      string
	turns                       int
	stepsPerTurn                []int
	compactAfter                []bool
}

func newScenario(n uint64) (scenario, *rand.Rand) {
	r := rand.New(rand.NewPCG(n, 0x5eed))
	sc := scenario{
		window:    int(8_000 * math.Pow(25, r.Float64())), // 8K–200K, small windows as often as large ones
		maxOutput: []int{0, 4_096, 32_000}[r.IntN(3)],
		mcpTools:  []int{0, r.IntN(501), 300, 500}[r.IntN(4)],
		preset:    contextmgr.Presets()[r.IntN(3)],
		turns:     1 + r.IntN(3),
	}
	for range sc.turns {
		sc.stepsPerTurn = append(sc.stepsPerTurn, 1+r.IntN(10))
		sc.compactAfter = append(sc.compactAfter, r.IntN(3) == 0)
	}
	return sc, r
}

// resultOf is a tool result of chars characters made of sentences, with the result's id in a few of them so that
// the relevance gate has something to find.
func resultOf(r *rand.Rand, id string, chars int) string {
	words := []string{"alpha", "beta", "gamma", "delta", "service", "config", "region", "shard", "replica", "latency",
		"budget", "queue", "window", "cache", "token", "deploy", "rollback", "incident", "owner", "metric"}
	var b strings.Builder
	for b.Len() < chars {
		n := 6 + r.IntN(10)
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		if r.IntN(40) == 0 {
			b.WriteString(" about " + id)
		}
		b.WriteString(".")
		if r.IntN(6) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()[:chars]
}

type fetchIn struct {
	ID string `json:"id" jsonschema:"the document id"`
}

func runInvariantScenario(t *testing.T, n uint64) {
	sc, r := newScenario(n)
	t.Logf("scenario %d: %+v", n, sc)
	root := t.TempDir()
	agentsText := fmt.Sprintf("# Rules\nAlways answer in a table. Rule marker %d.", n)
	if err := os.WriteFile(filepath.Join(root, contextmgr.ProjectMemoryFile), []byte(agentsText), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root, workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := contextmgr.Preset(sc.preset)
	if err != nil {
		t.Fatal(err)
	}
	cfg.NoMemory = true
	cfg.Logger = slog.New(slog.DiscardHandler)
	mgr, err := contextmgr.New(ws, cfg)
	if err != nil {
		t.Fatal(err)
	}
	lazy := mcptools.NewLazy(mcptools.LazyConfig{})

	var mu sync.Mutex
	results := map[string]string{} // tool call id → the full result the tool produced
	var fresh []string             // produced since the last main request
	var pendingSummaries []string  // summaries made since the last main request
	summaries := 0
	var failures []string
	fail := func(format string, args ...any) {
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	fetch := agent.NewTool("fetch_doc", "Fetch a document by id.", func(_ context.Context, in fetchIn) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		return results[in.ID], nil
	})
	tools := []agent.Tool{fetch, lazy.Tool()}
	tools = append(tools, contextbench.MCPTools(sc.mcpTools)...)

	var st *agent.State
	turn, stepInTurn, nextID := 0, 0, 0
	c := tokens.Approx{}
	fn := func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		if req.Messages[0].Content == contextmgr.SummarizerPrompt {
			if !strings.Contains(req.Messages[1].Content, agentsText) {
				fail("summary request without the pinned AGENTS.md")
			}
			summaries++
			mark := fmt.Sprintf("summary-marker-%d", summaries)
			pendingSummaries = append(pendingSummaries, mark)
			return scripted.Reply("SESSION INTENT\nFetch documents.\n\nSUMMARY\n" + mark + "\n\nARTIFACTS\nNone\n\nNEXT STEPS\nContinue."), nil
		}
		// (2) the one account: what the manager measured is what is sent, and it fits.
		rep := mgr.Report(st)
		if sent := tokens.CountRequest(c, req); sent != rep.Total {
			fail("step %d: manager accounts %d tokens, the request carries %d", st.Step, rep.Total, sent)
		}
		if rep.Total > rep.Window-rep.Reserve {
			fail("step %d: request of %d tokens exceeds window %d minus reserve %d", st.Step, rep.Total, rep.Window, rep.Reserve)
		}
		// (1) every fresh result is in this request, whole or as an excerpt naming its saved copy.
		for _, id := range fresh {
			if !resultShown(ws, req, "c"+id, results[id]) {
				fail("step %d: result %s (%d chars) not shown to the model", st.Step, id, len(results[id]))
			}
		}
		fresh = fresh[:0]
		// (3) summaries made since the last request are in it.
		for _, mark := range pendingSummaries {
			if !requestContains(req, mark) {
				fail("step %d: %s dropped before the model saw it", st.Step, mark)
			}
		}
		pendingSummaries = pendingSummaries[:0]

		stepInTurn++
		if stepInTurn > sc.stepsPerTurn[turn] {
			return scripted.Reply("done"), nil
		}
		var calls []llm.ToolCall
		if sc.mcpTools > 0 && r.IntN(5) == 0 {
			calls = append(calls, llm.ToolCall{ID: fmt.Sprintf("s%d", nextID), Name: mcptools.SearchToolName, Arguments: `{"query":"list github issues"}`})
			nextID++
		}
		for range 1 + r.IntN(3) {
			id := fmt.Sprintf("r%d", nextID)
			nextID++
			size := []int{0, r.IntN(2_000), r.IntN(20_000), r.IntN(200_001)}[r.IntN(4)]
			results[id] = resultOf(r, id, size)
			fresh = append(fresh, id)
			calls = append(calls, llm.ToolCall{ID: "c" + id, Name: "fetch_doc", Arguments: fmt.Sprintf(`{"id":%q}`, id)})
		}
		return scripted.Reply("", calls...), nil
	}
	model := scripted.New(llm.Info{Name: "scripted", ContextWindow: sc.window, MaxOutput: sc.maxOutput}, fn)
	ag, err := agent.New(agent.Config{Model: model, System: "You fetch documents.", Tools: tools,
		Middleware: []agent.Middleware{lazy, mgr}, SessionID: fmt.Sprintf("inv-%d", n), MaxSteps: 20,
		Observer: func(e agent.Event) {
			if e.Kind == agent.EventCompaction && os.Getenv("INV_DEBUG") != "" {
				t.Log(e.Text)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	st = ag.State()
	ctx := t.Context()
	for turn = 0; turn < sc.turns; turn++ {
		stepInTurn = 0
		if _, err := ag.Run(ctx, fmt.Sprintf("Turn %d: fetch the documents and report about them.", turn)); err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		if sc.compactAfter[turn] {
			before := mgr.Account(st).Total()
			res, err := mgr.Compact(ctx, st, "keep the document ids")
			if err != nil {
				t.Fatalf("compact: %v", err)
			}
			after := mgr.Account(st).Total()
			// (5) /compact never grows the context; when it cannot gain, it leaves the context as it was.
			if after > before || res.After != after || res.Before != before {
				fail("/compact: %d → %d tokens (reported %d → %d)", before, after, res.Before, res.After)
			}
			if !res.Changed() {
				mu.Lock()
				pendingSummaries = pendingSummaries[:0] // a summary made and given up with the rest
				mu.Unlock()
			}
		}
	}
	// (4) everything is recoverable byte for byte, where the preset keeps what it clears.
	if cfg.Clearing != contextmgr.ClearUnrecoverable && !cfg.NoHistory {
		disk := diskText(t, ws.Root())
		for id, full := range results {
			if full == "" || inContext(st.Messages, full) {
				continue
			}
			if !strings.Contains(disk, full) {
				fail("result %s (%d chars) is neither in the context nor on disk", id, len(full))
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, f := range failures {
		t.Error(f)
	}
}

// resultShown reports whether the request carries the result of call id whole, or an excerpt that names the
// workspace file holding it whole.
func resultShown(ws *workspace.Workspace, req *llm.Request, id, full string) bool {
	for _, m := range req.Messages {
		if m.Role != llm.RoleTool || m.ToolCallID != id {
			continue
		}
		if m.Content == full {
			return true
		}
		p := contextmgr.FullTextPath(m)
		if p == "" || !strings.Contains(m.Content, p) {
			return false
		}
		data, err := ws.ReadFile(p)
		return err == nil && string(data) == full
	}
	return false
}

func requestContains(req *llm.Request, s string) bool {
	for _, m := range req.Messages {
		if strings.Contains(m.Content, s) {
			return true
		}
	}
	return false
}

func inContext(ms []llm.Message, full string) bool {
	for _, m := range ms {
		if m.Content == full {
			return true
		}
	}
	return false
}

func diskText(t *testing.T, root string) string {
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		b.Write(data)
		b.WriteByte(0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The reported case: 300 MCP tools behind tool_search, the default 32,768-token window, an agent that reads two
// files. The deferred schemas are not sent, so they must not count: no compaction, both files reach the model
// whole, and /context shows the size of the request that is sent.
func TestDeferredSchemasDoNotCountTowardsCompaction(t *testing.T) {
	root := t.TempDir()
	for i, name := range []string{"a.txt", "b.txt"} {
		text := strings.Repeat(fmt.Sprintf("line of file %d\n", i), 200)
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.New(root, workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := contextmgr.New(ws, contextmgr.Config{NoMemory: true, NoProjectMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	lazy := mcptools.NewLazy(mcptools.LazyConfig{})
	tools := append(append(ws.Tools(), lazy.Tool()), contextbench.MCPTools(300)...)
	var mu sync.Mutex
	var reqs []*llm.Request
	var reports []contextmgr.Report
	var st *agent.State
	model := scripted.New(llm.Info{Name: "scripted", ContextWindow: 32_768}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		reqs = append(reqs, req)
		reports = append(reports, m.Report(st))
		switch len(reqs) {
		case 1:
			return scripted.Reply("", llm.ToolCall{ID: "call_read_0", Name: "read_file", Arguments: `{"path":"a.txt"}`}), nil
		case 2:
			return scripted.Reply("", llm.ToolCall{ID: "call_read_1", Name: "read_file", Arguments: `{"path":"b.txt"}`}), nil
		}
		return scripted.Reply("both read"), nil
	})
	ag, err := agent.New(agent.Config{Model: model, Tools: tools, Middleware: []agent.Middleware{lazy, m}})
	if err != nil {
		t.Fatal(err)
	}
	st = ag.State()
	if _, err := ag.Run(t.Context(), "read a.txt and b.txt"); err != nil {
		t.Fatal(err)
	}
	if s := m.Stats(); s.Compactions != 0 || s.SummaryCalls != 0 {
		t.Fatalf("compacted under deferred schemas: %+v", s)
	}
	for i, req := range reqs {
		if sent := tokens.CountRequest(tokens.Approx{}, req); reports[i].Total != sent {
			t.Errorf("request %d: /context says %d tokens, the request carries %d", i, reports[i].Total, sent)
		}
		if reports[i].DeferredSchemas < 60_000 || reports[i].Total > 5_000 {
			t.Errorf("request %d: total %d, deferred %d", i, reports[i].Total, reports[i].DeferredSchemas)
		}
	}
	for i, id := range []string{"call_read_0", "call_read_1"} {
		found := false
		for _, msg := range reqs[i+1].Messages {
			if msg.ToolCallID == id {
				found = strings.Contains(msg.Content, fmt.Sprintf("line of file %d", i)) && !strings.Contains(msg.Content, "cleared")
			}
		}
		if !found {
			t.Errorf("the result of %s did not reach the model whole", id)
		}
	}
}
