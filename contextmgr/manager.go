// Package contextmgr keeps an agent's context useful under heavy tool traffic. It is one middleware value for
// the agent loop (agent.ToolWrapper, HistoryHook, RequestHook and OverflowHook) that combines what DeepAgents and
// Claude Code each do well and adds what neither has:
//
//   - a relevance gate: a large tool result is chunked and scored (BM25) against the agent's current intent;
//     only the best chunks stay inline and the full result goes to disk;
//   - large-result eviction to large_tool_results/ with a numbered head/tail preview (file tools exempt);
//   - tiered compaction before each model call: recoverable clearing of old tool results, then a structured
//     summary whose source messages are appended to conversation_history/<session>.md, then dropping the oldest
//     messages as a last resort; a provider's context-length error compacts and retries once;
//   - pinned memory (system prompt, AGENTS.md) that no compaction touches, and a persistent memories/ store;
//   - old reasoning dropped from each request, old write/edit arguments truncated, a quota on offloaded files;
//   - a context report by category.
//
// The presets deepagents, claude-code and hybrid (the default) are named configurations of this one code.
package contextmgr

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/workspace"
)

// Workspace directories the manager writes to (relative to the run's workspace root).
const (
	LargeResultsDir = "large_tool_results"
	HistoryDir      = "conversation_history"
)

// Clearing modes of compaction tier 1.
const (
	ClearRecoverable   = "recoverable"   // write the result to disk, leave a pointer (default)
	ClearUnrecoverable = "unrecoverable" // Claude Code: replace by a fixed marker
	ClearOff           = "off"           // DeepAgents: no clearing tier
)

// Preset names.
const (
	PresetHybrid     = "hybrid"
	PresetDeepAgents = "deepagents"
	PresetClaudeCode = "claude-code"
)

// Config tunes a Manager. The zero value is the hybrid preset; for integer knobs 0 means the default and a
// negative value switches the mechanism off.
type Config struct {
	// Preset is informational (reports, events); use Preset to obtain a named configuration.
	Preset string

	// Trigger is the share of the window above which compaction runs before a model call; default 0.80. It is
	// a share of the whole window: under a trigger of 0.85 a 16,384-token window compacts above 13,926 tokens.
	Trigger float64
	// ClearBelow: compaction stops after tier 1 when the prompt is under this share of the window; default 0.60.
	ClearBelow float64
	// KeepShare is the share of the newest messages a summary keeps verbatim; default 0.10.
	KeepShare float64
	// KeepToolCalls is how many of the most recent tool calls keep their results in tier 1; default 3, negative
	// keeps none.
	KeepToolCalls int
	// Clearing is tier 1's mode: recoverable (default), unrecoverable or off.
	Clearing string
	// NoSummary switches tier 2 off.
	NoSummary bool
	// NoHistory stops compacted messages from being appended to conversation_history/ (Claude Code).
	NoHistory bool

	// EvictTokens: a tool result above this many tokens is written to large_tool_results/ and previewed;
	// default 5,000.
	EvictTokens int
	// GateTokens: a tool result above this many tokens goes through the relevance gate; default 2,000.
	GateTokens int
	// GateBudget is how many tokens of the most relevant chunks the gate keeps inline; default 1,500.
	GateBudget int
	// GateChunkChars is the gate's chunk size in characters; default 1,200.
	GateChunkChars int
	// OutputCapTokens cuts any tool result above this many tokens, unrecoverably (Claude Code's MCP cap);
	// 0 means no cap.
	OutputCapTokens int
	// ExemptTools are tools whose output is never evicted or gated because they bound it themselves; the file
	// tools and the memory tools are always exempt. See BoundedNames.
	ExemptTools []string

	// ArgTruncateChars: string arguments of write_file and edit_file older than the kept window and longer than
	// this become their first 20 characters + "...(argument truncated)"; default 2,000.
	ArgTruncateChars int
	// KeepReasoning keeps reasoning blocks of earlier assistant turns in requests (by default only the latest
	// assistant turn's reasoning is sent).
	KeepReasoning bool
	// OffloadQuota bounds the bytes under large_tool_results/; the oldest files are removed past it; default
	// 256 MiB.
	OffloadQuota int64

	// NoProjectMemory stops AGENTS.md from being pinned into the context.
	NoProjectMemory bool
	// ProjectDirs are searched for AGENTS.md (the workspace root is always searched first).
	ProjectDirs []string
	// NoMemory switches the persistent memories/ store and its tools off.
	NoMemory bool
	// MemoryDir is the persistent store; default <user config dir>/deepresearch/memories.
	MemoryDir string

	// Window overrides the model's context window in tokens (models the catalogue does not know).
	Window int
	// OutputReserve is kept free for the answer. By default it is the model's max output (8,192 when unknown),
	// at most the share of the window above the trigger, so that the trigger means what it says. A larger
	// reserve set here moves compaction down to window − reserve; Report shows the resulting trigger in tokens.
	OutputReserve int
	// Summarizer writes tier-2 summaries; nil means the agent's own model.
	Summarizer llm.Model
	// Logger receives removals and failures; nil means slog.Default().
	Logger *slog.Logger
}

