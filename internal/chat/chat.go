// Package chat is deepresearch's interactive terminal agent: a conversation with a tool-using agent on the shared
// runtime (workspace files, search and fetch, MCP tools, task subagents, context management) plus slash commands
// — /deep-research <question>, /compact [instructions], /context, /cost, /clear, /sessions, /exit. Sessions are
// saved after every turn and can be resumed in a later process.
package chat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/base/redact"
	"github.com/deepresearch/deepresearch/base/syncio"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/research"
)

// ResearchFunc runs the research graph for question, sending progress to onEvent, and returns the report (whose
// Dir is the run folder). from, when set, is the folder of the earlier run of the session this one follows up
// (request.Research.From).
type ResearchFunc func(ctx context.Context, question, from string, onEvent func(research.Event)) (*research.Report, error)

// CompactFunc rewrites the agent's history into a summary (context manager's compaction), steered by the
// user's instructions; it returns a one-line description of what it did.
type CompactFunc func(ctx context.Context, st *agent.State, instructions string) (string, error)

// ContextFunc describes what fills the context window.
type ContextFunc func(st *agent.State) string

// Config configures a chat. Zero fields take defaults where documented.
type Config struct {
	In  io.Reader
	Out io.Writer
	// Agent configures the agent: Model is required; System, Tools and Middleware come from the runtime. Its
	// Bind, when set, is called with the agent once it exists (the runtime keeps its tools in step with MCP
	// servers that change their lists).
	Bind func(*agent.Agent)
	// Observer is chained after the chat's own display; Stream is forced on.
	Agent agent.Config
	// Ledger is the ledger the model (and research roles) record into; it feeds /cost. Nil means a fresh one.
	Ledger *llm.Ledger
	// Sessions stores the conversation. Required.
	Sessions Store
	// Resume names a stored session to continue; empty starts a new one.
	Resume string
	// Workspace is recorded with the session and shown in the banner.
	Workspace string
	// Research runs /deep-research; nil disables the command.
	Research ResearchFunc
	// Compact runs /compact; nil disables the command.
	Compact CompactFunc
	// Context overrides the /context report; nil uses the built-in token breakdown.
	Context ContextFunc
	// Interrupt delivers Ctrl-C: it cancels the turn in progress (the conversation continues).
	Interrupt <-chan struct{}
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NoModel, when Agent.Model is nil, says how to configure a model. The chat then still starts: /deep-research
	// runs (with the engine Research picks, the extractive one when there is no model), and anything that needs
	// the conversation model prints this instead.
	NoModel string
	// HistoryFile keeps what the user typed at a terminal, for Up and Down in this and later sessions (at most
	// HistoryLimit entries, readable by the user only); empty keeps it for this session only.
	HistoryFile string
	// Redact removes secrets from what the history file records; nil removes the shapes of secrets only.
	Redact *redact.Scrubber
}

// Prompt is printed when the chat waits for input.
const Prompt = "› "

// Chat is one interactive session.
type Chat struct {
	cfg  Config
	out  *syncio.Writer
	ag   *agent.Agent
	sess *Session
	led  *llm.Ledger
	// base is how many ledger entries belong to earlier sessions of this process (before /clear).
	base int
	// streamed records whether the current turn already printed answer text as it arrived.
	streamed bool
	// compactions counts the compaction lines printed, so /compact does not print its outcome twice.
	compactions atomic.Int64
	// bare is the conversation state when there is no model (and so no agent).
	bare *agent.State
}

// state is the conversation: the agent's, or the bare one of a chat without a model.
func (c *Chat) state() *agent.State {
	if c.ag == nil {
		return c.bare
	}
	return c.ag.State()
}

func (c *Chat) modelName() string {
	if c.cfg.Agent.Model == nil {
		return ""
	}
	return c.cfg.Agent.Model.Info().Name
}

// Run starts (or resumes) a session and serves commands until /exit, end of input or ctx ends.
func Run(ctx context.Context, cfg Config) error {
	c, err := New(cfg)
	if err != nil {
		return err
	}
	return c.Loop(ctx)
}

