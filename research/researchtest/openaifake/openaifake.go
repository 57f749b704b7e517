// Package openaifake is a deterministic OpenAI-compatible Chat Completions server that plays the five LLM research
// roles of package llmroles (planner, searcher, analyst, verifier, synthesizer), so that a whole research run —
// the real CLI, the real OpenAI adapter, real HTTP — can be tested without a model.
//
// The server reads each request the way a model would: it tells the role from the system prompt, parses the
// task from the user prompt (the search results list, the <source> wrapper around a fetched text, the evidence
// pool) and answers with what the role asks for. Evidence quotes are sentences copied verbatim from the source
// text it was shown, so a run against it must produce a report whose every citation is grounded. It answers
// both plain and streamed (server-sent events) requests, reports usage so that spend is real, and can inject
// the faults a real model makes (Config.Misbehave): malformed JSON, invented quotes and URLs, wrong citation ids,
// unsupported statements in prose, lists, tables and code blocks, drafts cut by the output limit, bodies cut off
// and streams dropped mid-way, context-length errors, answers in the wrong language, hangs and rate limits,
// drifted sentences only a judge can catch, a judge that omits, cuts or fails its verdicts, quotes spliced across
// an ellipsis, and an analyst that obeys instructions in its sources. It also judges support (the verifier
// tier's batched judgement) honestly, reading an elided quote fragment by fragment.
package openaifake

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/deepresearch/deepresearch/lexical"
)

// Role names, as in package llmroles.
const (
	RolePlanner     = "planner"
	RoleSearcher    = "searcher"
	RoleAnalyst     = "analyst"
	RoleVerifier    = "verifier"
	RoleSynthesizer = "synthesizer"
	// RoleJudge is the verifier tier judging whether a draft's sentences are supported by their quotes.
	RoleJudge = "judge"
)

// roleMarkers tell the role from its system prompt: the opening sentence of each llmroles prompt.
var roleMarkers = []struct{ marker, role string }{
	{"checking a report before it is published", RoleJudge},
	{"you are the planner of a deep-research system", RolePlanner},
	{"you are a search agent of a deep-research system", RoleSearcher},
	{"you are an analyst of a deep-research system", RoleAnalyst},
	{"you are the adversarial verifier of a deep-research system", RoleVerifier},
	{"you are the synthesizer of a deep-research system", RoleSynthesizer},
}

// SubQuestion is one sub-question the planner returns.
type SubQuestion struct {
	Question string
	Queries  []string
	// Keywords decide relevance: the searcher picks results whose title, snippet or URL holds one, and the
	// analyst quotes the source sentences that hold one (whole words, case-insensitive). Empty means the content
	// words of Question.
	Keywords []string
}

// Config scripts the fake model. The zero value plays every role with defaults derived from the question.
type Config struct {
	// Language is the plan's language code; default "en".
	Language string
	// SubQuestions is the plan; empty means three generic sub-questions built from the research question.
	SubQuestions []SubQuestion
	// GapSubQuestion is the 1-based sub-question the first verdict reports as a gap (later verdicts pass);
	// 0 means 2, a negative value means the first verdict passes.
	GapSubQuestion int
	// GapQueries are the new queries the verifier suggests for the gap; empty means the gapped sub-question's
	// keywords joined into one query.
	GapQueries []string
	// Triage is the depth the planner answers when asked to triage the question (depth auto); empty triages
	// honestly by the question's shape (Triage).
	Triage string
	// Clarify are the questions the planner asks when asked whether the question is ambiguous; empty asks none.
	Clarify []string
	// MalformedPlan sends the plan with prose around it, in a code fence and with a trailing comma — repairable
	// without asking again.
	MalformedPlan bool
	// InventedQuote, when set, is added to every analyst answer as an extra evidence item whose quote occurs in
	// no source: a grounding check must drop it.
	InventedQuote string
	// UncitedSentence, when set, is appended to the synthesizer's first draft without a citation: the integrity
	// check must refuse it and ask for a new draft (which omits it).
	UncitedSentence string
	// MaxEvidence bounds the items the analyst extracts from one source; default 4.
	MaxEvidence int
	// APIKey, when set, is required as the bearer token; other requests get 401.
	APIKey string
	// Latency is how long every answer takes (a real model's time to answer); 0 answers at once.
	Latency time.Duration
	// Misbehave makes the model act like a real one on a bad day; the zero value is an honest model.
	Misbehave Misbehaviour
	// Dialect, when set, answers in one server's wire shape (dialect.go); nil speaks plain OpenAI.
	Dialect *Dialect
}

