package contextmgr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/workspace"
)

// Markers tier 1 leaves in place of a cleared tool result.
const (
	clearedFmt          = "[tool result cleared — full text at %s]"
	clearedUnrecover    = "[Old tool result content cleared]" // Claude Code's marker
	argTruncatedSuffix  = "...(argument truncated)"
	argTruncatedPrefix  = 20
	minClearableChars   = 200 // clearing a shorter result would not save anything
	overflowShrinkShare = 0.5 // after a provider overflow error the prompt is at least halved
)

// argTools are the tools whose old string arguments are truncated (DeepAgents' phase 1).
var argTools = map[string]bool{workspace.ToolWriteFile: true, workspace.ToolEditFile: true}

// CompactResult says what one compaction did.
type CompactResult struct {
	Reason     string `json:"reason"` // auto, overflow or manual
	Before     int    `json:"before_tokens"`
	After      int    `json:"after_tokens"`
	Window     int    `json:"window"`
	Cleared    int    `json:"cleared"`
	Summarized int    `json:"summarized"`
	Dropped    int    `json:"dropped"`
	// Fitted counts new tool results the model had not seen that were cut to the gate's excerpt (with the path
	// of the full text) because even alone they did not fit.
	Fitted      int    `json:"fitted,omitempty"`
	HistoryPath string `json:"history_path,omitempty"`
	// Line is the human line also emitted as an agent.EventCompaction.
	Line string `json:"line,omitempty"`
}

// Changed reports whether the compaction rewrote anything.
func (r CompactResult) Changed() bool { return r.Cleared+r.Summarized+r.Dropped+r.Fitted > 0 }

// BeforeHistory implements agent.HistoryHook: keep pinned memory in place, truncate old write/edit arguments and
// compact when the prompt is over the trigger.
func (m *Manager) BeforeHistory(ctx context.Context, st *agent.State) error {
	m.ensurePinned(st)
	m.truncateOldArgs(st)
	_, err := m.compact(ctx, st, compactOptions{reason: "auto"})
	return err
}

// BeforeRequest implements agent.RequestHook: reasoning blocks of all but the latest assistant turn are dropped
// from the request (the history keeps them). The request shares the history's messages, so the messages edited
// here are copies.
func (m *Manager) BeforeRequest(_ context.Context, st *agent.State, req *llm.Request) error {
	if m.cfg.KeepReasoning {
		return nil
	}
	if st != nil {
		cv := m.convo(st.SessionID)
		cv.mu.Lock()
		m.sync(cv, st)
		none := cv.reasoned == 0 || (cv.reasoned == 1 && cv.lastAssistant >= 0 && cv.counts[cv.lastAssistant].nReason > 0)
		cv.mu.Unlock()
		if none && len(req.Messages) == len(st.Messages) {
			return nil
		}
	}
	last := -1
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleAssistant {
			last = i
			break
		}
	}
	copied := false
	for i := range req.Messages {
		if i == last || req.Messages[i].Role != llm.RoleAssistant || len(req.Messages[i].Reasoning) == 0 {
			continue
		}
		if !copied {
			req.Messages = slices.Clone(req.Messages)
			copied = true
		}
		req.Messages[i].Reasoning = nil
	}
	return nil
}

// AfterResponse implements agent.ResponseHook: the model has now seen every summary in its request, so later
// compactions may drop them.
func (m *Manager) AfterResponse(_ context.Context, st *agent.State, _ *llm.Response) error {
	cv := m.convo(st.SessionID)
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if !cv.unseenSum {
		return nil
	}
	for i := range st.Messages {
		if st.Messages[i].Meta[metaUnseen] != "" {
			delete(st.Messages[i].Meta, metaUnseen)
		}
	}
	cv.unseenSum = false
	return nil
}

// OnOverflow implements agent.OverflowHook: the provider said the prompt is too long, so compaction runs
// whatever the estimate says and shrinks the prompt to at most half; the agent then retries once.
func (m *Manager) OnOverflow(ctx context.Context, st *agent.State, _ error) error {
	_, err := m.compact(ctx, st, compactOptions{reason: "overflow", force: true})
	return err
}

