// Package mcpserver exposes deepresearch as a Model Context Protocol server, over stdio or Streamable HTTP, so
// Claude Code, Cursor and any other MCP client can call it: a deep_research tool that returns the cited report
// (with progress notifications while it runs), and past reports as resources deepresearch://runs/<id>/report.md
// and report.json.
//
// The server holds no research logic: it is given a StartFunc that runs the research graph.
package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/export"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

// Sources says where a run searches.
type Sources struct {
	Corpus []string `json:"corpus,omitempty" jsonschema:"local folders (or corpus index directories) to search"`
	Web    string   `json:"web,omitempty" jsonschema:"web search provider to use (see websearch.Providers)"`
	// MCPFile is a .mcp.json whose servers' search tools are searched. Only the server's own defaults set it: a
	// client cannot name a file (it would start the programs the file lists).
	MCPFile string `json:"-"`
}

// Budget bounds a run requested through the tool.
type Budget struct {
	MaxCostUSD float64 `json:"max_cost_usd,omitempty" jsonschema:"cost fuse in US dollars; when spend reaches it the run writes its report with the evidence it has"`
	MaxTokens  int     `json:"max_tokens,omitempty" jsonschema:"token fuse (input plus output tokens)"`
	MaxMinutes float64 `json:"max_minutes,omitempty" jsonschema:"wall-time limit for searching and reading, in minutes"`
	Rounds     *int    `json:"rounds,omitempty" jsonschema:"extra directed re-search rounds the verifier may ask for (default 2)"`
	Unjudged   string  `json:"unjudged,omitempty" jsonschema:"what happens to a sentence the support judge gave no verdict on, after asking again: remove (default) or keep (published, marked unverified)"`
}

// Input is the deep_research tool's arguments.
type Input struct {
	Question string   `json:"question" jsonschema:"the research question, in any language; the report is written in the question's language"`
	Sources  *Sources `json:"sources,omitempty" jsonschema:"where to search; default: the sources the server was started with"`
	Budget   *Budget  `json:"budget,omitempty" jsonschema:"limits on spend and time"`
	// Depth, Length and Instructions steer the run.
	Depth        string `json:"depth,omitempty" jsonschema:"how much research: auto (the planner triages the question; the default with a model), quick, standard or deep"`
	Length       string `json:"length,omitempty" jsonschema:"report length: brief, standard, long or a number of words"`
	Instructions string `json:"instructions,omitempty" jsonschema:"audience, focus and what to leave out, read by the planner and the synthesizer"`
	Review       bool   `json:"review,omitempty" jsonschema:"show the plan before anything is searched, to accept or edit (as YAML), through elicitation; ignored when the client offers no elicitation"`
	Clarify      bool   `json:"clarify,omitempty" jsonschema:"let the planner ask up to three clarifying questions of an ambiguous question first, through elicitation; ignored when the client offers no elicitation"`
	From         string `json:"from,omitempty" jsonschema:"the run_id of a finished run of this server to follow up: its sources and evidence are reused, only what they do not cover is searched, and the report links it"`
}

// inputSchema is the deep_research tool's input schema, with the web search providers read from their table.
func inputSchema() *jsonschema.Schema {
	sc, err := jsonschema.For[Input](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema: %v", err)) // a programming error, caught by every test
	}
	if src := sc.Properties["sources"]; src != nil && src.Properties["web"] != nil {
		src.Properties["web"].Description = webDescription()
	}
	if b := sc.Properties["budget"]; b != nil && b.Properties["rounds"] != nil {
		r := b.Properties["rounds"]
		r.Description = fmt.Sprintf("extra directed re-search rounds the verifier may ask for: 0 to %d (default 2)", research.MaxRounds)
		r.Minimum, r.Maximum = ptr(0.0), ptr(float64(research.MaxRounds))
	}
	if d := sc.Properties["depth"]; d != nil {
		for _, name := range research.DepthNames() {
			d.Enum = append(d.Enum, name)
		}
	}
	if ins := sc.Properties["instructions"]; ins != nil {
		ins.MaxLength = ptr(research.MaxInstructionRunes)
	}
	return sc
}

// webDescription describes the web search providers a call may name.
func webDescription() string {
	return "web search provider to use: " + strings.Join(websearch.Names(), ", ") + " (the server needs its key: " + websearch.Help() + ")"
}

