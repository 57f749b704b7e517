// Package webui is deepresearch's web application: a form to start a research run, a live view of the run fed by
// server-sent events, the finished report with citations that open the quoted passage highlighted inside the
// stored source text, past runs, and report downloads. Its HTML, CSS and JavaScript are embedded in the binary;
// nothing is loaded from elsewhere.
//
// The server holds no research logic: it is given a StartFunc that runs the research graph, and reads finished
// runs back through the research package's run-folder functions.
package webui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/research"
)

// RunParams is what a user asks for on the form.
type RunParams struct {
	Question string `json:"question"`
	// Corpus is a local folder or corpus index to search; empty means none.
	Corpus string `json:"corpus,omitempty"`
	// Web names a web search provider (tavily, brave, searxng, exa); empty means no web search.
	Web    string          `json:"web,omitempty"`
	Budget research.Budget `json:"budget"`
	// Rounds is how many extra directed re-search rounds are allowed; 0 means the graph's default.
	Rounds int `json:"rounds,omitempty"`
	// Unjudged is what happens to sentences the support judge gave no verdict on: "" (the configured choice),
	// research.UnjudgedRemove or research.UnjudgedKeep.
	Unjudged string `json:"unjudged,omitempty"`
	// Depth (auto, quick, standard, deep), Length (brief, standard, long or words) and Instructions steer the
	// run; empty means the configured choice.
	Depth        string `json:"depth,omitempty"`
	Length       string `json:"length,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	// Review shows the plan on the run's plan page before anything is searched.
	Review bool `json:"review,omitempty"`
	// Clarify lets the planner ask up to three clarifying questions first, answered on the run's page.
	Clarify bool `json:"clarify,omitempty"`
	// From is the folder of a finished run of this viewer that the run follows up (request.Research.From); the
	// form names the run by its id.
	From string `json:"from,omitempty"`
}

// RunRequest is one run to execute: the user's parameters plus where the run lives and where its events go.
type RunRequest struct {
	RunParams
	RunID  string
	OutDir string
	// OnEvent must receive every event of the run (research.Config.OnEvent).
	OnEvent func(research.Event)
	// ReviewPlan, set when the form asked to review the plan, waits for the plan page's answer.
	ReviewPlan func(ctx context.Context, p *research.Plan) (*research.Plan, error)
	// Clarify, set when the form asked for clarifying questions, waits for the answers posted on the run's page.
	Clarify func(ctx context.Context, questions []string) ([]string, error)
}

// Research is the request every research surface hands to the one request builder.
func (r RunRequest) Research() request.Research {
	q := request.Research{Question: r.Question, Web: r.Web, Budget: r.Budget, Rounds: r.Rounds, Unjudged: r.Unjudged,
		RunID: r.RunID, OutDir: r.OutDir, OnEvent: r.OnEvent, Depth: r.Depth, Length: r.Length, Instructions: r.Instructions,
		ReviewPlan: r.ReviewPlan, Clarify: r.Clarify, From: r.From}
	if r.Corpus != "" {
		q.Corpora = []string{r.Corpus}
	}
	return q
}

// StartFunc executes one research run to completion (or until ctx is cancelled) and returns its report. The
// command line wires it to research.Run with the configured engine; tests inject a deterministic engine.
type StartFunc func(ctx context.Context, req RunRequest) (*research.Report, error)

// Config configures a Server. Zero fields take defaults where documented.
type Config struct {
	// RunsDir holds one folder per run; default "runs".
	RunsDir string
	// State, when set, is a shared state (postgres://…): every run in it is listed and shown besides the run
	// folders, whichever machine ran it.
	State string
	// Start executes runs. Required.
	Start StartFunc
	// Cancel, when set, stops a run this server did not start but that is still going elsewhere (a durable run of
	// the shared state, cancelled on Temporal by its id); nil: Stop works only for the server's own runs.
	Cancel func(ctx context.Context, runID string) error
	// Token, when set, is required on every request (Authorization: Bearer, X-Deepresearch-Token, or the cookie
	// set by visiting any page with ?token=). See CheckBind for when it is mandatory.
	Token string
	// WebProviders lists the web search providers the form offers; empty hides web search.
	WebProviders []string
	// Engine says which engine and models a run started from the form uses, shown on the form ("" shows nothing).
	Engine string
	// CheckWeb, when set, says whether a web search provider can be used (its API key or instance URL is
	// configured); the form refuses a provider it rejects before any run is created.
	CheckWeb func(provider string) error
	// DefaultCorpus pre-fills the corpus field.
	DefaultCorpus string
	// Roots are the folders the form may name a corpus in (or below), shown on the page; any other folder is
	// refused. Nil allows every folder: the command line always sets them (request.Roots).
	Roots []string
	// MaxRuns bounds the runs this server has going at once; a form posted past it is refused (429). Zero means
	// DefaultMaxRuns.
	MaxRuns int
	// MaxStreams bounds the event streams open at once (each holds a connection); past it a stream is refused
	// (429). Zero means DefaultMaxStreams.
	MaxStreams int
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
	// API, when set, serves the OpenAI-compatible API (/v1/models, /v1/chat/completions) beside the viewer.
	API *APIConfig
	// Clarify ticks the form's "clarifying questions first" box by default (the configuration's research.clarify).
	Clarify bool
	// ClarifyWait bounds how long a run waits for the answers to its clarifying questions before it plans without
	// them; zero means DefaultClarifyWait.
	ClarifyWait time.Duration
	// AskUnavailable, when set, says why this server's runs cannot ask the person anything (durable runs on
	// Temporal workers): the form offers neither the plan review nor clarifying questions and refuses both.
	AskUnavailable string
}

// Server is the web application. Create it with New, serve Handler, and call Close when done.
type Server struct {
	cfg Config
	log *slog.Logger
	mux *http.ServeMux
	// csrf refuses state-changing requests from other sites (Sec-Fetch-Site, else Origin against Host).
	csrf   *http.CrossOriginProtection
	ctx    context.Context // parent of every run: runs outlive the request that started them
	cancel context.CancelFunc
	wg     sync.WaitGroup

	store research.Runs // past runs: the run folders, and the shared state when configured

	roots   *request.Roots // nil: every folder
	streams chan struct{}  // one token per open event stream

	mu      sync.Mutex
	live    map[string]*liveRun
	running int // live runs not yet finished
}

// Default bounds of a Server.
const (
	DefaultMaxRuns    = 10
	DefaultMaxStreams = 64
)

// ErrTooManyRuns is startRun's refusal past Config.MaxRuns.
var ErrTooManyRuns = errors.New("too many runs in progress")

// New builds a server.
func New(cfg Config) (*Server, error) {
	if cfg.Start == nil {
		return nil, errors.New("webui: no StartFunc configured")
	}
	if cfg.RunsDir == "" {
		cfg.RunsDir = "runs"
	}
	abs, err := filepath.Abs(cfg.RunsDir)
	if err != nil {
		return nil, fmt.Errorf("webui: runs dir %s: %w", cfg.RunsDir, err)
	}
	cfg.RunsDir = abs
	if err := os.MkdirAll(cfg.RunsDir, 0o755); err != nil {
		return nil, fmt.Errorf("webui: runs dir: %w", err)
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.ClarifyWait <= 0 {
		cfg.ClarifyWait = DefaultClarifyWait
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, log: log, ctx: ctx, cancel: cancel, live: map[string]*liveRun{}, csrf: http.NewCrossOriginProtection(),
		store: research.Runs{Dir: cfg.RunsDir, State: cfg.State}, streams: make(chan struct{}, cfg.MaxStreams)}
	if cfg.Roots != nil {
		r := request.NewRoots(cfg.Roots...)
		s.roots = &r
	}
	s.routes()
	return s, nil
}

// Handler returns the application with access control applied.
func (s *Server) Handler() http.Handler {
	if s.cfg.API == nil {
		return s.guard(s.mux)
	}
	m := http.NewServeMux()
	m.Handle("/", s.guard(s.mux))
	m.Handle("/v1/", s.apiHandler())
	return m
}

// Close cancels the runs in progress (they stay resumable on disk) and waits for them to stop.
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

// Wait blocks until every run started so far has finished; for tests and graceful shutdown.
func (s *Server) Wait() { s.wg.Wait() }

// ErrTokenRequired is returned by CheckBind for a non-loopback address without a token.
var ErrTokenRequired = errors.New("listening on a non-loopback address requires an access token (--token or DEEPRESEARCH_TOKEN)")

// CheckBind refuses to serve on anything but a loopback address without an access token: the server can start
// runs that spend money and read local files, so it must not be open to the network by accident.
func CheckBind(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("bad listen address %q: %w", addr, err)
	}
	if token != "" {
		return nil
	}
	if !isLoopbackHost(host) {
		return fmt.Errorf("%s: %w", addr, ErrTokenRequired)
	}
	return nil
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var runIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// validRunID keeps ids from naming anything outside the runs folder.
func validRunID(id string) bool { return runIDRE.MatchString(id) && id != "." && id != ".." }

func (s *Server) runDir(id string) string { return filepath.Join(s.cfg.RunsDir, id) }

// startRun launches a run in the background and returns its id.
func (s *Server) startRun(p RunParams) (string, error) {
	lr, err := s.launch(p, s.cfg.Start)
	if err != nil {
		return "", err
	}
	return lr.id, nil
}

// launch starts a run through start in the background, under the server's cap on runs going at once, and
// returns it; its events and outcome are kept for its page and its stream.
func (s *Server) launch(p RunParams, start StartFunc) (*liveRun, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, errors.New("the server is shutting down")
	}
	id := research.NewRunID()
	lr := newLiveRun(id, p)
	lr.clarifyWait = s.cfg.ClarifyWait
	ctx, cancel := context.WithCancel(s.ctx)
	lr.cancel = cancel
	s.mu.Lock()
	if s.running >= s.cfg.MaxRuns {
		s.mu.Unlock()
		cancel()
		return nil, fmt.Errorf("%w: this server runs at most %d at once; wait for one to finish or stop one, then start again", ErrTooManyRuns, s.cfg.MaxRuns)
	}
	s.running++
	s.live[id] = lr
	s.mu.Unlock()
	req := RunRequest{RunParams: p, RunID: id, OutDir: s.runDir(id), OnEvent: lr.publish}
	if p.Review {
		req.ReviewPlan = lr.awaitReview
	}
	if p.Clarify {
		req.Clarify = lr.awaitClarify
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		rep, err := s.safeStart(ctx, start, req)
		stopped := err != nil && ctx.Err() != nil
		if err != nil && !stopped {
			s.log.Warn("run failed", "run", id, "err", err)
		}
		lr.finish(rep, err, stopped)
		s.mu.Lock()
		s.running--
		s.mu.Unlock()
	}()
	return lr, nil
}

// safeStart turns a panic in the engine into a failed run instead of a dead server.
func (s *Server) safeStart(ctx context.Context, start StartFunc, req RunRequest) (rep *research.Report, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("run panicked: %v", p)
		}
	}()
	return start(ctx, req)
}

func (s *Server) liveRun(id string) *liveRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[id]
}

// Listing bounds: a page of the index shows runsPerPage runs; /api/runs may ask for up to maxRunsPerPage.
const (
	runsPerPage    = 50
	maxRunsPerPage = 500
)

// runsPage lists runs offset to offset+limit of the listing, newest first, and how many runs there are in all:
// past runs and those this server started, which appear before they have written their folder. Finding the runs
// reads no run's state; only the runs on the page are read.
func (s *Server) runsPage(ctx context.Context, offset, limit int) ([]research.RunSummary, int, error) {
	entries, err := s.store.Entries(ctx)
	if err != nil {
		return nil, 0, err
	}
	type row struct {
		entry   *research.RunEntry // nil: a live run without a folder yet
		live    *liveRun
		started time.Time
	}
	rows := make([]row, 0, len(entries))
	seen := make(map[string]bool, len(entries))
	for i := range entries {
		seen[entries[i].ID] = true
		rows = append(rows, row{entry: &entries[i], started: entries[i].Started})
	}
	s.mu.Lock()
	for id, lr := range s.live {
		if !seen[id] {
			rows = append(rows, row{live: lr, started: lr.created})
		}
	}
	s.mu.Unlock()
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].started.After(rows[j].started) })
	total := len(rows)
	lo, hi := min(max(offset, 0), total), min(max(offset, 0)+limit, total)
	out := make([]research.RunSummary, 0, hi-lo)
	for _, r := range rows[lo:hi] {
		if r.entry == nil {
			out = append(out, r.live.summary())
			continue
		}
		sum := r.entry.Summary()
		if lr := s.liveRun(sum.ID); lr != nil {
			sum.Status = lr.status()
		}
		out = append(out, sum)
	}
	return out, total, nil
}

// liveRun is a run started by this server: its events so far and the subscribers waiting for more.
type liveRun struct {
	id      string
	params  RunParams
	created time.Time
	cancel  context.CancelFunc

	mu      sync.Mutex
	events  []research.Event
	subs    map[chan struct{}]bool
	done    bool
	stopped bool // cancelled (Stop, or the server shutting down): resumable, not failed
	report  *research.Report
	err     error
	// review is the plan waiting for the person's answer on the plan page; nil when none waits.
	review *pendingReview
	// clarify is the planner's questions waiting for the person's answers on the run's page (nil when none wait),
	// clarifyOutcome how they ended, clarifyWait how long they wait.
	clarify        *pendingClarify
	clarifyOutcome string
	clarifyWait    time.Duration
}

// pendingReview is a plan shown on the plan page: its YAML (or the person's last edit, kept when it was not a
// plan) and where the answer goes.
type pendingReview struct {
	text    string
	problem string
	reply   chan reviewReply
}

type reviewReply struct {
	plan    *research.Plan
	decline bool
}

// awaitReview is the run's research.Config.ReviewPlan: it puts the plan on the plan page and waits for the
// answer (or for the run to be stopped).
func (lr *liveRun) awaitReview(ctx context.Context, p *research.Plan) (*research.Plan, error) {
	b, err := research.MarshalPlan(p)
	if err != nil {
		return nil, err
	}
	pr := &pendingReview{text: string(b), reply: make(chan reviewReply, 1)}
	lr.mu.Lock()
	lr.review = pr
	lr.mu.Unlock()
	defer func() {
		lr.mu.Lock()
		lr.review = nil
		lr.mu.Unlock()
	}()
	select {
	case r := <-pr.reply:
		if r.decline {
			return nil, errors.New("the plan was declined on the plan page, so nothing was searched")
		}
		return r.plan, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func newLiveRun(id string, p RunParams) *liveRun {
	return &liveRun{id: id, params: p, created: time.Now(), subs: map[chan struct{}]bool{}}
}

func (r *liveRun) publish(e research.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.askedLocked(e)
	r.wakeLocked()
	r.mu.Unlock()
}

func (r *liveRun) finish(rep *research.Report, err error, stopped bool) {
	r.mu.Lock()
	r.done, r.report, r.err, r.stopped = true, rep, err, stopped
	r.wakeLocked()
	r.mu.Unlock()
}

// wakeLocked nudges every subscriber without blocking: a subscriber reads the event slice itself, so a missed
// nudge loses nothing.
func (r *liveRun) wakeLocked() {
	for ch := range r.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (r *liveRun) subscribe() (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	r.subs[ch] = true
	r.mu.Unlock()
	return ch, func() {
		r.mu.Lock()
		delete(r.subs, ch)
		r.mu.Unlock()
	}
}

// since returns the events after the first n, and whether the run has finished.
func (r *liveRun) since(n int) ([]research.Event, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []research.Event
	if n < len(r.events) {
		out = append(out, r.events[n:]...)
	}
	return out, r.done, r.err
}

func (r *liveRun) status() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !r.done:
		return research.RunRunning
	case r.stopped:
		return research.RunStopped
	case r.err != nil:
		return research.RunFailed
	default:
		return research.RunDone
	}
}

func (r *liveRun) summary() research.RunSummary {
	st := r.status()
	r.mu.Lock()
	defer r.mu.Unlock()
	s := research.RunSummary{ID: r.id, Question: r.params.Question, Status: st, Created: r.created, Updated: r.created}
	if r.err != nil && !r.stopped {
		s.Error = r.err.Error()
	}
	if n := len(r.events); n > 0 {
		s.Evidence = r.events[n-1].Progress.Evidence
		s.Updated = r.events[n-1].Time
	}
	return s
}