// Preset returns a named configuration: hybrid (the default, also for ""), deepagents or claude-code.
func Preset(name string) (Config, error) {
	switch name {
	case "", PresetHybrid:
		return Config{Preset: PresetHybrid}, nil
	case PresetDeepAgents:
		// DeepAgents: summary at 85% keeping 10%, eviction at 20,000 tokens, no clearing tier, no relevance gate,
		// thinking blocks untouched, large_tool_results never cleaned up.
		return Config{Preset: PresetDeepAgents, Trigger: 0.85, KeepShare: 0.10, EvictTokens: 20_000,
			Clearing: ClearOff, GateTokens: -1, KeepReasoning: true, OffloadQuota: -1}, nil
	case PresetClaudeCode:
		// Claude Code: unrecoverable clearing of old tool outputs first, summary at 95%, MCP output capped at
		// 25,000 tokens, no history file, no write/edit argument truncation.
		return Config{Preset: PresetClaudeCode, Trigger: 0.95, Clearing: ClearUnrecoverable, NoHistory: true,
			EvictTokens: -1, GateTokens: -1, OutputCapTokens: 25_000, ArgTruncateChars: -1}, nil
	}
	return Config{}, fmt.Errorf("contextmgr: unknown preset %q (want %s, %s or %s)", name, PresetHybrid, PresetDeepAgents, PresetClaudeCode)
}

// Presets lists the preset names.
func Presets() []string { return []string{PresetDeepAgents, PresetClaudeCode, PresetHybrid} }

func (c Config) withDefaults() (Config, error) {
	if c.Preset == "" {
		c.Preset = PresetHybrid
	}
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Trigger, 0.80)
	def(&c.ClearBelow, 0.60)
	def(&c.KeepShare, 0.10)
	for _, f := range []struct {
		name string
		v    float64
	}{{"trigger", c.Trigger}, {"clear_below", c.ClearBelow}, {"keep_share", c.KeepShare}} {
		if f.v < 0 || f.v > 1 || math.IsNaN(f.v) {
			return c, fmt.Errorf("contextmgr: %s must be a share of the window between 0 and 1, got %v", f.name, f.v)
		}
	}
	idef := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	idef(&c.KeepToolCalls, 3)
	idef(&c.EvictTokens, 5_000)
	idef(&c.GateTokens, 2_000)
	idef(&c.GateBudget, 1_500)
	idef(&c.GateChunkChars, 1_200)
	idef(&c.ArgTruncateChars, 2_000)
	if c.OffloadQuota == 0 {
		c.OffloadQuota = 256 << 20
	}
	switch c.Clearing {
	case "":
		c.Clearing = ClearRecoverable
	case ClearRecoverable, ClearUnrecoverable, ClearOff:
	default:
		return c, fmt.Errorf("contextmgr: clearing must be %s, %s or %s, got %q", ClearRecoverable, ClearUnrecoverable, ClearOff, c.Clearing)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if !c.NoMemory && c.MemoryDir == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return c, fmt.Errorf("contextmgr: no memory directory configured and no user config dir: %w", err)
		}
		c.MemoryDir = filepath.Join(dir, "deepresearch", "memories")
	}
	return c, nil
}

// fileTools bound their own output (workspace package), so eviction and the gate leave them alone.
var fileTools = []string{workspace.ToolLs, workspace.ToolGlob, workspace.ToolGrep, workspace.ToolReadFile,
	workspace.ToolWriteFile, workspace.ToolEditFile}

// The hooks Manager implements; a misspelt method would otherwise never be called.
var (
	_ agent.HistoryHook  = (*Manager)(nil)
	_ agent.RequestHook  = (*Manager)(nil)
	_ agent.ToolWrapper  = (*Manager)(nil)
	_ agent.OverflowHook = (*Manager)(nil)
)

// Manager is the context-engineering middleware. Append it to agent.Config.Middleware. One Manager may serve
// several agents at once (parent and subagents): everything per conversation lives in the agent.State and its
// messages' Meta, and history files are named by the state's session id. It is safe for concurrent use.
type Manager struct {
	cfg    Config
	ws     *workspace.Workspace
	mem    *workspace.Workspace // persistent store; nil when off
	log    *slog.Logger
	exempt map[string]bool
	pinned string // project-memory message content; "" when none

	counters sync.Map // model name → tokens.Counter
	convos   sync.Map // session id → *convo: running token count and what the model has seen

	mu    sync.Mutex // offload quota and stats
	stats Stats
}