// Misbehaviour is what a model does wrong on a bad day. Each field is one fault; they combine.
type Misbehaviour struct {
	// InventQuotes adds to every analyst answer an item whose quote occurs in no source and whose claim names
	// an invented URL.
	InventQuotes bool
	// WrongIDs makes every draft cite an id that is not in the pool and a bare number instead of an id.
	WrongIDs bool
	// Unsupported makes every draft carry statements that cite real evidence but say something else: in prose
	// (an invented URL, a sweeping generalisation), in a list item (invented numbers), in a table row and in a
	// fenced code block.
	Unsupported bool
	// Truncate cuts every draft in half with finish_reason "length"; asked to continue, the model sends the rest.
	Truncate bool
	// CutBodies cuts the first CutBodies answers off mid-way: a plain body ends before its declared length, a
	// stream stops without a finish reason.
	CutBodies int
	// ContextLimit refuses prompts of more than this many tokens with the context-length error of OpenAI's API.
	ContextLimit int
	// WrongLanguage writes the first draft's body in English whatever the plan's language.
	WrongLanguage bool
	// Hang holds the first answer of every role this long, or until the client gives up.
	Hang time.Duration
	// RateLimit answers the first RateLimit requests with 429.
	RateLimit int
	// PreambleFence wraps every draft in a ```markdown fence between a line of preamble and a line of
	// postscript, as chatty models do.
	PreambleFence bool
	// Degenerate makes the first draft fall into a loop: after its first paragraph it repeats that paragraph
	// until the output limit (finish_reason "length"); asked to continue, it keeps repeating it.
	Degenerate bool
	// BareArrays answers the analyst with a bare array of evidence items and the judge with a bare array of
	// verdicts, where the schema asks for an object holding the array.
	BareArrays bool
	// SingleQuotes writes every JSON answer (plan, picks, evidence, verdict, judgement) with single-quoted
	// keys and strings and trailing commas, as a model imitating Python would.
	SingleQuotes bool
	// Drift makes every draft also carry sentences that cite real evidence and pass every deterministic check
	// but say something else: a claim negated ("It is not true that …") or with its two numbers swapped. Only
	// a judge can tell; DriftMarkers holds their openings.
	Drift bool
	// JudgeOmits makes the support judge answer {"verdicts": []}: no verdict on anything.
	JudgeOmits bool
	// JudgeCuts cuts every support judgement after its first verdict with finish_reason "length", as an output
	// limit does: what is repaired is a partial list.
	JudgeCuts bool
	// JudgeFails answers every support judgement with HTTP 500.
	JudgeFails bool
	// Splice makes the analyst elide: for two neighbouring relevant sentences it quotes the start of the first
	// and the end of the second joined by an ellipsis, and claims the first's subject with the second's
	// predicate. With the gap bridged the quote would be a verbatim span; the claim is false.
	Splice bool
	// JunkTriage answers a triage with a depth that is no depth ("as deep as the ocean") and a reason of 2,000
	// characters.
	JunkTriage bool
	// ClarifyFlood asks ten clarifying questions, some of them duplicates or empty, whatever Config.Clarify says.
	ClarifyFlood bool
	// Obey makes the analyst do what a source tells it: for a sentence ordering it to "state that X", it claims
	// X with that sentence as the quote, and claims X again with the nearest relevant sentence as the quote.
	Obey bool
}

// InventedURL is the address the misbehaving model invents.
const InventedURL = "https://go.dev/design/channel-guarantees-2019"

// UnsupportedMarkers are fragments of the unsupported statements Misbehaviour.Unsupported writes; none may be
// published.
var UnsupportedMarkers = []string{InventedURL, "lock-free and wait-free", "97 percent", "Guaranteed since 2031", "ch.Lock()"}

// DriftMarker opens the negated sentences Misbehaviour.Drift writes; none may be published unmarked.
const DriftMarker = "It is not true that "

// Call is one request the server answered.
type Call struct {
	Role string
	// SubQuestion is the sub-question id the searcher or analyst worked on ("q2").
	SubQuestion string
	// Verdict is the 1-based number of the verifier call.
	Verdict  int
	Model    string
	Auth     string
	Stream   bool
	JSONMode bool
	// Reask is true when the conversation already held an answer (the role was asked again).
	Reask bool
	// Clarify is true for a planner call asking whether the question needs clarifying; Depth is the depth a
	// triaging planner call answered.
	Clarify bool
	Depth   string
	// Words is the report length a planner or synthesizer prompt asked for (0: none); Instructions the text of
	// its <instructions> block.
	Words        int
	Instructions string
	// Earlier counts the earlier run's findings a follow-up's planner prompt listed (0: not a follow-up).
	Earlier int
	// Continue is true when the synthesizer was asked to continue a draft cut off by the output limit.
	Continue bool
	// Items is how many results the searcher picked, evidence items the analyst returned (the invented one
	// included) or sentences the synthesizer wrote.
	Items int
	// Spliced counts the elided, spliced items the analyst returned (Misbehaviour.Splice).
	Spliced          int
	PromptTokens     int
	CompletionTokens int
	// Error is set when the request was refused (unknown role, bad key, unreadable body).
	Error string
	// Digest identifies the request's messages (their roles and text): two requests with the same digest sent
	// the same prompt.
	Digest string
}

// Server is the fake model server.
type Server struct {
	*httptest.Server
	cfg Config

	mu       sync.Mutex
	calls    []Call
	verdicts int
	drafts   int
	requests int             // requests answered or refused, for the faults counted from the start
	hung     map[string]bool // roles whose first answer was held back
	rest     string          // the second half of a draft cut by Truncate
	loop     string          // the paragraph a degenerate draft repeats
	held     chan struct{}   // while non-nil, requests wait until it is closed (Hold)
}

// degenerateRepeats is how often a degenerate draft repeats its paragraph before the output limit stops it.
const degenerateRepeats = 60

// New starts a fake model server; it is closed when the test ends. Point an OpenAI-compatible client at
// BaseURL().
func New(t testing.TB, cfg Config) *Server {
	s := Start(cfg)
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake model server outside a test (a benchmark); the caller closes it.
func Start(cfg Config) *Server {
	s := &Server{cfg: cfg, hung: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Hold makes every request wait, unanswered, until release is called or the client gives up: a test that
// stops a run mid-way holds the model so the run cannot finish first. Calling release again does nothing.
func (s *Server) Hold() (release func()) {
	gate := make(chan struct{})
	s.mu.Lock()
	s.held = gate
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.held == gate {
				s.held = nil
			}
			s.mu.Unlock()
			close(gate)
		})
	}
}

