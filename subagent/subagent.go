// Package subagent provides the task tool: the parent agent delegates a task to a subagent that starts with a fresh
// context — its own system prompt and the task description, none of the parent's history — works with its own
// tools and its own context management, and returns only its final answer. Bulky tool output (raw MCP results,
// long pages) thus stays in the subagent's context and never reaches the parent's.
//
// A Fleet bounds what one run may spawn: concurrent subagents, subagents in total and nesting depth. Tasks beyond
// the concurrency cap wait their turn in a queue (bounded by the total cap, honouring the caller's context);
// only the total cap and the depth refuse, with a clear error result for the model, never a hang or a crash. One
// subagent failing never cancels its siblings: its error comes back as its result.
package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
)

// ToolName is the name of the task tool.
const ToolName = "task"

// Fleet defaults: 16 subagents at once, 1,000 in a run, two levels of nesting.
const (
	DefaultMaxConcurrent = 16
	DefaultMaxTotal      = 1000
	DefaultMaxDepth      = 2
	DefaultMaxSteps      = 50
	DefaultTimeout       = 30 * time.Minute
	DefaultMaxRepairs    = 2
)

// MiddlewareFactory returns the middleware of one subagent: its own context management (compaction with the
// type's thresholds, eviction), tool wrappers and the like. It is called once per subagent with the subagent's
// session id, so stateful middleware gets a fresh instance.
type MiddlewareFactory func(sessionID string, typ Type) []agent.Middleware

// Config configures a Fleet. Zero fields take the documented defaults.
type Config struct {
	// Model serves subagents whose type names no tier (or when Models is nil or has no model for the tier).
	Model llm.Model
	// Models resolves a type's tier (strong, mid, fast) to a model.
	Models func(tier string) (llm.Model, error)
	// Tools are the parent's tools; a subagent gets them minus Reserved (and any task tool, which is replaced by
	// one a level deeper) unless its type lists its own.
	Tools []agent.Tool
	// SubagentTools are tools only subagents get, such as those of MCP servers marked subagentOnly.
	SubagentTools []agent.Tool
	// ToolSource, when set, replaces Tools and SubagentTools and is asked each time a subagent starts, so that
	// subagents see tools added after the Fleet was built (MCP tool-list changes, later runtime steps).
	ToolSource func() (parent, subagentOnly []agent.Tool)
	// Reserved names tools that stay with the parent.
	Reserved []string
	// Types are the subagent types; a general-purpose type is added when none has that name. Later entries
	// replace earlier ones of the same name.
	Types []Type
	// Middleware builds each subagent's middleware; nil means none.
	Middleware MiddlewareFactory
	// MaxConcurrent bounds subagents running at once across the whole tree; default 16. Tasks over it wait in
	// a queue until a subagent finishes (or the caller's context ends). A subagent waiting for its own subagents
	// lends its place to them, so nested delegation cannot deadlock the fleet.
	MaxConcurrent int
	// MaxTotal bounds subagents started by one Fleet (one run); default 1,000.
	MaxTotal int
	// MaxDepth bounds nesting: the parent's subagents are level 1, theirs level 2; default 2. Negative
	// disables nesting (level 1 only).
	MaxDepth int
	// MaxSteps bounds each subagent's model calls when its type does not; default 50.
	MaxSteps int
	// MaxParallelTools bounds a subagent's concurrent tool calls; 0 means the agent's default.
	MaxParallelTools int
	// Timeout bounds one subagent run; default 30 minutes, negative means none.
	Timeout time.Duration
	// MaxRepairs is how many times a subagent whose type declares a schema is asked again for a valid JSON
	// answer; default 2.
	MaxRepairs int
	// Preamble is added to every subagent's system prompt (the workspace root, the date).
	Preamble string
	// SessionPrefix starts every subagent session id (for example the run id); default "sub".
	SessionPrefix string
	// Observer receives the subagents' events; their Session field tells them apart.
	Observer agent.Observer
	Logger   *slog.Logger
}

// Fleet runs subagents for one run. It is safe for concurrent use.
type Fleet struct {
	cfg   Config
	types map[string]Type
	names []string

	slots   chan struct{} // one token per running subagent
	running atomic.Int64
	total   atomic.Int64
	peak    atomic.Int64
	queued  atomic.Int64
	seq     atomic.Int64
}

