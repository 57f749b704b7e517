// Package llmroles implements the research graph's four roles (planner, searcher, analyst, verifier) and the
// synthesizer as agents on their model tiers, and exposes the primitive they are built from: run an agent for a
// role and read its answer as text or as a typed, schema-checked value, repairing malformed JSON and asking the
// model again (bounded) when the answer still does not fit.
package llmroles

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/base/jsonfix"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/research"
)

// DefaultMaxReasks is how many times a role is asked again after an unusable answer.
const DefaultMaxReasks = 2

// defaultMaxSteps bounds one role run; roles are short tasks, tools or not.
const defaultMaxSteps = 8

// RoleSpec describes one run of a role agent. The caller chooses the model (the role's tier).
type RoleSpec struct {
	// Name names the role in errors, logs and event sessions ("planner", "analyst", …).
	Name   string
	Model  llm.Model
	System string
	Tools  []agent.Tool
	// Middleware is the context management for this run; it must be fresh per run when it holds state.
	Middleware []agent.Middleware
	// MaxSteps bounds model calls per attempt; default 8.
	MaxSteps int
	// MaxReasks bounds how often the model is asked again after an unusable answer; 0 means DefaultMaxReasks,
	// a negative value means never.
	MaxReasks int
	// MaxTokens caps each answer; 0 leaves it to the provider adapter.
	MaxTokens int
	Observer  agent.Observer
	Logger    *slog.Logger
	// Fleet, when set, runs the whole role call (every attempt) as one call of the fleet: it waits for a slot
	// and counts against the fleet's total.
	Fleet *research.Fleet
}

// ErrInvalidOutput matches (errors.Is) every *OutputError.
var ErrInvalidOutput = errors.New("invalid model output")

// OutputError reports that a role never produced a usable answer.
type OutputError struct {
	Role     string
	Attempts int
	// Err is the last problem found (no JSON, schema violation, failed check).
	Err error
	// Output is the start of the last answer, for the log.
	Output string
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("llmroles: %s: no usable answer after %d attempts: %v (last answer: %q)", e.Role, e.Attempts, e.Err, e.Output)
}

// Unwrap returns the last problem.
func (e *OutputError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrInvalidOutput) true.
func (e *OutputError) Is(target error) bool { return target == ErrInvalidOutput }

type softError struct{ err error }

func (s softError) Error() string { return s.err.Error() }
func (s softError) Unwrap() error { return s.err }

// Soft marks a check failure as worth a re-ask but tolerable: on the last attempt the answer is accepted anyway
// (for example a plan with two sub-questions where three were asked for).
func Soft(err error) error {
	if err == nil {
		return nil
	}
	return softError{err}
}

func isSoft(err error) bool {
	var s softError
	return errors.As(err, &s)
}

// RunText runs the role and returns its final answer text.
func RunText(ctx context.Context, spec RoleSpec, prompt string) (string, error) {
	return RunTextCheck(ctx, spec, prompt, nil)
}

// RunTextCheck runs the role and returns its final answer text after check accepts it; check may rewrite the
// text (strip a wrapper, say). A check error is sent back to the model, bounded by MaxReasks.
func RunTextCheck(ctx context.Context, spec RoleSpec, prompt string, check func(string) (string, error)) (string, error) {
	var out string
	err := run(ctx, spec, prompt, false, func(text string, final bool) error {
		if check == nil {
			if strings.TrimSpace(text) == "" {
				return errors.New("the answer is empty")
			}
			out = text
			return nil
		}
		t, err := check(text)
		if err != nil && !(final && isSoft(err)) {
			return err
		}
		out = t
		return nil
	}, "Your previous answer could not be used: %v\nWrite the complete answer again with that fixed.")
	return out, err
}

// RunRole runs the role and parses its answer into T: the model is shown the JSON schema generated from T
// (json and jsonschema struct tags), the answer is repaired if malformed and validated against the schema, and
// the model is asked again with the problem when it still does not fit.
func RunRole[T any](ctx context.Context, spec RoleSpec, prompt string) (T, error) {
	return RunRoleCheck[T](ctx, spec, prompt, nil)
}

