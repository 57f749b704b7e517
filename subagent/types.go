package subagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// GeneralPurpose is the subagent type that always exists.
const GeneralPurpose = "general-purpose"

// Type describes a kind of subagent: what it is for (the parent reads Description to choose), how it behaves
// (Prompt), what it may use (Tools, Model) and what it returns (Schema).
type Type struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description"`
	// Prompt is the subagent's system prompt. In a Markdown file it is the body after the front matter.
	Prompt string `yaml:"prompt,omitempty" json:"prompt,omitempty"`
	// Tools lists the tools the subagent gets, by name or path.Match pattern ("mcp__github__*", "*"); empty
	// means the parent's tools minus the reserved ones.
	Tools StringList `yaml:"tools,omitempty" json:"tools,omitempty"`
	// Model is the tier that serves the subagent (strong, mid, fast); empty or "inherit" uses the parent's model.
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
	// Schema, when set, is the JSON schema of the subagent's answer: it must answer with one JSON object
	// matching it, and the task tool returns that object.
	Schema json.RawMessage `yaml:"-" json:"schema,omitempty"`
	// MaxSteps bounds the subagent's model calls; 0 means Config.MaxSteps.
	MaxSteps int `yaml:"max_steps,omitempty" json:"max_steps,omitempty"`
	// Context holds context-management settings for this type (compaction thresholds and the like); the
	// middleware factory reads them.
	Context map[string]any `yaml:"context,omitempty" json:"context,omitempty"`
	// Source is the file the type was read from, if any.
	Source string `yaml:"-" json:"source,omitempty"`
}

// StringList is a list that YAML may give as a sequence or as one comma-separated string ("Read, Grep, Glob"),
// the way Claude Code agent files write tools.
type StringList []string

// UnmarshalYAML implements yaml.Unmarshaler.
func (l *StringList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = splitList(n.Value)
		return nil
	case yaml.SequenceNode:
		var items []string
		if err := n.Decode(&items); err != nil {
			return err
		}
		*l = items
		return nil
	default:
		return fmt.Errorf("line %d: want a list or a comma-separated string", n.Line)
	}
}

// UnmarshalJSON accepts a JSON array or a comma-separated string.
func (l *StringList) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = splitList(s)
		return nil
	}
	var items []string
	if err := json.Unmarshal(b, &items); err != nil {
		return err
	}
	*l = items
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Validate checks a type's name, tool patterns and schema.
func (t Type) Validate() error {
	if t.Name == "" {
		return errors.New("subagent type has no name")
	}
	for _, r := range t.Name {
		if !(r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')) {
			return fmt.Errorf("subagent type %q: names may hold letters, digits, '-', '_' and '.'", t.Name)
		}
	}
	if strings.TrimSpace(t.Description) == "" {
		return fmt.Errorf("subagent type %q has no description (the parent reads it to choose a type)", t.Name)
	}
	for _, p := range t.Tools {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("subagent type %q: tool pattern %q: %w", t.Name, p, err)
		}
	}
	if len(t.Schema) > 0 {
		if _, err := compileSchema(t.Schema); err != nil {
			return fmt.Errorf("subagent type %q: schema: %w", t.Name, err)
		}
	}
	return nil
}

var typeKeys = map[string]bool{"name": true, "description": true, "prompt": true, "tools": true, "model": true,
	"max_steps": true, "context": true, "schema": true}

// UnmarshalYAML reads a type from YAML (an agent file's front matter, or a configuration entry); schema may be
// written as a YAML mapping and is converted to JSON.
func (t *Type) UnmarshalYAML(n *yaml.Node) error {
	type plain Type // plain has no methods, so decoding it does not recurse
	var aux struct {
		plain  `yaml:",inline"`
		Schema any `yaml:"schema,omitempty"`
	}
	// Unknown keys are errors: a misspelt "tools" would otherwise silently grant every tool.
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; !typeKeys[k] {
				return fmt.Errorf("line %d: unknown field %q (want one of name, description, prompt, tools, model, max_steps, context, schema)", n.Content[i].Line, k)
			}
		}
	}
	if err := n.Decode(&aux); err != nil {
		return err
	}
	*t = Type(aux.plain)
	if aux.Schema != nil {
		raw, err := json.Marshal(aux.Schema)
		if err != nil {
			return fmt.Errorf("schema: %w", err)
		}
		t.Schema = raw
	}
	return nil
}

// ParseMarkdown reads a subagent type from a Markdown file with YAML front matter, the format of Claude Code's
// agent files:
//
//	---
//	name: code-reviewer
//	description: Reviews a change for bugs
//	tools: read_file, grep, glob
//	model: fast
//	---
//	You are a meticulous reviewer...
func ParseMarkdown(data []byte) (Type, error) {
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		return Type{}, errors.New("no YAML front matter (the file must start with a --- line)")
	}
	var header, body []byte
	if h, b, found := bytes.Cut(rest, []byte("\n---\n")); found {
		header, body = h, b
	} else if h, found := bytes.CutSuffix(bytes.TrimRight(rest, "\n"), []byte("\n---")); found {
		header = h
	} else {
		return Type{}, errors.New("front matter is not closed by a --- line")
	}
	var t Type
	dec := yaml.NewDecoder(bytes.NewReader(header))
	dec.KnownFields(true)
	if err := dec.Decode(&t); err != nil {
		return Type{}, fmt.Errorf("front matter: %w", err)
	}
	if b := strings.TrimSpace(string(body)); b != "" {
		t.Prompt = b
	}
	if err := t.Validate(); err != nil {
		return Type{}, err
	}
	return t, nil
}

// LoadDir reads every *.md file of dir as a subagent type, in name order. A missing directory holds no types.
func LoadDir(dir string) ([]Type, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Type
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("subagent type %s: %w", f, err)
		}
		t, err := ParseMarkdown(data)
		if err != nil {
			return nil, fmt.Errorf("subagent type %s: %w", f, err)
		}
		t.Source = f
		out = append(out, t)
	}
	return out, nil
}

const generalPurposePrompt = `You are a subagent: another agent delegated one task to you. Work on it with your tools until it is done.
Your caller sees only your final message — none of your tool calls or their output — so make the final message
self-contained: the answer, the facts and figures that support it with their sources (URLs, file paths), and any
file you wrote. Be concise: report findings, not the process.`

// DefaultGeneralPurpose is the general-purpose type used when no configured type takes that name.
func DefaultGeneralPurpose() Type {
	return Type{
		Name: GeneralPurpose,
		Description: "General-purpose agent for researching questions, searching and reading sources, and multi-step tasks. " +
			"Use it to keep bulky tool output (MCP calls, large files, web pages) out of your own context: it returns only its findings.",
		Prompt: generalPurposePrompt,
	}
}
