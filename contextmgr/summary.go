package contextmgr

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

// SummarySections are the headings every summary has, in order (DeepAgents' structure).
var SummarySections = []string{"SESSION INTENT", "SUMMARY", "ARTIFACTS", "NEXT STEPS"}

// SummarizerPrompt is the system prompt of tier-2 summary calls.
const SummarizerPrompt = `You compact the conversation of an AI agent so that it can continue its task with a much shorter context.
Read the transcript and write a summary with exactly these four sections, each heading alone on its line, in this order:

SESSION INTENT
What the user asked for and every constraint or preference they stated.

SUMMARY
What has been done and learned so far: decisions, findings with their exact figures, names and sources, errors and how they were resolved, open questions.

ARTIFACTS
Files written or edited, results saved to disk and their paths, anything the agent must be able to find again.

NEXT STEPS
What remains to be done, in order. Do not claim that unfinished work is finished.

Write None under a heading that has nothing to report. Be specific and keep facts verbatim; do not invent anything.`

// pinnedForSummary introduces the project memory in summary requests.
const pinnedForSummary = "The agent works under this pinned project memory. It stays in the agent's context as it is; the summary must not contradict it and need not repeat it.\n\n"

// summarize is tier 2: the messages before the kept window (except pinned ones and the latest user request) are
// appended to the history file and replaced by one message holding a structured summary and the file's path.
// The summary's length is bounded by a quarter of target, so that it fits beside what stays.
func (m *Manager) summarize(ctx context.Context, st *agent.State, instructions string, target int) (int, string, error) {
	ms := st.Messages
	start := m.keepStart(ms)
	lu := latestUser(ms)
	var old, seen []llm.Message // seen: what the summarizer reads, including the request that stays
	for i := 0; i < start; i++ {
		if !ms[i].Pinned {
			seen = append(seen, ms[i])
			if i != lu {
				old = append(old, ms[i])
			}
		}
	}
	// Only the previous summary left to compact: summarising it again would spend a call and lose detail.
	if len(old) == 0 || (len(old) == 1 && kindOf(old[0]) == kindSummary && instructions == "") {
		return 0, "", nil
	}
	hist, err := m.appendHistory(st.SessionID, fmt.Sprintf("Compacted into a summary (%s)", plural(len(old), "message", "messages")), old)
	if err != nil {
		// The summary still helps; say in the log that the originals are not on disk.
		m.log.Warn("contextmgr: could not append to the history file; summarising anyway", "err", err)
	}
	var users []string
	for _, msg := range old {
		if kindOf(msg) == kindSummary {
			var carried []string
			if json.Unmarshal([]byte(msg.Meta[metaUsers]), &carried) == nil {
				users = append(users, carried...)
			}
		} else if msg.Role == llm.RoleUser {
			users = append(users, msg.Content)
		}
	}
	text, err := m.generateSummary(ctx, st, seen, instructions, max(256, target/4))
	if err != nil {
		if ctx.Err() != nil {
			return 0, "", ctx.Err()
		}
		m.log.Warn("contextmgr: summary call failed; using a placeholder summary", "err", err)
		text = NormalizeSummary("SUMMARY\nThe summary call failed (" + err.Error() + "); read the history file for what happened before.")
	}
	sum := llm.Message{Role: llm.RoleUser, Content: summaryMessage(text, len(old), hist, users)}
	setMeta(&sum, metaKind, kindSummary)
	setMeta(&sum, metaUnseen, "1") // no compaction drops it before the model has seen it once
	cv := m.convo(st.SessionID)
	cv.mu.Lock()
	cv.unseenSum = true
	cv.mu.Unlock()
	if hist != "" {
		setMeta(&sum, metaPath, hist)
	}
	if len(users) > 0 {
		u, _ := json.Marshal(users)
		setMeta(&sum, metaUsers, string(u))
	}
	out := make([]llm.Message, 0, len(ms)-len(old)+1)
	for i := 0; i < start; i++ {
		if ms[i].Pinned {
			out = append(out, ms[i])
		}
	}
	out = append(out, sum)
	if lu >= 0 && lu < start {
		out = append(out, ms[lu]) // the user's request stays verbatim (Claude Code #3841, #11483)
	}
	out = append(out, ms[start:]...)
	st.Messages = out
	return len(old), hist, nil
}

