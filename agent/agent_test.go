package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
	N    int    `json:"n,omitempty"`
}

func echoTool() agent.Tool {
	return agent.NewTool("echo", "Echo text back.", func(_ context.Context, in echoIn) (string, error) {
		return "echo: " + in.Text, nil
	})
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

func lastToolMessages(req *llm.Request) []llm.Message {
	var out []llm.Message
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == llm.RoleTool; i-- {
		out = append([]llm.Message{req.Messages[i]}, out...)
	}
	return out
}

func TestRunToolRoundTrip(t *testing.T) {
	m := scripted.New(llm.Info{}, scripted.Sequence(
		scripted.Reply("", call("c1", "echo", `{"text":"hi"}`)),
		scripted.Reply("done"),
	), scripted.WithRecording())
	var events []agent.EventKind
	var mu sync.Mutex
	a, err := agent.New(agent.Config{Model: m, System: "sys", Tools: []agent.Tool{echoTool()},
		Observer: func(e agent.Event) { mu.Lock(); events = append(events, e.Kind); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Run(t.Context(), "say hi")
	if err != nil || got != "done" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	reqs := m.Requests()
	tm := lastToolMessages(reqs[1])
	if len(tm) != 1 || tm[0].Content != "echo: hi" || tm[0].ToolCallID != "c1" || tm[0].IsError {
		t.Fatalf("tool message = %+v", tm)
	}
	if reqs[0].Messages[0].Role != llm.RoleSystem || !reqs[0].Messages[0].Pinned {
		t.Errorf("first message should be the pinned system prompt: %+v", reqs[0].Messages[0])
	}
	want := []agent.EventKind{agent.EventStep, agent.EventUsage, agent.EventToolCall, agent.EventToolResult, agent.EventStep, agent.EventUsage, agent.EventDone}
	if fmt.Sprint(events) != fmt.Sprint(want) {
		t.Errorf("events = %v, want %v", events, want)
	}
}

func TestToolInputErrorsGoBackToTheModel(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"malformed JSON", `{"text": "hi"`, "invalid JSON arguments for echo"},
		{"schema violation", `{"text": 3}`, "do not match its schema"},
		{"unknown tool", ``, `unknown tool "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "echo"
			if tt.name == "unknown tool" {
				name = "nope"
			}
			m := scripted.New(llm.Info{}, scripted.Sequence(
				scripted.Reply("", call("c1", name, tt.args)),
				scripted.Reply("", call("c2", "echo", `{"text":"fixed"}`)),
				scripted.Reply("ok"),
			), scripted.WithRecording())
			a, _ := agent.New(agent.Config{Model: m, Tools: []agent.Tool{echoTool()}})
			if _, err := a.Run(t.Context(), "go"); err != nil {
				t.Fatal(err)
			}
			tm := lastToolMessages(m.Requests()[1])
			if len(tm) != 1 || !tm[0].IsError || !strings.Contains(tm[0].Content, tt.want) {
				t.Fatalf("first tool result = %+v, want error containing %q", tm, tt.want)
			}
			if tm := lastToolMessages(m.Requests()[2]); tm[0].IsError || tm[0].Content != "echo: fixed" {
				t.Fatalf("retry result = %+v", tm)
			}
		})
	}
}

func TestParallelToolsAreBoundedAndOrdered(t *testing.T) {
	var inFlight, peak atomic.Int64
	slow := agent.NewTool("slow", "Sleeps.", func(ctx context.Context, in echoIn) (string, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(time.Duration(10-in.N) * 3 * time.Millisecond)
		return fmt.Sprint(in.N), nil
	})
	var calls []llm.ToolCall
	for i := range 10 {
		calls = append(calls, call(fmt.Sprintf("c%d", i), "slow", fmt.Sprintf(`{"text":"x","n":%d}`, i)))
	}
	m := scripted.New(llm.Info{}, scripted.Sequence(scripted.Reply("", calls...), scripted.Reply("ok")), scripted.WithRecording())
	a, _ := agent.New(agent.Config{Model: m, Tools: []agent.Tool{slow}, MaxParallelTools: 3})
	if _, err := a.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p > 3 || p < 2 {
		t.Errorf("peak concurrency %d, want 2..3", p)
	}
	tm := lastToolMessages(m.Requests()[1])
	for i, msg := range tm {
		if msg.Content != fmt.Sprint(i) || msg.ToolCallID != fmt.Sprintf("c%d", i) {
			t.Fatalf("result %d = %+v: results must keep call order", i, msg)
		}
	}
}

func TestLoopDetection(t *testing.T) {
	same := call("", "echo", `{"text":"again"}`)
	sameReordered := call("", "echo", `{ "text" : "again" }`)
	fn := func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if len(req.Messages)%4 == 0 {
			return scripted.Reply("", sameReordered), nil
		}
		return scripted.Reply("", same), nil
	}
	m := scripted.New(llm.Info{}, fn, scripted.WithRecording())
	a, _ := agent.New(agent.Config{Model: m, Tools: []agent.Tool{echoTool()}, RepeatLimit: 2})
	_, err := a.Run(t.Context(), "go")
	if !errors.Is(err, agent.ErrLoop) {
		t.Fatalf("err = %v, want ErrLoop", err)
	}
	// Calls 1-2 run, 3-4 get a warning, the 5th stops the run.
	if got := m.Calls(); got != 5 {
		t.Errorf("model calls = %d, want 5", got)
	}
	warned := lastToolMessages(m.Requests()[3])
	if !warned[0].IsError || !strings.Contains(warned[0].Content, "exact arguments") {
		t.Errorf("third identical call should be answered with a warning, got %+v", warned)
	}
}

func TestStepLimitAndCancellation(t *testing.T) {
	forever := func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		return scripted.Reply("thinking", call("", "echo", fmt.Sprintf(`{"text":"%d"}`, len(req.Messages)))), nil
	}
	a, _ := agent.New(agent.Config{Model: scripted.New(llm.Info{}, forever), Tools: []agent.Tool{echoTool()}, MaxSteps: 4})
	text, err := a.Run(t.Context(), "go")
	if !errors.Is(err, agent.ErrStepLimit) || text != "thinking" {
		t.Fatalf("Run = %q, %v; want last text and ErrStepLimit", text, err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	blocking := agent.NewTool("block", "Blocks until cancelled.", func(ctx context.Context, _ echoIn) (string, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	})
	m := scripted.New(llm.Info{}, scripted.Sequence(scripted.Reply("", call("", "block", `{"text":""}`)), scripted.Reply("never")))
	b, _ := agent.New(agent.Config{Model: m, Tools: []agent.Tool{blocking}})
	if _, err := b.Run(ctx, "go"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestPanicsAndFatalErrors(t *testing.T) {
	panicky := agent.NewTool("boom", "Panics.", func(context.Context, echoIn) (string, error) { panic("kaboom") })
	m := scripted.New(llm.Info{}, scripted.Sequence(scripted.Reply("", call("", "boom", `{"text":""}`)), scripted.Reply("recovered")), scripted.WithRecording())
	a, _ := agent.New(agent.Config{Model: m, Tools: []agent.Tool{panicky}})
	if got, err := a.Run(t.Context(), "go"); err != nil || got != "recovered" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	if tm := lastToolMessages(m.Requests()[1]); !tm[0].IsError || !strings.Contains(tm[0].Content, "kaboom") {
		t.Errorf("panic should become an error result naming it: %+v", tm)
	}

	disk := errors.New("disk on fire")
	fatal := agent.NewTool("fatal", "Fails hard.", func(context.Context, echoIn) (string, error) { return "", &agent.FatalError{Err: disk} })
	m2 := scripted.New(llm.Info{}, scripted.Sequence(scripted.Reply("", call("", "fatal", `{"text":""}`)), scripted.Reply("no")))
	b, _ := agent.New(agent.Config{Model: m2, Tools: []agent.Tool{fatal}})
	if _, err := b.Run(t.Context(), "go"); !errors.Is(err, disk) {
		t.Fatalf("err = %v, want the infrastructure error", err)
	}
}

// recorder is middleware implementing every hook, recording the order they run in.
type recorder struct {
	name string
	log  *[]string
	mu   *sync.Mutex
}

func (r recorder) add(s string) { r.mu.Lock(); *r.log = append(*r.log, r.name+":"+s); r.mu.Unlock() }
func (r recorder) BeforeHistory(_ context.Context, st *agent.State) error {
	r.add("history")
	return nil
}
func (r recorder) BeforeRequest(_ context.Context, _ *agent.State, req *llm.Request) error {
	r.add("request")
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: "note from " + r.name})
	return nil
}
func (r recorder) AfterResponse(context.Context, *agent.State, *llm.Response) error {
	r.add("response")
	return nil
}
func (r recorder) WrapTool(next agent.ToolHandler) agent.ToolHandler {
	return func(ctx context.Context, st *agent.State, c llm.ToolCall) (agent.Result, error) {
		r.add("tool>")
		res, err := next(ctx, st, c)
		res.Content = "[" + r.name + "]" + res.Content
		r.add("tool<")
		return res, err
	}
}

func TestMiddlewareOrderAndRequestOnlyRewrites(t *testing.T) {
	var log []string
	var mu sync.Mutex
	m := scripted.New(llm.Info{}, scripted.Sequence(scripted.Reply("", call("c", "echo", `{"text":"x"}`)), scripted.Reply("end")), scripted.WithRecording())
	a, _ := agent.New(agent.Config{Model: m, Tools: []agent.Tool{echoTool()},
		Middleware: []agent.Middleware{recorder{"A", &log, &mu}, recorder{"B", &log, &mu}}})
	if _, err := a.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	wantPrefix := "A:history B:history A:request B:request A:response B:response A:tool> B:tool> B:tool< A:tool<"
	if got := strings.Join(log, " "); !strings.HasPrefix(got, wantPrefix) {
		t.Errorf("hook order:\n got %s\nwant %s…", got, wantPrefix)
	}
	for _, msg := range a.State().Messages {
		if strings.HasPrefix(msg.Content, "note from") {
			t.Fatal("a RequestHook's rewrite leaked into the history")
		}
		if msg.Role == llm.RoleTool && msg.Content != "[A][B]echo: x" {
			t.Errorf("wrapped tool result = %q, want outer wrapper last", msg.Content)
		}
	}
	first := m.Requests()[0].Messages
	if first[len(first)-1].Content != "note from B" {
		t.Errorf("request rewrite not seen by the model: %+v", first[len(first)-1])
	}
}

type shrinker struct{ calls int }

func (s *shrinker) OnOverflow(_ context.Context, st *agent.State, err error) error {
	s.calls++
	// Keep only the pinned messages and the latest user request.
	var kept []llm.Message
	for _, m := range st.Messages {
		if m.Pinned {
			kept = append(kept, m)
		}
	}
	st.Messages = append(kept, llm.Message{Role: llm.RoleUser, Content: st.LatestUserRequest()})
	return nil
}

func TestOverflowTriggersHookAndOneRetry(t *testing.T) {
	m := scripted.New(llm.Info{ContextWindow: 500}, scripted.Sequence(scripted.Reply("fits now")))
	s := &shrinker{}
	a, _ := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{s}})
	a.State().Messages = append(a.State().Messages, llm.Message{Role: llm.RoleUser, Content: strings.Repeat("old words ", 1000)})
	got, err := a.Run(t.Context(), "short question")
	if err != nil || got != "fits now" || s.calls != 1 {
		t.Fatalf("Run = %q, %v, overflow hook calls %d", got, err, s.calls)
	}

	// Without a hook the overflow is returned as its typed error.
	b, _ := agent.New(agent.Config{Model: scripted.New(llm.Info{ContextWindow: 10}, scripted.Sequence(scripted.Reply("x")))})
	if _, err := b.Run(t.Context(), strings.Repeat("long ", 100)); !llm.IsContextLength(err) {
		t.Fatalf("err = %v, want a context-length error", err)
	}
}

func TestSchemaGeneratedFromStruct(t *testing.T) {
	spec := echoTool().Spec()
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]map[string]any  `json:"properties"`
		Required   []string                   `json:"required"`
		Extra      map[string]json.RawMessage `json:"-"`
	}
	if err := json.Unmarshal(spec.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || schema.Properties["text"]["description"] != "what to echo" {
		t.Errorf("schema = %s", spec.Schema)
	}
	if fmt.Sprint(schema.Required) != "[text]" {
		t.Errorf("required = %v, want [text]", schema.Required)
	}
}

func TestSetToolsDuringRunShowsNewToolsFromTheNextStep(t *testing.T) {
	var a *agent.Agent
	added := agent.NewTool("added", "Added mid-run.", func(context.Context, echoIn) (string, error) { return "new", nil })
	swap := agent.NewTool("swap", "Adds a tool.", func(context.Context, echoIn) (string, error) {
		return "swapped", a.SetTools([]agent.Tool{echoTool(), added})
	})
	m := scripted.New(llm.Info{}, scripted.Sequence(
		scripted.Reply("", call("c1", "swap", `{"text":""}`)),
		scripted.Reply("", call("c2", "added", `{"text":""}`)),
		scripted.Reply("done"),
	), scripted.WithRecording())
	var err error
	a, err = agent.New(agent.Config{Model: m, Tools: []agent.Tool{echoTool(), swap}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	names := func(req *llm.Request) string {
		var n []string
		for _, s := range req.Tools {
			n = append(n, s.Name)
		}
		return strings.Join(n, ",")
	}
	reqs := m.Requests()
	if names(reqs[0]) != "echo,swap" || names(reqs[1]) != "echo,added" {
		t.Errorf("tools per step = %q, %q", names(reqs[0]), names(reqs[1]))
	}
	if tm := lastToolMessages(reqs[2]); tm[0].Content != "new" {
		t.Errorf("the added tool did not run: %+v", tm)
	}
}

// The loop error quotes the repeated arguments clipped; clipping must not split a character, since the error
// text is shown to people and written to JSON event logs.
func TestLoopErrorClipsOnRuneBoundary(t *testing.T) {
	same := call("", "echo", `{"text":"`+strings.Repeat("内存模型", 100)+`"}`)
	m := scripted.New(llm.Info{}, func(context.Context, *llm.Request) (*llm.Response, error) {
		return scripted.Reply("", same), nil
	})
	a, _ := agent.New(agent.Config{Model: m, Tools: []agent.Tool{echoTool()}, RepeatLimit: 1})
	_, err := a.Run(t.Context(), "go")
	if !errors.Is(err, agent.ErrLoop) {
		t.Fatalf("err = %v, want ErrLoop", err)
	}
	if !utf8.ValidString(err.Error()) {
		t.Errorf("loop error is not valid UTF-8: %q", err.Error())
	}
}

// goroutineID reads the current goroutine's number from its stack header.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return strings.Fields(string(buf))[1]
}

// The loop is flat in the history's length: the request shares the history instead of copying it, and a single
// tool call runs on the loop's own goroutine (several still run in parallel).
func TestRequestSharesHistoryAndALoneCallRunsInline(t *testing.T) {
	var mu sync.Mutex
	var modelG, toolG []string
	shared := true
	var a *agent.Agent
	tool := agent.NewTool("where", "Report the goroutine.", func(context.Context, struct{}) (string, error) {
		mu.Lock()
		toolG = append(toolG, goroutineID())
		mu.Unlock()
		return "ok", nil
	})
	m := scripted.New(llm.Info{}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		modelG = append(modelG, goroutineID())
		hist := a.State().Messages
		shared = shared && len(req.Messages) == len(hist) && &req.Messages[0] == &hist[0]
		switch len(modelG) {
		case 1:
			return scripted.Reply("", call("c1", "where", `{}`)), nil
		case 2:
			return scripted.Reply("", call("c2", "where", `{}`), call("c3", "where", ` {} `)), nil
		}
		return scripted.Reply("done"), nil
	})
	a, _ = agent.New(agent.Config{Model: m, Tools: []agent.Tool{tool}})
	if _, err := a.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if !shared {
		t.Error("a request copied the history instead of sharing it")
	}
	if len(toolG) != 3 || toolG[0] != modelG[0] {
		t.Errorf("the lone call ran on goroutine %v, the loop is on %s", toolG, modelG[0])
	}
	if toolG[1] == modelG[0] && toolG[2] == modelG[0] {
		t.Errorf("two calls of one step did not run on their own goroutines: %v", toolG)
	}
}