// New prepares a chat: it loads the resumed session or creates a new one.
func New(cfg Config) (*Chat, error) {
	if cfg.Agent.Model == nil && cfg.NoModel == "" {
		return nil, errors.New("chat: no model configured")
	}
	if cfg.Sessions.Dir == "" {
		return nil, errors.New("chat: no session folder configured")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Ledger == nil {
		cfg.Ledger = &llm.Ledger{}
	}
	c := &Chat{cfg: cfg, out: syncio.NewWriter(cfg.Out), led: cfg.Ledger}
	if cfg.Resume != "" {
		sess, err := cfg.Sessions.Load(cfg.Resume)
		if err != nil {
			return nil, err
		}
		c.sess = sess
	} else {
		now := cfg.Now()
		c.sess = &Session{ID: newSessionID(now), Created: now, Updated: now, Workspace: cfg.Workspace, Model: c.modelName()}
	}
	if cfg.Agent.Model == nil {
		c.bare = &agent.State{SessionID: c.sess.ID, Messages: llm.CloneMessages(c.sess.Messages)}
		return c, nil
	}
	ac := cfg.Agent
	ac.SessionID = c.sess.ID
	ac.Stream = true
	next := ac.Observer
	ac.Observer = func(e agent.Event) {
		c.observe(e)
		if next != nil {
			next(e)
		}
	}
	ag, err := agent.New(ac)
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	if len(c.sess.Messages) > 0 {
		ag.State().Messages = restoreSystem(c.sess.Messages, ag.State().Messages)
	}
	if cfg.Bind != nil {
		cfg.Bind(ag)
	}
	c.ag = ag
	return c, nil
}

// restoreSystem keeps a resumed history but with today's system prompt, so a resumed session sees the current
// tools and workspace.
func restoreSystem(saved, fresh []llm.Message) []llm.Message {
	out := llm.CloneMessages(saved)
	if len(fresh) > 0 && fresh[0].Role == llm.RoleSystem {
		if len(out) > 0 && out[0].Role == llm.RoleSystem {
			out[0] = fresh[0]
		} else {
			out = append([]llm.Message{fresh[0]}, out...)
		}
	}
	return out
}

// Session returns the session being served.
func (c *Chat) Session() *Session { return c.sess }

// State returns the agent's conversation state (between turns only).
func (c *Chat) State() *agent.State { return c.state() }

func (c *Chat) printf(format string, args ...any) { fmt.Fprintf(c.out, format, args...) }

// Loop reads messages and serves them until /exit or end of input. On a terminal it reads with a line editor
// (history, completion, multi-line input) under a status line; from a pipe, one line per message.
func (c *Chat) Loop(ctx context.Context) error {
	hist, err := loadHistory(c.cfg.HistoryFile, c.cfg.Redact)
	if err != nil {
		c.printf("warning: %v\n", err)
	}
	home, _ := os.UserHomeDir()
	root := c.cfg.Workspace
	if root == "" {
		root = "."
	}
	in := newInput(c.cfg.In, c.cfg.Out, hist, completer{root: root, home: home})
	defer in.close()
	type result struct {
		msg string
		cut bool
		err error
	}
	asks, results := make(chan string), make(chan result)
	go func() {
		for status := range asks {
			m, cut, err := in.read(status)
			select {
			case results <- result{m, cut, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer close(asks)
	c.banner()
	warnedHistory, hintedInterrupt := false, false
	for {
		select {
		case asks <- c.status():
		case <-ctx.Done():
			c.save()
			return ctx.Err()
		}
		var r result
	wait:
		for {
			select {
			case <-ctx.Done():
				c.save()
				return ctx.Err()
			case <-c.cfg.Interrupt:
				c.printf("\n(Ctrl-C cancels a running turn; type /exit or press Ctrl-D to leave)\n%s", Prompt)
			case r = <-results:
				break wait
			}
		}
		switch {
		case errors.Is(r.err, io.EOF):
			c.printf("\n")
			return c.exit()
		case errors.Is(r.err, errInterrupted):
			if !hintedInterrupt {
				c.printf("(Ctrl-C at the prompt drops the line; /exit or Ctrl-D leaves)\n")
				hintedInterrupt = true
			}
			continue
		case r.err != nil:
			c.printf("error: reading input: %v\n", r.err)
			return errors.Join(r.err, c.exit())
		}
		if r.cut {
			// Kept in the history, so Up brings back what the editor held, to shorten or split with \.
			_ = in.record(r.msg)
			c.printf("Not sent: the message was cut (a typed line holds %d characters, a message %d bytes). "+
				"Press Up to edit what was kept, end lines with \\ to go on, or put long text in a file and name it.\n", editorLineLimit, MaxMessage)
			continue
		}
		line := strings.TrimSpace(clean(r.msg))
		if line == "" {
			continue
		}
		if err := c.record(in, clean(r.msg)); err != nil && !warnedHistory {
			c.printf("warning: %v (history is kept for this session only)\n", err)
			warnedHistory = true
		}
		if strings.HasPrefix(line, "/") {
			quit, err := c.safeCommand(ctx, line)
			if err != nil {
				c.printf("error: %v\n", err)
			}
			if quit {
				return c.exit()
			}
			continue
		}
		c.safeTurn(ctx, line)
	}
}

// record keeps a message in the input history, except the commands that end the chat (recalled first next time,
// they would end it by accident).
func (c *Chat) record(in input, msg string) error {
	switch strings.TrimSpace(msg) {
	case "/exit", "/quit":
		return nil
	}
	return in.record(msg)
}

// safeCommand runs a slash command; a panic in it is reported and the session goes on.
func (c *Chat) safeCommand(ctx context.Context, line string) (quit bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			quit, err = false, fmt.Errorf("internal error in %s: %v (the session goes on)", commandName(line), p)
		}
	}()
	return c.command(ctx, line)
}

// safeTurn sends a message to the agent; a panic in it is reported and the session goes on.
func (c *Chat) safeTurn(ctx context.Context, line string) {
	defer func() {
		if p := recover(); p != nil {
			c.printf("\nerror: internal error: %v (the session goes on)\n", p)
		}
	}()
	c.turn(ctx, line)
}

// status is the line shown above the prompt on a terminal: the model, how full its context window is, the
// session's spend and id.
func (c *Chat) status() string {
	if c.ag == nil {
		return fmt.Sprintf("no model · /deep-research works without one · session %s", c.sess.ID)
	}
	used, window := contextUse(c.state())
	s := c.modelName()
	if window > 0 {
		s += fmt.Sprintf(" · context ≈%s of %s (%.0f%%)", shortCount(used), shortCount(window), 100*float64(used)/float64(window))
	} else {
		s += fmt.Sprintf(" · context ≈%s tokens", shortCount(used))
	}
	if sp := c.sessionWithSpend(); sp.CostUSD > 0 {
		s += fmt.Sprintf(" · $%.4f", sp.CostUSD)
	}
	return s + " · session " + c.sess.ID
}

// shortCount writes a token count as 950, 12.3k or 1.05M.
func shortCount(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1000), ".0") + "k"
	}
	return fmt.Sprintf("%.2fM", float64(n)/1e6)
}