// Compact summarises the conversation now (the /compact command); instructions steer what the summary keeps.
// It runs tier 2 whatever the prompt size, then tier 3 if the prompt still exceeds the trigger. With the
// summary tier switched off it clears old tool results instead.
func (m *Manager) Compact(ctx context.Context, st *agent.State, instructions string) (CompactResult, error) {
	return m.compact(ctx, st, compactOptions{reason: "manual", manual: true, instructions: instructions})
}

type compactOptions struct {
	reason       string
	force        bool // overflow: run regardless of the estimate
	manual       bool
	instructions string
}

func (m *Manager) compact(ctx context.Context, st *agent.State, o compactOptions) (CompactResult, error) {
	b := m.budgetFor(st.Model)
	before := m.promptTokens(st)
	r := CompactResult{Reason: o.reason, Before: before, After: before, Window: b.window}
	if !o.force && !o.manual && before <= b.limit {
		return r, nil
	}
	var saved []llm.Message
	if o.manual {
		saved = llm.CloneMessages(st.Messages) // /compact never leaves the context larger
	}
	target := b.limit
	if o.force {
		target = min(b.limit, int(float64(before)*overflowShrinkShare))
	}
	n := before
	summary := !m.cfg.NoSummary
	if m.cfg.Clearing != ClearOff && (!o.manual || !summary) {
		r.Cleared = m.clearOld(st, m.cfg.KeepToolCalls)
		n = m.promptTokens(st)
	}
	done := !o.manual && n < b.clearTo && n <= target
	if summary && !done {
		cnt, p, err := m.summarize(ctx, st, o.instructions, target)
		if err != nil {
			return r, err
		}
		r.Summarized, r.HistoryPath = cnt, p
		n = m.promptTokens(st)
	}
	if n > target {
		dropped, err := m.dropOldest(st, target)
		if err != nil {
			return r, err
		}
		r.Dropped = dropped
		n = m.promptTokens(st)
		if n > target && m.cfg.Clearing != ClearOff {
			// Last resort: even the most recent tool results go (recoverably when configured).
			r.Cleared += m.clearOld(st, 0)
			n = m.promptTokens(st)
		}
	}
	if n > target {
		// New results the model has not seen are never cleared or dropped; when they alone keep the prompt
		// over the target, each is cut to the gate's excerpt of what fits, with the path of the full text.
		r.Fitted = m.fitUnseen(st, target)
	}
	m.ensurePinned(st)
	r.After = m.promptTokens(st)
	if !r.Changed() {
		return r, nil
	}
	if o.manual && r.After >= r.Before {
		st.Messages = saved
		r = CompactResult{Reason: o.reason, Before: before, After: before, Window: b.window}
		r.Line = fmt.Sprintf("nothing to gain: compacting would not make the context smaller than its %s tokens, so it is left as it is", lexical.Thousands(before))
		return r, nil
	}
	r.Line = m.describe(r)
	m.count(func(s *Stats) { s.Compactions++; s.Cleared += r.Cleared; s.Dropped += r.Dropped })
	st.Emit(agent.Event{Kind: agent.EventCompaction, Step: st.Step, Text: r.Line})
	return r, nil
}

// unseenFrom is the index of the first message the model has not been sent yet: the tool results after the
// latest assistant message.
func unseenFrom(ms []llm.Message) int {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == llm.RoleAssistant {
			return i + 1
		}
	}
	return 0
}

