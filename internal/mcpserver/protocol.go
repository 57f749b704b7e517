package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
)

// codeResourceNotFound is the resources specification's error for a URI the server does not hold.
const codeResourceNotFound = -32002

// resourceNotFound is the error a resources/read of an unknown URI returns.
func resourceNotFound(uri string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: codeResourceNotFound, Message: "Resource not found: " + uri, Data: data}
}

// logLevels are the syslog levels logging/setLevel accepts.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// checkRequests is receiving middleware for what the SDK leaves to the server: the resources specification's own
// "not found" code for a URI no resource or template matches, and a log level that is one of the eight.
func checkRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "logging/setLevel":
			var p struct {
				Level string `json:"level"`
			}
			raw, _ := json.Marshal(req.GetParams())
			if err := json.Unmarshal(raw, &p); err != nil || !slices.Contains(logLevels, p.Level) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
					Message: fmt.Sprintf("unknown log level %q: want one of %s", p.Level, strings.Join(logLevels, ", "))}
			}
		case "resources/read":
			res, err := next(ctx, method, req)
			var we *jsonrpc.Error
			if err != nil && errors.As(err, &we) && we.Code == jsonrpc.CodeInvalidParams && strings.HasPrefix(we.Message, "Resource not found") {
				uri := ""
				if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && p != nil {
					uri = p.URI
				}
				return nil, resourceNotFound(uri)
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// subscriptions remembers which sessions asked for updates of which URIs. The SDK routes
// notifications/resources/updated to subscribed sessions itself; this keeps the count a test (and the log) can
// see, and accepts a subscription to a report that does not exist yet — a client may subscribe to a run's
// report before the run has finished.
type subscriptions struct {
	mu   sync.Mutex
	uris map[string]int
}

func (s *subscriptions) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if req.Params == nil || strings.TrimSpace(req.Params.URI) == "" {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resources/subscribe needs a uri"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uris == nil {
		s.uris = map[string]int{}
	}
	s.uris[req.Params.URI]++
	return nil
}

func (s *subscriptions) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	if req.Params == nil || strings.TrimSpace(req.Params.URI) == "" {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resources/unsubscribe needs a uri"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uris[req.Params.URI] > 1 {
		s.uris[req.Params.URI]--
	} else {
		delete(s.uris, req.Params.URI)
	}
	return nil
}

// promptName is the prompt template clients offer as a slash command.
const promptName = "deep_research"

func (s *Server) addPrompt() {
	s.srv.AddPrompt(&mcp.Prompt{
		Name:  promptName,
		Title: "Deep research",
		Description: "Research a question with the deep_research tool and answer from its cited report, keeping the citations " +
			"and saying plainly what the sources did not settle.",
		Arguments: []*mcp.PromptArgument{
			{Name: "question", Title: "Question", Description: "the research question, in any language", Required: true},
			{Name: "corpus", Title: "Corpus", Description: "a local folder (or corpus index) to search instead of the server's default"},
			{Name: "web", Title: "Web search", Description: webDescription()},
		},
	}, s.getPrompt)
}

func (s *Server) getPrompt(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args := map[string]string{}
	if req.Params != nil && req.Params.Arguments != nil {
		args = req.Params.Arguments
	}
	q := strings.TrimSpace(args["question"])
	if q == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "prompt deep_research needs the argument \"question\""}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Call the deep_research tool with question %q", q)
	var src []string
	if c := strings.TrimSpace(args["corpus"]); c != "" {
		src = append(src, fmt.Sprintf("sources.corpus [%q]", c))
	}
	if w := strings.TrimSpace(args["web"]); w != "" {
		src = append(src, fmt.Sprintf("sources.web %q", w))
	}
	if len(src) > 0 {
		b.WriteString(" and " + strings.Join(src, " and "))
	}
	b.WriteString(". Then answer from its report: keep every citation [n] next to the sentence it supports, quote " +
		"rather than paraphrase where the wording matters, and say plainly which parts of the question the sources " +
		"did not settle. The full evidence (verbatim quotes and their sources) is in the report.json resource the " +
		"tool links to.")
	return &mcp.GetPromptResult{
		Description: "Deep research: " + lexical.Clip(q, 120),
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: b.String()}}},
	}, nil
}

// maxCompletions bounds one completion/complete answer (the specification's own limit).
const maxCompletions = 100

// complete offers values for the arguments that have a known set: the prompt's and tool's web provider, the
// report templates' run id (finished runs, newest first). Anything else gets an empty list: completion is a hint,
// never an error.
func (s *Server) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	if req.Params == nil || req.Params.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs ref and argument"}
	}
	ref, arg := req.Params.Ref, req.Params.Argument
	var candidates []string
	switch {
	case ref.Type == "ref/prompt" && ref.Name == promptName && arg.Name == "web":
		candidates = s.cfg.WebProviders
	case ref.Type == "ref/prompt" && ref.Name == promptName && arg.Name == "corpus":
		candidates = s.cfg.Defaults.Corpus
	case ref.Type == "ref/resource" && strings.HasPrefix(ref.URI, uriPrefix) && arg.Name == "id":
		candidates = s.finishedRunIDs(ctx)
	}
	prefix := strings.ToLower(arg.Value)
	var vals []string
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), prefix) {
			vals = append(vals, c)
		}
	}
	res.Completion.Total = len(vals)
	if len(vals) > maxCompletions {
		vals, res.Completion.HasMore = vals[:maxCompletions], true
	}
	if vals != nil {
		res.Completion.Values = vals
	}
	return res, nil
}

// finishedRunIDs lists the runs whose reports can be read, newest first.
func (s *Server) finishedRunIDs(ctx context.Context) []string {
	runs, err := s.store.List(ctx)
	if err != nil {
		s.log.Debug("list runs for completion", "err", err)
	}
	var ids []string
	for _, r := range runs {
		if r.Status == research.RunDone {
			ids = append(ids, r.ID)
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids) // run ids begin with their start time
	return ids
}

// notifyReportUpdated tells the clients subscribed to a run's report that it is there to read.
func (s *Server) notifyReportUpdated(ctx context.Context, runID string) {
	for _, uri := range []string{ReportURI(runID), ReportJSONURI(runID)} {
		if err := s.srv.ResourceUpdated(context.WithoutCancel(ctx), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			s.log.Debug("notify resource updated", "uri", uri, "err", err)
		}
	}
}

// quietGone is the SDK's logger with one change: a notification that cannot reach a client which has gone away
// (a closed connection, an expired session) is routine, not a warning.
type quietGone struct{ slog.Handler }

func (h quietGone) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn && strings.HasPrefix(r.Message, "calling notifications/") && goneClient(r.Message) {
		r.Level = slog.LevelDebug
		if !h.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietGone) WithAttrs(a []slog.Attr) slog.Handler { return quietGone{h.Handler.WithAttrs(a)} }
func (h quietGone) WithGroup(n string) slog.Handler      { return quietGone{h.Handler.WithGroup(n)} }

func goneClient(msg string) bool {
	for _, s := range []string{"closed", "connection", "session", "EOF", "broken pipe", "context canceled", "deadline exceeded"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