// SourceRef is one source of the report.
type SourceRef struct {
	URL       string `json:"url"`
	Title     string `json:"title,omitempty"`
	Citations []int  `json:"citations"`
}

// Output is the deep_research tool's structured result. An error result carries what is known at the point of
// failure: the run id and folder once a run exists, its status and the error.
type Output struct {
	RunID     string      `json:"run_id,omitempty"`
	Status    string      `json:"status" jsonschema:"done, failed, stopped (cancelled: when dir is set, the run folder can be resumed with deepresearch resume) or refused (the call was not valid; no run was started)"`
	Error     string      `json:"error,omitempty" jsonschema:"what went wrong, when status is not done"`
	Question  string      `json:"question,omitempty"`
	Engine    string      `json:"engine,omitempty"`
	Report    string      `json:"report,omitempty" jsonschema:"the Markdown report; every [n] is a citation listed in sources"`
	ReportURI string      `json:"report_uri,omitempty" jsonschema:"MCP resource holding report.md"`
	JSONURI   string      `json:"json_uri,omitempty" jsonschema:"MCP resource holding report.json: citations, evidence with verbatim quotes"`
	Dir       string      `json:"dir,omitempty" jsonschema:"run folder on the server's disk; empty when the run stopped or failed before it began"`
	Sources   []SourceRef `json:"sources,omitempty"`
	Evidence  int         `json:"evidence" jsonschema:"number of distinct evidence items the report cites"`
	Pooled    int         `json:"pooled" jsonschema:"number of evidence items gathered (accepted and rejected), of which evidence were cited"`
	CutShort  string      `json:"cut_short,omitempty" jsonschema:"why the run stopped early, if it did"`
}

// Output statuses.
const (
	StatusDone    = research.RunDone
	StatusFailed  = research.RunFailed
	StatusStopped = research.RunStopped
	StatusRefused = "refused"
)

// RunRequest is one run to execute.
type RunRequest struct {
	Question string
	Sources  Sources
	Budget   research.Budget
	Rounds   int
	Unjudged string
	// Depth, Length and Instructions steer the run (request.Research); ReviewPlan and Clarify ask the client's
	// user through elicitation.
	Depth, Length, Instructions string
	ReviewPlan                  func(ctx context.Context, p *research.Plan) (*research.Plan, error)
	Clarify                     func(ctx context.Context, questions []string) ([]string, error)
	RunID                       string
	OutDir                      string
	// From is the folder of the finished run this one follows up (request.Research.From).
	From string
	// OnEvent must receive every event of the run (research.Config.OnEvent).
	OnEvent func(research.Event)
}

// Research is the request every research surface hands to the one request builder.
func (r RunRequest) Research() request.Research {
	return request.Research{Question: r.Question, Corpora: r.Sources.Corpus, Web: r.Sources.Web, MCPFile: r.Sources.MCPFile, Budget: r.Budget,
		Rounds: r.Rounds, Unjudged: r.Unjudged, RunID: r.RunID, OutDir: r.OutDir, OnEvent: r.OnEvent,
		Depth: r.Depth, Length: r.Length, Instructions: r.Instructions, ReviewPlan: r.ReviewPlan, Clarify: r.Clarify,
		From: r.From}
}

// StartFunc executes one research run to completion (or until ctx is cancelled) and returns its report.
type StartFunc func(ctx context.Context, req RunRequest) (*research.Report, error)

// Config configures a Server.
type Config struct {
	// RunsDir holds one folder per run; default "runs".
	RunsDir string
	// State, when set, is a shared state (postgres://…): the finished runs in it are published as resources too,
	// whichever machine ran them.
	State string
	// Start executes runs. Required.
	Start StartFunc
	// Defaults are the sources used when a call names none.
	Defaults Sources
	// Clarify lets the planner ask clarifying questions on every call whose client offers elicitation, as if the
	// call had asked for it (the configuration's research.clarify).
	Clarify bool
	// Version is reported to clients.
	Version string
	// WebProviders are the web search providers the server knows (offered by completion/complete).
	WebProviders []string
	// Roots, when set, are the folders a call may name a corpus in (or below); any other folder is refused. Nil
	// allows every folder, as for stdio, whose client the user started; the command line sets them for --http,
	// which any local process can reach (request.Roots).
	Roots []string
	// MaxRuns bounds the deep_research calls running at once; a call past it is refused with a -32000 error.
	// Zero means DefaultMaxRuns.
	MaxRuns int
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
}