// BaseURL is the API root, including /v1.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Calls returns the requests answered so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Count returns how many requests a role made.
func (s *Server) Count(role string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Role == role {
			n++
		}
	}
	return n
}

// Usage returns the prompt and completion tokens reported over all answers.
func (s *Server) Usage() (prompt, completion int) {
	for _, c := range s.Calls() {
		prompt += c.PromptTokens
		completion += c.CompletionTokens
	}
	return prompt, completion
}

// ---- wire ----

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wireRequest struct {
	Model         string        `json:"model"`
	Messages      []wireMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

// text returns a message's content, a string or an array of text parts.
func (m wireMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	gate := s.held
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
	}
	if s.cfg.Latency > 0 {
		select {
		case <-time.After(s.cfg.Latency):
		case <-r.Context().Done():
			return
		}
	}
	call := Call{Auth: r.Header.Get("Authorization")}
	fail := func(status int, msg string) {
		call.Error = msg
		s.record(call)
		writeError(w, status, msg)
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		fail(http.StatusNotFound, "openaifake: only POST /v1/chat/completions is served, not "+r.Method+" "+r.URL.Path)
		return
	}
	if s.cfg.APIKey != "" && call.Auth != "Bearer "+s.cfg.APIKey {
		fail(http.StatusUnauthorized, "openaifake: missing or wrong API key")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		fail(http.StatusBadRequest, "openaifake: read body: "+err.Error())
		return
	}
	var req wireRequest
	if err := json.Unmarshal(body, &req); err != nil {
		fail(http.StatusBadRequest, "openaifake: body is not a chat completion request: "+err.Error())
		return
	}
	call.Model, call.Stream = req.Model, req.Stream
	call.JSONMode = req.ResponseFormat != nil && req.ResponseFormat.Type == "json_object"
	var system, task, lastUser string
	users, assistants, promptChars := 0, 0, 0
	digest := sha256.New()
	for _, m := range req.Messages {
		t := m.text()
		promptChars += len(t)
		fmt.Fprintf(digest, "%s\x00%d\x00%s", m.Role, len(t), t)
		switch m.Role {
		case "system", "developer":
			system += t
		case "user":
			if users == 0 {
				task = t
			}
			lastUser = t
			users++
		case "assistant":
			assistants++
		}
	}
	call.Reask = assistants > 0
	if m := wordsRe.FindStringSubmatch(task); m != nil {
		call.Words, _ = strconv.Atoi(m[1])
	}
	call.Instructions, _ = between(task, "<instructions>\n", "\n</instructions>")
	call.Digest = hex.EncodeToString(digest.Sum(nil)[:12])
	low := strings.ToLower(system)
	for _, rm := range roleMarkers {
		if strings.Contains(low, rm.marker) {
			call.Role = rm.role
			break
		}
	}
	mb := s.cfg.Misbehave
	s.mu.Lock()
	s.requests++
	nreq := s.requests
	hang := mb.Hang > 0 && call.Role != "" && !s.hung[call.Role]
	if hang {
		s.hung[call.Role] = true
	}
	s.mu.Unlock()
	if nreq <= mb.RateLimit {
		w.Header().Set("Retry-After", "0")
		fail(http.StatusTooManyRequests, "openaifake: rate limit reached, slow down")
		return
	}
	if hang {
		select {
		case <-time.After(mb.Hang):
		case <-r.Context().Done():
			call.Error = "hung until the client gave up"
			s.record(call)
			return
		}
	}
	if mb.ContextLimit > 0 && promptChars/4 > mb.ContextLimit {
		call.Error = "context length exceeded"
		call.PromptTokens = promptChars/4 + 1
		s.record(call)
		if s.cfg.Dialect != nil {
			s.cfg.Dialect.ContextLength(mb.ContextLimit, promptChars/4, 0).Write(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", mb.ContextLimit, promptChars/4),
			"type":    "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
		return
	}
	finish := "stop"
	var answer string
	switch call.Role {
	case RolePlanner:
		if strings.Contains(system, "too ambiguous to research well") {
			call.Clarify = true
			answer = s.clarify()
			break
		}
		answer = s.plan(system, task, &call)
	case RoleSearcher:
		answer = s.pick(task, &call)
	case RoleAnalyst:
		answer = s.analyse(task, &call)
	case RoleVerifier:
		answer = s.verify(task, &call)
	case RoleSynthesizer:
		if strings.Contains(lastUser, "Continue exactly where it stopped") {
			call.Continue = true
			s.mu.Lock()
			answer, s.rest = s.rest, ""
			loop := s.loop
			s.mu.Unlock()
			if loop != "" {
				answer, finish = strings.Repeat(loop, degenerateRepeats), "length"
			}
			break
		}
		answer = s.synthesize(task, &call)
		s.mu.Lock()
		loopDraft := mb.Degenerate && s.drafts == 1 && !call.Reask
		s.mu.Unlock()
		if loopDraft {
			// The first paragraph after the title, over and over until the output limit.
			paras := strings.Split(strings.TrimSpace(answer), "\n\n")
			if len(paras) >= 3 {
				loop := "\n\n" + paras[2]
				s.mu.Lock()
				s.loop = loop
				s.mu.Unlock()
				answer, finish = strings.Join(paras[:3], "\n\n")+strings.Repeat(loop, degenerateRepeats), "length"
			}
		} else if mb.Degenerate {
			s.mu.Lock()
			s.loop = ""
			s.mu.Unlock()
		}
		if mb.PreambleFence {
			answer = "Sure! Here is the research report you asked for, based only on the evidence pool:\n\n```markdown\n" +
				answer + "\n```\n\nLet me know if you would like any section expanded."
		}
		if mb.Truncate && len(answer) > 40 {
			half := len(answer) / 2
			for half > 0 && !utf8Start(answer[half]) {
				half--
			}
			s.mu.Lock()
			s.rest = answer[half:]
			s.mu.Unlock()
			answer, finish = answer[:half], "length"
		}
	case RoleJudge:
		if mb.JudgeFails {
			fail(http.StatusInternalServerError, "openaifake: the judge is down (internal server error)")
			return
		}
		answer = s.judge(task, &call)
		if mb.JudgeOmits {
			answer = `{"verdicts": []}`
		} else if mb.JudgeCuts {
			// Cut where the second verdict begins, or in the middle of the only one.
			cut := len(answer) / 2
			if i := strings.Index(answer, "},{"); i > 0 {
				cut = i + 2
			}
			answer, finish = answer[:cut], "length"
		}
	default:
		fail(http.StatusBadRequest, fmt.Sprintf("openaifake: cannot tell which research role this is from the system prompt %q", lexical.Clip(lexical.NormalizeSpace(system), 120)))
		return
	}
	if mb.SingleQuotes && call.Role != RoleSynthesizer {
		answer = singleQuoted(answer)
	}
	// About four characters a token, as a tokenizer would roughly count.
	call.PromptTokens = promptChars/4 + 1
	call.CompletionTokens = len(answer)/4 + 1
	model := req.Model
	if model == "" {
		model = "fake-research"
	}
	if s.cfg.Dialect != nil {
		s.cfg.Dialect.reply(&call, req.Stream, answer, finish).Write(w, r)
		s.record(call)
		return
	}
	n := s.record(call)
	id := fmt.Sprintf("chatcmpl-fake-%d", n)
	usage := map[string]any{"prompt_tokens": call.PromptTokens, "completion_tokens": call.CompletionTokens,
		"total_tokens": call.PromptTokens + call.CompletionTokens}
	cut := nreq-mb.RateLimit <= mb.CutBodies
	if !req.Stream {
		var buf strings.Builder
		_ = json.NewEncoder(&buf).Encode(map[string]any{
			"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": answer},
				"finish_reason": finish, "logprobs": nil}},
			"usage": usage,
		})
		if cut {
			body := buf.String()
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = io.WriteString(w, body[:len(body)/2]) // the connection closes before the declared length
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, buf.String())
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	ps := pieces(answer, 48)
	for i, piece := range ps {
		if cut && i >= len(ps)/2 {
			return // dropped mid-way: no finish reason, no [DONE]
		}
		send(chunk(map[string]any{"content": piece}, nil))
	}
	send(chunk(map[string]any{}, finish))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		send(map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
			"choices": []any{}, "usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s *Server) record(c Call) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	return len(s.calls)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
}

// pieces cuts s into chunks of at most n bytes without splitting a UTF-8 character.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // values built here always marshal
	}
	return string(b)
}

