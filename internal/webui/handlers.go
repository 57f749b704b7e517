package webui

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/export"
)

//go:embed assets
var assetsFS embed.FS

// tokenCookiePrefix names the cookie that carries the access token after a visit with ?token=, so links and
// EventSource need no header. Browsers send a host's cookies to every port of it, so the name ends in the port
// the server listens on: a viewer on another port (another user's, or a page served there) never receives it
// under the name it reads, and one server's cookie is never taken for another's.
const tokenCookiePrefix = "deepresearch_token_"

// tokenCookie is the token cookie's name for the port r arrived on (the listener's own port; the Host header's
// when the request did not come through a listener).
func tokenCookie(r *http.Request) string {
	port := ""
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil {
		if _, p, err := net.SplitHostPort(a.String()); err == nil {
			port = p
		}
	}
	if port == "" {
		_, port, _ = splitHostPort(r.Host)
	}
	if port == "" {
		port = "80"
	}
	return tokenCookiePrefix + port
}

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"since":  humanSince,
	"money":  func(f float64) string { return fmt.Sprintf("$%.4f", f) },
	"pct":    func(f float64) string { return fmt.Sprintf("%.0f%%", f*100) },
	"isHTTP": func(u string) bool { return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") },
	"add":    func(a, b int) int { return a + b },
}).ParseFS(assetsFS, "assets/templates/*.html"))

func (s *Server) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(assetsFS, "assets/static")
	m.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /{$}", s.handleIndex)
	m.HandleFunc("POST /runs", s.handleStart)
	m.HandleFunc("GET /runs/{id}", s.handleRun)
	m.HandleFunc("GET /runs/{id}/events", s.handleEvents)
	m.HandleFunc("POST /runs/{id}/cancel", s.handleCancel)
	m.HandleFunc("GET /runs/{id}/plan", s.handlePlan)
	m.HandleFunc("POST /runs/{id}/plan", s.handlePlanAnswer)
	m.HandleFunc("POST /runs/{id}/clarify", s.handleClarify)
	m.HandleFunc("GET /runs/{id}/report.md", s.handleDownload(research.ReportMarkdownFile, "text/markdown; charset=utf-8"))
	m.HandleFunc("GET /runs/{id}/report.json", s.handleDownload(research.ReportJSONFile, "application/json"))
	m.HandleFunc("GET /runs/{id}/export/{format}", s.handleExport)
	m.HandleFunc("GET /runs/{id}/cite/{n}", s.handleCite)
	m.HandleFunc("GET /runs/{id}/evidence/{eid}", s.handleEvidence)
	m.HandleFunc("GET /api/runs", s.handleAPIRuns)
	s.mux = m
}

// guard applies access control to every request: the token when one is configured, otherwise a loopback Host
// (so a web page cannot reach the server through DNS rebinding), and a same-origin check on state changes.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: with no-referrer browsers send "Origin: null" on form posts.
		h.Set("Referrer-Policy", "same-origin")
		if s.cfg.Token != "" {
			if q := r.URL.Query().Get("token"); q != "" && r.Method == http.MethodGet {
				if !s.tokenOK(q) {
					s.deny(w, r)
					return
				}
				http.SetCookie(w, &http.Cookie{Name: tokenCookie(r), Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
				u := *r.URL
				v := u.Query()
				v.Del("token")
				u.RawQuery = v.Encode()
				http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
				return
			}
			if !s.requestHasToken(r) {
				s.deny(w, r)
				return
			}
		} else if host := hostOnly(r.Host); !isLoopbackHost(host) {
			http.Error(w, "this server answers only on a loopback address; start it with --token to serve other hosts", http.StatusForbidden)
			return
		}
		if err := s.csrf.Check(r); err != nil {
			http.Error(w, "cross-origin request refused", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.cfg.Token)) == 1
}

func (s *Server) requestHasToken(r *http.Request) bool {
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") && s.tokenOK(strings.TrimPrefix(a, "Bearer ")) {
		return true
	}
	if t := r.Header.Get("X-Deepresearch-Token"); t != "" && s.tokenOK(t) {
		return true
	}
	if c, err := r.Cookie(tokenCookie(r)); err == nil && s.tokenOK(c.Value) {
		return true
	}
	return false
}