func (c *Chat) banner() {
	if len(c.sess.Messages) > 0 {
		users := 0
		for _, m := range c.sess.Messages {
			if m.Role == llm.RoleUser {
				users++
			}
		}
		c.printf("Resumed session %s (%d messages, %d from you). Type /help for commands.\n", c.sess.ID, countMessages(c.sess.Messages), users)
		return
	}
	ws := ""
	if c.cfg.Workspace != "" {
		ws = " in " + c.cfg.Workspace
	}
	if c.ag == nil {
		c.printf("deepresearch chat — session %s%s, no model: /deep-research <question> works (extractive engine, no API key); "+
			"conversation needs a model. %s Type /help for commands.\n", c.sess.ID, ws, c.cfg.NoModel)
		return
	}
	c.printf("deepresearch chat — session %s%s, model %s. Type /help for commands.\n", c.sess.ID, ws, c.modelName())
}

func (c *Chat) exit() error {
	c.save()
	c.printf("Session saved. Resume it with: deepresearch chat --resume %s\n", c.sess.ID)
	return nil
}

// withInterrupt returns a context that Ctrl-C cancels, for one turn.
func (c *Chat) withInterrupt(ctx context.Context) (context.Context, func()) {
	tctx, cancel := context.WithCancel(ctx)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-c.cfg.Interrupt:
			cancel()
		case <-stop:
		case <-tctx.Done():
		}
	}()
	return tctx, func() {
		close(stop)
		wg.Wait()
		cancel()
	}
}