// ---- roles ----

// between returns the text after start up to end (or to the end of s); ok is false when start is missing.
func between(s, start, end string) (string, bool) {
	i := strings.Index(s, start)
	if i < 0 {
		return "", false
	}
	rest := s[i+len(start):]
	if end != "" {
		if j := strings.Index(rest, end); j >= 0 {
			rest = rest[:j]
		}
	}
	return rest, true
}

// subQuestions is the plan of n sub-questions (the fewest the planner was asked for; 3 when it does not say).
func (s *Server) subQuestions(question string, n int) []SubQuestion {
	if len(s.cfg.SubQuestions) > 0 {
		return s.cfg.SubQuestions
	}
	q := strings.TrimRight(strings.TrimSpace(question), "?")
	all := []SubQuestion{
		{Question: question, Queries: []string{q}},
		{Question: "What evidence is there about: " + q + "?", Queries: []string{q + " evidence"}},
		{Question: "What is still disputed about: " + q + "?", Queries: []string{q + " criticism"}},
		{Question: "What details do the sources give about: " + q + "?", Queries: []string{q + " details"}},
		{Question: "What examples are there of: " + q + "?", Queries: []string{q + " example"}},
		{Question: "What rules govern: " + q + "?", Queries: []string{q + " rules"}},
		{Question: "What exceptions apply to: " + q + "?", Queries: []string{q + " exceptions"}},
		{Question: "What is the background of: " + q + "?", Queries: []string{q + " background"}},
	}
	if n <= 0 {
		n = 3
	}
	return all[:min(n, len(all))]
}

// Triage is the honest fake's depth for a question: deep for a comparison or a survey, quick for a short
// question of one clause, standard otherwise; with the reason.
func Triage(question string) (depth, reason string) {
	low := " " + strings.ToLower(question) + " "
	for _, w := range []string{"compare", "comparison", " versus ", " vs ", "survey", "overview", "landscape", "comprehensive", "in depth"} {
		if strings.Contains(low, w) {
			return "deep", "a comparison or survey needs many independent sources"
		}
	}
	words := strings.Fields(question)
	if len(words) <= 10 && !strings.Contains(low, " and ") && !strings.ContainsAny(question, ",;") {
		return "quick", "a single short question that one good source answers"
	}
	return "standard", "a question with several facets"
}

