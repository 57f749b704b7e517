package jsonfix

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzRepair feeds arbitrary model output to the repairer: it must never panic, whatever it returns without an
// error is valid JSON of the kind asked for, and valid JSON comes back unchanged. With a shape, an object is
// returned, and a value holding the required keys is returned whenever the text holds one intact.
func FuzzRepair(f *testing.F) {
	for _, s := range []string{
		`{"a": 1}`, "```json\n{\"plan\": [1, 2,]}\n```", `{'a': 'b', c: True, d: None}`, `[1, 2, {"x": "cut off`,
		`Here you go: {"a": [1, 2}`, `{"a": "line` + "\n" + `break"}`, `// c` + "\n" + `{"a":1 /* x */}`,
		`{'a': [1, 2,`, "```json\n{a: b}\n```", `[{"x": "y\"`, `{"a": tru`,
		strings.Repeat("[", 600) + strings.Repeat("]", 600), `{"a":1}{"b":2}`, "\ufeff[]", `{"é": "中文", "k": "\u0000"}`,
		`<think>{"evidence": [{"claim": "a", "quote": "b"}]}</think>{"evidence": []}`, `</think>[{"claim": "a", "quote": "b"},]`,
		`[{'claim': 'x', 'quote': 'it's',},]`, `{"answer": {"evidence": [{"claim": "x", "quote": "y"}]}}`, `[1, [2], {"claim": 3}]`,
		`<think>` + strings.Repeat("{a} ", 150) + `</think>{"evidence": [`, `{"evidence": "not a list"} [{"claim": "c", "quote": "q"}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, kind := range []Kind{Any, Object, Array} {
			r, err := RepairKind(text, kind)
			if err != nil {
				continue
			}
			if !json.Valid([]byte(r.JSON)) {
				t.Fatalf("RepairKind(%q, %d) = %q: not valid JSON", text, kind, r.JSON)
			}
			switch c := r.JSON[0]; {
			case kind == Object && c != '{', kind == Array && c != '[', c != '{' && c != '[':
				t.Fatalf("RepairKind(%q, %d) = %q: wrong kind", text, kind, r.JSON)
			}
		}
		shape := Shape{Kind: Object, Keys: []string{"evidence"}, Items: "evidence", ItemKeys: []string{"claim", "quote"}}
		if r, err := RepairShape(text, shape); err == nil {
			if !json.Valid([]byte(r.JSON)) || r.JSON[0] != '{' {
				t.Fatalf("RepairShape(%q) = %q: not a JSON object", text, r.JSON)
			}
		}
		if trimmed := strings.TrimSpace(text); json.Valid([]byte(trimmed)) && hasKeys(trimmed, shape.Keys) {
			if r, err := RepairShape(text, shape); err != nil || r.JSON != trimmed {
				t.Fatalf("RepairShape changed valid JSON of the shape %q into %q (%v)", trimmed, r.JSON, err)
			}
		}
		if trimmed := strings.TrimSpace(text); json.Valid([]byte(trimmed)) && (strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[")) {
			if got, err := Repair(text); err != nil || got != trimmed {
				t.Fatalf("Repair changed valid JSON %q into %q (%v)", trimmed, got, err)
			}
		}
	})
}