func (c *Chat) turn(ctx context.Context, prompt string) {
	if c.sess.Title == "" {
		c.sess.Title = lexical.Clip(lexical.NormalizeSpace(prompt), 80)
	}
	if c.ag == nil {
		c.printf("%s\n", c.noModel())
		return
	}
	tctx, done := c.withInterrupt(ctx)
	c.streamed = false
	answer, err := c.ag.Run(tctx, prompt)
	interrupted := tctx.Err() != nil && ctx.Err() == nil
	done()
	switch {
	case interrupted:
		c.printf("\n(interrupted)\n")
	case err != nil:
		if c.streamed {
			c.printf("\n")
		}
		c.printf("error: %v\n", err)
	case c.streamed:
		c.printf("\n")
	default:
		c.printf("%s\n", answer)
	}
	c.save()
}

func (c *Chat) observe(e agent.Event) {
	switch e.Kind {
	case agent.EventText:
		c.streamed = true
		c.printf("%s", e.Text)
	case agent.EventToolCall:
		if c.streamed {
			c.printf("\n")
			c.streamed = false
		}
		c.printf("  → %s %s\n", e.Call.Name, lexical.Clip(lexical.NormalizeSpace(e.Call.Arguments), 120))
	case agent.EventToolResult:
		if e.Result.IsError {
			c.printf("  ✗ %s: %s\n", e.Call.Name, lexical.Clip(lexical.NormalizeSpace(firstLine(e.Result.Content)), 200))
		}
	case agent.EventCompaction:
		c.compactions.Add(1)
		c.printf("  ⟲ %s\n", e.Text)
	}
}

func (c *Chat) save() {
	st := c.state()
	c.sess.Messages = llm.CloneMessages(st.Messages)
	c.sess.Updated = c.cfg.Now()
	if err := c.cfg.Sessions.Save(c.sessionWithSpend()); err != nil {
		c.printf("warning: %v\n", err)
	}
}

// sessionWithSpend returns the session with this process's spend added, for saving; the in-memory session keeps
// only earlier processes' spend so nothing is counted twice.
func (c *Chat) sessionWithSpend() *Session {
	cp := *c.sess
	for _, e := range c.entries() {
		cp.Usage = cp.Usage.Add(e.Usage)
		cp.CostUSD += e.CostUSD
		cp.Calls++
	}
	return &cp
}

// entries are this process's ledger entries for the current session.
func (c *Chat) entries() []llm.Entry {
	es := c.led.Entries()
	if c.base > len(es) {
		return nil
	}
	return es[c.base:]
}

const help = `Commands:
  /deep-research <question>  run the full research graph and print the report's path and summary; after an
                             earlier one it follows that run up (reusing its sources); --new starts afresh
  /compact [instructions]    summarise the conversation so far to free context (optionally: what to keep)
  /context                   show what fills the context window
  /cost                      show tokens and money spent
  /clear                     start a fresh conversation (the old one stays saved)
  /sessions                  list saved sessions (resume one with: deepresearch chat --resume <id>)
  /exit                      save and quit (Ctrl-D too)
Anything else is sent to the agent. Ctrl-C cancels a running turn.
`

// commandName is the slash command a line starts with.
func commandName(line string) string {
	if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
		return line[:i]
	}
	return line
}