// Stats counts what the manager did.
type Stats struct {
	Compactions   int `json:"compactions"`
	SummaryCalls  int `json:"summary_calls"`
	Cleared       int `json:"cleared"`
	Dropped       int `json:"dropped"`
	Evicted       int `json:"evicted"`
	Gated         int `json:"gated"`
	Capped        int `json:"capped"`
	QuotaRemovals int `json:"quota_removals"`
}

// New builds a manager writing offloaded results and history into ws.
func New(ws *workspace.Workspace, cfg Config) (*Manager, error) {
	if ws == nil {
		return nil, fmt.Errorf("contextmgr: no workspace")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, ws: ws, log: cfg.Logger, exempt: map[string]bool{}}
	for _, n := range fileTools {
		m.exempt[n] = true
	}
	for _, n := range cfg.ExemptTools {
		m.exempt[n] = true
	}
	if !cfg.NoMemory {
		if m.mem, err = workspace.New(cfg.MemoryDir, workspace.Config{}); err != nil {
			return nil, fmt.Errorf("contextmgr: memory store: %w", err)
		}
		for _, t := range m.memoryTools() {
			m.exempt[t.Spec().Name] = true
		}
	}
	if !cfg.NoProjectMemory {
		if m.pinned, err = m.loadProjectMemory(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Config returns the effective configuration.
func (m *Manager) Config() Config { return m.cfg }

// Stats returns a snapshot of the counters.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

func (m *Manager) count(f func(*Stats)) {
	m.mu.Lock()
	f(&m.stats)
	m.mu.Unlock()
}

// BoundedNames returns the names of the tools that bound their own output (agent.BoundedOutput), for
// Config.ExemptTools.
func BoundedNames(tools []agent.Tool) []string {
	var out []string
	for _, t := range tools {
		if b, ok := t.(agent.BoundedOutput); ok && b.BoundsOwnOutput() {
			out = append(out, t.Spec().Name)
		}
	}
	return out
}

// counter returns the token counter for a model, cached because building a BPE codec is not free.
func (m *Manager) counter(model llm.Model) tokens.Counter {
	name := ""
	if model != nil {
		name = model.Info().Name
	}
	if c, ok := m.counters.Load(name); ok {
		return c.(tokens.Counter)
	}
	c := tokens.ForModel(name)
	m.counters.Store(name, c)
	return c
}

// budget is the token arithmetic for one model.
type budget struct {
	window  int // context window
	reserve int // kept free for the answer
	limit   int // compaction trigger: trigger·window, or window − reserve when a configured reserve is larger
	clearTo int // tier 1 stops under this
}

func (m *Manager) budgetFor(model llm.Model) budget {
	var info llm.Info
	if model != nil {
		info = model.Info()
	}
	w := m.cfg.Window
	if w <= 0 {
		w = info.ContextWindow
	}
	if w <= 0 {
		w = 128_000
	}
	trigger := int(m.cfg.Trigger * float64(w))
	r := m.cfg.OutputReserve
	if r <= 0 {
		r = info.MaxOutput
		if r <= 0 {
			r = 8_192
		}
		r = max(1, min(r, w-trigger))
	}
	limit := min(trigger, w-r)
	return budget{window: w, reserve: r, limit: max(limit, 1), clearTo: min(int(m.cfg.ClearBelow*float64(w)), limit)}
}

// Meta keys the manager sets on messages.
const (
	metaPath    = "contextmgr.path"    // workspace path of the full text of a tool result
	metaCleared = "contextmgr.cleared" // "1" once tier 1 cleared the result
	metaKind    = "contextmgr.kind"    // kindSummary or kindMemory
	metaUsers   = "contextmgr.users"   // JSON array of earlier user messages carried by a summary
	metaUnseen  = "contextmgr.unseen"  // "1" on a summary until a request carrying it got an answer
	kindSummary = "summary"
	kindMemory  = "project_memory"
)

func kindOf(msg llm.Message) string { return msg.Meta[metaKind] }

// FullTextPath is the workspace path where the manager saved the full text of a tool result that the message
// carries cut, gated, previewed or cleared; "" when it saved none.
func FullTextPath(msg llm.Message) string { return msg.Meta[metaPath] }

func setMeta(msg *llm.Message, k, v string) {
	if msg.Meta == nil {
		msg.Meta = map[string]string{}
	}
	msg.Meta[k] = v
}

// latestUser returns the index of the latest real user request: not pinned, not a summary.
func latestUser(ms []llm.Message) int {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == llm.RoleUser && !ms[i].Pinned && kindOf(ms[i]) != kindSummary {
			return i
		}
	}
	return -1
}

// intent is what the agent is currently after: the latest user request.
func intent(st *agent.State) string {
	if i := latestUser(st.Messages); i >= 0 {
		return st.Messages[i].Content
	}
	return ""
}

func (m *Manager) isExempt(name string) bool { return m.exempt[name] }

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
