package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deepresearch/deepresearch/llm"
)

// Result is what a tool gives back to the model.
type Result struct {
	Content string
	IsError bool
	// Meta travels with the tool message for middleware (for example the path of an offloaded copy).
	Meta map[string]string
}

// Tool is something the model can call. Implementations are safe for concurrent use.
type Tool interface {
	Spec() llm.ToolSpec
	// Run executes the call. A failure the model should hear about (bad input, a missing file, a remote error) is
	// a Result with IsError; a returned Go error means the infrastructure failed and stops the agent.
	Run(ctx context.Context, args json.RawMessage) (Result, error)
}

// BoundedOutput is implemented by tools that bound their own output (the file tools), so that generic
// eviction leaves them alone.
type BoundedOutput interface {
	BoundsOwnOutput() bool
}

// FatalError marks a typed tool's error as an infrastructure failure rather than a tool result.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Func is the body of a typed tool.
type Func[In any] func(ctx context.Context, in In) (string, error)

// TypedTool is a tool whose input is a Go struct; its JSON schema is generated from the struct (use `json` and
// `jsonschema:"description"` tags) and input is validated before the body runs.
type TypedTool[In any] struct {
	spec     llm.ToolSpec
	resolved *jsonschema.Resolved
	flat     *flatSchema // nil: the general validator checks the input
	fields   *flatFields // nil: encoding/json decodes the input into In
	fn       Func[In]
	bounded  bool
}

// NewTool builds a typed tool. It panics if In cannot be described by a JSON schema, which is a programming error.
func NewTool[In any](name, description string, fn Func[In]) *TypedTool[In] {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("agent.NewTool %s: %v", name, err))
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("agent.NewTool %s: resolve schema: %v", name, err))
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("agent.NewTool %s: marshal schema: %v", name, err))
	}
	flat := compileFlat(schema)
	return &TypedTool[In]{spec: llm.ToolSpec{Name: name, Description: description, Schema: raw}, resolved: resolved,
		flat: flat, fields: compileFields[In](flat), fn: fn}
}

// Bounded marks the tool as bounding its own output (see BoundedOutput) and returns it.
func (t *TypedTool[In]) Bounded() *TypedTool[In] { t.bounded = true; return t }

// BoundsOwnOutput implements BoundedOutput.
func (t *TypedTool[In]) BoundsOwnOutput() bool { return t.bounded }

// Spec implements Tool.
func (t *TypedTool[In]) Spec() llm.ToolSpec { return t.spec }

// decodedRunner is a tool that can use arguments the loop has already decoded (into their generic JSON form), so
// that one call's arguments are parsed once for loop detection and schema validation.
type decodedRunner interface {
	runDecoded(ctx context.Context, args json.RawMessage, generic any, decodeErr error) (Result, error)
}

// Run implements Tool.
func (t *TypedTool[In]) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
	}
	var generic any
	err := json.Unmarshal(args, &generic)
	return t.runDecoded(ctx, args, generic, err)
}

func (t *TypedTool[In]) runDecoded(ctx context.Context, args json.RawMessage, generic any, decodeErr error) (Result, error) {
	if decodeErr != nil {
		return ErrorResult("invalid JSON arguments for %s: %v. Send a single JSON object matching the tool's schema.", t.spec.Name, decodeErr), nil
	}
	validate := t.resolved.Validate
	if t.flat != nil {
		validate = t.flat.validate
	}
	if err := validate(generic); err != nil {
		return ErrorResult("arguments for %s do not match its schema: %v", t.spec.Name, err), nil
	}
	var in In
	// A flat input is filled from the value decoded once; anything else is decoded from the bytes.
	if (t.fields == nil || !t.fields.fill(&in, generic)) && len(strings.TrimSpace(string(args))) > 0 {
		in = *new(In)
		if err := json.Unmarshal(args, &in); err != nil {
			return ErrorResult("arguments for %s: %v", t.spec.Name, err), nil
		}
	}
	out, err := t.fn(ctx, in)
	if err != nil {
		var fatal *FatalError
		if errors.As(err, &fatal) {
			return Result{}, fmt.Errorf("tool %s: %w", t.spec.Name, fatal.Err)
		}
		return ErrorResult("%s failed: %v", t.spec.Name, err), nil
	}
	return Result{Content: out}, nil
}

// ErrorResult formats an error result for the model.
func ErrorResult(format string, args ...any) Result {
	return Result{Content: "Error: " + fmt.Sprintf(format, args...), IsError: true}
}