// New builds a Fleet.
func New(cfg Config) (*Fleet, error) {
	if cfg.Model == nil {
		return nil, errors.New("subagent: no model configured")
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.MaxTotal <= 0 {
		cfg.MaxTotal = DefaultMaxTotal
	}
	switch {
	case cfg.MaxDepth == 0:
		cfg.MaxDepth = DefaultMaxDepth
	case cfg.MaxDepth < 0:
		cfg.MaxDepth = 1
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxRepairs == 0 {
		cfg.MaxRepairs = DefaultMaxRepairs
	}
	if cfg.SessionPrefix == "" {
		cfg.SessionPrefix = "sub"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	f := &Fleet{cfg: cfg, types: map[string]Type{}, slots: make(chan struct{}, cfg.MaxConcurrent)}
	for _, t := range append([]Type{DefaultGeneralPurpose()}, cfg.Types...) {
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("subagent: %w", err)
		}
		f.types[t.Name] = t
	}
	for n := range f.types {
		f.names = append(f.names, n)
	}
	sort.Strings(f.names)
	return f, nil
}

// Types returns the subagent types, by name.
func (f *Fleet) Types() []Type {
	out := make([]Type, len(f.names))
	for i, n := range f.names {
		out[i] = f.types[n]
	}
	return out
}

// Stats are a Fleet's counters. Started counts tasks admitted (running, waiting or done); Queued those waiting
// for a place now.
type Stats struct {
	Running, Started, PeakRunning, Queued int
}

// Stats returns the fleet's counters.
func (f *Fleet) Stats() Stats {
	return Stats{Running: int(f.running.Load()), Started: int(f.total.Load()), PeakRunning: int(f.peak.Load()), Queued: int(f.queued.Load())}
}

// Tool returns the task tool for the top-level agent (its subagents are level 1).
func (f *Fleet) Tool() agent.Tool { return f.toolAt(1) }

func (f *Fleet) toolAt(level int) *taskTool {
	return &taskTool{fleet: f, level: level, spec: f.spec()}
}

// TaskInput is the input of the task tool.
type TaskInput struct {
	Description  string `json:"description"`
	SubagentType string `json:"subagent_type"`
}

func (f *Fleet) spec() llm.ToolSpec {
	var b strings.Builder
	b.WriteString("Delegate a self-contained task to a subagent. It starts with a fresh context (it does not see this conversation), " +
		"works with its own tools, shares the workspace files, and returns only its final answer — so bulky tool output stays out of your context. " +
		"Write the description as a complete brief: the goal, what is known, and exactly what to return. " +
		"Run several in one step for independent tasks.\n\nSubagent types:\n")
	for _, n := range f.names {
		fmt.Fprintf(&b, "- %s: %s\n", n, oneLine(f.types[n].Description))
	}
	_, only := f.tools()
	if extra := toolNames(only); len(extra) > 0 {
		fmt.Fprintf(&b, "\nOnly subagents can use these tools (delegate work that needs them): %s\n", summarizeNames(extra))
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"description":   map[string]any{"type": "string", "description": "the complete task for the subagent"},
			"subagent_type": map[string]any{"type": "string", "enum": f.names, "description": "which kind of subagent to use"},
		},
		"required":             []string{"description", "subagent_type"},
		"additionalProperties": false,
	}
	raw, _ := json.Marshal(schema)
	return llm.ToolSpec{Name: ToolName, Description: strings.TrimRight(b.String(), "\n"), Schema: raw}
}

// taskTool is the task tool of one level: the subagents it starts are at level.
type taskTool struct {
	fleet *Fleet
	level int
	spec  llm.ToolSpec
}

func (t *taskTool) Spec() llm.ToolSpec { return t.spec }

// Run implements agent.Tool. It never returns a Go error: every failure is the subagent's result, so that one
// failing subagent cannot cancel its siblings through the agent's error group.
func (t *taskTool) Run(ctx context.Context, args json.RawMessage) (agent.Result, error) {
	var in TaskInput
	if err := json.Unmarshal(args, &in); err != nil {
		return agent.ErrorResult("invalid JSON arguments for task: %v. Send {\"description\": ..., \"subagent_type\": ...}.", err), nil
	}
	out, meta, err := t.fleet.run(ctx, t.level, in.SubagentType, in.Description)
	if err != nil {
		res := agent.ErrorResult("%v", err)
		res.Meta = meta
		return res, nil
	}
	return agent.Result{Content: out, Meta: meta}, nil
}

// Limit errors, wrapped in the task tool's error results.
var (
	ErrTotal = errors.New("subagent budget of this run used up")
	ErrDepth = errors.New("subagent nesting too deep")
)

// Run runs one subagent of the given type on a task at level 1, as the task tool does, and returns its answer.
func (f *Fleet) Run(ctx context.Context, typ, description string) (string, error) {
	out, _, err := f.run(ctx, 1, typ, description)
	return out, err
}

func (f *Fleet) run(ctx context.Context, level int, typeName, description string) (answer string, meta map[string]string, err error) {
	typ, ok := f.types[typeName]
	if !ok {
		return "", nil, fmt.Errorf("task: unknown subagent_type %q; the types are: %s", typeName, strings.Join(f.names, ", "))
	}
	if strings.TrimSpace(description) == "" {
		return "", nil, errors.New("task: the description is empty; describe the task completely, the subagent sees nothing else")
	}
	if level > f.cfg.MaxDepth {
		return "", nil, fmt.Errorf("task: %w: subagents may nest %d levels and this one would be level %d; do the work yourself with your tools", ErrDepth, f.cfg.MaxDepth, level)
	}
	if !acquire(&f.total, int64(f.cfg.MaxTotal)) {
		return "", nil, fmt.Errorf("task: %w: this run has already started %d subagents, the limit; finish with what you have", ErrTotal, f.cfg.MaxTotal)
	}
	if parent := holderOf(ctx); parent != nil {
		// The calling subagent waits for this one: it lends its place meanwhile.
		parent.lend(f)
		defer parent.reclaim(ctx, f)
	}
	if err := f.acquireSlot(ctx); err != nil {
		f.total.Add(-1) // never started
		return "", nil, fmt.Errorf("task: gave up waiting for one of the %d subagent places: %w", f.cfg.MaxConcurrent, err)
	}
	self := &slotHolder{held: true}
	defer self.release(f)
	ctx = context.WithValue(ctx, holderKey{}, self)

	session := fmt.Sprintf("%s-%d-%s-%s", f.cfg.SessionPrefix, f.seq.Add(1), sanitize(typ.Name), agent.NewID())
	meta = map[string]string{"subagent_session": session, "subagent_type": typ.Name}
	defer func() {
		if p := recover(); p != nil {
			answer, err = "", fmt.Errorf("task: subagent %s (%s) panicked: %v", typ.Name, session, p)
		}
	}()
	ag, err := f.build(level, typ, session)
	if err != nil {
		return "", meta, fmt.Errorf("task: start subagent %s: %w", typ.Name, err)
	}
	if f.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.cfg.Timeout)
		defer cancel()
	}
	start := time.Now()
	answer, err = ag.Run(ctx, description)
	if err == nil && len(typ.Schema) > 0 {
		answer, err = f.structured(ctx, ag, typ, answer)
	}
	f.cfg.Logger.Debug("subagent finished", "session", session, "type", typ.Name, "level", level, "elapsed", time.Since(start), "err", err)
	if err != nil {
		msg := fmt.Sprintf("task: subagent %s (%s) failed: %v", typ.Name, session, err)
		if strings.TrimSpace(answer) != "" {
			msg += "\nIts last message before failing:\n" + answer
		}
		return "", meta, errors.New(msg)
	}
	if strings.TrimSpace(answer) == "" {
		return "", meta, fmt.Errorf("task: subagent %s (%s) finished without an answer", typ.Name, session)
	}
	return answer, meta, nil
}