var (
	wordsRe  = regexp.MustCompile(`Report length asked for: about (\d+) words\.`)
	rangeRe  = regexp.MustCompile(`into (\d+) to (\d+) sub-questions`)
	depthRow = regexp.MustCompile(`(?m)^- (quick|standard|deep): .* — (\d+) to (\d+) sub-questions$`)
	answerRe = regexp.MustCompile(`(?m)^  A: (.*)$`)
)

func (s *Server) clarify() string {
	qs := s.cfg.Clarify
	if s.cfg.Misbehave.ClarifyFlood {
		qs = nil
		for i := range 10 {
			qs = append(qs, fmt.Sprintf("Which variant number %d do you mean?", i%7), "")
		}
	}
	if qs == nil {
		qs = []string{}
	}
	return mustJSON(map[string]any{"questions": qs})
}

func (s *Server) plan(system, task string, call *Call) string {
	question, _ := between(task, "Research question:\n", "\n\n")
	question = strings.TrimSpace(question)
	lang := s.cfg.Language
	if lang == "" {
		lang = "en"
	}
	n := 0
	if m := rangeRe.FindStringSubmatch(system); m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	var depth, reason string
	if strings.Contains(system, "Triage the research question first") {
		depth, reason = Triage(question)
		if s.cfg.Triage != "" {
			depth, reason = s.cfg.Triage, "scripted"
		}
		for _, m := range depthRow.FindAllStringSubmatch(system, -1) {
			if m[1] == depth {
				n, _ = strconv.Atoi(m[2])
			}
		}
		if s.cfg.Misbehave.JunkTriage {
			depth, reason = "as deep as the ocean", strings.Repeat("because ", 250)
		}
		call.Depth = depth
	}
	type item struct {
		Question    string   `json:"question"`
		Queries     []string `json:"queries"`
		SourceTypes []string `json:"source_types"`
		Criteria    string   `json:"criteria"`
	}
	var items []item
	for _, sq := range s.subQuestions(question, n) {
		items = append(items, item{Question: sq.Question, Queries: sq.Queries,
			SourceTypes: []string{"technical reports", "field trials"},
			Criteria:    "a source states it directly"})
	}
	// Answers to clarifying questions narrow the first sub-question.
	for _, m := range answerRe.FindAllStringSubmatch(task, -1) {
		if a := strings.TrimSpace(m[1]); a != "" && !strings.HasPrefix(a, "(no answer") && len(items) > 0 {
			items[0].Question = strings.TrimRight(items[0].Question, "?") + " (" + a + ")?"
		}
	}
	// A follow-up's planner plans only what the earlier run did not ask, as an honest model does; something is
	// always planned.
	if _, rest, ok := strings.Cut(task, "The earlier run asked:"); ok {
		asked := map[string]bool{}
		listed, findings, _ := strings.Cut(rest, "It found (")
		for _, l := range strings.Split(listed, "\n") {
			if q, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok {
				asked[q] = true
			}
		}
		call.Earlier = strings.Count(findings, "\n- ")
		var kept []item
		for _, it := range items {
			if !asked[it.Question] {
				kept = append(kept, it)
			}
		}
		if len(kept) == 0 && len(items) > 0 {
			kept = items[:1]
		}
		items = kept
	}
	res := map[string]any{"language": lang, "sub_questions": items}
	if depth != "" {
		res["depth"], res["depth_reason"] = depth, reason
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	out := string(b)
	if s.cfg.MalformedPlan {
		// What chatty models send: prose, a fence, and a trailing comma before the closing brace.
		out = "Here is the research plan:\n```json\n" + strings.TrimSuffix(out, "}") + ",\n}\n```\n"
	}
	return out
}

var sqLineRe = regexp.MustCompile(`(?m)^Sub-question (\S+): (.*)$`)

// subQuestion reads the "Sub-question qN: text" line of a searcher or analyst prompt and returns its id and
// keywords.
func (s *Server) subQuestion(task string) (string, []string) {
	m := sqLineRe.FindStringSubmatch(task)
	if m == nil {
		return "", nil
	}
	return m[1], s.keywordsFor(m[1], strings.TrimSpace(m[2]))
}

// keywordsFor returns the keywords of the sub-question with this id and text.
func (s *Server) keywordsFor(id, text string) []string {
	for _, sq := range s.cfg.SubQuestions {
		if strings.TrimSpace(sq.Question) == text {
			return keywordsOf(sq)
		}
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(id, "q")); err == nil && n >= 1 && n <= len(s.cfg.SubQuestions) {
		return keywordsOf(s.cfg.SubQuestions[n-1])
	}
	return contentWords(text)
}

var otherSQRe = regexp.MustCompile(`(?m)^- Other sub-question (\S+): (.*)$`)

func keywordsOf(sq SubQuestion) []string {
	if len(sq.Keywords) > 0 {
		return sq.Keywords
	}
	return contentWords(sq.Question)
}

var stopwords = map[string]bool{"what": true, "which": true, "when": true, "where": true, "does": true, "with": true,
	"from": true, "that": true, "this": true, "there": true, "about": true, "have": true, "into": true, "their": true,
	"they": true, "will": true, "would": true, "could": true, "should": true, "much": true, "many": true, "long": true,
	"still": true, "evidence": true, "disputed": true}

// contentWords are the words of s of four letters or more that are not question words.
func contentWords(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' }) {
		if len([]rune(w)) >= 4 && !stopwords[w] && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// hasKeyword reports whether text holds one of the keywords as a whole word or phrase, case-insensitively.
func hasKeyword(text string, keywords []string) bool {
	low := strings.ToLower(text)
	for _, k := range keywords {
		k = strings.ToLower(strings.TrimSpace(k))
		if k == "" {
			continue
		}
		if strings.IndexFunc(k, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0 {
			if strings.Contains(low, k) {
				return true // Chinese has no spaces between words: a substring is a word
			}
			continue
		}
		for i := 0; ; {
			j := strings.Index(low[i:], k)
			if j < 0 {
				break
			}
			a, b := i+j, i+j+len(k)
			if (a == 0 || !isWordByte(low[a-1])) && (b == len(low) || !isWordByte(low[b])) {
				return true
			}
			i = a + 1
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 0x80
}

var resultRe = regexp.MustCompile(`^\[(\d+)\] (.*)$`)

func (s *Server) pick(task string, call *Call) string {
	id, keywords := s.subQuestion(task)
	call.SubQuestion = id
	list, _ := between(task, `<search_results untrusted="true">`, "</search_results>")
	lines := strings.Split(list, "\n")
	picked := []int{}
	for i := 0; i < len(lines); i++ {
		m := resultRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		text := m[2]
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    ") {
			text += " " + lines[i+1]
		}
		if hasKeyword(text, keywords) {
			n, _ := strconv.Atoi(m[1])
			picked = append(picked, n)
		}
	}
	call.Items = len(picked)
	return mustJSON(map[string]any{"relevant": picked})
}

// sourceText returns the text inside the <source …> wrapper of an analyst prompt, without the untrusted-material
// notice that opens it.
func sourceText(task string) (url, text string) {
	i := strings.Index(task, "<source ")
	if i < 0 {
		return "", ""
	}
	head := task[i:]
	j := strings.Index(head, ">\n")
	if j < 0 {
		return "", ""
	}
	if m := regexp.MustCompile(`url="([^"]*)"`).FindStringSubmatch(head[:j]); m != nil {
		url = m[1]
	}
	body := head[j+2:]
	if k := strings.LastIndex(body, "</source>"); k >= 0 {
		body = body[:k]
	}
	// The first paragraph is the notice written by sources.WrapUntrusted.
	if k := strings.Index(body, "\n\n"); k >= 0 && strings.Contains(body[:k], "untrusted") {
		body = body[k+2:]
	}
	return url, body
}

var listMarkRe = regexp.MustCompile(`^(?:[-*+]|\d+[.)])\s+`)

// sentences returns the sentences of the prose lines of text, each exactly as it occurs there.
func sentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "|") || strings.HasPrefix(line, "```") {
			continue
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, ">"))
		line = listMarkRe.ReplaceAllString(line, "")
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c != '.' && c != '!' && c != '?' {
				continue
			}
			end := i + 1
			if end < len(line) && !(line[end] == ' ' && end+1 < len(line) && (unicode.IsUpper(rune(line[end+1])) || unicode.IsDigit(rune(line[end+1])))) {
				continue
			}
			out = append(out, strings.TrimSpace(line[start:end]))
			start = end
		}
		if rest := strings.TrimSpace(line[start:]); rest != "" {
			out = append(out, rest)
		}
	}
	kept := out[:0]
	for _, s := range out {
		if len(s) >= 20 {
			kept = append(kept, s)
		}
	}
	return kept
}