func (c *Chat) command(ctx context.Context, line string) (quit bool, err error) {
	name := commandName(line)
	arg := strings.TrimSpace(line[len(name):])
	switch name {
	case "/exit", "/quit":
		return true, nil
	case "/help":
		c.printf("%s", help)
		if c.ag == nil {
			c.printf("\nNo model is configured, so only /deep-research and the commands above work. %s\n", c.cfg.NoModel)
		}
	case "/clear":
		c.save()
		old := c.sess.ID
		now := c.cfg.Now()
		c.sess = &Session{ID: newSessionID(now), Created: now, Updated: now, Workspace: c.cfg.Workspace, Model: c.sess.Model}
		st := c.state()
		var kept []llm.Message
		for _, m := range st.Messages {
			if m.Pinned {
				kept = append(kept, m)
			}
		}
		st.Messages = kept
		st.SessionID = c.sess.ID
		c.base = len(c.led.Entries())
		c.printf("Cleared. New session %s (the previous one, %s, stays saved).\n", c.sess.ID, old)
	case "/cost":
		c.cost()
	case "/sessions":
		return false, c.sessions()
	case "/context":
		switch {
		case c.ag == nil:
			c.printf("Context: no model is configured, so there is no context window; the conversation holds %d messages (≈%d tokens). %s\n",
				countMessages(c.state().Messages), tokens.CountMessages(tokens.Approx{}, c.state().Messages), c.noModel())
		case c.cfg.Context != nil:
			c.printf("%s\n", strings.TrimRight(c.cfg.Context(c.state()), "\n"))
		default:
			c.printf("%s", contextReport(c.state()))
		}
	case "/compact":
		if c.ag == nil {
			return false, errors.New("/compact needs a model: " + c.noModel())
		}
		if c.cfg.Compact == nil {
			return false, errors.New("/compact is not available: no context manager is configured")
		}
		before := tokens.CountMessages(tokens.Approx{}, c.state().Messages)
		shown := c.compactions.Load()
		tctx, done := c.withInterrupt(ctx)
		msg, err := c.cfg.Compact(tctx, c.state(), arg)
		done()
		if err != nil {
			return false, fmt.Errorf("compact: %w", err)
		}
		after := tokens.CountMessages(tokens.Approx{}, c.state().Messages)
		switch {
		case c.compactions.Load() != shown:
			// The context manager's own line (with its token figures) is already on screen.
		case msg != "":
			c.printf("%s\n", msg)
		default:
			c.printf("conversation compacted (≈%d → ≈%d tokens).\n", before, after)
		}
		c.save()
	case "/deep-research", "/research":
		if arg == "" || arg == newRunFlag {
			return false, errors.New("usage: /deep-research [--new] <question>")
		}
		if c.cfg.Research == nil {
			return false, errors.New("/deep-research is not available: no research engine is configured")
		}
		c.deepResearch(ctx, arg)
	default:
		name = lexical.Clip(name, 40)
		if near := nearestCommand(name); near != "" {
			return false, fmt.Errorf("unknown command %s — did you mean %s? (type /help)", name, near)
		}
		return false, fmt.Errorf("unknown command %s (type /help)", name)
	}
	return false, nil
}

// sessions lists the saved sessions, most recently updated first, marking the one being served.
func (c *Chat) sessions() error {
	list, err := c.cfg.Sessions.List()
	if err != nil {
		return err
	}
	if len(list) == 0 {
		c.printf("No saved sessions in %s yet (this one, %s, is saved after your first message).\n", c.cfg.Sessions.Dir, c.sess.ID)
		return nil
	}
	c.printf("Saved sessions in %s (most recent first, * is this one):\n", c.cfg.Sessions.Dir)
	current := false
	for _, s := range list {
		mark := " "
		if s.ID == c.sess.ID {
			mark, current = "*", true
		}
		first := firstUserMessage(s)
		if first == "" {
			first = "(no messages yet)"
		} else {
			first = strconv.Quote(lexical.Clip(lexical.NormalizeSpace(first), 60))
		}
		c.printf("%s %-24s  %s  %4d messages  %s\n", mark, s.ID, s.Updated.Local().Format("2006-01-02 15:04"), countMessages(s.Messages), first)
	}
	if !current {
		c.printf("* %-24s  (this session: saved after your first message)\n", c.sess.ID)
	}
	c.printf("Resume one with: deepresearch chat --resume <id>\n")
	return nil
}

