package subagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/subagent"
	"github.com/deepresearch/deepresearch/workspace"
)

const parentSystem = "PARENT: you orchestrate."

// isParent tells the parent's requests from the subagents' by the system prompt.
func isParent(req *llm.Request) bool {
	return len(req.Messages) > 0 && req.Messages[0].Content == parentSystem
}

// task returns the description of the subagent's task (its first user message).
func task(req *llm.Request) string {
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser {
			return m.Content
		}
	}
	return ""
}

func lastTool(req *llm.Request) llm.Message {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleTool {
			return req.Messages[i]
		}
	}
	return llm.Message{}
}

func countTools(req *llm.Request) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool {
			n++
		}
	}
	return n
}

func taskCall(desc, typ string) llm.ToolCall {
	args, _ := json.Marshal(subagent.TaskInput{Description: desc, SubagentType: typ})
	return llm.ToolCall{Name: subagent.ToolName, Arguments: string(args)}
}

func toolMessages(ms []llm.Message) []llm.Message {
	var out []llm.Message
	for _, m := range ms {
		if m.Role == llm.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

func newParent(t *testing.T, model llm.Model, fleet *subagent.Fleet, extra []agent.Tool, obs agent.Observer) *agent.Agent {
	t.Helper()
	ag, err := agent.New(agent.Config{
		Model: model, System: parentSystem, Tools: append(extra, fleet.Tool()), Observer: obs, MaxParallelTools: 8,
		Middleware: []agent.Middleware{mcptools.NewGuard(mcptools.GuardConfig{Timeouts: map[string]time.Duration{subagent.ToolName: mcptools.NoTimeout}})},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ag
}

// The parent's context grows by exactly the task call and the subagent's final text — measured in tokens — while
// the bulky tool output stays in the subagent's context. Files the subagent writes are visible to the parent.
func TestSubagentIsolation(t *testing.T) {
	ws, err := workspace.New(t.TempDir(), workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	bulky := strings.Repeat("raw row 7;", 6_000) // 60,000 characters
	bulkyTool := agent.NewTool("bulky_query", "Query the warehouse.", func(context.Context, struct{}) (string, error) { return bulky, nil })
	const answer = "The warehouse holds 7 rows of interest; details in notes.md."
	var subFirst *llm.Request
	model := scripted.New(llm.Info{}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if isParent(req) {
			switch countTools(req) {
			case 0:
				return scripted.Reply("", taskCall("Count the rows of interest in the warehouse; write notes.md.", subagent.GeneralPurpose)), nil
			case 1:
				return scripted.Reply("", llm.ToolCall{Name: "read_file", Arguments: `{"path":"notes.md"}`}), nil
			default:
				return scripted.Reply("final: 7 rows"), nil
			}
		}
		switch countTools(req) {
		case 0:
			cp := *req
			subFirst = &cp
			return scripted.Reply("", llm.ToolCall{Name: "bulky_query", Arguments: `{}`},
				llm.ToolCall{Name: "write_file", Arguments: `{"path":"notes.md","content":"seven rows"}`}), nil
		default:
			return scripted.Reply(answer), nil
		}
	}, scripted.WithRecording())
	tools := append(ws.Tools(), bulkyTool)
	var sessions sync.Map
	fleet, err := subagent.New(subagent.Config{Model: model, Tools: tools, Observer: func(e agent.Event) { sessions.Store(e.Session, true) }})
	if err != nil {
		t.Fatal(err)
	}
	parent := newParent(t, model, fleet, tools, nil)
	out, err := parent.Run(t.Context(), "SECRET-PARENT-CONTEXT: how many rows?")
	if err != nil || out != "final: 7 rows" {
		t.Fatalf("Run = %q, %v", out, err)
	}

	// Fresh context: the subagent's first request holds its own system prompt and the description, nothing else.
	if len(subFirst.Messages) != 2 || subFirst.Messages[0].Role != llm.RoleSystem || !strings.Contains(subFirst.Messages[0].Content, "You are a subagent") ||
		subFirst.Messages[1].Content != "Count the rows of interest in the warehouse; write notes.md." {
		t.Fatalf("subagent's first request = %+v", subFirst.Messages)
	}
	for _, m := range subFirst.Messages {
		if strings.Contains(m.Content, "SECRET-PARENT-CONTEXT") {
			t.Fatal("the subagent saw the parent's history")
		}
	}
	// The subagent has the parent's tools but a task tool one level deeper (nesting allowed by default).
	if names := specNames(subFirst.Tools); !slices.Contains(names, "bulky_query") || !slices.Contains(names, "task") {
		t.Fatalf("subagent tools = %v", names)
	}

	var parentReqs []*llm.Request
	for _, r := range model.Requests() {
		if isParent(r) {
			parentReqs = append(parentReqs, r)
		}
		if isParent(r) && strings.Contains(fmt.Sprint(r.Messages), "raw row 7") {
			t.Fatal("bulky tool output reached the parent's context")
		}
	}
	before, after := parentReqs[0], parentReqs[1]
	c := tokens.Approx{}
	grew := tokens.CountMessages(c, after.Messages) - tokens.CountMessages(c, before.Messages)
	added := after.Messages[len(before.Messages):]
	if len(added) != 2 || added[1].Role != llm.RoleTool || added[1].Content != answer {
		t.Fatalf("parent history grew by %+v", added)
	}
	want := tokens.CountMessage(c, added[0]) + tokens.CountMessage(c, llm.Message{Role: llm.RoleTool, Content: answer})
	if grew != want || grew > c.Count(bulky)/50 {
		t.Fatalf("parent context grew by %d tokens, want %d (the call and the answer; the bulky output is %d tokens)", grew, want, c.Count(bulky))
	}
	// The subagent's file is in the shared workspace and the parent read it.
	if data, err := os.ReadFile(filepath.Join(ws.Root(), "notes.md")); err != nil || string(data) != "seven rows" {
		t.Fatalf("notes.md = %q, %v", data, err)
	}
	if msgs := toolMessages(parent.State().Messages); !strings.Contains(msgs[1].Content, "seven rows") {
		t.Fatalf("parent read %q", msgs[1].Content)
	}
	// Every subagent has its own session id, distinct from the parent's.
	if meta := toolMessages(parent.State().Messages)[0].Meta; meta["subagent_session"] == "" || meta["subagent_session"] == parent.State().SessionID {
		t.Fatalf("meta = %v", meta)
	} else if _, ok := sessions.Load(meta["subagent_session"]); !ok {
		t.Fatalf("subagent events did not carry its session %s", meta["subagent_session"])
	}
}

func specNames(specs []llm.ToolSpec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

func TestStructuredAnswer(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"},"confidence":{"type":"number"}},"required":["answer","confidence"]}`)
	typ := subagent.Type{Name: "extractor", Description: "Extracts one fact as JSON.", Prompt: "Extract the fact.", Schema: schema}
	model := scripted.New(llm.Info{}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.HasPrefix(task(req), "stubborn"):
			return scripted.Reply("I refuse to use JSON."), nil
		case strings.Contains(last, "not valid"):
			return scripted.Reply("```json\n{\"answer\": \"42\", \"confidence\": 0.9}\n```"), nil
		default:
			if !strings.Contains(req.Messages[0].Content, `"required":["answer","confidence"]`) {
				return nil, errors.New("the schema is missing from the system prompt")
			}
			return scripted.Reply("The answer is 42."), nil
		}
	})
	fleet, err := subagent.New(subagent.Config{Model: model, Types: []subagent.Type{typ}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := fleet.Run(t.Context(), "extractor", "What is the answer?")
	if err != nil || out != `{"answer":"42","confidence":0.9}` {
		t.Fatalf("structured answer = %q, %v", out, err)
	}
	_, err = fleet.Run(t.Context(), "extractor", "stubborn: what is the answer?")
	if err == nil || !strings.Contains(err.Error(), "not a JSON object matching the type's schema after 2 repairs") {
		t.Fatalf("non-compliant subagent = %v", err)
	}
}

// Four tasks in one step under a cap of two: two run, two get a clear error at once (no waiting), and the two
// that run finish normally.
// Tasks over the concurrency cap wait for a place instead of failing: four tasks under a cap of two all
// finish, two of them after waiting in the queue.
func TestConcurrencyCapQueues(t *testing.T) {
	release := make(chan struct{})
	model := scripted.New(llm.Info{}, func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if isParent(req) {
			if countTools(req) == 0 {
				return scripted.Reply("", taskCall("t1", subagent.GeneralPurpose), taskCall("t2", subagent.GeneralPurpose),
					taskCall("t3", subagent.GeneralPurpose), taskCall("t4", subagent.GeneralPurpose)), nil
			}
			return scripted.Reply("done"), nil
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return scripted.Reply("finished " + task(req)), nil
	})
	fleet, err := subagent.New(subagent.Config{Model: model, MaxConcurrent: 2})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		// Let the subagents go once two run and two wait.
		for s := fleet.Stats(); s.Running < 2 || s.Queued < 2; s = fleet.Stats() {
			time.Sleep(time.Millisecond)
		}
		close(release)
	}()
	parent := newParent(t, model, fleet, nil, nil)
	if _, err := parent.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	ok := 0
	for _, m := range toolMessages(parent.State().Messages) {
		if !m.IsError && strings.HasPrefix(m.Content, "finished t") {
			ok++
		} else {
			t.Errorf("unexpected result %q", m.Content)
		}
	}
	if s := fleet.Stats(); ok != 4 || s.PeakRunning != 2 || s.Running != 0 || s.Queued != 0 || s.Started != 4 {
		t.Fatalf("ok %d, stats %+v", ok, s)
	}
}

// A parent launching 1,000 tasks at once: all complete, never more than 16 run at a time.
func TestThousandTasksAtOnce(t *testing.T) {
	const n = 1000
	model := scripted.New(llm.Info{}, func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if isParent(req) {
			if countTools(req) == 0 {
				calls := make([]llm.ToolCall, n)
				for i := range calls {
					calls[i] = taskCall(fmt.Sprintf("t%d", i), subagent.GeneralPurpose)
				}
				return scripted.Reply("", calls...), nil
			}
			return scripted.Reply("done"), nil
		}
		return scripted.Reply("finished " + task(req)), nil
	}, scripted.WithLatency(time.Millisecond))
	fleet, err := subagent.New(subagent.Config{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	parent, err := agent.New(agent.Config{Model: model, System: parentSystem, Tools: []agent.Tool{fleet.Tool()}, MaxParallelTools: n})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	if _, err := parent.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	ok := 0
	for _, m := range toolMessages(parent.State().Messages) {
		if !m.IsError && strings.HasPrefix(m.Content, "finished t") {
			ok++
		}
	}
	s := fleet.Stats()
	if ok != n || s.Started != n || s.PeakRunning != subagent.DefaultMaxConcurrent || s.Running != 0 || s.Queued != 0 {
		t.Fatalf("%d of %d tasks finished; stats %+v", ok, n, s)
	}
	t.Logf("%d subagents in %v, peak %d running; heap in use %.1f MB after (%.1f MB before), %.1f MB allocated in all, %.1f MB from the OS",
		n, elapsed.Round(time.Millisecond), s.PeakRunning, float64(after.HeapInuse)/(1<<20), float64(before.HeapInuse)/(1<<20),
		float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), float64(after.Sys)/(1<<20))
}

// A task waiting for a place gives up when its caller's context ends, and leaves no place taken.
func TestQueuedTaskHonoursContext(t *testing.T) {
	block := make(chan struct{})
	model := scripted.New(llm.Info{}, func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return scripted.Reply("finished"), nil
	})
	fleet, err := subagent.New(subagent.Config{Model: model, MaxConcurrent: 1})
	if err != nil {
		t.Fatal(err)
	}
	busy := make(chan error, 1)
	go func() { _, err := fleet.Run(t.Context(), subagent.GeneralPurpose, "holds the only place"); busy <- err }()
	for fleet.Stats().Running == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := fleet.Run(ctx, subagent.GeneralPurpose, "waits"); err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "gave up waiting") {
		t.Fatalf("queued task: %v", err)
	}
	close(block)
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	if s := fleet.Stats(); s.Running != 0 || s.Queued != 0 || s.Started != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// With a single place, a subagent that delegates lends it to its own subagent instead of deadlocking.
func TestNestedDelegationUnderACapOfOne(t *testing.T) {
	model := scripted.New(llm.Info{}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if isParent(req) {
			if countTools(req) == 0 {
				return scripted.Reply("", taskCall("LEVEL1 a", subagent.GeneralPurpose), taskCall("LEVEL1 b", subagent.GeneralPurpose)), nil
			}
			return scripted.Reply("done"), nil
		}
		if strings.HasPrefix(task(req), "LEVEL1") && countTools(req) == 0 {
			return scripted.Reply("", taskCall("LEVEL2 of "+task(req), subagent.GeneralPurpose)), nil
		}
		if strings.HasPrefix(task(req), "LEVEL1") {
			return scripted.Reply("relayed " + lastTool(req).Content), nil
		}
		return scripted.Reply("leaf"), nil
	})
	fleet, err := subagent.New(subagent.Config{Model: model, MaxConcurrent: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	parent := newParent(t, model, fleet, nil, nil)
	if _, err := parent.Run(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	for _, m := range toolMessages(parent.State().Messages) {
		if m.IsError || m.Content != "relayed leaf" {
			t.Errorf("result %q", m.Content)
		}
	}
	if s := fleet.Stats(); s.Started != 4 || s.PeakRunning != 1 || s.Running != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestTotalCap(t *testing.T) {
	model := scripted.New(llm.Info{}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if isParent(req) {
			if countTools(req) == 0 {
				var calls []llm.ToolCall
				for i := range 5 {
					calls = append(calls, taskCall(fmt.Sprintf("t%d", i), subagent.GeneralPurpose))
				}
				return scripted.Reply("", calls...), nil
			}
			return scripted.Reply("done"), nil
		}
		return scripted.Reply("ok " + task(req)), nil
	})
	fleet, err := subagent.New(subagent.Config{Model: model, MaxTotal: 3})
	if err != nil {
		t.Fatal(err)
	}
	parent := newParent(t, model, fleet, nil, nil)
	if _, err := parent.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	var ok, capped int
	for _, m := range toolMessages(parent.State().Messages) {
		switch {
		case !m.IsError:
			ok++
		case strings.Contains(m.Content, "this run has already started 3 subagents, the limit"):
			capped++
		}
	}
	if ok != 3 || capped != 2 || fleet.Stats().Started != 3 {
		t.Fatalf("ok %d, capped %d, stats %+v", ok, capped, fleet.Stats())
	}
	if _, err := fleet.Run(t.Context(), subagent.GeneralPurpose, "one more"); !errors.Is(err, subagent.ErrTotal) {
		t.Fatalf("after the budget: %v", err)
	}
}

// Level 1 may delegate to level 2; level 2 gets no task tool, and calling it anyway is a clear error.
func TestNesting(t *testing.T) {
	var mu sync.Mutex
	toolsAt := map[string][]string{}
	model := scripted.New(llm.Info{}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if isParent(req) {
			if countTools(req) == 0 {
				return scripted.Reply("", taskCall("LEVEL1 research", subagent.GeneralPurpose)), nil
			}
			return scripted.Reply("parent got: " + lastTool(req).Content), nil
		}
		level := strings.Fields(task(req))[0]
		mu.Lock()
		toolsAt[level] = specNames(req.Tools)
		mu.Unlock()
		switch level {
		case "LEVEL1":
			if countTools(req) == 0 {
				return scripted.Reply("", taskCall("LEVEL2 dig deeper", subagent.GeneralPurpose)), nil
			}
			return scripted.Reply("L1 relays: " + lastTool(req).Content), nil
		default:
			if countTools(req) == 0 {
				return scripted.Reply("", taskCall("LEVEL3 too deep", subagent.GeneralPurpose)), nil
			}
			return scripted.Reply("L2 saw: " + lastTool(req).Content), nil
		}
	})
	fleet, err := subagent.New(subagent.Config{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	parent := newParent(t, model, fleet, nil, nil)
	out, err := parent.Run(t.Context(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(toolsAt["LEVEL1"], "task") || slices.Contains(toolsAt["LEVEL2"], "task") {
		t.Fatalf("tools by level: %v", toolsAt)
	}
	if !strings.HasPrefix(out, "parent got: L1 relays: L2 saw: Error: unknown tool \"task\"") || fleet.Stats().Started != 2 {
		t.Fatalf("answer = %q, stats %+v", out, fleet.Stats())
	}

	// With nesting disabled, level-1 subagents get no task tool.
	flat, err := subagent.New(subagent.Config{Model: model, MaxDepth: -1})
	if err != nil {
		t.Fatal(err)
	}
	toolsAt = map[string][]string{}
	if _, err := newParent(t, model, flat, nil, nil).Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(toolsAt["LEVEL1"], "task") {
		t.Fatalf("MaxDepth -1 still offers task: %v", toolsAt)
	}
}

// One subagent failing (an error, a panic) does not cancel its siblings, which were still running when it failed;
// each failure comes back as that task's result.
func TestFailingSiblingDoesNotCancelOthers(t *testing.T) {
	failed := make(chan struct{})
	var failures atomic.Int32
	model := scripted.New(llm.Info{}, func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if isParent(req) {
			if countTools(req) == 0 {
				return scripted.Reply("", taskCall("ok-a", subagent.GeneralPurpose), taskCall("boom", subagent.GeneralPurpose),
					taskCall("panic", subagent.GeneralPurpose), taskCall("ok-b", subagent.GeneralPurpose)), nil
			}
			return scripted.Reply("collected"), nil
		}
		switch task(req) {
		case "boom":
			return nil, errors.New("provider melted")
		case "panic":
			panic("subagent model exploded")
		}
		// The healthy siblings wait until both failures were delivered, then finish.
		select {
		case <-failed:
		case <-ctx.Done():
			return nil, fmt.Errorf("cancelled: %w", ctx.Err())
		}
		return scripted.Reply("answer " + task(req)), nil
	})
	fleet, err := subagent.New(subagent.Config{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	obs := func(e agent.Event) {
		if e.Kind == agent.EventToolResult && e.Result.IsError && failures.Add(1) == 2 {
			close(failed)
		}
	}
	parent := newParent(t, model, fleet, nil, obs)
	if out, err := parent.Run(t.Context(), "go"); err != nil || out != "collected" {
		t.Fatalf("Run = %q, %v", out, err)
	}
	res := toolMessages(parent.State().Messages)
	if res[0].Content != "answer ok-a" || res[3].Content != "answer ok-b" {
		t.Fatalf("healthy siblings = %q, %q", res[0].Content, res[3].Content)
	}
	if !res[1].IsError || !strings.Contains(res[1].Content, "provider melted") {
		t.Fatalf("failed sibling = %q", res[1].Content)
	}
	if !res[2].IsError || !strings.Contains(res[2].Content, "panicked: subagent model exploded") {
		t.Fatalf("panicking sibling = %q", res[2].Content)
	}
}

func TestBadTaskInput(t *testing.T) {
	model := scripted.New(llm.Info{}, scripted.Sequence())
	fleet, err := subagent.New(subagent.Config{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ args, want string }{
		{`{"description":"x","subagent_type":"wizard"}`, `unknown subagent_type "wizard"; the types are: general-purpose`},
		{`{"description":"  ","subagent_type":"general-purpose"}`, "the description is empty"},
		{`{"description":`, "invalid JSON arguments for task"},
	}
	for _, tt := range tests {
		res, err := fleet.Tool().Run(t.Context(), json.RawMessage(tt.args))
		if err != nil || !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("Run(%s) = %+v, %v; want %q", tt.args, res, err, tt.want)
		}
	}
	if model.Calls() != 0 {
		t.Error("bad input must not start a subagent")
	}
	var spec map[string]any
	if err := json.Unmarshal(fleet.Tool().Spec().Schema, &spec); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fleet.Tool().Spec().Description, "- general-purpose: General-purpose agent") {
		t.Errorf("description lists no types: %s", fleet.Tool().Spec().Description)
	}
}

// Each subagent gets its own middleware from the factory, under its own session id; types pick tools by pattern
// and a model tier; reserved tools stay with the parent; subagent-only tools reach subagents only.
func TestTypesToolsModelsAndMiddleware(t *testing.T) {
	mk := func(name string) agent.Tool {
		return agent.NewTool(name, "tool "+name, func(context.Context, struct{}) (string, error) { return name, nil })
	}
	parentTools := []agent.Tool{mk("read_file"), mk("write_file"), mk("write_todos"), mk("mcp__pub__search"), mk(mcptools.SearchToolName)}
	subOnly := []agent.Tool{mk("mcp__priv__query"), mk("mcp__priv__list")}
	var mu sync.Mutex
	seen := map[string][]string{} // type → tool names
	sessionsSeen := map[string]string{}
	fast := scripted.New(llm.Info{Name: "fast-model"}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		mu.Lock()
		seen["reader(fast)"] = specNames(req.Tools)
		mu.Unlock()
		return scripted.Reply("fast answer"), nil
	})
	main := scripted.New(llm.Info{}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		mu.Lock()
		seen[subagent.GeneralPurpose] = specNames(req.Tools)
		mu.Unlock()
		return scripted.Reply("main answer"), nil
	})
	var tiers []string
	fleet, err := subagent.New(subagent.Config{
		Model:         main,
		Models:        func(tier string) (llm.Model, error) { tiers = append(tiers, tier); return fast, nil },
		Tools:         parentTools,
		SubagentTools: subOnly,
		Reserved:      []string{"write_todos"},
		Types:         []subagent.Type{{Name: "reader", Description: "Reads.", Tools: []string{"read_file", "mcp__priv__*"}, Model: "fast"}},
		Middleware: func(session string, typ subagent.Type) []agent.Middleware {
			return []agent.Middleware{sessionProbe(func(id string) {
				mu.Lock()
				sessionsSeen[id] = typ.Name
				mu.Unlock()
			})}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := fleet.Run(t.Context(), "reader", "read"); err != nil || out != "fast answer" {
		t.Fatalf("reader = %q, %v", out, err)
	}
	if out, err := fleet.Run(t.Context(), subagent.GeneralPurpose, "anything"); err != nil || out != "main answer" {
		t.Fatalf("general = %q, %v", out, err)
	}
	if got := seen["reader(fast)"]; !slices.Equal(got, []string{"read_file", mcptools.SearchToolName, "mcp__priv__query", "mcp__priv__list", "task"}) {
		t.Errorf("reader tools = %v", got)
	}
	if got := seen[subagent.GeneralPurpose]; slices.Contains(got, "write_todos") || !slices.Contains(got, "mcp__priv__query") || !slices.Contains(got, "mcp__pub__search") {
		t.Errorf("general-purpose tools = %v", got)
	}
	if !slices.Equal(tiers, []string{"fast"}) {
		t.Errorf("tiers asked = %v", tiers)
	}
	if len(sessionsSeen) != 2 {
		t.Fatalf("middleware saw sessions %v, want two distinct ones", sessionsSeen)
	}
	for id, typ := range sessionsSeen {
		if !strings.Contains(id, typ) {
			t.Errorf("session %s does not name its type %s", id, typ)
		}
	}
	if d := fleet.Tool().Spec().Description; !strings.Contains(d, "Only subagents can use these tools") || !strings.Contains(d, "mcp__priv__query") {
		t.Errorf("task description does not announce subagent-only tools: %s", d)
	}
}

type sessionProbe func(string)

func (p sessionProbe) BeforeRequest(_ context.Context, st *agent.State, _ *llm.Request) error {
	p(st.SessionID)
	return nil
}