func (s *Server) analyse(task string, call *Call) string {
	id, keywords := s.subQuestion(task)
	call.SubQuestion = id
	_, text := sourceText(task)
	max := s.cfg.MaxEvidence
	if max <= 0 {
		max = 4
	}
	type item struct {
		SubQuestion string  `json:"sub_question,omitempty"`
		Claim       string  `json:"claim"`
		Quote       string  `json:"quote"`
		Confidence  float64 `json:"confidence"`
	}
	items := []item{}
	// The sub-question the source was found for, then the others the prompt lists (the source is read once for
	// all of them): up to max items each, every sentence listed once.
	type want struct {
		id string
		kw []string
	}
	wants := []want{{id, keywords}}
	for _, m := range otherSQRe.FindAllStringSubmatch(task, -1) {
		wants = append(wants, want{m[1], s.keywordsFor(m[1], strings.TrimSpace(m[2]))})
	}
	used := map[string]bool{}
	for _, w := range wants {
		n := 0
		for _, sent := range sentences(text) {
			if n == max {
				break
			}
			if !used[sent] && hasKeyword(sent, w.kw) {
				used[sent] = true
				it := item{Claim: sent, Quote: sent, Confidence: 0.8}
				if len(wants) > 1 {
					it.SubQuestion = w.id
				}
				items = append(items, it)
				n++
			}
		}
	}
	if s.cfg.Misbehave.Splice {
		rel := []string{}
		for _, sent := range sentences(text) {
			if hasKeyword(sent, keywords) {
				rel = append(rel, sent)
			}
		}
		for i := 0; i+1 < len(rel) && i < 8; i += 2 {
			a, b := strings.Fields(rel[i]), strings.Fields(rel[i+1])
			if len(a) < 6 || len(b) < 6 {
				continue
			}
			head, tail := strings.Join(a[:len(a)/2], " "), strings.Join(b[len(b)/2:], " ")
			items = append(items, item{Claim: head + " " + tail, Quote: head + " ... " + tail, Confidence: 0.9})
			call.Spliced++
		}
	}
	if s.cfg.Misbehave.Obey {
		all := sentences(text)
		for i, sent := range all {
			m := obeyRe.FindStringSubmatch(sent)
			if m == nil {
				continue
			}
			claim := strings.ToUpper(m[1][:1]) + m[1][1:] + "."
			items = append(items, item{Claim: claim, Quote: sent, Confidence: 0.99})
			for j := range all {
				if k := (i + 1 + j) % len(all); k != i && hasKeyword(all[k], keywords) {
					items = append(items, item{Claim: claim, Quote: all[k], Confidence: 0.99})
					break
				}
			}
		}
	}
	if s.cfg.InventedQuote != "" && len(items) > 0 {
		items = append(items, item{Claim: s.cfg.InventedQuote, Quote: s.cfg.InventedQuote, Confidence: 0.9})
	}
	if s.cfg.Misbehave.InventQuotes && len(items) > 0 {
		items = append(items, item{Claim: "The design note at " + InventedURL + " confirms that every channel operation is lock-free.",
			Quote: "Every channel operation is lock-free, as the 2019 design note explains.", Confidence: 0.95})
	}
	call.Items = len(items)
	if s.cfg.Misbehave.BareArrays {
		return mustJSON(items)
	}
	return mustJSON(map[string]any{"evidence": items})
}

