package webui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/deepresearch/deepresearch/internal/mcpserver"
	"github.com/deepresearch/deepresearch/research"
)

// The OpenAI-compatible API: chat UIs (Open WebUI, LibreChat, Cherry Studio, LobeChat) and OpenAI SDKs use
// deepresearch as a model. A chat completion runs one research run on the last user message, over the sources
// the server was started with; while it runs, its progress is streamed as reasoning, and the answer is the report
// with its sources. The runs are the viewer's runs: they count against its cap, appear in its list and keep
// their folders.

// ModelDefault is the model name that runs at the configured depth; ModelDefault + "-" + a depth of research's
// depth table (deepresearch-quick, …) runs at that depth.
const ModelDefault = "deepresearch"

// modelName is a model name the API serves and the depth it runs at ("": the configured one).
type modelName struct{ ID, Depth string }

// modelNames lists the model names the API serves: ModelDefault, then one for each row of research's depth
// table, quick to deep.
func modelNames() []modelName {
	out := []modelName{{ModelDefault, ""}}
	for _, d := range research.Depths() {
		out = append(out, modelName{ModelDefault + "-" + d.Name, d.Name})
	}
	return out
}

// ModelNames lists the model names the API serves: ModelDefault, then one a depth, quick to deep.
func ModelNames() []string {
	var ids []string
	for _, m := range modelNames() {
		ids = append(ids, m.ID)
	}
	return ids
}

// Reasoning formats: how progress reaches the client.
const (
	// ReasoningContent streams progress as delta.reasoning_content (DeepSeek's field, which Open WebUI, LibreChat,
	// Cherry Studio and LobeChat show as the model's thinking). The default.
	ReasoningContent = "reasoning_content"
	// ReasoningThink streams progress inside <think>…</think> at the start of the content, for clients that read
	// only the content and fold think tags.
	ReasoningThink = "think"
	// ReasoningNone sends no progress, only the answer.
	ReasoningNone = "none"
)

// API bounds.
const (
	DefaultAPIMaxBody     = 4 << 20
	DefaultAPIMaxMessages = 512
	// apiKeepAlive is how often a stream with nothing new sends an SSE comment, so proxies keep it open.
	apiKeepAlive = 15 * time.Second
)

// APIStartFunc runs one chat completion's research: req as the viewer's StartFunc gets it, depth as the model name
// or the request asked ("" or a depth of research's depth table). The command line adds the server's sources.
type APIStartFunc func(ctx context.Context, req RunRequest, depth string) (*research.Report, error)

// APIConfig turns on the OpenAI-compatible API. Zero fields take defaults.
type APIConfig struct {
	// Start runs research for a completion. Required.
	Start APIStartFunc
	// MaxBody bounds a request body in bytes; zero means DefaultAPIMaxBody.
	MaxBody int64
	// MaxMessages bounds the messages of one request; zero means DefaultAPIMaxMessages.
	MaxMessages int
	// Now is the clock for the "created" fields; nil means time.Now.
	Now func() time.Time
}