// RunRoleCheck is RunRole with a semantic check after the schema check; the check may also normalise the value.
// An error from it is sent back to the model like a schema violation; wrap it with Soft to accept the value on
// the last attempt anyway.
func RunRoleCheck[T any](ctx context.Context, spec RoleSpec, prompt string, check func(*T) error) (T, error) {
	var zero T
	rs, err := schemaFor[T]()
	if err != nil {
		return zero, fmt.Errorf("llmroles: %s: %w", spec.Name, err)
	}
	resolved, rawSchema := rs.resolved, rs.raw
	kind := kindOf(reflect.TypeFor[T]())
	what := "JSON object"
	if kind == jsonfix.Array {
		what = "JSON array"
	}
	prompt = fmt.Sprintf("%s\n\nReply with a single %s conforming to this JSON Schema. Output only the JSON — no prose, no code fences.\n%s",
		prompt, what, rawSchema)
	var out T
	err = run(ctx, spec, prompt, true, func(text string, final bool) error {
		v, err := Decode[T](text, resolved)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(&v); err != nil && !(final && isSoft(err)) {
				return err
			}
		}
		out = v
		return nil
	}, "Your previous answer could not be used: %v\nReply again with only the corrected "+what+", conforming to the schema given above.")
	return out, err
}

// roleSchema is the JSON schema a role's answer type is shown and checked against.
type roleSchema struct {
	resolved *jsonschema.Resolved
	raw      []byte
}

// shapeOf is what the JSON repair looks for in an answer to schema s: the object with the keys s requires
// and, when s has a single array property, a bare array of its items in the object's place.
func shapeOf(s *jsonschema.Schema, kind jsonfix.Kind) jsonfix.Shape {
	shape := jsonfix.Shape{Kind: kind}
	if s == nil || kind != jsonfix.Object {
		return shape
	}
	shape.Keys = s.Required
	var arrays []string
	for name, p := range s.Properties {
		if isType(p, "array") {
			arrays = append(arrays, name)
		}
	}
	if len(arrays) == 1 && len(s.Required) <= 1 && (len(s.Required) == 0 || s.Required[0] == arrays[0]) {
		shape.Items = arrays[0]
		if it := s.Properties[arrays[0]].Items; isType(it, "object") {
			shape.ItemKeys = it.Required
		}
	}
	return shape
}

// isType reports whether schema s admits values of type t (a slice's schema is ["null", "array"]).
func isType(s *jsonschema.Schema, t string) bool {
	return s != nil && (s.Type == t || slices.Contains(s.Types, t))
}

// schemas holds each answer type's schema, built on first use: a pure function of the type (like encoding/json's
// encoders), and generating, resolving and encoding it on every role call cost more than the call's own work.
// A resolved schema is only read when validating, so calls share it.
var schemas sync.Map // reflect.Type → roleSchema

func schemaFor[T any]() (roleSchema, error) {
	t := reflect.TypeFor[T]()
	if rs, ok := schemas.Load(t); ok {
		return rs.(roleSchema), nil
	}
	schema, err := jsonschema.For[T](nil)
	if err != nil {
		return roleSchema{}, fmt.Errorf("schema for %v: %w", t, err)
	}
	relax(schema)
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return roleSchema{}, fmt.Errorf("resolve schema for %v: %w", t, err)
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return roleSchema{}, fmt.Errorf("marshal schema for %v: %w", t, err)
	}
	rs, _ := schemas.LoadOrStore(t, roleSchema{resolved: resolved, raw: raw})
	return rs.(roleSchema), nil
}

// Decode repairs text (see package jsonfix), validates it against resolved (when not nil) and unmarshals it.
// The value read is the one the schema asks for (holding its required keys), the last one when the answer
// holds several — a model that drafts or reasons before answering writes its answer last —, and a bare array
// of the requested items stands for an object with one array field. Its errors are written to be shown to the
// model.
func Decode[T any](text string, resolved *jsonschema.Resolved) (T, error) {
	var v T
	kind := kindOf(reflect.TypeFor[T]())
	var root *jsonschema.Schema
	if resolved != nil {
		root = resolved.Schema()
	}
	res, err := jsonfix.RepairShape(text, shapeOf(root, kind))
	if err != nil {
		return v, errors.New("the answer contains no JSON value")
	}
	if resolved != nil {
		var generic any
		if err := json.Unmarshal([]byte(res.JSON), &generic); err != nil {
			return v, fmt.Errorf("the answer is not valid JSON: %v", err)
		}
		if err := resolved.Validate(generic); err != nil {
			return v, fmt.Errorf("the JSON does not match the schema: %v", err)
		}
	}
	if err := json.Unmarshal([]byte(res.JSON), &v); err != nil {
		return v, fmt.Errorf("the JSON does not fit the expected structure: %v", err)
	}
	return v, nil
}