// fitUnseen cuts the unseen tool results that do not fit to the relevance gate's excerpt of an equal share of
// the room left, after saving their full text. It returns how many it cut.
func (m *Manager) fitUnseen(st *agent.State, target int) int {
	ms := st.Messages
	from := unseenFrom(ms)
	c := m.counter(st.Model)
	var idx []int
	unseen := 0
	for i := from; i < len(ms); i++ {
		if ms[i].Role == llm.RoleTool && !ms[i].Pinned {
			idx = append(idx, i)
			unseen += tokens.CountMessage(c, ms[i])
		}
	}
	if len(idx) == 0 {
		return 0
	}
	room := target - (m.promptTokens(st) - unseen)
	share := room / len(idx)
	args := map[string]string{}
	if from > 0 {
		for _, tc := range ms[from-1].ToolCalls {
			args[tc.ID] = tc.Arguments
		}
	}
	type cut struct {
		i          int
		full, path string
	}
	var cuts []cut
	for _, i := range idx {
		msg := &ms[i]
		if tokens.CountMessage(c, *msg) <= share {
			continue
		}
		full := msg.Content
		p := msg.Meta[metaPath]
		if p != "" {
			if data, err := m.ws.ReadFile(p); err == nil {
				full = string(data)
			}
		} else {
			var err error
			if p, err = m.offload(msg.ToolCallID, full); err != nil {
				m.log.Warn("contextmgr: could not save a new tool result; keeping it whole", "tool", msg.ToolName, "err", err)
				continue
			}
			setMeta(msg, metaPath, p)
		}
		cuts = append(cuts, cut{i, full, p})
	}
	if len(cuts) == 0 {
		return 0
	}
	// The gate's own note (parts, lines, path) takes about 80 tokens; when the excerpts still overshoot, the
	// budget shrinks by the overshoot until they fit or nothing but the note is left.
	budget := max(share-4-80, 0)
	for range 8 {
		for _, ct := range cuts {
			ms[ct.i].Content = Gate(c, GateInput{Request: intent(st), Arguments: args[ms[ct.i].ToolCallID], Content: ct.full,
				Path: ct.path, Budget: budget, ChunkChars: m.cfg.GateChunkChars})
			m.edited(st, ct.i)
		}
		over := m.promptTokens(st) - target
		if over <= 0 || budget == 0 {
			break
		}
		budget = max(budget-over/len(cuts)-16, 0)
	}
	m.count(func(s *Stats) { s.Gated += len(cuts) })
	return len(cuts)
}

// edited tells the running count that message i was rewritten in place.
func (m *Manager) edited(st *agent.State, i int) {
	cv := m.convo(st.SessionID)
	cv.mu.Lock()
	cv.invalidate(i)
	cv.mu.Unlock()
}

func (m *Manager) describe(r CompactResult) string {
	var parts []string
	if r.Cleared > 0 {
		how := "recoverably, to " + LargeResultsDir + "/"
		if m.cfg.Clearing == ClearUnrecoverable {
			how = "unrecoverably"
		}
		parts = append(parts, fmt.Sprintf("tier 1 cleared %s (%s)", plural(r.Cleared, "old tool result", "old tool results"), how))
	}
	if r.Summarized > 0 {
		s := fmt.Sprintf("tier 2 summarised %s", plural(r.Summarized, "message", "messages"))
		if r.HistoryPath != "" {
			s += " (full text appended to " + r.HistoryPath + ")"
		}
		parts = append(parts, s)
	}
	if r.Dropped > 0 {
		parts = append(parts, fmt.Sprintf("tier 3 dropped %s", plural(r.Dropped, "oldest message", "oldest messages")))
	}
	if r.Fitted > 0 {
		parts = append(parts, fmt.Sprintf("%s cut to the relevance gate's excerpt to fit (full text on disk)", plural(r.Fitted, "new tool result", "new tool results")))
	}
	return fmt.Sprintf("context compacted (%s, %s preset): %s → %s of %s tokens; %s", r.Reason, m.cfg.Preset,
		lexical.Thousands(r.Before), lexical.Thousands(r.After), lexical.Thousands(r.Window), strings.Join(parts, "; "))
}

// keepStart is the index of the first message of the kept window: the newest KeepShare of the unpinned
// messages (at least one), moved back so that it never starts inside a tool call's results.
func (m *Manager) keepStart(ms []llm.Message) int {
	unpinned := 0
	for _, msg := range ms {
		if !msg.Pinned {
			unpinned++
		}
	}
	if unpinned == 0 {
		return len(ms)
	}
	keep := max(1, int(math.Ceil(m.cfg.KeepShare*float64(unpinned))))
	start := len(ms)
	for seen := 0; start > 0 && seen < keep; {
		start--
		if !ms[start].Pinned {
			seen++
		}
	}
	for start > 0 && ms[start].Role == llm.RoleTool {
		start--
	}
	return start
}