// summaryMessage is the content of the message that replaces the compacted ones.
func summaryMessage(summary string, n int, hist string, users []string) string {
	var b strings.Builder
	if hist != "" {
		fmt.Fprintf(&b, "[Context summary: %s of this conversation were compacted. Their full text is in %s — read it with read_file (offset/limit) or grep it when you need a detail.]\n\n",
			plural(n, "earlier message", "earlier messages"), hist)
	} else {
		fmt.Fprintf(&b, "[Context summary: %s of this conversation were compacted and are no longer available.]\n\n", plural(n, "earlier message", "earlier messages"))
	}
	b.WriteString(summary)
	if len(users) > 0 {
		b.WriteString("\n\nEARLIER USER MESSAGES (verbatim)\n")
		for i, u := range users {
			fmt.Fprintf(&b, "%d. %s\n", i+1, u)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// generateSummary asks the summarizer, with its input trimmed to fit its own window (DeepAgents #5913), for at
// most maxOut tokens. The pinned project memory (AGENTS.md) goes with the request, so that the summary does
// not contradict it. If the provider still finds the input too long, it is halved once more.
func (m *Manager) generateSummary(ctx context.Context, st *agent.State, old []llm.Message, instructions string, maxOut int) (string, error) {
	model := m.cfg.Summarizer
	if model == nil {
		model = st.Model
	}
	if model == nil {
		return "", fmt.Errorf("no model to summarise with")
	}
	b := m.budgetFor(model)
	if m.cfg.Summarizer != nil {
		// The agent's window override does not describe a separate summarizer.
		info := model.Info()
		if info.ContextWindow > 0 {
			b.window = info.ContextWindow
			b.reserve = min(max(info.MaxOutput, 1024), b.window/4)
		}
	}
	c := m.counter(model)
	tail := ""
	if strings.TrimSpace(instructions) != "" {
		tail = "\n\nThe user asked that the summary follow these instructions: " + strings.TrimSpace(instructions)
	}
	maxOut = min(b.reserve, 4096, maxOut)
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: SummarizerPrompt}}
	if m.pinned != "" {
		msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: pinnedForSummary + m.pinned})
	}
	avail := b.window - maxOut - tokens.CountMessages(c, msgs) - c.Count(tail) - 64
	for attempt := 0; ; attempt++ {
		transcript := FitTranscript(c, old, avail)
		req := &llm.Request{
			Messages:  append(slices.Clip(msgs), llm.Message{Role: llm.RoleUser, Content: "Transcript to summarise:\n\n" + transcript + tail}),
			MaxTokens: maxOut,
		}
		resp, err := model.Generate(ctx, req)
		m.count(func(s *Stats) { s.SummaryCalls++ })
		if err != nil {
			if llm.IsContextLength(err) && attempt == 0 {
				avail /= 2
				continue
			}
			return "", fmt.Errorf("summary call: %w", err)
		}
		return NormalizeSummary(resp.Message.Content), nil
	}
}

// FitTranscript renders messages for the summarizer within avail tokens: first tool results and assistant text
// are clipped ever shorter, then the oldest non-user messages are left out, and as a last resort the text is cut.
// User messages are kept whole as long as possible, since they carry the intent. Blocks are counted one by one
// so that fitting a long history stays linear.
func FitTranscript(c tokens.Counter, ms []llm.Message, avail int) string {
	avail = max(avail, 256)
	const note = 40 // tokens reserved for the "left out" note
	render := func(clip int) ([]string, []int, int) {
		blocks := make([]string, len(ms))
		sizes := make([]int, len(ms))
		total := 0
		for i, msg := range ms {
			cl := clip
			if msg.Role == llm.RoleUser {
				cl = -1
			}
			blocks[i] = renderMessage(msg, cl) + "\n"
			sizes[i] = c.Count(blocks[i]) + 1
			total += sizes[i]
		}
		return blocks, sizes, total
	}
	longest := 0
	for _, msg := range ms {
		longest = max(longest, utf8.RuneCountInString(msg.Content))
		for _, tc := range msg.ToolCalls {
			longest = max(longest, utf8.RuneCountInString(tc.Arguments))
		}
	}
	clip := -1
	blocks, sizes, total := render(clip)
	for total > avail-note && (clip < 0 || clip > 200) {
		if clip < 0 {
			clip = longest
		}
		clip /= 2
		blocks, sizes, total = render(clip)
	}
	left := 0
	skip := make([]bool, len(ms))
	for i := range ms {
		if total <= avail-note {
			break
		}
		if ms[i].Role != llm.RoleUser {
			skip[i] = true
			total -= sizes[i]
			left++
		}
	}
	var b strings.Builder
	if left > 0 {
		fmt.Fprintf(&b, "[%s left out of this transcript to fit the summarizer; they are in the history file]\n\n", plural(left, "earlier message was", "earlier messages were"))
	}
	for i, blk := range blocks {
		if !skip[i] {
			b.WriteString(blk)
		}
	}
	text := b.String()
	if c.Count(text) > avail {
		text = prefixTokens(c, text, avail-16) + "\n[transcript cut to fit]"
	}
	return text
}

// NormalizeSummary puts a model's summary into the canonical form: the four sections in order, each present,
// "None" under an empty one. Text before the first heading belongs to SUMMARY.
func NormalizeSummary(text string) string {
	body := map[string][]string{}
	cur := "SUMMARY"
	for _, line := range strings.Split(text, "\n") {
		if h, rest, ok := sectionHeading(line); ok {
			cur = h
			if rest != "" {
				body[cur] = append(body[cur], rest)
			}
			continue
		}
		body[cur] = append(body[cur], line)
	}
	var b strings.Builder
	for i, h := range SummarySections {
		if i > 0 {
			b.WriteString("\n\n")
		}
		content := strings.TrimSpace(strings.Join(body[h], "\n"))
		if content == "" || strings.EqualFold(content, "none") || strings.EqualFold(content, "none.") {
			content = "None"
		}
		b.WriteString(h + "\n" + content)
	}
	return b.String()
}

// sectionHeading recognises "SESSION INTENT", "## Summary", "**Next steps:** text" and the like.
func sectionHeading(line string) (heading, rest string, ok bool) {
	t := strings.TrimSpace(line)
	t = strings.TrimLeft(t, "#* ")
	for _, h := range SummarySections {
		if len(t) < len(h) || !strings.EqualFold(t[:len(h)], h) {
			continue
		}
		after := strings.TrimLeft(t[len(h):], "*")
		switch {
		case strings.TrimSpace(after) == "":
			return h, "", true
		case strings.HasPrefix(after, ":"):
			return h, strings.TrimSpace(strings.TrimLeft(strings.TrimPrefix(after, ":"), "* ")), true
		}
	}
	return "", "", false
}