func kindOf(t reflect.Type) jsonfix.Kind {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return jsonfix.Object
	case reflect.Slice, reflect.Array:
		return jsonfix.Array
	}
	return jsonfix.Any
}

// relax allows extra properties everywhere: models add commentary fields, and refusing a whole answer for an
// unknown key costs a model call while the key is simply ignored on decoding.
func relax(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Type == "object" || len(s.Properties) > 0 {
		if s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil {
			s.AdditionalProperties = nil
		}
	}
	for _, p := range s.Properties {
		relax(p)
	}
	relax(s.Items)
	relax(s.AdditionalProperties)
	for _, d := range s.Defs {
		relax(d)
	}
}

// jsonHook asks the provider for a JSON answer when the run has no tools (JSON mode and tool calling do not
// mix on every provider).
type jsonHook struct{}

var _ agent.RequestHook = jsonHook{}

func (jsonHook) BeforeRequest(_ context.Context, _ *agent.State, req *llm.Request) error {
	if len(req.Tools) == 0 {
		req.JSON = true
	}
	return nil
}

// run drives one role agent: each attempt's answer goes to accept; a refusal is sent back (reask formats it).
func run(ctx context.Context, spec RoleSpec, prompt string, jsonMode bool, accept func(text string, final bool) error, reask string) error {
	if spec.Fleet != nil {
		return spec.Fleet.Do(ctx, func(ctx context.Context) error {
			return runUnbounded(ctx, spec, prompt, jsonMode, accept, reask)
		})
	}
	return runUnbounded(ctx, spec, prompt, jsonMode, accept, reask)
}

func runUnbounded(ctx context.Context, spec RoleSpec, prompt string, jsonMode bool, accept func(text string, final bool) error, reask string) error {
	name := spec.Name
	if name == "" {
		name = "role"
	}
	if spec.Model == nil {
		return fmt.Errorf("llmroles: %s: no model configured", name)
	}
	log := spec.Logger
	if log == nil {
		log = slog.Default()
	}
	reasks := spec.MaxReasks
	switch {
	case reasks == 0:
		reasks = DefaultMaxReasks
	case reasks < 0:
		reasks = 0
	}
	steps := spec.MaxSteps
	if steps <= 0 {
		steps = defaultMaxSteps
	}
	stop := &stopRecorder{counter: tokens.ForModel(spec.Model.Info().Name)}
	mw := append([]agent.Middleware(nil), spec.Middleware...)
	mw = append(mw, stop)
	if jsonMode {
		mw = append(mw, jsonHook{})
	}
	newAgent := func() (*agent.Agent, error) {
		a, err := agent.New(agent.Config{
			Model: spec.Model, System: spec.System, Tools: spec.Tools, Middleware: mw, MaxSteps: steps,
			MaxTokens: spec.MaxTokens, SessionID: name + "-" + agent.NewID(), Observer: spec.Observer,
		})
		if err != nil {
			return nil, fmt.Errorf("llmroles: %s: %w", name, err)
		}
		return a, nil
	}
	a, err := newAgent()
	if err != nil {
		return err
	}
	msg := prompt
	var lastErr error
	var lastText string
	restarted := false
	for attempt := 0; attempt <= reasks; attempt++ {
		text, err := a.Run(ctx, msg)
		stop.measured(err)
		if err != nil && llm.IsContextLength(err) && attempt > 0 && !restarted && ctx.Err() == nil {
			// The re-ask did not fit: the conversation carries the unusable answer. Ask once more in a fresh
			// conversation holding the task and the problem only — a smaller request, never the same one.
			log.Warn("role re-ask too long for the model; asking again without the previous answer", "role", name,
				"sent_tokens", sentTokens(err))
			restarted = true
			if a, err = newAgent(); err != nil {
				return err
			}
			msg = prompt + "\n\n" + msg
			text, err = a.Run(ctx, msg)
			stop.measured(err)
		}
		if err != nil {
			// A context-length error is returned as such (errors.As finds *llm.ContextLengthError), with the
			// refused request's measured size (Sent): the caller shrinks its material by it and asks again;
			// resending the same request could only fail the same way.
			return fmt.Errorf("llmroles: %s: %w", name, err)
		}
		// Cut off by the output limit: a text answer is continued where it stopped (bounded); what is still cut
		// ends at its last complete paragraph. A JSON answer is repaired if it can be, else asked for again,
		// shorter.
		loop := !jsonMode && degenerate(text)
		if loop {
			// A draft repeating itself until the output limit is not continued: more of it would be more of the
			// same, paid for twice (as output, then as the next request's input).
			log.Warn("role answer fell into a loop; not continued", "role", name, "cut_off", stop.cut())
		}
		for n := 0; stop.cut() && !jsonMode && !loop && n < maxContinuations; n++ {
			log.Warn("role answer cut off by the output limit; asking to continue", "role", name, "continuation", n+1)
			more, err := a.Run(ctx, continuePrompt)
			if err != nil && llm.IsContextLength(err) && ctx.Err() == nil {
				// The conversation no longer fits with the answer in it: keep what was written.
				log.Warn("continuing a cut-off answer does not fit the model; keeping what was written", "role", name)
				break
			}
			if err != nil {
				return fmt.Errorf("llmroles: %s: continue a cut-off answer: %w", name, err)
			}
			text += more
			if loop = degenerate(text); loop {
				log.Warn("role answer fell into a loop while continued; not continued further", "role", name)
			}
		}
		truncated := stop.cut()
		if truncated && !jsonMode {
			log.Warn("role answer still cut off; keeping its complete paragraphs", "role", name)
			text = completeParagraphs(text)
		}
		perr := accept(text, attempt == reasks)
		if perr == nil {
			if attempt > 0 {
				log.Info("role answer accepted after re-ask", "role", name, "attempt", attempt+1)
			}
			return nil
		}
		lastErr, lastText = perr, text
		log.Warn("role answer unusable", "role", name, "attempt", attempt+1, "problem", perr.Error(), "cut_off", truncated)
		msg = fmt.Sprintf(reask, perr)
		if truncated {
			msg = "Your previous answer was cut off by the output token limit, so it could not be used (" + perr.Error() +
				"). Answer again, shorter: fewer items and shorter text, and make sure the answer is complete."
		}
		if loop && attempt < reasks {
			// The loop is not sent back as conversation: the model is asked afresh, told what went wrong.
			if a, err = newAgent(); err != nil {
				return err
			}
			msg = prompt + "\n\nA previous answer to this task repeated the same text over and over until it was cut off, so it could not be used (" +
				perr.Error() + "). Write each sentence once."
		}
	}
	return &OutputError{Role: name, Attempts: reasks + 1, Err: lastErr, Output: lexical.Clip(lastText, 300)}
}