// clearOld is tier 1: results of tool calls older than the keep most recent ones are replaced by a marker;
// recoverably, the full text is first written to disk (if it is not there already). Only the content changes,
// so a call and its result are never split.
func (m *Manager) clearOld(st *agent.State, keep int) int {
	keepIDs := map[string]bool{}
	for i := len(st.Messages) - 1; i >= 0 && len(keepIDs) < keep; i-- {
		calls := st.Messages[i].ToolCalls
		for j := len(calls) - 1; j >= 0 && len(keepIDs) < keep; j-- {
			keepIDs[calls[j].ID] = true
		}
	}
	cleared := 0
	// Results the model has not seen yet are never cleared.
	for i := range unseenFrom(st.Messages) {
		msg := &st.Messages[i]
		if msg.Role != llm.RoleTool || msg.Pinned || msg.Meta[metaCleared] == "1" || keepIDs[msg.ToolCallID] ||
			len(msg.Content) < minClearableChars {
			continue
		}
		switch m.cfg.Clearing {
		case ClearUnrecoverable:
			msg.Content = clearedUnrecover
		default:
			p := msg.Meta[metaPath]
			if p == "" {
				var err error
				if p, err = m.offload(msg.ToolCallID, msg.Content); err != nil {
					m.log.Warn("contextmgr: could not save a tool result; not clearing it", "tool", msg.ToolName, "err", err)
					continue
				}
				setMeta(msg, metaPath, p)
			}
			msg.Content = fmt.Sprintf(clearedFmt, p)
		}
		setMeta(msg, metaCleared, "1")
		m.edited(st, i)
		cleared++
	}
	return cleared
}

// truncateOldArgs shortens long string arguments of write_file and edit_file calls older than the kept window:
// the content is in the file the call wrote, so the copy in the history is dead weight. Each message is looked
// at once, when it leaves the kept window.
func (m *Manager) truncateOldArgs(st *agent.State) {
	if m.cfg.ArgTruncateChars < 0 {
		return
	}
	cv := m.convo(st.SessionID)
	cv.mu.Lock()
	defer cv.mu.Unlock()
	m.sync(cv, st)
	start := m.keepStartOf(cv, st.Messages)
	changed := -1
	for i := cv.argsDone; i < start; i++ {
		msg := &st.Messages[i]
		if msg.Role != llm.RoleAssistant || msg.Pinned {
			continue
		}
		for j := range msg.ToolCalls {
			tc := &msg.ToolCalls[j]
			if argTools[tc.Name] {
				if t := TruncateArguments(tc.Arguments, m.cfg.ArgTruncateChars); t != tc.Arguments {
					tc.Arguments = t
					if changed < 0 {
						changed = i
					}
				}
			}
		}
	}
	if changed >= 0 {
		cv.truncate(changed)
	}
	cv.argsDone = max(cv.argsDone, start)
}

// keepStartOf is keepStart from the running count: when every pinned message leads the history (the usual
// case), the kept window is the newest KeepShare of the rest, found without walking the history.
func (m *Manager) keepStartOf(cv *convo, ms []llm.Message) int {
	if cv.pinnedFront < 0 || len(cv.counts) != len(ms) {
		return m.keepStart(ms)
	}
	unpinned := len(ms) - cv.pinnedFront
	if unpinned == 0 {
		return len(ms)
	}
	keep := max(1, int(math.Ceil(m.cfg.KeepShare*float64(unpinned))))
	start := len(ms) - keep
	for start > 0 && ms[start].Role == llm.RoleTool {
		start--
	}
	return start
}

// TruncateArguments replaces every top-level string value longer than limit characters of a JSON object by its
// first 20 characters + "...(argument truncated)". Malformed JSON is returned unchanged.
func TruncateArguments(args string, limit int) string {
	var obj map[string]any
	if err := json.Unmarshal([]byte(args), &obj); err != nil {
		return args
	}
	changed := false
	for k, v := range obj {
		s, ok := v.(string)
		if !ok || utf8.RuneCountInString(s) <= limit {
			continue
		}
		obj[k] = string([]rune(s)[:argTruncatedPrefix]) + argTruncatedSuffix
		changed = true
	}
	if !changed {
		return args
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return args
	}
	return strings.TrimRight(buf.String(), "\n")
}

// historyPath is the session's conversation history file.
func historyPath(session string) string {
	return path.Join(HistoryDir, SafeName(session)+".md")
}

