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

type fieldsIn struct {
	Name  string  `json:"name"`
	Small int     `json:"small,omitempty"`
	Big   int64   `json:"big,omitempty"`
	Ratio float64 `json:"ratio,omitempty"`
	On    bool    `json:"on,omitempty"`
	Note  *string `json:"note,omitempty"`
	Limit *int    `json:"limit,omitempty"`
	Skip  string  `json:"-"`
	Other string  `json:"other_name,omitempty"`
}

// FuzzFlatFieldsAgree checks that filling a typed input from the value decoded once gives what encoding/json gives
// from the bytes, for every input the flat schema accepts.
func FuzzFlatFieldsAgree(f *testing.F) {
	for _, s := range []string{`{"name":"a"}`, `{"name":"a","small":127}`, `{"name":"a","small":128}`, `{"name":"a","small":-129}`,
		`{"name":"a","small":1e300}`, `{"name":"a","big":9223372036854775808}`, `{"name":"a","big":9223372036854775807}`,
		`{"name":"a","big":-9223372036854775808}`, `{"name":"a","ratio":3.5e38}`, `{"name":"a","ratio":1e39}`, `{"name":"a","note":null}`,
		`{"name":"a","note":"x","limit":3}`, `{"name":"a","limit":null}`, `{"name":"a","other_name":"o","on":true}`, `{"name":"a","name":"b"}`,
		`{"name":"\u00e9\ud83d\ude00"}`, `{"name":"a","small":1.0}`, `{"name":"a","big":1e18}`} {
		f.Add(s)
	}
	schema, err := jsonschema.For[fieldsIn](nil)
	if err != nil {
		f.Fatal(err)
	}
	flat := compileFlat(schema)
	fields := compileFields[fieldsIn](flat)
	if flat == nil || fields == nil {
		f.Fatal("fieldsIn should take the flat path")
	}
	f.Fuzz(func(t *testing.T, input string) {
		var v any
		if json.Unmarshal([]byte(input), &v) != nil || flat.validate(v) != nil {
			return
		}
		var want fieldsIn
		wantErr := json.Unmarshal([]byte(input), &want)
		var got fieldsIn
		if !fields.fill(&got, v) {
			return // the tool falls back to encoding/json
		}
		if wantErr != nil {
			t.Fatalf("%s: filled %+v where encoding/json fails: %v", input, got, wantErr)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Fatalf("%s: filled %s, encoding/json %s", input, a, b)
		}
	})
}