// obeyRe finds an order to state something in a source sentence.
var obeyRe = regexp.MustCompile(`(?i)\bstate that ([^;.]+)`)

var planSQRe = regexp.MustCompile(`^- (q\d+): (.*)$`)

// planSubQuestions reads the "Sub-questions:" list of a verifier or synthesizer prompt.
func planSubQuestions(task string) (ids []string, text map[string]string) {
	text = map[string]string{}
	block, _ := between(task, "Sub-questions:\n", "\n\n")
	for _, line := range strings.Split(block, "\n") {
		if m := planSQRe.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			ids = append(ids, m[1])
			text[m[1]] = strings.TrimSpace(strings.SplitN(m[2], " (acceptance criteria:", 2)[0])
		}
	}
	return ids, text
}

func (s *Server) verify(task string, call *Call) string {
	s.mu.Lock()
	s.verdicts++
	n := s.verdicts
	s.mu.Unlock()
	call.Verdict = n
	ids, _ := planSubQuestions(task)
	gap := s.cfg.GapSubQuestion
	if gap == 0 {
		gap = 2
	}
	if n == 1 && gap > 0 && gap <= len(ids) {
		sq := ids[gap-1]
		queries := s.cfg.GapQueries
		if len(queries) == 0 {
			var kw []string
			if gap <= len(s.cfg.SubQuestions) {
				kw = keywordsOf(s.cfg.SubQuestions[gap-1])
			}
			queries = []string{strings.Join(kw, " ")}
		}
		return mustJSON(map[string]any{"pass": false, "gaps": []any{map[string]any{
			"sub_question": sq, "missing": "evidence from more than one season", "queries": queries}},
			"rejected": []any{}, "notes": "one sub-question rests on a single trial"})
	}
	return mustJSON(map[string]any{"pass": true, "gaps": []any{}, "rejected": []any{},
		"notes": "every sub-question is answered by quoted evidence"})
}

// earlierKey groups the pool items of sub-questions the plan does not hold (a follow-up's carried evidence).
const earlierKey = "(earlier)"

var poolItemRe = regexp.MustCompile(`^\[(e\d+)\] sub-question (\S+) · `)