// maxContinuations bounds how often a text answer cut off by the output limit is continued.
const maxContinuations = 2

const continuePrompt = "Your answer was cut off by the output token limit. Continue exactly where it stopped: do not repeat anything, do not start over, no preamble."

// stopRecorder remembers why the last model call of a role run stopped, and counts each request it sends.
type stopRecorder struct {
	counter tokens.Counter
	mu      sync.Mutex
	last    llm.StopReason
	sent    int // the last request's prompt tokens, counted locally
}

// BeforeRequest counts the request about to be sent: a refusal for length is then told the refused request's
// measured size (see measured).
func (s *stopRecorder) BeforeRequest(_ context.Context, _ *agent.State, req *llm.Request) error {
	n := tokens.CountRequest(s.counter, req)
	s.mu.Lock()
	s.sent = n
	s.mu.Unlock()
	return nil
}

// measured fills a context-length error's locally counted size when the provider did not.
func (s *stopRecorder) measured(err error) {
	var cle *llm.ContextLengthError
	if errors.As(err, &cle) && cle.Sent <= 0 {
		s.mu.Lock()
		cle.Sent = s.sent
		s.mu.Unlock()
	}
}

func (s *stopRecorder) AfterResponse(_ context.Context, _ *agent.State, resp *llm.Response) error {
	s.mu.Lock()
	s.last = resp.StopReason
	s.mu.Unlock()
	return nil
}

func (s *stopRecorder) cut() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last == llm.StopMaxTokens
}

var (
	_ agent.ResponseHook = (*stopRecorder)(nil)
	_ agent.RequestHook  = (*stopRecorder)(nil)
)

// completeParagraphs drops the unfinished tail of a text cut off mid-way: everything after its last blank line,
// or after its last sentence end when it has a single paragraph.
func completeParagraphs(text string) string {
	t := strings.TrimRight(text, " \t")
	if i := strings.LastIndex(t, "\n\n"); i > 0 {
		return strings.TrimSpace(t[:i]) + "\n"
	}
	if i := strings.LastIndexAny(t, ".!?。！？"); i > 0 {
		_, n := utf8.DecodeRuneInString(t[i:])
		return t[:i+n]
	}
	return t
}