// Server is deepresearch's MCP server.
type Server struct {
	cfg   Config
	log   *slog.Logger
	srv   *mcp.Server
	store research.Runs
	roots *request.Roots // nil: every folder
	runs  runSlots

	mu        sync.Mutex
	published map[string]bool
	refreshed time.Time // when the shared state's finished runs were last published
	subs      subscriptions
}

// Resource URIs.
const (
	uriPrefix       = "deepresearch://runs/"
	reportMDSuffix  = "/report.md"
	reportJSONSufix = "/report.json"
)

// ReportURI is the resource URI of a run's report.md.
func ReportURI(runID string) string { return uriPrefix + runID + reportMDSuffix }

// ReportJSONURI is the resource URI of a run's report.json.
func ReportJSONURI(runID string) string { return uriPrefix + runID + reportJSONSufix }

// New builds the server and publishes the finished runs already in RunsDir as resources.
func New(cfg Config) (*Server, error) {
	if cfg.Start == nil {
		return nil, errors.New("mcpserver: no StartFunc configured")
	}
	if cfg.RunsDir == "" {
		cfg.RunsDir = "runs"
	}
	abs, err := filepath.Abs(cfg.RunsDir)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: runs dir %s: %w", cfg.RunsDir, err)
	}
	cfg.RunsDir = abs
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("mcpserver: runs dir: %w", err)
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = slog.New(quietGone{log.Handler()})
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	s := &Server{cfg: cfg, log: log, published: map[string]bool{}, store: research.Runs{Dir: abs, State: cfg.State},
		runs: make(runSlots, cfg.MaxRuns)}
	if cfg.Roots != nil {
		r := request.NewRoots(cfg.Roots...)
		s.roots = &r
	}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "deepresearch", Title: "deepresearch", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: "deep_research answers a research question with a Markdown report in which every factual sentence cites a verbatim quote from a source. " +
			"It takes minutes; progress notifications report each step. Past reports are resources deepresearch://runs/<id>/report.md and report.json; " +
			"subscribe to a run's report to be told when it is written.",
		Logger:             log,
		CompletionHandler:  s.complete,
		SubscribeHandler:   s.subs.subscribe,
		UnsubscribeHandler: s.subs.unsubscribe,
	})
	s.srv.AddReceivingMiddleware(checkRequests)
	if cfg.State != "" {
		s.srv.AddReceivingMiddleware(s.refreshShared)
	}
	s.addPrompt()
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:  "deep_research",
		Title: "Deep research",
		Description: "Research a question across the configured sources (a local document folder and/or a web search provider): " +
			"plan sub-questions, search in parallel, read the sources, verify the evidence adversarially and write a cited report. " +
			"Returns the Markdown report; every [n] resolves to a verbatim quote in report.json. Slow (minutes): send a progress token to follow it.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: false, OpenWorldHint: ptr(true)},
		InputSchema: inputSchema(),
	}, s.deepResearch)
	s.srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "report.md", Title: "Research report (Markdown)", URITemplate: uriPrefix + "{id}" + reportMDSuffix,
		MIMEType: "text/markdown", Description: "The published report of a finished run",
	}, s.readResource)
	s.srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "report.json", Title: "Research report (JSON)", URITemplate: uriPrefix + "{id}" + reportJSONSufix,
		MIMEType: "application/json", Description: "A finished run's report with its citations and evidence (verbatim quotes and sources)",
	}, s.readResource)
	runs, err := s.store.List(context.Background())
	if err != nil {
		log.Warn("list past runs", "dir", abs, "err", err)
	}
	for _, r := range runs {
		if r.Status == research.RunDone {
			s.publish(r.ID, r.Question)
		}
	}
	s.refreshed = time.Now()
	return s, nil
}

func ptr[T any](v T) *T { return &v }

// MCP returns the underlying SDK server (to connect custom transports).
func (s *Server) MCP() *mcp.Server { return s.srv }