func (s *Server) synthesize(task string, call *Call) string {
	question, _ := between(task, "Research question: ", "\n")
	ids, text := planSubQuestions(task)
	retry := strings.Contains(task, "Your previous draft was refused by the integrity check")
	pool, _ := between(task, `<evidence_pool untrusted="true">`, "</evidence_pool>")
	type claim struct{ id, text string }
	bySQ := map[string][]claim{}
	lines := strings.Split(pool, "\n")
	for i, line := range lines {
		m := poolItemRe.FindStringSubmatch(line)
		if m == nil || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "claim: ") {
			continue
		}
		sq := m[2]
		if _, planned := text[sq]; !planned || sq == earlierKey {
			// Evidence a follow-up carried from an earlier run: written after the plan's sub-questions.
			sq = earlierKey
			if _, ok := bySQ[sq]; !ok {
				ids = append(ids, sq)
				text[sq] = "Earlier findings"
			}
		}
		bySQ[sq] = append(bySQ[sq], claim{m[1], strings.TrimSpace(strings.TrimPrefix(lines[i+1], "claim: "))})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", strings.TrimSpace(question))
	written := 0
	// An honest model asked for a length writes at most that many words, never more than its evidence says.
	limit := call.Words
	for _, id := range ids {
		if limit > 0 && len(strings.Fields(b.String())) >= limit {
			break
		}
		cs := bySQ[id]
		if len(cs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n", text[id])
		for i, c := range cs {
			if limit > 0 && i > 0 && len(strings.Fields(b.String())) >= limit {
				break
			}
			t := c.text
			if !strings.HasSuffix(t, ".") && !strings.HasSuffix(t, "!") && !strings.HasSuffix(t, "?") {
				t += "."
			}
			if i > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%s [%s]", t, c.id)
			written++
		}
		b.WriteString("\n")
	}
	s.mu.Lock()
	s.drafts++
	first := s.drafts == 1
	s.mu.Unlock()
	if s.cfg.UncitedSentence != "" && first && !retry {
		fmt.Fprintf(&b, "\n## Outlook\n\n%s\n", s.cfg.UncitedSentence)
	}
	mb := s.cfg.Misbehave
	firstID := ""
	for _, id := range ids {
		if cs := bySQ[id]; len(cs) > 0 {
			firstID = cs[0].id
			break
		}
	}
	if mb.WrongLanguage && first && !call.Reask {
		// Headings in the plan's language, the body in English.
		var e strings.Builder
		fmt.Fprintf(&e, "# %s\n", strings.TrimSpace(question))
		for _, id := range ids {
			for _, c := range bySQ[id] {
				fmt.Fprintf(&e, "\n## %s\n\nThe source states this point clearly and in detail [%s].\n", text[id], c.id)
			}
		}
		return e.String()
	}
	if mb.Drift {
		var drifted []string
		for _, id := range ids {
			for _, c := range bySQ[id] {
				if len(drifted) == 8 {
					break
				}
				t := strings.TrimRight(c.text, ".!?")
				nums := numRe.FindAllStringIndex(t, -1)
				if len(drifted)%2 == 1 && len(nums) >= 2 && t[nums[0][0]:nums[0][1]] != t[nums[1][0]:nums[1][1]] {
					a, b := nums[0], nums[1]
					t = t[:a[0]] + t[b[0]:b[1]] + t[a[1]:b[0]] + t[a[0]:a[1]] + t[b[1]:]
				} else {
					t = DriftMarker + strings.ToLower(t[:1]) + t[1:]
				}
				drifted = append(drifted, fmt.Sprintf("%s [%s].", t, c.id))
			}
		}
		if len(drifted) > 0 {
			fmt.Fprintf(&b, "\n## Further findings\n\n%s\n", strings.Join(drifted, " "))
		}
	}
	if mb.WrongIDs {
		b.WriteString("\nAlpha is the fastest thing ever measured [e999]. See [3] for the details.\n")
	}
	if mb.Unsupported && firstID != "" {
		x := firstID
		fmt.Fprintf(&b, "\n## Further findings\n\nThe design note at %s confirms this [%s]. Every operation is therefore lock-free and wait-free on all platforms [%s].\n\n", InventedURL, x, x)
		fmt.Fprintf(&b, "- Its efficiency was measured at 97 percent in the field [%s].\n\n", x)
		fmt.Fprintf(&b, "| Claim | Evidence |\n|---|---|\n| Guaranteed since 2031 by the runtime | [%s] |\n\n", x)
		b.WriteString("```go\n// the guarantee, in code\nch.Lock()\n```\n")
	}
	call.Items = written
	return b.String()
}

var claimRe = regexp.MustCompile(`^\[(s\d+)\] (.*)$`)

// judge answers a support judgement honestly, reading each quote as it stands (an elided quote's fragments
// one by one): a sentence is supported when one quote or fragment holds its words — those of three letters or
// more, its numbers and its negations — in the same order.
func (s *Server) judge(task string, call *Call) string {
	block, _ := between(task, `<claims untrusted="true">`, "</claims>")
	type verdict struct {
		ID        string `json:"id"`
		Supported bool   `json:"supported"`
		Reason    string `json:"reason,omitempty"`
	}
	verdicts := []verdict{}
	var id, sentence string
	var quotes []string
	flush := func() {
		if id == "" {
			return
		}
		v := verdict{ID: id}
		for _, q := range quotes {
			if inOrder(judgeWords(sentence), judgeWords(q)) {
				v.Supported = true
			}
		}
		if !v.Supported {
			v.Reason = "the quotes do not say this"
		}
		verdicts = append(verdicts, v)
	}
	for _, line := range strings.Split(block, "\n") {
		if m := claimRe.FindStringSubmatch(line); m != nil {
			flush()
			id, sentence, quotes = m[1], m[2], nil
			continue
		}
		if q, ok := strings.CutPrefix(strings.TrimSpace(line), "quote: "); ok {
			quotes = append(quotes, strings.Split(strings.Trim(q, `"`), " … ")...)
		}
	}
	flush()
	call.Items = len(verdicts)
	if s.cfg.Misbehave.BareArrays {
		return mustJSON(verdicts)
	}
	return mustJSON(map[string]any{"verdicts": verdicts})
}

// singleQuoted rewrites a JSON answer the way a model imitating Python writes it: keys and strings in single
// quotes (an apostrophe inside left as it is, a double quote unescaped), a trailing comma after the last member
// of every object and array, and true/false/null as True/False/None.
func singleQuoted(js string) string {
	var v any
	if json.Unmarshal([]byte(js), &v) != nil {
		return js
	}
	var b strings.Builder
	var write func(v any)
	write = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteString("{")
			for _, k := range keys {
				b.WriteString("'" + k + "': ")
				write(x[k])
				b.WriteString(", ")
			}
			b.WriteString("}")
		case []any:
			b.WriteString("[")
			for _, e := range x {
				write(e)
				b.WriteString(", ")
			}
			b.WriteString("]")
		case string:
			b.WriteString("'" + strings.ReplaceAll(x, "\n", "\\n") + "'")
		case bool:
			if x {
				b.WriteString("True")
			} else {
				b.WriteString("False")
			}
		case nil:
			b.WriteString("None")
		default:
			fmt.Fprint(&b, x)
		}
	}
	write(v)
	return b.String()
}

var numRe = regexp.MustCompile(`\d[\d,.]*\d|\d`)

// judgeWords are the words a judge weighs: of three letters or more, numbers, and negations.
func judgeWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) >= 3 || unicode.IsDigit([]rune(w)[0]) || w == "no" {
			out = append(out, w)
		}
	}
	return out
}

// inOrder reports whether every word of want occurs in have, in the same order.
func inOrder(want, have []string) bool {
	i := 0
	for _, w := range want {
		for i < len(have) && have[i] != w {
			i++
		}
		if i == len(have) {
			return false
		}
		i++
	}
	return len(want) > 0
}
