package contextmgr

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

// Preview geometry of an evicted result (DeepAgents' figures).
const (
	previewHead      = 5
	previewTail      = 5
	previewLineChars = 1_000
	// userWeight ranks a chunk's match with the overall request below its match with the call's own arguments:
	// the arguments say what this call is looking for, the request only frames the task.
	userWeight = 0.5
	// chunkWeight adds the whole chunk's score to its best sentence's, to break ties between similar sentences.
	chunkWeight = 0.25
)

// WrapTool implements agent.ToolWrapper: it caps, gates or evicts each non-exempt tool result before it enters
// the history.
func (m *Manager) WrapTool(next agent.ToolHandler) agent.ToolHandler {
	return func(ctx context.Context, st *agent.State, call llm.ToolCall) (agent.Result, error) {
		res, err := next(ctx, st, call)
		if err != nil || m.isExempt(call.Name) {
			return res, err
		}
		return m.shapeResult(st, call, res), nil
	}
}

// shapeResult applies, in order: the unrecoverable output cap (claude-code), then either the relevance gate or
// eviction, both of which first save the full text to disk.
func (m *Manager) shapeResult(st *agent.State, call llm.ToolCall, res agent.Result) agent.Result {
	c := m.counter(st.Model)
	n := c.Count(res.Content)
	if m.cfg.OutputCapTokens > 0 && n > m.cfg.OutputCapTokens {
		// Claude Code's cap loses the rest; here the full text is saved first, so that the model is told where
		// it is (the result is seen, as an excerpt with its path).
		note := fmt.Sprintf("\n[output truncated: the result had %s tokens; tool output is capped at %s tokens]", lexical.Thousands(n), lexical.Thousands(m.cfg.OutputCapTokens))
		p, err := m.offload(call.ID, res.Content)
		if err == nil {
			note = fmt.Sprintf("\n[output truncated: the result had %s tokens; tool output is capped at %s tokens. Full result: %s — read it with read_file (offset/limit) or grep.]",
				lexical.Thousands(n), lexical.Thousands(m.cfg.OutputCapTokens), p)
			res.Meta = maps.Clone(res.Meta)
			if res.Meta == nil {
				res.Meta = map[string]string{}
			}
			res.Meta[metaPath] = p
		}
		res.Content = prefixTokens(c, res.Content, m.cfg.OutputCapTokens) + note
		n = c.Count(res.Content)
		m.count(func(s *Stats) { s.Capped++ })
	}
	gate := m.cfg.GateTokens > 0 && n > m.cfg.GateTokens
	evict := m.cfg.EvictTokens > 0 && n > m.cfg.EvictTokens
	if !gate && !evict {
		return res
	}
	p, err := m.offload(call.ID, res.Content)
	if err != nil {
		// Keeping the result whole loses nothing; compaction deals with its size later.
		m.log.Warn("contextmgr: could not save a large tool result; keeping it inline", "tool", call.Name, "err", err)
		return res
	}
	res.Meta = maps.Clone(res.Meta)
	if res.Meta == nil {
		res.Meta = map[string]string{}
	}
	res.Meta[metaPath] = p
	if gate {
		out, matched := gateResult(c, GateInput{Request: intent(st), Arguments: call.Arguments, Content: res.Content, Path: p,
			Budget: m.cfg.GateBudget, ChunkChars: m.cfg.GateChunkChars})
		// With nothing relevant in a result large enough to evict, the head/tail preview orients better than
		// the beginning alone.
		if matched || !evict {
			res.Content = out
			m.count(func(s *Stats) { s.Gated++ })
			return res
		}
	}
	res.Content = Preview(res.Content, p, n)
	m.count(func(s *Stats) { s.Evicted++ })
	return res
}

// prefixTokens returns the longest prefix of s (on a rune boundary) with at most limit tokens.
func prefixTokens(c tokens.Counter, s string, limit int) string {
	runes := []rune(s)
	lo, hi := 0, len(runes)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if c.Count(string(runes[:mid])) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return string(runes[:lo])
}

// Preview is what stays in context of an evicted result: where the full text is and how to read it, then the
// first 5 and last 5 lines numbered like read_file, each clipped at 1,000 characters, with
// "... [N lines truncated] ..." between.
func Preview(content, path string, toks int) string {
	lines := splitLines(content)
	var b strings.Builder
	fmt.Fprintf(&b, "Tool result too large (%s tokens, %s): the full text is saved at %s. Read it with read_file using offset and limit (e.g. offset=1, limit=200), or search it with grep. First and last lines:\n",
		lexical.Thousands(toks), plural(len(lines), "line", "lines"), path)
	writeLine := func(i int) {
		line := lines[i]
		if n := utf8.RuneCountInString(line); n > previewLineChars {
			line = string([]rune(line)[:previewLineChars]) + fmt.Sprintf("… [line clipped: %s characters]", lexical.Thousands(n))
		}
		fmt.Fprintf(&b, "%6d\t%s\n", i+1, line)
	}
	if len(lines) <= previewHead+previewTail {
		for i := range lines {
			writeLine(i)
		}
		return b.String()
	}
	for i := range previewHead {
		writeLine(i)
	}
	fmt.Fprintf(&b, "... [%d lines truncated] ...\n", len(lines)-previewHead-previewTail)
	for i := len(lines) - previewTail; i < len(lines); i++ {
		writeLine(i)
	}
	return b.String()
}