// sameOrigin applies the state-changing requests' cross-origin check to a GET: a request another site's page made
// (Sec-Fetch-Site cross-site or same-site, or an Origin other than the Host) is refused; a page of this server,
// a typed address and a non-browser client pass.
func (s *Server) sameOrigin(r *http.Request) error {
	probe := r.WithContext(r.Context())
	probe.Method = http.MethodPost
	return s.csrf.Check(probe)
}

func (s *Server) deny(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="deepresearch"`)
	http.Error(w, "access token required: open the link printed by `deepresearch serve` (it ends in ?token=…), or send Authorization: Bearer <token>", http.StatusUnauthorized)
}

func hostOnly(hostport string) string {
	if h, _, err := splitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func splitHostPort(hp string) (string, string, error) {
	u, err := url.Parse("http://" + hp)
	if err != nil {
		return "", "", err
	}
	return u.Hostname(), u.Port(), nil
}

type indexPage struct {
	Title     string
	L         labels
	Runs      []research.RunSummary
	Form      formValues
	Error     string
	Providers []string
	Engine    string
	RunsErr   string
	// Roots are the folders a corpus may be taken from; nil when every folder may.
	Roots []string
	// The page of the runs listing shown: runs First to Last of Total; Prev and Next are page numbers, 0 for none.
	Page, First, Last, Total, Prev, Next int
	// Depths are the depths the form offers.
	Depths []string
	// AskUnavailable says why the form offers no plan review and no clarifying questions ("" offers both);
	// ClarifyMinutes is how long a run waits for answers.
	AskUnavailable string
	ClarifyMinutes int
}

type formValues struct {
	Question, Corpus, Web, MaxCost, MaxMinutes, Rounds, Unjudged string
	Depth, Length, Instructions                                  string
	Review, Clarify                                              bool
	From                                                         string
}

func (s *Server) handleIndex(w http.ResponseWriter, r *http.Request) {
	page := 1
	if v := r.URL.Query().Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			http.Error(w, "page must be a whole number from 1", http.StatusBadRequest)
			return
		}
		page = n
	}
	s.renderIndex(r.Context(), w, http.StatusOK, formValues{Corpus: s.cfg.DefaultCorpus, Clarify: s.cfg.Clarify && s.cfg.AskUnavailable == ""}, "", page)
}

func (s *Server) renderIndex(ctx context.Context, w http.ResponseWriter, code int, f formValues, msg string, page int) {
	p := indexPage{Form: f, Error: msg, Providers: s.cfg.WebProviders, Engine: s.cfg.Engine, L: labelsEN, Page: page, Depths: research.DepthNames(),
		AskUnavailable: s.cfg.AskUnavailable, ClarifyMinutes: int((s.cfg.ClarifyWait + time.Minute - 1) / time.Minute)}
	if s.roots != nil {
		p.Roots = s.roots.Dirs()
	}
	offset := (min(page, 1<<20) - 1) * runsPerPage
	runs, total, err := s.runsPage(ctx, offset, runsPerPage)
	if err != nil {
		p.RunsErr = err.Error()
	}
	p.Runs, p.Total = runs, total
	if len(runs) > 0 {
		p.First, p.Last = offset+1, offset+len(runs)
	}
	if page > 1 {
		p.Prev = min(page-1, (total+runsPerPage-1)/runsPerPage)
	}
	if offset+len(runs) < total {
		p.Next = page + 1
	}
	s.render(w, code, "index.html", p)
}

func (s *Server) render(w http.ResponseWriter, code int, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		s.log.Warn("render", "page", name, "err", err)
	}
}

// parseForm turns the form into RunParams, or says what is wrong with it.
func (s *Server) parseForm(r *http.Request) (RunParams, formValues, error) {
	f := formValues{
		Question:   strings.TrimSpace(r.PostFormValue("question")),
		Corpus:     strings.TrimSpace(r.PostFormValue("corpus")),
		Web:        strings.TrimSpace(r.PostFormValue("web")),
		MaxCost:    strings.TrimSpace(r.PostFormValue("max_cost")),
		MaxMinutes: strings.TrimSpace(r.PostFormValue("max_minutes")),
		Rounds:     strings.TrimSpace(r.PostFormValue("rounds")),
		Unjudged:   strings.TrimSpace(r.PostFormValue("unjudged")),
		Depth:      strings.TrimSpace(r.PostFormValue("depth")),
		Length:     strings.TrimSpace(r.PostFormValue("length")),
		// Instructions keep their line breaks.
		Instructions: strings.TrimSpace(r.PostFormValue("instructions")),
		Review:       r.PostFormValue("review") != "",
		Clarify:      r.PostFormValue("clarify") != "",
		From:         strings.TrimSpace(r.PostFormValue("from")),
	}
	p := RunParams{Question: f.Question, Corpus: f.Corpus, Web: f.Web, Unjudged: f.Unjudged, Depth: f.Depth,
		Length: f.Length, Instructions: f.Instructions, Review: f.Review, Clarify: f.Clarify, From: f.From}
	if s.cfg.AskUnavailable != "" && (f.Review || f.Clarify) {
		f.Review, f.Clarify = false, false
		return p, f, fmt.Errorf("This server's runs cannot ask you anything (%s): start the run without reviewing the plan or clarifying questions.", s.cfg.AskUnavailable)
	}
	if f.From != "" {
		// Only a finished run of this viewer can be followed up, named by its id.
		if !validRunID(f.From) {
			return p, f, fmt.Errorf("There is no run %q to follow up.", f.From)
		}
		if lr := s.liveRun(f.From); lr != nil && lr.summary().Status == research.RunRunning {
			return p, f, fmt.Errorf("Run %s is running: only a finished run can be followed up.", f.From)
		}
		info, err := s.store.Info(r.Context(), f.From)
		if err != nil {
			return p, f, fmt.Errorf("There is no run %q to follow up.", f.From)
		}
		if info.Status != research.RunDone {
			return p, f, fmt.Errorf("Run %s is %s: only a finished run can be followed up.", f.From, info.Status)
		}
		dir, err := filepath.Abs(s.runDir(f.From))
		if err != nil {
			return p, f, err
		}
		p.From = dir
	}
	switch {
	case f.Question == "":
		return p, f, errors.New("Please enter a research question.")
	case research.CheckQuestion(f.Question) != nil:
		return p, f, research.CheckQuestion(f.Question)
	case f.Corpus == "" && f.Web == "":
		return p, f, errors.New("Choose at least one source: a local folder or corpus index, or a web search provider.")
	}
	if f.Web != "" && !contains(s.cfg.WebProviders, f.Web) {
		return p, f, fmt.Errorf("Unknown web search provider %q.", f.Web)
	}
	if f.Web != "" && s.cfg.CheckWeb != nil {
		if err := s.cfg.CheckWeb(f.Web); err != nil {
			return p, f, fmt.Errorf("Web search with %s is not set up: %v", f.Web, err)
		}
	}
	if f.Corpus != "" {
		if _, err := os.Stat(f.Corpus); err != nil {
			return p, f, fmt.Errorf("Cannot use the corpus %q: %v", f.Corpus, unwrapPathErr(err))
		}
		if s.roots != nil {
			dir, err := s.roots.Resolve(f.Corpus)
			if err != nil {
				return p, f, fmt.Errorf("Cannot use the corpus: %v", unwrapPathErr(err))
			}
			p.Corpus = dir
		}
	}
	if research.CheckDepth(f.Depth) != nil {
		return p, f, fmt.Errorf("Depth is auto, quick, standard or deep, not %q.", f.Depth)
	}
	if err := research.CheckLength(f.Length); err != nil {
		return p, f, fmt.Errorf("Report length is brief, standard, long or a number of words from %d to %d, not %q.",
			research.MinLengthWords, research.MaxLengthWords, f.Length)
	}
	if err := research.CheckInstructions(f.Instructions); err != nil {
		return p, f, fmt.Errorf("Instructions: %v", err)
	}
	if research.CheckUnjudged(f.Unjudged) != nil {
		return p, f, fmt.Errorf("Sentences without a verdict are either removed or kept, not %q.", f.Unjudged)
	}
	if f.MaxCost != "" {
		v, err := strconv.ParseFloat(f.MaxCost, 64)
		if err == nil {
			err = research.CheckCost(v)
		}
		if err != nil {
			return p, f, fmt.Errorf("The cost limit %q is not a number of dollars from 0 to %g.", f.MaxCost, research.MaxCostLimit)
		}
		p.Budget.MaxCostUSD = v
	}
	if f.MaxMinutes != "" {
		v, err := strconv.ParseFloat(f.MaxMinutes, 64)
		if err == nil {
			p.Budget.MaxTime, err = research.Minutes(v)
		}
		if err != nil {
			return p, f, fmt.Errorf("The time limit %q is not a number of minutes from 0 to %g.", f.MaxMinutes, research.MaxTimeLimit.Minutes())
		}
	}
	if f.Rounds != "" {
		v, err := strconv.Atoi(f.Rounds)
		if err == nil {
			err = research.CheckRounds(v)
		}
		if err != nil {
			return p, f, fmt.Errorf("Extra rounds must be a whole number from 0 to %d, not %q.", research.MaxRounds, f.Rounds)
		}
		p.Rounds = v
		if v == 0 {
			p.Rounds = -1 // the graph reads 0 as "default"; the user asked for none
		}
	}
	return p, f, nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Server) handleStart(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form: "+err.Error(), http.StatusBadRequest)
		return
	}
	p, f, err := s.parseForm(r)
	if err != nil {
		s.renderIndex(r.Context(), w, http.StatusBadRequest, f, err.Error(), 1)
		return
	}
	id, err := s.startRun(p)
	if err != nil {
		code := http.StatusServiceUnavailable
		if errors.Is(err, ErrTooManyRuns) {
			code = http.StatusTooManyRequests
			w.Header().Set("Retry-After", "30")
		}
		s.renderIndex(r.Context(), w, code, f, capitalize(err.Error())+".", 1)
		return
	}
	if p.Review {
		http.Redirect(w, r, "/runs/"+id+"/plan", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
}

type planPage struct {
	Title, ID, Question, Text, Error string
	Waiting                          bool
	L                                labels
}

// handlePlan shows the plan a run waits on for review, editable as YAML; while the planner is still planning,
// a page that reloads.
func (s *Server) handlePlan(w http.ResponseWriter, r *http.Request) {
	id, ok := s.pathID(w, r)
	if !ok {
		return
	}
	lr := s.liveRun(id)
	if lr == nil {
		http.Error(w, "no plan of run "+id+" waits for review", http.StatusNotFound)
		return
	}
	lr.mu.Lock()
	pr, done, asking := lr.review, lr.done, lr.clarify != nil
	page := planPage{Title: "Review the plan", ID: id, Question: lr.params.Question, L: labelsEN}
	if pr != nil {
		page.Text, page.Error = pr.text, pr.problem
	}
	lr.mu.Unlock()
	if asking {
		// The planner's clarifying questions come first, on the run's page; answering them leads back here.
		http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
		return
	}
	if pr == nil {
		if done || !lr.params.Review {
			http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
			return
		}
		page.Waiting = true
	}
	s.render(w, http.StatusOK, "plan.html", page)
}

// handlePlanAnswer takes the plan page's answer: the plan as edited, or a decline. An edit that is not a plan is
// shown again with the error, the person's text kept.
func (s *Server) handlePlanAnswer(w http.ResponseWriter, r *http.Request) {
	id, ok := s.pathID(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, research.MaxPlanBytes+16<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form: "+err.Error(), http.StatusBadRequest)
		return
	}
	lr := s.liveRun(id)
	var pr *pendingReview
	if lr != nil {
		lr.mu.Lock()
		pr = lr.review
		lr.mu.Unlock()
	}
	if pr == nil {
		http.Error(w, "no plan of run "+id+" waits for review", http.StatusConflict)
		return
	}
	if r.PostFormValue("action") == "decline" {
		select {
		case pr.reply <- reviewReply{decline: true}:
		default: // answered already
		}
		http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
		return
	}
	text := r.PostFormValue("plan")
	plan, err := research.ParsePlan([]byte(text))
	if err != nil {
		lr.mu.Lock()
		pr.text, pr.problem = text, capitalize(err.Error())+"."
		lr.mu.Unlock()
		s.render(w, http.StatusBadRequest, "plan.html", planPage{Title: "Review the plan", ID: id, Question: lr.params.Question,
			Text: text, Error: pr.problem, L: labelsEN})
		return
	}
	select {
	case pr.reply <- reviewReply{plan: plan}:
	default: // answered already (a second tab)
	}
	http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
}

type runPage struct {
	Title    string
	ID       string
	Question string
	Status   string
	Error    string
	Report   *research.Report
	HTML     template.HTML
	Live     bool
	// NotResumable: a stopped run without its state here (a durable run) — resume cannot continue it.
	NotResumable bool
	Params       *RunParams
	L            labels
	// Cited is how many distinct evidence items the report cites; CitedIDs lists them for the live view.
	Cited    int
	CitedIDs string
	// Clarify is the form of the planner's questions while they wait for answers; Clarified how they ended
	// (clarifyAnswered, clarifySkipped, clarifyLate; "" when none were asked). Events is how many events the
	// run had when the page was made: the live view reloads for a later clarify or unanswered event.
	Clarify     *clarifyForm
	Clarified   string
	ClarifyWait string
	Events      int
	// FollowUp, for a finished run, is the follow-up form's sources: the run's own.
	FollowUp *RunParams
}

func (s *Server) pathID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if !validRunID(id) {
		http.Error(w, "bad run id", http.StatusBadRequest)
		return "", false
	}
	return id, true
}

func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	id, ok := s.pathID(w, r)
	if !ok {
		return
	}
	p := runPage{ID: id}
	if lr := s.liveRun(id); lr != nil {
		sum := lr.summary()
		p.Question, p.Status, p.Error = sum.Question, sum.Status, sum.Error
		p.Params = &lr.params
		p.Clarify, p.Clarified, p.Events = lr.clarifyView()
		p.ClarifyWait = lr.clarifyWait.String()
	} else if info, err := s.store.Info(r.Context(), id); err == nil {
		p.Question, p.Status, p.Error = info.Question, info.Status, info.Error
	} else if _, serr := os.Stat(s.runDir(id)); serr != nil {
		s.renderNotFound(w, "No run named "+id+".")
		return
	}
	if p.Status != research.RunRunning {
		if rep, err := s.store.Report(r.Context(), id); err == nil {
			p.Report = rep
			p.Question = rep.Question
			p.Status = research.RunDone
			p.HTML = renderReport(rep, "/runs/"+id)
		} else if p.Status == research.RunDone {
			p.Error = "the report could not be read: " + err.Error()
		}
	}
	p.Live = p.Status == research.RunRunning
	if p.Status == research.RunStopped {
		p.Error = "" // the stop is reported as such, not as the error of the step it interrupted
		// Only a run with its state here can be resumed; a durable run's cancelled workflow cannot.
		_, err := os.Stat(filepath.Join(s.runDir(id), research.StateFile))
		p.NotResumable = err != nil
	}
	p.Title = p.Question
	lang := ""
	if p.Report != nil {
		lang = p.Report.Language
		cited := p.Report.CitedEvidence()
		p.Cited, p.CitedIDs = len(cited), strings.Join(cited, ",")
	}
	p.L = labelsFor(lang, p.Question)
	if p.Report != nil && p.Status == research.RunDone {
		p.FollowUp = s.followUpSources(r.Context(), id)
	}
	s.render(w, http.StatusOK, "run.html", p)
}

func (s *Server) renderNotFound(w http.ResponseWriter, msg string) {
	s.render(w, http.StatusNotFound, "notfound.html", struct {
		Title, Message string
		L              labels
	}{"Not found", msg, labelsEN})
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	id, ok := s.pathID(w, r)
	if !ok {
		return
	}
	lr := s.liveRun(id)
	if lr == nil {
		if s.cfg.Cancel == nil {
			http.Error(w, "run "+id+" is not running in this server", http.StatusNotFound)
			return
		}
		info, err := s.store.Info(r.Context(), id)
		if err != nil || info.Status != research.RunRunning {
			http.Error(w, "run "+id+" is not running", http.StatusNotFound)
			return
		}
		if err := s.cfg.Cancel(r.Context(), id); err != nil {
			s.log.Warn("stop run", "run", id, "err", err)
			http.Error(w, "stopping run "+id+" failed: "+err.Error(), http.StatusBadGateway)
			return
		}
		http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
		return
	}
	lr.cancel()
	http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
}

// errFirstEvent stops a read of a run's events after the first one.
var errFirstEvent = errors.New("first event")

// handleEvents streams a run's events as server-sent events: everything so far, then each new event as it
// happens, then an "end" event carrying the final status. A finished run is replayed from events.jsonl.
//
// A stream holds a connection for as long as the run goes, so it is refused to other sites' pages (the token alone
// would not do: a cookie goes with a same-site page on another port) and at most Config.MaxStreams are open.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if err := s.sameOrigin(r); err != nil {
		http.Error(w, "cross-origin request refused: a run's events are for this server's own pages", http.StatusForbidden)
		return
	}
	id, ok := s.pathID(w, r)
	if !ok {
		return
	}
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		w.Header().Set("Retry-After", "10")
		http.Error(w, fmt.Sprintf("too many event streams open (this server keeps at most %d): close some of its pages and reload", cap(s.streams)), http.StatusTooManyRequests)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	from := 0
	if v, err := strconv.Atoi(r.Header.Get("Last-Event-ID")); err == nil && v >= 0 {
		from = v + 1
	}
	lr := s.liveRun(id)
	stored := false // a finished run's events.jsonl is there to stream
	if lr == nil {
		// Read the first event only: the stream below reads the file line by line, never whole.
		err := s.store.EachEvent(r.Context(), id, func(research.Event) error { return errFirstEvent })
		if err != nil && !errors.Is(err, errFirstEvent) {
			// A run of the shared state that ran elsewhere has no events here: its stream is only its end.
			if _, ierr := s.store.Info(r.Context(), id); ierr != nil {
				http.Error(w, "no events for run "+id+": "+err.Error(), http.StatusNotFound)
				return
			}
		}
		stored = errors.Is(err, errFirstEvent)
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	n := from
	send := func(evs []research.Event) error {
		for _, e := range evs {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(w, "id: %d\nevent: progress\ndata: %s\n\n", n, b); err != nil {
				return err
			}
			n++
		}
		fl.Flush()
		return nil
	}
	end := func(status string, runErr error) {
		msg := map[string]string{"status": status}
		if runErr != nil {
			msg["error"] = runErr.Error()
		}
		b, _ := json.Marshal(msg)
		fmt.Fprintf(w, "event: end\ndata: %s\n\n", b)
		fl.Flush()
	}
	if lr == nil {
		if stored {
			i := 0
			batch := make([]research.Event, 0, 256)
			err := s.store.EachEvent(r.Context(), id, func(e research.Event) error {
				if i++; i <= from {
					return nil
				}
				if batch = append(batch, e); len(batch) == cap(batch) {
					err := send(batch)
					batch = batch[:0]
					return err
				}
				return nil
			})
			if err != nil || send(batch) != nil {
				return
			}
		}
		status := research.RunDone
		var runErr error
		if info, err := s.store.Info(r.Context(), id); err == nil {
			status = info.Status
			if info.Error != "" && status != research.RunStopped {
				runErr = errors.New(info.Error)
			}
		}
		end(status, runErr)
		return
	}
	wake, unsub := lr.subscribe()
	defer unsub()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		evs, done, runErr := lr.since(n)
		if len(evs) > 0 && send(evs) != nil {
			return
		}
		if done {
			status := lr.status()
			if status == research.RunStopped {
				runErr = nil // stopped on request: the interrupted step's error is not news
			}
			end(status, runErr)
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-wake:
		case <-keep.C:
			// A comment keeps proxies and idle timeouts from closing a quiet stream.
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

func (s *Server) handleDownload(file, ctype string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := s.pathID(w, r)
		if !ok {
			return
		}
		data, err := s.store.ReportFile(r.Context(), id, file)
		if err != nil {
			http.Error(w, fmt.Sprintf("run %s has no %s yet", id, file), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s"`, id, file))
		w.Write(data)
	}
}

