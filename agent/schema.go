package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// flatSchema checks arguments against the schema most tool structs produce — an object whose properties each
// have one primitive type (string, integer, number, boolean, optionally null), some of them required, with or
// without additional properties — without the general validator's reflection. Any other schema (nested objects,
// arrays, enums, bounds, patterns …) goes to the general validator.
type flatSchema struct {
	props    map[string][]string // property → allowed JSON types
	required []string
	closed   bool // no additional properties
}

var flatTypes = []string{"string", "integer", "number", "boolean", "null"}

// compileFlat returns the flat form of s, or nil when s says more than a flat schema can check.
func compileFlat(s *jsonschema.Schema) *flatSchema {
	if s == nil {
		return nil
	}
	root := &jsonschema.Schema{Type: s.Type, Title: s.Title, Description: s.Description, Properties: s.Properties,
		Required: s.Required, AdditionalProperties: s.AdditionalProperties, PropertyOrder: s.PropertyOrder}
	if s.Type != "object" || !sameJSON(s, root) {
		return nil
	}
	f := &flatSchema{props: map[string][]string{}, required: s.Required}
	switch ap := s.AdditionalProperties; {
	case ap == nil:
	case sameJSON(ap, &jsonschema.Schema{Not: &jsonschema.Schema{}}):
		f.closed = true
	default:
		return nil
	}
	for name, p := range s.Properties {
		if p == nil {
			return nil
		}
		plain := &jsonschema.Schema{Type: p.Type, Types: p.Types, Title: p.Title, Description: p.Description}
		if !sameJSON(p, plain) {
			return nil
		}
		types := p.Types
		if p.Type != "" {
			types = []string{p.Type}
		}
		if len(types) == 0 {
			return nil
		}
		for _, t := range types {
			if !slices.Contains(flatTypes, t) {
				return nil
			}
		}
		f.props[name] = types
	}
	for _, r := range s.Required {
		if _, ok := f.props[r]; !ok {
			return nil
		}
	}
	return f
}

func sameJSON(a, b *jsonschema.Schema) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// validate checks a decoded JSON value.
func (f *flatSchema) validate(v any) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("want an object, got %s", jsonType(v))
	}
	for _, r := range f.required {
		if _, ok := obj[r]; !ok {
			return fmt.Errorf("missing required property %q", r)
		}
	}
	var extra []string
	for k, val := range obj {
		types, ok := f.props[k]
		if !ok {
			if f.closed {
				extra = append(extra, k)
			}
			continue
		}
		if !typeMatches(types, val) {
			return fmt.Errorf("property %q: want %v, got %s", k, types, jsonType(val))
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("unexpected additional properties %q", extra)
	}
	return nil
}

func typeMatches(types []string, v any) bool {
	for _, t := range types {
		switch x := v.(type) {
		case nil:
			if t == "null" {
				return true
			}
		case string:
			if t == "string" {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case float64:
			if t == "number" || (t == "integer" && x == math.Trunc(x) && !math.IsInf(x, 0)) {
				return true
			}
		}
	}
	return false
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// flatFields fills a struct from the decoded arguments of a flat, closed schema, so that a typed tool's input is
// not parsed a second time. It covers structs whose fields are strings, booleans, numbers or pointers to them,
// each named by its json tag; any other struct (embedded fields, custom unmarshalling, other kinds) is decoded
// by encoding/json instead.
type flatFields struct {
	fields map[string]flatField
}

type flatField struct {
	index int
	ptr   bool
	kind  reflect.Kind
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func compileFields[In any](f *flatSchema) *flatFields {
	t := reflect.TypeFor[In]()
	if f == nil || !f.closed || t.Kind() != reflect.Struct || t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	out := &flatFields{fields: map[string]flatField{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil
		}
		if !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if strings.Contains(opts, "string") {
			return nil
		}
		if name == "" {
			name = sf.Name
		}
		ft, ptr := sf.Type, false
		if ft.Kind() == reflect.Pointer {
			ft, ptr = ft.Elem(), true
		}
		if ft.Implements(unmarshalerType) || reflect.PointerTo(ft).Implements(unmarshalerType) {
			return nil
		}
		switch ft.Kind() {
		case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			return nil
		}
		if _, dup := out.fields[name]; dup {
			return nil
		}
		out.fields[name] = flatField{index: i, ptr: ptr, kind: ft.Kind()}
	}
	for name := range f.props {
		if _, ok := out.fields[name]; !ok {
			return nil
		}
	}
	return out
}

// fill sets the fields of *dst from a validated object; false means it cannot be sure to match encoding/json (a
// number for an integer or float32 field), and the caller decodes the bytes instead.
func (ff *flatFields) fill(dst any, v any) bool {
	obj, _ := v.(map[string]any)
	rv := reflect.ValueOf(dst).Elem()
	for name, val := range obj {
		fd, ok := ff.fields[name]
		if !ok {
			return false
		}
		field := rv.Field(fd.index)
		if val == nil {
			if fd.ptr {
				field.SetZero()
			}
			continue
		}
		if fd.ptr {
			p := reflect.New(field.Type().Elem())
			field.Set(p)
			field = p.Elem()
		}
		switch x := val.(type) {
		case string:
			if fd.kind != reflect.String {
				return false
			}
			field.SetString(x)
		case bool:
			if fd.kind != reflect.Bool {
				return false
			}
			field.SetBool(x)
		case float64:
			// Only float64 fields: encoding/json reads an integer field from the literal ("1.0" and "1e3" fail)
			// and a float32 one with its own rounding, which the decoded value no longer shows.
			if fd.kind != reflect.Float64 {
				return false
			}
			field.SetFloat(x)
		default:
			return false
		}
	}
	return true
}