func splitLines(s string) []string {
	lines := strings.Split(s, "\n")
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// GateInput is one tool result to pass through the relevance gate.
type GateInput struct {
	Request    string // the agent's latest user request
	Arguments  string // the tool call's JSON arguments
	Content    string // the full result
	Path       string // where the full result is saved
	Budget     int    // tokens of chunks kept inline
	ChunkChars int
}

// Gate keeps the chunks of a result most relevant to the agent's intent — BM25 against the call's arguments and
// (at half weight) the latest user request, no model call — up to the budget, in their original order with
// "[…]" between, followed by the path of the full result. When nothing matches, the beginning is kept.
func Gate(c tokens.Counter, in GateInput) string {
	out, _ := gateResult(c, in)
	return out
}

// gateResult is Gate, also reporting whether any chunk matched the intent.
func gateResult(c tokens.Counter, in GateInput) (string, bool) {
	chunks := lexical.Chunks(in.Content, in.ChunkChars)
	argQ := lexical.Tokenize(argumentText(in.Arguments))
	userQ := lexical.Tokenize(in.Request)
	scores := passageScores(chunks, argQ, userQ)
	type scored struct {
		i int
		s float64
	}
	var order []scored
	for i, s := range scores {
		if s > 0 {
			order = append(order, scored{i, s})
		}
	}
	matched := len(order) > 0
	if matched {
		sort.SliceStable(order, func(a, b int) bool { return order[a].s > order[b].s })
	} else {
		for i := range chunks {
			order = append(order, scored{i, 0})
		}
	}
	var picked []int
	used := 0
	for _, o := range order {
		t := c.Count(chunks[o.i].Text)
		if used+t > in.Budget {
			if !matched {
				break // the beginning, contiguously
			}
			continue
		}
		picked = append(picked, o.i)
		used += t
	}
	sort.Ints(picked)
	// Contiguous picked chunks form one group: their text is contiguous in the original.
	var groups, ranges []string
	for k, i := range picked {
		ch := chunks[i]
		if k > 0 && picked[k-1] == i-1 {
			groups[len(groups)-1] += ch.Text
			last := ranges[len(ranges)-1]
			ranges[len(ranges)-1] = last[:strings.IndexByte(last, '-')+1] + fmt.Sprint(ch.LastLine)
			continue
		}
		groups = append(groups, ch.Text)
		ranges = append(ranges, fmt.Sprintf("%d-%d", ch.FirstLine, ch.LastLine))
	}
	for g := range groups {
		groups[g] = strings.Trim(groups[g], "\n")
	}
	out := strings.Join(groups, "\n[…]\n")
	total := len(splitLines(in.Content))
	how := "chosen by relevance to the request and this call's arguments"
	if !matched {
		how = "nothing matched the request, so the beginning is shown"
	}
	if len(picked) == 0 {
		return fmt.Sprintf("[Relevance gate: no part of this result fits the inline budget. Full result (%s lines): %s — read it with read_file (offset/limit) or grep.]", lexical.Thousands(total), in.Path), matched
	}
	return out + fmt.Sprintf("\n[Relevance gate: showing %d of %d parts (lines %s of %s; %s tokens), %s. Full result: %s — read it with read_file (offset/limit) or grep for anything not shown.]",
		len(picked), len(chunks), strings.Join(ranges, ", "), lexical.Thousands(total), lexical.Thousands(used), how, in.Path), matched
}

// passageScores rates each chunk by its best sentence plus, at a quarter weight, the chunk as a whole. Scoring
// sentences keeps proximity: a sentence naming both the thing asked about and the property asked for beats a
// chunk that mentions each somewhere (max-passage scoring). Scores combine the call's arguments and, at
// userWeight, the latest user request.
func passageScores(chunks []lexical.Chunk, argQ, userQ []string) []float64 {
	var sentDocs [][]string
	var owner []int
	chunkDocs := make([][]string, len(chunks))
	for i, ch := range chunks {
		chunkDocs[i] = lexical.Tokenize(ch.Text)
		for _, sp := range lexical.Sentences(ch.Text) {
			sentDocs = append(sentDocs, lexical.Tokenize(sp.Text))
			owner = append(owner, i)
		}
	}
	whole := lexical.NewBM25(chunkDocs)
	sents := lexical.NewBM25(sentDocs)
	score := func(bm *lexical.BM25, i int) float64 {
		return bm.Score(argQ, i) + userWeight*bm.Score(userQ, i)
	}
	out := make([]float64, len(chunks))
	for j := range sentDocs {
		out[owner[j]] = max(out[owner[j]], score(sents, j))
	}
	for i := range chunks {
		out[i] += chunkWeight * score(whole, i)
	}
	return out
}

// argumentText pulls the string and number values out of a call's JSON arguments, so that keys like "query" do
// not count as intent.
func argumentText(args string) string {
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		return args
	}
	var parts []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			parts = append(parts, x)
		case float64:
			parts = append(parts, fmt.Sprint(x))
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return strings.Join(parts, " ")
}