// handleExport sends the report in one of the export formats (export.Formats) as a download.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	id, ok := s.pathID(w, r)
	if !ok {
		return
	}
	f, err := export.Parse(r.PathValue("format"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	rep, err := s.store.Report(r.Context(), id)
	if err != nil {
		http.Error(w, fmt.Sprintf("run %s has no report yet", id), http.StatusNotFound)
		return
	}
	b, err := export.Render(r.Context(), rep, f, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", f.ContentType())
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-report%s"`, id, f.Ext()))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(b)
}

// handleAPIRuns lists runs as JSON, newest first, a page at a time: ?page=N (from 1) of ?per_page=M runs (default
// 50, at most 500); X-Total-Count says how many runs there are in all.
func (s *Server) handleAPIRuns(w http.ResponseWriter, r *http.Request) {
	page, per := 1, runsPerPage
	for _, q := range []struct {
		name string
		dst  *int
		max  int
	}{{"page", &page, 1 << 20}, {"per_page", &per, maxRunsPerPage}} {
		if v := r.URL.Query().Get(q.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > q.max {
				http.Error(w, fmt.Sprintf("%s must be a whole number from 1 to %d", q.name, q.max), http.StatusBadRequest)
				return
			}
			*q.dst = n
		}
	}
	runs, total, err := s.runsPage(r.Context(), (page-1)*per, per)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(total))
	if runs == nil {
		runs = []research.RunSummary{}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(runs)
}

func humanSince(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	default:
		return t.Format("2006-01-02 15:04")
	}
}

// followUpSources are the sources a follow-up of run id searches: the ones the run recorded (its first corpus
// folder and its web provider, as the form takes them); nil when the run cannot be followed up from here.
func (s *Server) followUpSources(ctx context.Context, id string) *RunParams {
	info, err := s.store.Info(ctx, id)
	if err != nil || info.Status != research.RunDone {
		return nil
	}
	if _, err := os.Stat(filepath.Join(s.runDir(id), research.StateFile)); err != nil {
		return nil // a durable run's state is not here
	}
	p := &RunParams{From: id, Web: info.Settings[request.SettingWeb]}
	var corpora []string
	if c := info.Settings[request.SettingCorpus]; json.Unmarshal([]byte(c), &corpora) != nil && c != "" {
		corpora = []string{c} // a library caller's plain folder
	}
	if len(corpora) > 0 {
		p.Corpus = corpora[0]
	}
	if p.Corpus == "" && p.Web == "" {
		return nil
	}
	return p
}
