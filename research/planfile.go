package research

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// PlanFile is the name of the plan in a run folder, in the format ParsePlan reads: a run's plan can be saved,
// edited and given to another run (run --plan FILE).
const PlanFile = "plan.yaml"

// MaxPlanBytes bounds a plan file.
const MaxPlanBytes = 256 << 10

// planYAML is a plan as a person reads and writes it.
type planYAML struct {
	Question     string         `yaml:"question,omitempty"`
	Language     string         `yaml:"language,omitempty"`
	Depth        string         `yaml:"depth,omitempty"`
	SubQuestions []planYAMLItem `yaml:"sub_questions"`
}

type planYAMLItem struct {
	Question    string   `yaml:"question"`
	Queries     []string `yaml:"queries,omitempty"`
	Criteria    string   `yaml:"criteria,omitempty"`
	SourceTypes []string `yaml:"source_types,omitempty"`
}

var (
	planKeys = []string{"question", "language", "depth", "sub_questions"}
	itemKeys = []string{"question", "queries", "criteria", "source_types"}
)

const planHeader = `# The research plan: edit, drop or add sub-questions, then save.
# Each item needs question:; queries: (search queries) and criteria: (what evidence would settle it) are
# optional — a sub-question without queries is searched by its own words. A list of questions alone is a plan.
`

// MarshalPlan renders a plan in the plan file's YAML, with a comment saying how to edit it.
func MarshalPlan(p *Plan) ([]byte, error) {
	out := planYAML{Question: p.Question, Language: p.Language, Depth: p.Depth}
	for _, sq := range p.SubQuestions {
		out.SubQuestions = append(out.SubQuestions, planYAMLItem{Question: sq.Question, Queries: sq.Queries,
			Criteria: sq.Criteria, SourceTypes: sq.SourceTypes})
	}
	var b bytes.Buffer
	b.WriteString(planHeader)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return b.Bytes(), nil
}

// ParsePlan reads a plan file: a mapping with sub_questions: — a list of items with question: and optional
// queries:, criteria: and source_types:, or of bare questions — or a bare list of questions. question:,
// language: and depth: at the top are optional. It refuses, naming the line, what is not such a plan: an empty
// file, a wrong type, an unknown key, more than MaxSubQuestions sub-questions or MaxQueries queries, a question
// longer than MaxQuestionRunes, a file over MaxPlanBytes.
func ParsePlan(b []byte) (*Plan, error) {
	if len(b) > MaxPlanBytes {
		return nil, fmt.Errorf("%w: the plan file has %d bytes; the limit is %d", ErrBadInput, len(b), MaxPlanBytes)
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%w: the plan file is not UTF-8 text", ErrBadInput)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: the plan file is not valid YAML: %v", ErrBadInput, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%w: the plan file is empty: give sub_questions: and a list of questions", ErrBadInput)
	}
	root := doc.Content[0]
	p := &Plan{}
	var items *yaml.Node
	switch root.Kind {
	case yaml.SequenceNode:
		items = root
	case yaml.MappingNode:
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			if !slices.Contains(planKeys, k.Value) {
				return nil, fmt.Errorf("%w: plan file line %d: unknown key %q (the keys are %s)", ErrBadInput, k.Line, k.Value, strings.Join(planKeys, ", "))
			}
			if k.Value == "sub_questions" {
				items = v
				continue
			}
			s, err := scalar(v, k.Value)
			if err != nil {
				return nil, err
			}
			switch k.Value {
			case "question":
				p.Question = s
			case "language":
				p.Language = s
			case "depth":
				p.Depth = s
			}
		}
	default:
		return nil, fmt.Errorf("%w: plan file line %d: the plan is a %s; give a mapping with sub_questions: or a list of questions", ErrBadInput, root.Line, kindName(root))
	}
	if p.Depth != "" && p.Depth != DepthAuto {
		if _, ok := DepthOf(p.Depth); !ok {
			return nil, fmt.Errorf("%w: plan file: depth %q: give %s", ErrBadInput, p.Depth, strings.Join(DepthNames()[1:], ", "))
		}
	}
	if items == nil || items.Kind == yaml.ScalarNode && items.Tag == "!!null" {
		return nil, fmt.Errorf("%w: the plan file has no sub_questions: list", ErrBadInput)
	}
	if items.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%w: plan file line %d: sub_questions is a %s; give a list", ErrBadInput, items.Line, kindName(items))
	}
	if n := len(items.Content); n > MaxSubQuestions {
		return nil, fmt.Errorf("%w: the plan file has %d sub-questions; a run researches at most %d", ErrBadInput, n, MaxSubQuestions)
	}
	for i, it := range items.Content {
		sq, err := planItem(it, i+1)
		if err != nil {
			return nil, err
		}
		p.SubQuestions = append(p.SubQuestions, sq)
	}
	if len(p.SubQuestions) == 0 {
		return nil, fmt.Errorf("%w: the plan file's sub_questions list is empty", ErrBadInput)
	}
	return p, nil
}

