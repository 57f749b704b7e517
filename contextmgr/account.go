package contextmgr

import (
	"sync"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

// Account is the one measure of a conversation's prompt: the request the next model call sends. Its messages
// are the history as the request carries them (reasoning of earlier assistant turns left out unless
// Config.KeepReasoning), its tools are agent.State.RequestTools — the tools actually sent, deferred schemas
// excluded and tool_search included exactly when lazy schemas show it. The compaction trigger, the compaction
// lines, /context (Report) and the bench all read this one figure.
type Account struct {
	System      int `json:"system"`
	Memory      int `json:"memory"`
	ToolSchemas int `json:"tool_schemas"`
	Messages    int `json:"messages"`
	ToolResults int `json:"tool_results"`
}

// Total is the prompt's size in tokens.
func (a Account) Total() int { return a.System + a.Memory + a.ToolSchemas + a.Messages + a.ToolResults }

// Account measures the request the next model call of st will send.
func (m *Manager) Account(st *agent.State) Account {
	cv := m.convo(st.SessionID)
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return m.accountLocked(cv, st)
}

// Message categories of the account.
const (
	catMessages int8 = iota
	catSystem
	catMemory
	catResults
)

// counted is what the running count remembers of one message.
type counted struct {
	content   string
	calls     []llm.ToolCall // the call headers as counted; arguments rewritten in place are noticed
	nReason   int
	cat       int8
	assistant bool
	user      bool // a real user request: not pinned, not a summary
	pinned    bool
	tokens    int // without reasoning
	reason    int // reasoning tokens
}

func (c *counted) matches(msg *llm.Message) bool {
	if c.content != msg.Content || len(c.calls) != len(msg.ToolCalls) || c.nReason != len(msg.Reasoning) || c.pinned != msg.Pinned {
		return false
	}
	for i := range c.calls {
		if c.calls[i].Arguments != msg.ToolCalls[i].Arguments || c.calls[i].Name != msg.ToolCalls[i].Name {
			return false
		}
	}
	return true
}

// convo is the manager's per-session bookkeeping: a running token count of the history, so that a step costs
// the messages it added rather than the whole history, and what the model has not seen yet.
//
// Messages counted earlier are trusted while the history only grows in place; they are checked again when the
// history shrinks or is replaced by another slice (compaction, a resume, another middleware's rewrite), and
// re-counted from where they differ. The manager's own in-place edits invalidate what they touch.
type convo struct {
	mu     sync.Mutex
	counts []counted
	base   *llm.Message // &Messages[0] when counted
	sums   [4]int       // tokens by category
	reason int          // reasoning tokens of all counted messages

	lastAssistant int // index of the latest assistant message, -1 when none
	lastUser      int // index of the latest real user request, -1 when none
	pinnedFront   int // the leading messages up to here are all the pinned ones (-1: pinned messages elsewhere too)
	reasoned      int // assistant messages carrying reasoning
	memAt, mems   int // index of the latest project-memory message, and how many there are

	argsDone    int  // messages before this index had their write/edit arguments truncated
	pinnedOK    bool // ensurePinned checked the history since it last changed other than by appends
	unseenSum   bool // a summary the model has not been sent yet may be in the history
	toolsKey    *llm.ToolSpec
	toolsLen    int
	toolsTokens int
	toolsModel  tokens.Counter
}

func (m *Manager) convo(session string) *convo {
	if v, ok := m.convos.Load(session); ok {
		return v.(*convo)
	}
	v, _ := m.convos.LoadOrStore(session, &convo{lastAssistant: -1, lastUser: -1, memAt: -1})
	return v.(*convo)
}

// invalidate makes the running count re-check messages from index i on (the manager rewrote them in place).
func (cv *convo) invalidate(i int) {
	if i < len(cv.counts) {
		cv.truncate(i)
	}
	cv.argsDone = min(cv.argsDone, i)
	cv.pinnedOK = false
}

// truncate forgets the counts from index i on.
func (cv *convo) truncate(i int) {
	for _, c := range cv.counts[i:] {
		cv.sums[c.cat] -= c.tokens
		cv.reason -= c.reason
		if c.nReason > 0 && c.assistant {
			cv.reasoned--
		}
	}
	clear(cv.counts[i:])
	cv.counts = cv.counts[:i]
	cv.pinnedOK = false
	cv.recomputeIndexes()
}

func (cv *convo) recomputeIndexes() {
	cv.lastAssistant, cv.lastUser, cv.pinnedFront, cv.memAt, cv.mems = -1, -1, 0, -1, 0
	front := true
	for i, c := range cv.counts {
		cv.note(i, c, &front)
	}
}

// note updates the derived indexes for message i.
func (cv *convo) note(i int, c counted, front *bool) {
	if c.assistant {
		cv.lastAssistant = i
	}
	if c.user {
		cv.lastUser = i
	}
	if c.cat == catMemory {
		cv.memAt, cv.mems = i, cv.mems+1
	}
	switch {
	case c.pinned && *front:
		cv.pinnedFront = i + 1
	case c.pinned:
		cv.pinnedFront = -1
	default:
		*front = false
	}
}

// sync brings the running count up to date with ms and returns the counter used.
func (m *Manager) sync(cv *convo, st *agent.State) tokens.Counter {
	c := m.counter(st.Model)
	if cv.toolsModel != c {
		// Another model (a resumed session on a new model): count everything again with its tokenizer.
		cv.truncate(0)
		cv.toolsKey, cv.toolsModel = nil, c
	}
	ms := st.Messages
	if len(ms) == 0 {
		cv.truncate(0)
		cv.base = nil
		return c
	}
	if &ms[0] != cv.base || len(ms) < len(cv.counts) {
		// Not the slice counted last time: keep the counts of the messages that are unchanged.
		n := min(len(ms), len(cv.counts))
		i := 0
		for i < n && cv.counts[i].matches(&ms[i]) {
			i++
		}
		if i < len(cv.counts) {
			cv.truncate(i)
			cv.argsDone = min(cv.argsDone, i)
			cv.pinnedOK = false
		}
		cv.base = &ms[0]
	}
	front := cv.pinnedFront == len(cv.counts)
	for i := len(cv.counts); i < len(ms); i++ {
		msg := &ms[i]
		e := counted{content: msg.Content, nReason: len(msg.Reasoning), pinned: msg.Pinned,
			assistant: msg.Role == llm.RoleAssistant}
		if len(msg.ToolCalls) > 0 {
			e.calls = append([]llm.ToolCall(nil), msg.ToolCalls...)
		}
		e.user = msg.Role == llm.RoleUser && !msg.Pinned && kindOf(*msg) != kindSummary
		switch {
		case kindOf(*msg) == kindMemory:
			e.cat = catMemory
		case msg.Role == llm.RoleSystem:
			e.cat = catSystem
		case msg.Role == llm.RoleTool:
			e.cat = catResults
		}
		for _, r := range msg.Reasoning {
			e.reason += c.Count(r.Text) + c.Count(r.Redacted)
		}
		if e.reason > 0 {
			noReason := *msg
			noReason.Reasoning = nil
			e.tokens = tokens.CountMessage(c, noReason)
		} else {
			e.tokens = tokens.CountMessage(c, *msg)
		}
		cv.sums[e.cat] += e.tokens
		cv.reason += e.reason
		if e.nReason > 0 && e.assistant {
			cv.reasoned++
		}
		if e.cat == catMemory {
			cv.pinnedOK = false
		}
		cv.counts = append(cv.counts, e)
		cv.note(i, e, &front)
	}
	return c
}

func (m *Manager) accountLocked(cv *convo, st *agent.State) Account {
	c := m.sync(cv, st)
	a := Account{System: cv.sums[catSystem], Memory: cv.sums[catMemory], Messages: cv.sums[catMessages], ToolResults: cv.sums[catResults]}
	// Reasoning: only the latest assistant turn's is sent unless KeepReasoning.
	switch {
	case m.cfg.KeepReasoning:
		a.Messages += cv.reason
	case cv.lastAssistant >= 0:
		a.Messages += cv.counts[cv.lastAssistant].reason
	}
	tools := st.RequestTools
	if tools == nil {
		tools = st.Tools // a state the agent loop has not prepared: everything would be sent
	}
	var key *llm.ToolSpec
	if len(tools) > 0 {
		key = &tools[0]
	}
	if key != cv.toolsKey || len(tools) != cv.toolsLen || key == nil {
		cv.toolsKey, cv.toolsLen, cv.toolsTokens = key, len(tools), tokens.CountTools(c, tools)
	}
	a.ToolSchemas = cv.toolsTokens
	return a
}

// promptTokens is Account(st).Total() for callers holding no lock.
func (m *Manager) promptTokens(st *agent.State) int { return m.Account(st).Total() }