// firstUserMessage is what the user first said in a session: the title recorded at the first turn, or else the
// first user message of the history (a session that only ran /deep-research has no title).
func firstUserMessage(s *Session) string {
	if s.Title != "" {
		return s.Title
	}
	for _, m := range s.Messages {
		if m.Role == llm.RoleUser && strings.TrimSpace(m.Content) != "" {
			return m.Content
		}
	}
	return ""
}

// countMessages counts the conversation's messages; the system prompt is the runtime's, not part of it.
func countMessages(ms []llm.Message) int {
	n := 0
	for _, m := range ms {
		if m.Role != llm.RoleSystem {
			n++
		}
	}
	return n
}

func (c *Chat) cost() {
	s := c.sessionWithSpend()
	c.printf("Session %s: %d model calls, %d input tokens (%d cache read, %d cache write), %d output tokens, $%.4f\n",
		s.ID, s.Calls, s.Usage.InputTokens, s.Usage.CacheReadTokens, s.Usage.CacheWriteTokens, s.Usage.OutputTokens, s.CostUSD)
	type agg struct {
		calls int
		u     llm.Usage
		cost  float64
	}
	by := map[string]*agg{}
	for _, e := range c.entries() {
		k := e.Label
		if k == "" {
			k = e.Model
		}
		a := by[k]
		if a == nil {
			a = &agg{}
			by[k] = a
		}
		a.calls++
		a.u = a.u.Add(e.Usage)
		a.cost += e.CostUSD
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a := by[k]
		c.printf("  %-14s %4d calls  %8d in  %7d out  $%.4f\n", k, a.calls, a.u.PromptTokens(), a.u.OutputTokens, a.cost)
	}
}

// modelInfo is the state's model's description; the zero Info without a model.
func modelInfo(st *agent.State) llm.Info {
	if st == nil || st.Model == nil {
		return llm.Info{}
	}
	return st.Model.Info()
}

// contextUse is how many tokens the next request would carry (messages and tool definitions) and the model's
// context window (0 when unknown).
func contextUse(st *agent.State) (used, window int) {
	info := modelInfo(st)
	counter := tokens.ForModel(info.Name)
	used = tokens.CountMessages(counter, st.Messages) + tokens.CountTools(counter, st.Tools)
	return used, info.ContextWindow
}

// contextReport is the built-in /context: tokens by kind of message against the model's window.
func contextReport(st *agent.State) string {
	info := modelInfo(st)
	counter := tokens.ForModel(info.Name)
	var sys, user, asst, tool, n int
	for _, m := range st.Messages {
		t := tokens.CountMessage(counter, m)
		switch m.Role {
		case llm.RoleSystem:
			sys += t
		case llm.RoleUser:
			user += t
		case llm.RoleAssistant:
			asst += t
		case llm.RoleTool:
			tool += t
			n++
		}
	}
	tools := tokens.CountTools(counter, st.Tools)
	total := sys + user + asst + tool + tools
	window := info.ContextWindow
	var b strings.Builder
	fmt.Fprintf(&b, "Context: ≈%d of %d tokens (%.1f%%), %d messages\n", total, window, 100*float64(total)/float64(max(window, 1)), len(st.Messages))
	row := func(name string, t int) {
		fmt.Fprintf(&b, "  %-22s %8d  %5.1f%%\n", name, t, 100*float64(t)/float64(max(window, 1)))
	}
	row("system prompt", sys)
	row(fmt.Sprintf("tool definitions (%d)", len(st.Tools)), tools)
	row("your messages", user)
	row("assistant messages", asst)
	row(fmt.Sprintf("tool results (%d)", n), tool)
	row("free", max(window-total, 0))
	return b.String()
}

// newRunFlag starts /deep-research afresh instead of following up the session's last report.
const newRunFlag = "--new"