// Run serves one client over t (for example &mcp.StdioTransport{}) until it disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error { return s.srv.Run(ctx, t) }

// HTTPConfig configures the Streamable HTTP endpoint.
type HTTPConfig struct {
	// Token, when set, must be sent as Authorization: Bearer <token>.
	Token string
	// SessionTimeout closes a session no request has used for this long; zero means DefaultSessionTimeout, a
	// negative value keeps idle sessions forever.
	SessionTimeout time.Duration
	// MaxSessions bounds the open sessions; a request that would open one more is refused (HTTP 429, JSON-RPC
	// -32000) unless a session idle for IdleEvict can be closed to make room. Zero means DefaultMaxSessions.
	MaxSessions int
	// IdleEvict is how long a session must have gone unused to be closed for a new one when MaxSessions are
	// open; zero means DefaultIdleEvict.
	IdleEvict time.Duration
}

// DefaultSessionTimeout is how long an idle HTTP session lives.
const DefaultSessionTimeout = 30 * time.Minute

// HTTPHandler serves the Streamable HTTP transport. The SDK refuses non-localhost Host headers on loopback
// connections (DNS rebinding); this adds cross-origin protection, JSON-RPC error bodies for the transport's own
// refusals, idle-session expiry, a bound on open sessions and, when configured, a bearer token.
func (s *Server) HTTPHandler(c HTTPConfig) http.Handler {
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.IdleEvict <= 0 {
		c.IdleEvict = DefaultIdleEvict
	}
	timeout := c.SessionTimeout
	switch {
	case timeout == 0:
		timeout = DefaultSessionTimeout
	case timeout < 0:
		timeout = 0
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, &mcp.StreamableHTTPOptions{Logger: s.log, SessionTimeout: timeout})
	limit := &sessionLimit{srv: s.srv, max: c.MaxSessions, idle: c.IdleEvict, now: time.Now, next: h, use: map[string]*sessionUse{}}
	next := http.Handler(http.NewCrossOriginProtection().Handler(jsonRPCErrors(limit)))
	if c.Token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := r.Header.Get("Authorization")
		if !strings.HasPrefix(a, "Bearer ") || subtle.ConstantTimeCompare([]byte(strings.TrimPrefix(a, "Bearer ")), []byte(c.Token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="deepresearch"`)
			http.Error(w, "access token required (Authorization: Bearer <token>)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// CheckBind refuses a non-loopback HTTP address without a token.
func CheckBind(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("bad listen address %q: %w", addr, err)
	}
	if token != "" || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s: listening on a non-loopback address requires an access token (--token or DEEPRESEARCH_TOKEN)", addr)
}

func (s *Server) publish(id, question string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.published[id] {
		return
	}
	s.published[id] = true
	title := question
	if title == "" {
		title = id
	}
	s.srv.AddResource(&mcp.Resource{URI: ReportURI(id), Name: id + "/report.md", Title: title, MIMEType: "text/markdown",
		Description: "Research report: " + lexical.Clip(question, 200)}, s.readResource)
	s.srv.AddResource(&mcp.Resource{URI: ReportJSONURI(id), Name: id + "/report.json", Title: title + " (JSON)", MIMEType: "application/json",
		Description: "Citations and evidence of: " + lexical.Clip(question, 200)}, s.readResource)
}

// refreshInterval bounds how often a resource listing reads the shared state for runs finished elsewhere.
const refreshInterval = 10 * time.Second

// refreshShared publishes, before a resource listing, the runs of the shared state that other machines finished
// since the last look.
func (s *Server) refreshShared(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "resources/list" {
			s.mu.Lock()
			due := time.Since(s.refreshed) >= refreshInterval
			if due {
				s.refreshed = time.Now()
			}
			s.mu.Unlock()
			if due {
				runs, err := research.Runs{State: s.cfg.State}.List(ctx)
				if err != nil {
					s.log.Warn("list the shared state's runs", "err", err)
				}
				for _, r := range runs {
					if r.Status == research.RunDone {
						s.publish(r.ID, r.Question)
					}
				}
			}
		}
		return next(ctx, method, req)
	}
}

var runIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, uriPrefix)
	if !ok {
		return nil, resourceNotFound(uri)
	}
	id, file, ok := strings.Cut(rest, "/")
	if !ok || !runIDRE.MatchString(id) || id == ".." {
		return nil, resourceNotFound(uri)
	}
	mime := ""
	switch file {
	case research.ReportMarkdownFile:
		mime = "text/markdown"
	case research.ReportJSONFile:
		mime = "application/json"
	default:
		return nil, resourceNotFound(uri)
	}
	data, err := s.store.ReportFile(ctx, id, file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, state.ErrNotFound) {
			return nil, resourceNotFound(uri)
		}
		return nil, fmt.Errorf("read %s: %w", uri, err)
	}
	text := string(data)
	if file == research.ReportMarkdownFile {
		// The report links the texts its run kept relative to its folder; a client reads it from no folder.
		if dir := filepath.Join(s.cfg.RunsDir, id); isDir(dir) {
			text = export.AbsoluteLinks(text, dir)
		}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: text}}}, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// maxCorpora bounds the corpus folders one tool call may name.
const maxCorpora = 16

func (s *Server) deepResearch(ctx context.Context, req *mcp.CallToolRequest, in Input) (*mcp.CallToolResult, Output, error) {
	q := strings.TrimSpace(in.Question)
	if q == "" {
		return refuse("question is empty: pass the research question in \"question\"")
	}
	if err := research.CheckQuestion(q); err != nil {
		return refuse(fmt.Sprintf("question: %v", err))
	}
	src := s.cfg.Defaults
	if in.Sources != nil && (len(in.Sources.Corpus) > 0 || in.Sources.Web != "") {
		src = *in.Sources
	}
	if len(src.Corpus) == 0 && src.Web == "" && src.MCPFile == "" {
		return refuse("no sources: pass sources.corpus (local folders) and/or sources.web (a search provider), or start the server with --corpus/--web/--mcp")
	}
	if len(src.Corpus) > maxCorpora {
		return refuse(fmt.Sprintf("sources.corpus names %d folders; the limit is %d", len(src.Corpus), maxCorpora))
	}
	corpora := make([]string, 0, len(src.Corpus))
	for _, c := range src.Corpus {
		if _, err := os.Stat(c); err != nil {
			return refuse(fmt.Sprintf("corpus %q cannot be used: %v", c, err))
		}
		if s.roots != nil {
			dir, err := s.roots.Resolve(c)
			if err != nil {
				return refuse(fmt.Sprintf("corpus %q cannot be used: %v", c, err))
			}
			c = dir
		}
		corpora = append(corpora, c)
	}
	src.Corpus = corpora
	rr := RunRequest{Question: q, Sources: src, RunID: research.NewRunID(), Depth: strings.TrimSpace(in.Depth),
		Length: strings.TrimSpace(in.Length), Instructions: strings.TrimSpace(in.Instructions)}
	rr.OutDir = filepath.Join(s.cfg.RunsDir, rr.RunID)
	if from := strings.TrimSpace(in.From); from != "" {
		// A client names a run of this server by its id, never a folder of its choice.
		if err := request.CheckRunID(from); err != nil {
			return refuse(err.Error())
		}
		dir, err := filepath.Abs(filepath.Join(s.cfg.RunsDir, from))
		if err != nil {
			return refuse(err.Error())
		}
		info, err := research.LoadRunInfo(dir)
		if err != nil {
			return refuse(fmt.Sprintf("from: there is no run %q on this server", from))
		}
		if info.Status != research.RunDone {
			return refuse(fmt.Sprintf("from: run %s is %s; only a finished run can be followed up", from, info.Status))
		}
		rr.From = dir
	}
	if b := in.Budget; b != nil {
		maxTime, err := research.Minutes(b.MaxMinutes)
		if err != nil {
			return refuse(fmt.Sprintf("budget.max_minutes: %v", err))
		}
		rr.Budget = research.Budget{MaxCostUSD: b.MaxCostUSD, MaxTokens: b.MaxTokens, MaxTime: maxTime}
		if err := rr.Budget.Validate(); err != nil {
			return refuse(fmt.Sprintf("budget: %v", err))
		}
		if err := research.CheckUnjudged(b.Unjudged); err != nil {
			return refuse(fmt.Sprintf("budget.unjudged: %v", err))
		}
		rr.Unjudged = b.Unjudged
		if b.Rounds != nil {
			if err := research.CheckRounds(*b.Rounds); err != nil {
				return refuse(fmt.Sprintf("budget.rounds: %v", err))
			}
			rr.Rounds = *b.Rounds
			if rr.Rounds == 0 {
				rr.Rounds = -1 // the graph reads 0 as its default; the caller asked for none
			}
		}
	}
	if req != nil && req.Session != nil {
		// Elicitation during a call is allowed up to protocol 2025-11-25; from 2026-07-28 a server may ask only by
		// returning input requests and being called again, which a run in progress cannot do: it proceeds.
		if ip := req.Session.InitializeParams(); ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil &&
			ip.ProtocolVersion < elicitBefore {
			e := elicitor{ss: req.Session}
			if in.Review {
				rr.ReviewPlan = e.reviewPlan
			}
			if in.Clarify || s.cfg.Clarify {
				rr.Clarify = e.clarify
			}
		}
	}
	if err := rr.Research().Validate(); err != nil { // the check every surface shares (rounds, …)
		return refuse(err.Error())
	}
	release, err := s.runs.acquire()
	if err != nil {
		return nil, Output{}, err
	}
	defer release()
	prog := newProgress(ctx, req)
	rr.OnEvent = prog.event
	rep, err := s.cfg.Start(ctx, rr)
	if err == nil {
		prog.finish()
	}
	prog.close()
	if err != nil {
		out := Output{RunID: rr.RunID, Question: q, Status: StatusFailed, Error: err.Error()}
		// A run stopped or failed while its sources were prepared (a folder being indexed) never began: it has no
		// folder to point to or resume.
		_, ierr := s.store.Info(context.WithoutCancel(ctx), rr.RunID)
		began := ierr == nil
		if began {
			out.Dir = rr.OutDir
		}
		text := fmt.Sprintf("research run %s failed: %v", rr.RunID, err)
		switch {
		case ctx.Err() != nil && began:
			out.Status = StatusStopped
			text = fmt.Sprintf("research run %s was stopped; its folder %s can be resumed with `deepresearch resume %s`", rr.RunID, rr.OutDir, rr.RunID)
		case ctx.Err() != nil:
			out.Status = StatusStopped
			text = fmt.Sprintf("research run %s was stopped before it began (while its sources were prepared: %v); nothing was saved to resume, call deep_research again to start over", rr.RunID, err)
		case !began:
			text = fmt.Sprintf("research run %s failed before it began: %v", rr.RunID, err)
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
	}
	s.publish(rr.RunID, q)
	s.notifyReportUpdated(ctx, rr.RunID)
	// Links into the run folder become absolute file:// URLs: the client reads the report from no folder.
	md := export.AbsoluteLinks(rep.Markdown, rr.OutDir)
	out := Output{RunID: rr.RunID, Status: StatusDone, Question: rep.Question, Engine: rep.Engine, Report: md, ReportURI: ReportURI(rr.RunID),
		JSONURI: ReportJSONURI(rr.RunID), Dir: rr.OutDir, Evidence: len(rep.CitedEvidence()), Pooled: len(rep.Evidence), CutShort: rep.CutShort, Sources: []SourceRef{}}
	for _, sr := range rep.Sources {
		out.Sources = append(out.Sources, SourceRef{URL: sr.URL, Title: sr.Title, Citations: sr.Citations})
	}
	folder := (&url.URL{Scheme: "file", Path: filepath.ToSlash(rr.OutDir) + "/"}).String()
	footer := fmt.Sprintf("\n\n---\nRun %s · %d evidence items cited (of %d gathered) · report: %s · citations and quotes: %s · folder: %s",
		rr.RunID, out.Evidence, out.Pooled, out.ReportURI, out.JSONURI, folder)
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: md + footer},
		&mcp.ResourceLink{URI: out.ReportURI, Name: rr.RunID + "/report.md", MIMEType: "text/markdown", Title: q},
		&mcp.ResourceLink{URI: out.JSONURI, Name: rr.RunID + "/report.json", MIMEType: "application/json", Title: q + " (JSON)"},
	}}
	return res, out, nil
}

// refuse answers a call that cannot start a run: an error result whose structured content says why.
func refuse(msg string) (*mcp.CallToolResult, Output, error) {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, Output{Status: StatusRefused, Error: msg}, nil
}