// acquireSlot waits for a place among the MaxConcurrent running subagents, or for ctx to end.
func (f *Fleet) acquireSlot(ctx context.Context) error {
	select {
	case f.slots <- struct{}{}:
	default:
		f.queued.Add(1)
		defer f.queued.Add(-1)
		select {
		case f.slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	n := f.running.Add(1)
	for {
		if p := f.peak.Load(); n <= p || f.peak.CompareAndSwap(p, n) {
			return nil
		}
	}
}

func (f *Fleet) releaseSlot() {
	f.running.Add(-1)
	<-f.slots
}

// slotHolder is a running subagent's place in the fleet. While it waits for subagents of its own it lends the
// place to them (it is not running meanwhile), and takes a place again before it goes on.
type slotHolder struct {
	mu   sync.Mutex
	held bool
	lent int // its subagents being started or running
}

type holderKey struct{}

func holderOf(ctx context.Context) *slotHolder {
	h, _ := ctx.Value(holderKey{}).(*slotHolder)
	return h
}

func (h *slotHolder) lend(f *Fleet) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lent == 0 && h.held {
		f.releaseSlot()
		h.held = false
	}
	h.lent++
}

func (h *slotHolder) reclaim(ctx context.Context, f *Fleet) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lent--
	if h.lent == 0 && !h.held {
		// A cancelled context leaves it without a place; the run is ending anyway.
		h.held = f.acquireSlot(ctx) == nil
	}
}

func (h *slotHolder) release(f *Fleet) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held {
		f.releaseSlot()
		h.held = false
	}
}

