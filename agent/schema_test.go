package agent

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type flatIn struct {
	Text  string   `json:"text" jsonschema:"what to echo"`
	N     int      `json:"n,omitempty"`
	Ratio float64  `json:"ratio,omitempty"`
	On    bool     `json:"on,omitempty"`
	Note  *string  `json:"note,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

type plainIn struct {
	Path  string `json:"path"`
	Limit int    `json:"limit,omitempty"`
	Deep  bool   `json:"deep"`
}

// Only schemas the flat checker can judge alone take the fast path.
func TestCompileFlat(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    func() *jsonschema.Schema
		flat bool
	}{
		{"primitives", func() *jsonschema.Schema { s, _ := jsonschema.For[plainIn](nil); return s }, true},
		{"with an array", func() *jsonschema.Schema { s, _ := jsonschema.For[flatIn](nil); return s }, false},
		{"empty struct", func() *jsonschema.Schema { s, _ := jsonschema.For[struct{}](nil); return s }, true},
		{"enum", func() *jsonschema.Schema {
			s, _ := jsonschema.For[plainIn](nil)
			s.Properties["path"].Enum = []any{"a", "b"}
			return s
		}, false},
		{"minimum", func() *jsonschema.Schema {
			s, _ := jsonschema.For[plainIn](nil)
			m := 1.0
			s.Properties["limit"].Minimum = &m
			return s
		}, false},
	} {
		if got := compileFlat(tc.s()) != nil; got != tc.flat {
			t.Errorf("%s: flat %v, want %v", tc.name, got, tc.flat)
		}
	}
}

// FuzzFlatSchemaAgrees checks that the fast path accepts exactly what the general validator accepts.
func FuzzFlatSchemaAgrees(f *testing.F) {
	for _, s := range []string{`{"path":"a","deep":true}`, `{"path":"a"}`, `{"deep":false}`, `{"path":3,"deep":true}`,
		`{"path":"a","deep":true,"x":1}`, `{"path":"a","deep":true,"limit":2.5}`, `{"path":"a","deep":true,"limit":2.0}`,
		`{"path":null,"deep":true}`, `[]`, `"s"`, `null`, `{"path":"a","deep":"yes"}`, `{"path":"a","deep":true,"limit":-0}`,
		`{"path":"a","deep":true,"limit":1e400}`, `{"path":"a","deep":true,"limit":12345678901234567890}`} {
		f.Add(s)
	}
	schema, err := jsonschema.For[plainIn](nil)
	if err != nil {
		f.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		f.Fatal(err)
	}
	flat := compileFlat(schema)
	if flat == nil {
		f.Fatal("plainIn's schema is flat")
	}
	f.Fuzz(func(t *testing.T, input string) {
		var v any
		if json.Unmarshal([]byte(input), &v) != nil {
			return
		}
		general := resolved.Validate(v)
		fast := flat.validate(v)
		if (general == nil) != (fast == nil) {
			t.Fatalf("%s: general validator says %v, flat says %v", input, general, fast)
		}
	})
}