// appendHistory appends messages to the session's history file, never overwriting what earlier compactions
// wrote there.
func (m *Manager) appendHistory(session, title string, ms []llm.Message) (string, error) {
	if m.cfg.NoHistory || len(ms) == 0 {
		return "", nil
	}
	p := historyPath(session)
	var b strings.Builder
	abs, err := m.ws.Resolve(p)
	if err != nil {
		return "", fmt.Errorf("history %s: %w", p, err)
	}
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(&b, "# Conversation history of session %s\n\nMessages removed from the context by compaction, in order.\n", session)
	}
	fmt.Fprintf(&b, "\n## %s — %s\n", title, time.Now().UTC().Format(time.RFC3339))
	for _, msg := range ms {
		b.WriteString("\n")
		b.WriteString(renderMessage(msg, -1))
	}
	if err := m.ws.AppendFile(p, []byte(b.String())); err != nil {
		return "", fmt.Errorf("history %s: %w", p, err)
	}
	return p, nil
}

// renderMessage renders a message for the history file and the summarizer; bodies longer than clip characters
// are clipped (clip < 0: never).
func renderMessage(msg llm.Message, clip int) string {
	var b strings.Builder
	body := msg.Content
	if clip >= 0 && utf8.RuneCountInString(body) > clip {
		body = string([]rune(body)[:clip]) + fmt.Sprintf("\n… [clipped: %s characters in all]", lexical.Thousands(utf8.RuneCountInString(msg.Content)))
	}
	switch {
	case msg.Role == llm.RoleTool:
		fmt.Fprintf(&b, "### tool result: %s (%s)\n", msg.ToolName, msg.ToolCallID)
	case kindOf(msg) == kindSummary:
		b.WriteString("### earlier summary\n")
	default:
		fmt.Fprintf(&b, "### %s\n", msg.Role)
	}
	if body != "" {
		b.WriteString(body)
		b.WriteString("\n")
	}
	for _, tc := range msg.ToolCalls {
		args := tc.Arguments
		if clip >= 0 && utf8.RuneCountInString(args) > clip {
			args = string([]rune(args)[:clip]) + "…"
		}
		fmt.Fprintf(&b, "→ tool call %s (%s): %s\n", tc.Name, tc.ID, args)
	}
	return b.String()
}

// dropOldest is tier 3: whole units (a message, or a tool call with its results) are dropped oldest first until
// the prompt fits; pinned messages, the latest user request and the newest unit stay, and the summary goes
// last. The dropped messages are appended to the history file first.
func (m *Manager) dropOldest(st *agent.State, target int) (int, error) {
	ms := st.Messages
	c := m.counter(st.Model)
	n := m.promptTokens(st)
	units := toolUnits(ms)
	lu := latestUser(ms)
	drop := make([]bool, len(ms))
	dropped := 0
	for pass := 0; pass < 2 && n > target; pass++ {
		for _, u := range units[:max(0, len(units)-1)] {
			if n <= target {
				break
			}
			first := ms[u[0]]
			if first.Pinned || u[0] == lu || drop[u[0]] || (pass == 0) == (kindOf(first) == kindSummary) ||
				first.Meta[metaUnseen] != "" {
				continue // a summary the model has not seen yet stays
			}
			for _, i := range u {
				drop[i] = true
				n -= tokens.CountMessage(c, ms[i])
				dropped++
			}
		}
	}
	if dropped == 0 {
		return 0, nil
	}
	var gone, kept []llm.Message
	for i, msg := range ms {
		if drop[i] {
			gone = append(gone, msg)
		} else {
			kept = append(kept, msg)
		}
	}
	if _, err := m.appendHistory(st.SessionID, "Dropped to fit the window (tier 3)", gone); err != nil {
		m.log.Warn("contextmgr: could not save dropped messages", "err", err)
	}
	st.Messages = kept
	return dropped, nil
}

// toolUnits groups message indexes so that an assistant message with tool calls and the results that follow it
// form one unit.
func toolUnits(ms []llm.Message) [][]int {
	var units [][]int
	for i := 0; i < len(ms); i++ {
		u := []int{i}
		if ms[i].Role == llm.RoleAssistant && len(ms[i].ToolCalls) > 0 {
			for i+1 < len(ms) && ms[i+1].Role == llm.RoleTool {
				i++
				u = append(u, i)
			}
		}
		units = append(units, u)
	}
	return units
}