// acquire increments c unless that would exceed max.
func acquire(c *atomic.Int64, max int64) bool {
	for {
		n := c.Load()
		if n >= max {
			return false
		}
		if c.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (f *Fleet) build(level int, typ Type, session string) (*agent.Agent, error) {
	model := f.cfg.Model
	if tier := strings.ToLower(typ.Model); tier != "" && tier != "inherit" && f.cfg.Models != nil {
		m, err := f.cfg.Models(tier)
		if err != nil {
			return nil, fmt.Errorf("model for tier %s: %w", tier, err)
		}
		if m != nil {
			model = m
		}
	}
	tools := f.toolsFor(typ)
	if level < f.cfg.MaxDepth {
		tools = append(tools, f.toolAt(level+1))
	}
	var mws []agent.Middleware
	if f.cfg.Middleware != nil {
		mws = f.cfg.Middleware(session, typ)
	}
	steps := typ.MaxSteps
	if steps <= 0 {
		steps = f.cfg.MaxSteps
	}
	return agent.New(agent.Config{
		Model:            model,
		System:           f.systemPrompt(typ),
		Tools:            tools,
		Middleware:       mws,
		MaxSteps:         steps,
		MaxParallelTools: f.cfg.MaxParallelTools,
		SessionID:        session,
		Observer:         f.cfg.Observer,
	})
}

// toolsFor picks a type's tools: the parent's and the subagent-only ones, minus the reserved ones and any task
// tool, filtered by the type's patterns when it lists any. tool_search stays whenever it exists, because deferred
// tools are useless without it.
func (f *Fleet) toolsFor(typ Type) []agent.Tool {
	reserved := map[string]bool{ToolName: true}
	for _, r := range f.cfg.Reserved {
		reserved[r] = true
	}
	var out []agent.Tool
	seen := map[string]bool{}
	parent, only := f.tools()
	for _, t := range slices.Concat(parent, only) {
		name := t.Spec().Name
		if reserved[name] || seen[name] {
			continue
		}
		if len(typ.Tools) > 0 && name != agent.ToolSearchName && !matchAny(typ.Tools, name) {
			continue
		}
		seen[name] = true
		out = append(out, t)
	}
	return out
}

func (f *Fleet) tools() (parent, only []agent.Tool) {
	if f.cfg.ToolSource != nil {
		return f.cfg.ToolSource()
	}
	return f.cfg.Tools, f.cfg.SubagentTools
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func (f *Fleet) systemPrompt(typ Type) string {
	prompt := strings.TrimSpace(typ.Prompt)
	if prompt == "" {
		prompt = generalPurposePrompt
	}
	if f.cfg.Preamble != "" {
		prompt += "\n\n" + strings.TrimSpace(f.cfg.Preamble)
	}
	if len(typ.Schema) > 0 {
		prompt += "\n\nYour final message must be exactly one JSON object matching this JSON schema, with no other text:\n" + string(typ.Schema)
	}
	return prompt
}

// structured checks a schema-typed subagent's answer and, when it is not a matching JSON object, asks the
// subagent again (in its own context) up to MaxRepairs times.
func (f *Fleet) structured(ctx context.Context, ag *agent.Agent, typ Type, answer string) (string, error) {
	rs, err := compileSchema(typ.Schema)
	if err != nil {
		return "", err
	}
	for attempt := 0; ; attempt++ {
		obj, verr := checkJSON(rs, answer)
		if verr == nil {
			return obj, nil
		}
		if attempt >= f.cfg.MaxRepairs {
			return answer, fmt.Errorf("its answer is not a JSON object matching the type's schema after %d repairs: %w", attempt, verr)
		}
		answer, err = ag.Run(ctx, fmt.Sprintf("Your final answer is not valid: %v. Answer again with exactly one JSON object matching the schema, and nothing else.", verr))
		if err != nil {
			return answer, err
		}
	}
}

func compileSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// checkJSON extracts the JSON object from an answer (tolerating code fences and surrounding prose), validates it
// and returns it compacted.
func checkJSON(rs *jsonschema.Resolved, answer string) (string, error) {
	text := strings.TrimSpace(answer)
	if i, j := strings.Index(text, "{"), strings.LastIndex(text, "}"); i >= 0 && j > i {
		text = text[i : j+1]
	} else {
		return "", errors.New("it holds no JSON object")
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return "", fmt.Errorf("it is not valid JSON: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return "", errors.New("it is not a JSON object")
	}
	if err := rs.Validate(v); err != nil {
		return "", err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, s)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func toolNames(tools []agent.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Spec().Name
	}
	sort.Strings(out)
	return out
}

// summarizeNames lists names, collapsing MCP tools of one server into mcp__server__* once there are many.
func summarizeNames(names []string) string {
	if len(names) <= 12 {
		return strings.Join(names, ", ")
	}
	groups := map[string]int{}
	var order []string
	for _, n := range names {
		key := n
		if strings.HasPrefix(n, "mcp__") {
			if i := strings.Index(n[5:], "__"); i >= 0 {
				key = n[:5+i] + "__*"
			}
		}
		if groups[key] == 0 {
			order = append(order, key)
		}
		groups[key]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		if groups[k] > 1 {
			parts[i] = fmt.Sprintf("%s (%d tools)", k, groups[k])
		} else {
			parts[i] = k
		}
	}
	return strings.Join(parts, ", ")
}

// ensure taskTool stays a Tool.
var _ agent.Tool = (*taskTool)(nil)