// apiError is OpenAI's error body.
type apiError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func writeAPIError(w http.ResponseWriter, status int, typ, code, param, msg string) {
	var e apiError
	e.Error.Message, e.Error.Type = msg, typ
	if code != "" {
		e.Error.Code = &code
	}
	if param != "" {
		e.Error.Param = &param
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(e)
}

func (s *Server) apiConfig() APIConfig {
	c := *s.cfg.API
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultAPIMaxBody
	}
	if c.MaxMessages <= 0 {
		c.MaxMessages = DefaultAPIMaxMessages
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// apiHandler serves /v1/ with the viewer's access rules — the token when one is set (as a bearer token), else a
// loopback Host, and the cross-origin check on posts — answering refusals in OpenAI's error format.
func (s *Server) apiHandler() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /v1/models", s.handleModels)
	m.HandleFunc("GET /v1/models/{id}", s.handleModel)
	m.HandleFunc("POST /v1/chat/completions", s.handleCompletions)
	m.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeAPIError(w, http.StatusNotFound, "invalid_request_error", "unknown_url",
			"", fmt.Sprintf("%s %s is not served: this API has GET /v1/models and POST /v1/chat/completions", r.Method, r.URL.Path))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if s.cfg.Token != "" {
			if !s.requestHasToken(r) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="deepresearch"`)
				writeAPIError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "",
					"a valid API key is required: send the server's access token (--token-file, DEEPRESEARCH_TOKEN or --token) as the API key, Authorization: Bearer <token>")
				return
			}
		} else if host := hostOnly(r.Host); !isLoopbackHost(host) {
			writeAPIError(w, http.StatusForbidden, "invalid_request_error", "", "",
				"this server answers only on a loopback address; start it with an access token to serve other hosts")
			return
		}
		if err := s.csrf.Check(r); err != nil {
			writeAPIError(w, http.StatusForbidden, "invalid_request_error", "", "", "cross-origin request refused")
			return
		}
		m.ServeHTTP(w, r)
	})
}

type apiModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (s *Server) apiModels() []apiModel {
	created := s.apiConfig().Now().Unix()
	names := modelNames()
	out := make([]apiModel, len(names))
	for i, m := range names {
		out[i] = apiModel{ID: m.ID, Object: "model", Created: created, OwnedBy: "deepresearch"}
	}
	return out
}

func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": s.apiModels()})
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	for _, m := range s.apiModels() {
		if m.ID == r.PathValue("id") {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(m)
			return
		}
	}
	writeAPIError(w, http.StatusNotFound, "invalid_request_error", "model_not_found", "model", unknownModel(r.PathValue("id")))
}

func unknownModel(name string) string {
	return fmt.Sprintf("the model %q does not exist; this server offers %s", clipRunes(name, 80), strings.Join(ModelNames(), ", "))
}

func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// completionRequest is the part of OpenAI's chat completion request the API reads; other fields (temperature,
// max_tokens, user, …) mean nothing to a research run and are ignored.
type completionRequest struct {
	Model         string       `json:"model"`
	Messages      []apiMessage `json:"messages"`
	Stream        bool         `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N              *int            `json:"n"`
	Tools          json.RawMessage `json:"tools"`
	Functions      json.RawMessage `json:"functions"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
	FunctionCall   json.RawMessage `json:"function_call"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	// Depth (an extension) overrides the model name's depth: quick, standard or deep.
	Depth string `json:"depth"`
	// ReasoningFormat (an extension) chooses how progress is sent: reasoning_content (default), think or none.
	ReasoningFormat string `json:"reasoning_format"`
	// Length (an extension) asks for the report's length: brief, standard, long or a word count.
	Length string `json:"length"`
	// Instructions (an extension) steer the run (audience, focus, what to leave out), after the text of the
	// request's system and developer messages, which are read as instructions too.
	Instructions string `json:"instructions"`
}

type apiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text is a message's text: the string content, or the text parts of an array of parts (images and other parts
// are not read).
func (m apiMessage) text() (string, error) {
	c := bytes.TrimSpace(m.Content)
	if len(c) == 0 || string(c) == "null" {
		return "", nil
	}
	var s string
	if c[0] == '"' {
		if err := json.Unmarshal(c, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(c, &parts); err != nil {
		return "", errors.New("content must be a string or an array of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// present reports whether an optional JSON field was given with a value that asks for something.
func present(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	return t != "" && t != "null" && t != "[]" && t != `"none"` && t != `"auto"`
}

// parseCompletion reads and checks a request; a refusal comes with its HTTP status and OpenAI error fields.
func (s *Server) parseCompletion(w http.ResponseWriter, r *http.Request, cfg APIConfig) (req completionRequest, question, depth string, fail func()) {
	refuse := func(status int, code, param, msg string) func() {
		typ := "invalid_request_error"
		return func() { writeAPIError(w, status, typ, code, param, msg) }
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, cfg.MaxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return req, "", "", refuse(http.StatusRequestEntityTooLarge, "request_too_large", "", fmt.Sprintf("the request body is larger than %d bytes", cfg.MaxBody))
	case err != nil:
		return req, "", "", refuse(http.StatusBadRequest, "", "", "reading the request: "+err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return req, "", "", refuse(http.StatusBadRequest, "invalid_json", "", "the body is not a chat completion request: "+err.Error())
	}
	if dec.More() {
		return req, "", "", refuse(http.StatusBadRequest, "invalid_json", "", "the body holds more than one JSON value")
	}
	depth, ok := "", false
	for _, m := range modelNames() {
		if m.ID == req.Model {
			depth, ok = m.Depth, true
		}
	}
	switch {
	case req.Model == "":
		return req, "", "", refuse(http.StatusBadRequest, "missing_model", "model", "model is required: "+ModelDefault+" or a depth variant")
	case !ok:
		return req, "", "", refuse(http.StatusNotFound, "model_not_found", "model", unknownModel(req.Model))
	case req.N != nil && *req.N != 1:
		return req, "", "", refuse(http.StatusBadRequest, "unsupported_parameter", "n", fmt.Sprintf("n=%d: a research run gives one answer; ask for n=1", *req.N))
	case present(req.Tools) || present(req.Functions) || present(req.ToolChoice) || present(req.FunctionCall):
		return req, "", "", refuse(http.StatusBadRequest, "unsupported_parameter", "tools",
			"tools and functions are not supported: deepresearch answers with a cited research report, never with a tool call")
	case req.ResponseFormat != nil && req.ResponseFormat.Type != "" && req.ResponseFormat.Type != "text":
		return req, "", "", refuse(http.StatusBadRequest, "unsupported_parameter", "response_format",
			fmt.Sprintf("response_format %q is not supported: the answer is a Markdown report", clipRunes(req.ResponseFormat.Type, 40)))
	case len(req.Messages) == 0:
		return req, "", "", refuse(http.StatusBadRequest, "", "messages", "messages is empty: send the question as a user message")
	case len(req.Messages) > cfg.MaxMessages:
		return req, "", "", refuse(http.StatusBadRequest, "", "messages", fmt.Sprintf("%d messages; the limit is %d", len(req.Messages), cfg.MaxMessages))
	}
	if req.Depth != "" {
		if _, ok := research.DepthOf(req.Depth); !ok {
			var names []string
			for _, d := range research.Depths() {
				names = append(names, d.Name)
			}
			return req, "", "", refuse(http.StatusBadRequest, "", "depth", fmt.Sprintf("depth %q: use %s", clipRunes(req.Depth, 40), strings.Join(names, ", ")))
		}
		depth = req.Depth
	}
	switch req.ReasoningFormat {
	case "", ReasoningContent, ReasoningThink, ReasoningNone:
	default:
		return req, "", "", refuse(http.StatusBadRequest, "", "reasoning_format",
			fmt.Sprintf("reasoning_format %q: use reasoning_content, think or none", clipRunes(req.ReasoningFormat, 40)))
	}
	for i := len(req.Messages) - 1; i >= 0 && question == ""; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		t, err := m.text()
		if err != nil {
			return req, "", "", refuse(http.StatusBadRequest, "", fmt.Sprintf("messages[%d].content", i), err.Error())
		}
		question = strings.TrimSpace(t)
	}
	if question == "" {
		return req, "", "", refuse(http.StatusBadRequest, "", "messages", "no user message with text: the last user message is the research question")
	}
	if err := research.CheckQuestion(question); err != nil {
		return req, "", "", refuse(http.StatusBadRequest, "", "messages", err.Error())
	}
	var instr []string
	for i, m := range req.Messages {
		if m.Role != "system" && m.Role != "developer" {
			continue
		}
		t, err := m.text()
		if err != nil {
			return req, "", "", refuse(http.StatusBadRequest, "", fmt.Sprintf("messages[%d].content", i), err.Error())
		}
		if t = strings.TrimSpace(t); t != "" {
			instr = append(instr, t)
		}
	}
	if t := strings.TrimSpace(req.Instructions); t != "" {
		instr = append(instr, t)
	}
	req.Instructions = strings.Join(instr, "\n")
	if err := research.CheckInstructions(req.Instructions); err != nil {
		return req, "", "", refuse(http.StatusBadRequest, "", "instructions", err.Error())
	}
	if err := research.CheckLength(req.Length); err != nil {
		return req, "", "", refuse(http.StatusBadRequest, "", "length", err.Error())
	}
	return req, question, depth, nil
}

func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	cfg := s.apiConfig()
	req, question, depth, fail := s.parseCompletion(w, r, cfg)
	if fail != nil {
		fail()
		return
	}
	start := func(ctx context.Context, rr RunRequest) (*research.Report, error) { return cfg.Start(ctx, rr, depth) }
	lr, err := s.launch(RunParams{Question: question, Length: req.Length, Instructions: req.Instructions}, start)
	if err != nil {
		if errors.Is(err, ErrTooManyRuns) {
			w.Header().Set("Retry-After", "30")
			writeAPIError(w, http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded", "", err.Error())
			return
		}
		writeAPIError(w, http.StatusServiceUnavailable, "server_error", "", "", err.Error())
		return
	}
	c := &completion{s: s, w: w, r: r, lr: lr, req: req, id: "chatcmpl-" + lr.id, created: cfg.Now().Unix(), format: req.ReasoningFormat}
	if c.format == "" {
		c.format = ReasoningContent
	}
	if req.Stream {
		c.stream()
	} else {
		c.complete()
	}
}

// completion is one chat completion being answered.
type completion struct {
	s       *Server
	w       http.ResponseWriter
	r       *http.Request
	lr      *liveRun
	req     completionRequest
	id      string
	created int64
	format  string
}

// follow calls each for every event of the run as it comes, until the run ends (true) or the client goes away
// (false: the run is stopped). tick is called when nothing happened for apiKeepAlive.
func (c *completion) follow(each func(research.Event), tick func()) bool {
	wake, unsub := c.lr.subscribe()
	defer unsub()
	t := time.NewTicker(apiKeepAlive)
	defer t.Stop()
	n := 0
	for {
		evs, done, _ := c.lr.since(n)
		n += len(evs)
		for _, e := range evs {
			each(e)
		}
		if done {
			return true
		}
		select {
		case <-wake:
		case <-t.C:
			if tick != nil {
				tick()
			}
		case <-c.r.Context().Done():
			c.lr.cancel() // the client went away: the run stops (its folder stays resumable)
			return false
		}
	}
}

// progressLine is what a reasoning panel shows for an event; "" for events too fine-grained to show (each
// evidence item, spend, retries).
func progressLine(e research.Event) string {
	switch e.Kind {
	case research.EventEvidence, research.EventSpend, research.EventRetry, research.EventStageDone, research.EventUngrounded,
		research.EventInstruction, research.EventRunDone, research.EventRunStopped, research.EventRunFailed:
		return ""
	}
	return mcpserver.Describe(e)
}

// result is the run's outcome once follow returned true.
func (c *completion) result() (*research.Report, error, bool) {
	c.lr.mu.Lock()
	defer c.lr.mu.Unlock()
	return c.lr.report, c.lr.err, c.lr.stopped
}

// answer is the completion's content: the report with its sources, and where the viewer shows it with the
// quotes.
func (c *completion) answer(rep *research.Report) string {
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	md := strings.TrimRight(rep.Markdown, "\n")
	return fmt.Sprintf("%s\n\n---\nRun %s. Every citation's quote, highlighted in its source: %s://%s/runs/%s\n", md, c.lr.id, scheme, c.r.Host, c.lr.id)
}

func failure(err error) string {
	return "The research run failed: " + err.Error()
}

type apiUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// usage is the run's model tokens (0 with the extractive engine). The run keeps no split between prompt and
// completion tokens, so all of them are counted as prompt tokens.
func usage(rep *research.Report) apiUsage {
	if rep == nil {
		return apiUsage{}
	}
	return apiUsage{PromptTokens: rep.Stats.Tokens, TotalTokens: rep.Stats.Tokens}
}

// complete answers a non-streaming request once the run has ended.
func (c *completion) complete() {
	var reasoning strings.Builder
	if !c.follow(func(e research.Event) {
		if l := progressLine(e); l != "" {
			reasoning.WriteString(l + "\n")
		}
	}, nil) {
		return
	}
	rep, err, stopped := c.result()
	switch {
	case stopped:
		writeAPIError(c.w, http.StatusServiceUnavailable, "server_error", "", "", "the run was stopped before it finished (the server is shutting down, or it was stopped in the viewer)")
		return
	case err != nil || rep == nil:
		if err == nil {
			err = errors.New("no report")
		}
		writeAPIError(c.w, http.StatusInternalServerError, "server_error", "run_failed", "", failure(err))
		return
	}
	msg := map[string]any{"role": "assistant", "content": c.answer(rep)}
	switch c.format {
	case ReasoningContent:
		msg["reasoning_content"] = reasoning.String()
	case ReasoningThink:
		msg["content"] = "<think>\n" + reasoning.String() + "</think>\n\n" + c.answer(rep)
	}
	out := map[string]any{
		"id": c.id, "object": "chat.completion", "created": c.created, "model": c.req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop", "logprobs": nil}},
		"usage":   usage(rep),
	}
	c.w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(c.w).Encode(out)
}

type chunkDelta struct {
	Role             string  `json:"role,omitempty"`
	Content          *string `json:"content,omitempty"`
	ReasoningContent *string `json:"reasoning_content,omitempty"`
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
}

type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *apiUsage     `json:"usage,omitempty"`
}

// stream answers a streaming request as server-sent events: the role, progress as reasoning while the run goes,
// the answer, the finish reason, the usage when asked for, and [DONE].
func (c *completion) stream() {
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	c.w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(c.w)
	send := func(ch chunk) {
		ch.ID, ch.Object, ch.Created, ch.Model = c.id, "chat.completion.chunk", c.created, c.req.Model
		if ch.Choices == nil {
			ch.Choices = []chunkChoice{}
		}
		b, _ := json.Marshal(ch)
		fmt.Fprintf(c.w, "data: %s\n\n", b)
		_ = rc.Flush()
	}
	delta := func(d chunkDelta) { send(chunk{Choices: []chunkChoice{{Delta: d}}}) }
	empty := ""
	delta(chunkDelta{Role: "assistant", Content: &empty})
	thinking := false
	ok := c.follow(func(e research.Event) {
		l := progressLine(e)
		if l == "" {
			return
		}
		l += "\n"
		switch c.format {
		case ReasoningContent:
			delta(chunkDelta{ReasoningContent: &l})
		case ReasoningThink:
			if !thinking {
				l, thinking = "<think>\n"+l, true
			}
			delta(chunkDelta{Content: &l})
		}
	}, func() {
		fmt.Fprint(c.w, ": keep-alive\n\n")
		_ = rc.Flush()
	})
	if !ok {
		return
	}
	rep, err, stopped := c.result()
	var text string
	switch {
	case stopped:
		text = "The run was stopped before it finished (the server is shutting down, or it was stopped in the viewer)."
	case err != nil || rep == nil:
		if err == nil {
			err = errors.New("no report")
		}
		text = failure(err)
	default:
		text = c.answer(rep)
	}
	if thinking {
		text = "</think>\n\n" + text
	}
	delta(chunkDelta{Content: &text})
	stop := "stop"
	send(chunk{Choices: []chunkChoice{{Delta: chunkDelta{}, FinishReason: &stop}}})
	if c.req.StreamOptions != nil && c.req.StreamOptions.IncludeUsage {
		u := usage(rep)
		send(chunk{Usage: &u})
	}
	fmt.Fprint(c.w, "data: [DONE]\n\n")
	_ = rc.Flush()
}