func planItem(n *yaml.Node, i int) (SubQuestion, error) {
	var sq SubQuestion
	switch n.Kind {
	case yaml.ScalarNode:
		sq.Question = strings.TrimSpace(n.Value)
	case yaml.MappingNode:
		for j := 0; j+1 < len(n.Content); j += 2 {
			k, v := n.Content[j], n.Content[j+1]
			var err error
			switch k.Value {
			case "question":
				sq.Question, err = scalar(v, "question")
			case "criteria":
				sq.Criteria, err = scalar(v, "criteria")
			case "queries":
				sq.Queries, err = stringList(v, "queries", MaxQueries)
			case "source_types":
				sq.SourceTypes, err = stringList(v, "source_types", MaxQueries)
			default:
				err = fmt.Errorf("%w: plan file line %d: sub-question %d: unknown key %q (the keys are %s)", ErrBadInput, k.Line, i, k.Value, strings.Join(itemKeys, ", "))
			}
			if err != nil {
				return sq, err
			}
		}
	default:
		return sq, fmt.Errorf("%w: plan file line %d: sub-question %d is a %s; give a question or a mapping with question:", ErrBadInput, n.Line, i, kindName(n))
	}
	sq.Question = strings.TrimSpace(sq.Question)
	if sq.Question == "" {
		return sq, fmt.Errorf("%w: plan file line %d: sub-question %d has no question", ErrBadInput, n.Line, i)
	}
	if err := CheckQuestion(sq.Question); err != nil {
		return sq, fmt.Errorf("plan file line %d: sub-question %d: %w", n.Line, i, err)
	}
	for _, q := range sq.Queries {
		if utf8.RuneCountInString(q) > maxQueryRunes {
			return sq, fmt.Errorf("%w: plan file line %d: sub-question %d has a query of %d characters; the limit is %d", ErrBadInput, n.Line, i, utf8.RuneCountInString(q), maxQueryRunes)
		}
	}
	if utf8.RuneCountInString(sq.Criteria) > MaxQuestionRunes {
		return sq, fmt.Errorf("%w: plan file line %d: sub-question %d: the criteria are longer than %d characters", ErrBadInput, n.Line, i, MaxQuestionRunes)
	}
	return sq, nil
}

func scalar(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("%w: plan file line %d: %s is a %s; give text", ErrBadInput, n.Line, key, kindName(n))
	}
	if n.Tag == "!!null" {
		return "", nil
	}
	return strings.TrimSpace(n.Value), nil
}

func stringList(n *yaml.Node, key string, limit int) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		if n.Tag == "!!null" {
			return nil, nil
		}
		return []string{strings.TrimSpace(n.Value)}, nil // one query written without a list
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%w: plan file line %d: %s is a %s; give a list of text", ErrBadInput, n.Line, key, kindName(n))
	}
	if len(n.Content) > limit {
		return nil, fmt.Errorf("%w: plan file line %d: %d %s; the limit is %d", ErrBadInput, n.Line, len(n.Content), key, limit)
	}
	var out []string
	for _, c := range n.Content {
		s, err := scalar(c, key)
		if err != nil {
			return nil, err
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	case yaml.ScalarNode:
		return "single value"
	}
	return "document"
}