// followFrom is the run a /deep-research line follows up — the folder of the session's last report, unless the
// line starts with --new — and the question without the flag.
func (c *Chat) followFrom(arg string) (question, from string) {
	if rest, ok := strings.CutPrefix(arg, newRunFlag+" "); ok {
		return strings.TrimSpace(rest), ""
	}
	if n := len(c.sess.Reports); n > 0 {
		from = filepath.Dir(c.sess.Reports[n-1])
	}
	return arg, from
}

func (c *Chat) deepResearch(ctx context.Context, arg string) {
	tctx, done := c.withInterrupt(ctx)
	defer done()
	question, from := c.followFrom(arg)
	c.printf("Researching: %s\n", question)
	if from != "" {
		c.printf("Following up on %s (its sources and evidence are reused; /deep-research --new <question> starts afresh)\n", from)
	}
	rep, err := c.cfg.Research(tctx, question, from, c.progress)
	if err != nil {
		if tctx.Err() != nil && ctx.Err() == nil {
			c.printf("Research interrupted; the run folder keeps what was done (resume it with `deepresearch resume <run>`).\n")
			return
		}
		c.printf("error: research failed: %v\n", err)
		return
	}
	path := filepath.Join(rep.Dir, research.ReportMarkdownFile)
	sum := Summary(rep.Markdown, 900)
	c.printf("\nReport: %s\n", path)
	c.printf("%d sources read, %d evidence items cited (of %d gathered), %d citations", rep.Stats.SourcesRead, len(rep.CitedEvidence()), len(rep.Evidence), len(rep.Citations))
	if rep.CutShort != "" {
		c.printf(" — cut short: %s", rep.CutShort)
	}
	c.printf("\n\n%s\n", sum)
	c.sess.Reports = append(c.sess.Reports, path)
	// The agent learns about the report so follow-up questions can use it (it can read the file with its tools).
	st := c.state()
	st.Messages = append(st.Messages,
		llm.Message{Role: llm.RoleUser, Content: "/deep-research " + question},
		llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprintf("I ran deep research on %q. The full cited report is at %s (citations and verbatim quotes in %s). Summary:\n\n%s",
			question, path, filepath.Join(rep.Dir, research.ReportJSONFile), sum)})
	c.save()
}

// noModel is what the chat says when something needs the conversation model and there is none: briefly, since
// the banner said how to configure one and /help says it again.
func (c *Chat) noModel() string {
	return "No model is configured, so there is no conversation: /deep-research <question> works without one; /help says how to configure a model."
}

// nearestCommand is the slash command a misspelt one most likely meant, or "".
func nearestCommand(name string) string {
	best, bestD := "", 3
	for _, cmd := range Commands {
		if d := lexical.EditDistance([]rune(name), []rune(cmd)); d < bestD {
			best, bestD = cmd, d
		}
	}
	return best
}

// progress prints the run's milestones, one line each.
func (c *Chat) progress(e research.Event) {
	p := e.Progress
	switch e.Kind {
	case research.EventStageStart:
		c.printf("  ▸ %s (round %d) — %d sources read, %d evidence, %d tokens, $%.4f\n", e.Stage, p.Round, p.SourcesRead, p.Evidence, p.Tokens, p.CostUSD)
	case research.EventPlan:
		if e.Plan != nil {
			for _, sq := range e.Plan.SubQuestions {
				c.printf("    %s: %s\n", sq.ID, sq.Question)
			}
		}
	case research.EventRead:
		c.printf("    read %s (+%d evidence)\n", lexical.Clip(lexical.NormalizeSpace(e.URL), 100), e.Count)
	case research.EventCutShort, research.EventError:
		c.printf("    ! %s %s\n", e.Message, e.Err)
	}
}

// Summary returns the opening prose of a Markdown report — the first section with text, skipping the title and
// the engine banner — cut to about n characters.
func Summary(md string, n int) string {
	var parts []string
	size := 0
	for _, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") && len(parts) > 0 {
			break // the next section starts: the summary is the first one with text
		}
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ">") || strings.HasPrefix(t, "---") {
			continue
		}
		parts = append(parts, t)
		size += len(t)
		if size >= n {
			break
		}
	}
	s := strings.Join(parts, "\n")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
