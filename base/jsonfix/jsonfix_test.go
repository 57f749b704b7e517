package jsonfix

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestRepair(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		kind    Kind
		want    string // compared as decoded JSON
		repairs bool   // whether Repairs must be > 0
	}{
		{name: "valid", in: `{"a": 1, "b": [true, null]}`, want: `{"a":1,"b":[true,null]}`},
		{name: "fenced with prose", in: "Here is the plan:\n```json\n{\"a\": \"x\"}\n```\nHope this helps!", want: `{"a":"x"}`},
		{name: "prose braces before the answer", in: "Use the {format} you asked for. {\"a\": 1, \"b\": 2}", kind: Object, want: `{"a":1,"b":2}`},
		{name: "trailing commas", in: `{"a": [1, 2, ], "b": 3, }`, want: `{"a":[1,2],"b":3}`, repairs: true},
		{name: "single quotes", in: `{'a': 'it\'s', 'b': 'say "hi"'}`, want: `{"a":"it's","b":"say \"hi\""}`, repairs: true},
		{name: "apostrophe inside single quotes", in: `{'a': 'it's fine'}`, want: `{"a":"it's fine"}`, repairs: true},
		{name: "unquoted keys", in: `{pass: true, gaps: [], notes_1: "ok"}`, want: `{"pass":true,"gaps":[],"notes_1":"ok"}`, repairs: true},
		{name: "python literals", in: `{"a": True, "b": None, "c": False}`, want: `{"a":true,"b":null,"c":false}`, repairs: true},
		{name: "comments", in: "{\n // the answer\n \"a\": 1, /* why */ \"b\": 2\n}", want: `{"a":1,"b":2}`, repairs: true},
		{name: "missing commas", in: "{\"a\": 1\n \"b\": [1 2 3]}", want: `{"a":1,"b":[1,2,3]}`, repairs: true},
		{name: "raw newline in string", in: "{\"a\": \"line1\nline2\"}", want: `{"a":"line1\nline2"}`, repairs: true},
		{name: "unescaped inner quotes", in: `{"quote": "He said "no" twice", "x": 1}`, want: `{"quote":"He said \"no\" twice","x":1}`, repairs: true},
		{name: "invalid escape", in: `{"a": "C:\path"}`, want: `{"a":"C:\\path"}`, repairs: true},
		{name: "truncated in string value", in: `{"items": [{"claim": "abc", "quote": "the quick bro`, want: `{"items":[{"claim":"abc","quote":"the quick bro"}]}`, repairs: true},
		{name: "truncated after key", in: `{"a": 1, "b": `, want: `{"a":1}`, repairs: true},
		{name: "truncated in key", in: `{"a": 1, "bb`, want: `{"a":1}`, repairs: true},
		{name: "truncated literal", in: `{"a": 1, "b": tru`, want: `{"a":1}`, repairs: true},
		{name: "truncated number", in: `{"a": 1, "b": 1e`, want: `{"a":1}`, repairs: true},
		{name: "truncated after comma", in: `[1, 2, `, kind: Array, want: `[1,2]`, repairs: true},
		{name: "truncated nested", in: "```json\n{\"sub_questions\": [{\"question\": \"q\", \"queries\": [\"a\", \"b\"", want: `{"sub_questions":[{"question":"q","queries":["a","b"]}]}`, repairs: true},
		{name: "mismatched bracket", in: `{"a": [1, 2}`, want: `{"a":[1,2]}`, repairs: true},
		{name: "numbers", in: `{"a": .5, "b": +3, "c": 1., "d": -0.25}`, want: `{"a":0.5,"b":3,"c":1,"d":-0.25}`, repairs: true},
		{name: "unquoted string value", in: `{"lang": zh}`, want: `{"lang":"zh"}`, repairs: true},
		{name: "curly quotes", in: `{“a”: “b”}`, want: `{"a":"b"}`, repairs: true},
		{name: "chinese text", in: "好的，结果如下：\n{\"language\": \"zh\", \"问题\": \"量子计算的现状？\",}", want: `{"language":"zh","问题":"量子计算的现状？"}`, repairs: true},
		{name: "array wanted", in: `Result: {"x": 1} ... [1, 2]`, kind: Array, want: `[1,2]`},
		{name: "object wanted skips array", in: `[note] {"x": 1}`, kind: Object, want: `{"x":1}`},
		{name: "first of two objects", in: `{"a": 1} {"b": 2}`, kind: Object, want: `{"a":1}`},
		{name: "equals for colon", in: `{"a" = 1}`, want: `{"a":1}`, repairs: true},
		{name: "doubled comma", in: `[1,,2]`, want: `[1,2]`, repairs: true},
		{name: "bom and spaces", in: "\ufeff  {\"a\":1}  ", want: `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := RepairKind(tt.in, tt.kind)
			if err != nil {
				t.Fatalf("RepairKind(%q): %v", tt.in, err)
			}
			if !json.Valid([]byte(res.JSON)) {
				t.Fatalf("output is not valid JSON: %s", res.JSON)
			}
			var got, want any
			_ = json.Unmarshal([]byte(res.JSON), &got)
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatalf("bad test want: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("RepairKind(%q)\n got  %s\n want %s", tt.in, res.JSON, tt.want)
			}
			if tt.repairs != (res.Repairs > 0) {
				t.Errorf("Repairs = %d, want repairs=%v", res.Repairs, tt.repairs)
			}
		})
	}
}

func TestRepairNoJSON(t *testing.T) {
	for _, in := range []string{"", "I cannot answer that.", "```\n```", "[1, 2]"} {
		_, err := RepairKind(in, Object)
		if !errors.Is(err, ErrNoJSON) {
			t.Errorf("RepairKind(%q, Object) error = %v, want ErrNoJSON", in, err)
		}
	}
}

func TestRepairDeepNestingIsBounded(t *testing.T) {
	in := strings.Repeat("[", 100_000)
	res, err := Repair(in)
	if err == nil && !json.Valid([]byte(res)) {
		t.Fatalf("invalid output for deep nesting")
	}
}

// TestRepairShape: with the shape the schema asks for, the answer is the value holding the required keys that
// ends last — not a draft inside reasoning, not a wrapper around it — and a bare array of the requested items
// stands for the object.
func TestRepairShape(t *testing.T) {
	ev := Shape{Kind: Object, Keys: []string{"evidence"}, Items: "evidence", ItemKeys: []string{"claim", "quote"}}
	manyBrackets := strings.Repeat("{x} [y] ", 200)
	tests := []struct {
		name  string
		in    string
		shape Shape
		want  string
	}{
		{name: "draft in a think block, answer after it", shape: ev,
			in:   `<think>Draft: {"evidence": [{"claim": "c", "quote": "a paraphrase of it", "confidence": 1}]} — no, quote verbatim.</think>` + "\n" + `{"evidence": [{"claim": "c", "quote": "the verbatim text", "confidence": 0.8}]}`,
			want: `{"evidence":[{"claim":"c","quote":"the verbatim text","confidence":0.8}]}`},
		{name: "closing tag only", shape: ev,
			in:   `Let me think. {"evidence": [{"claim": "x", "quote": "draft"}, {"claim": "y", "quote": "draft"}]}</think>{"evidence": [{"claim": "x", "quote": "final"}]}`,
			want: `{"evidence":[{"claim":"x","quote":"final"}]}`},
		{name: "answer cut off after a complete draft", shape: ev,
			in:   `<think>{"evidence": [{"claim": "x", "quote": "draft"}]}</think>{"evidence": [{"claim": "x", "quote": "fin`,
			want: `{"evidence":[{"claim":"x","quote":"fin"}]}`},
		{name: "wrapper object around the answer", shape: ev,
			in:   `{"response": {"evidence": [{"claim": "x", "quote": "q"}]}, "note": "done"}`,
			want: `{"evidence":[{"claim":"x","quote":"q"}]}`},
		{name: "bare array of items", shape: ev,
			in:   `[{"claim": "x", "quote": "q", "confidence": 0.5}, {"claim": "y", "quote": "r", "confidence": 0.4}]`,
			want: `{"evidence":[{"claim":"x","quote":"q","confidence":0.5},{"claim":"y","quote":"r","confidence":0.4}]}`},
		{name: "bare array in prose and fences", shape: ev,
			in:   "Here are the items:\n```json\n[{\"claim\": \"x\", \"quote\": \"q\"},]\n```",
			want: `{"evidence":[{"claim":"x","quote":"q"}]}`},
		{name: "empty bare array", shape: ev, in: `[]`, want: `{"evidence":[]}`},
		{name: "single quotes and trailing commas", shape: ev,
			in:   `{'evidence': [{'claim': 'Channels synchronise goroutines.', 'quote': 'A send on a channel is synchronized before the completion of the receive.', 'confidence': 0.9,},],}`,
			want: `{"evidence":[{"claim":"Channels synchronise goroutines.","quote":"A send on a channel is synchronized before the completion of the receive.","confidence":0.9}]}`},
		{name: "single-quoted bare array", shape: ev,
			in:   `[{'claim': 'x', 'quote': 'it's here',},]`,
			want: `{"evidence":[{"claim":"x","quote":"it's here"}]}`},
		{name: "answer after hundreds of brackets of reasoning", shape: ev,
			in:   "<think>" + manyBrackets + "</think>\n" + `{"evidence": [{"claim": "x", "quote": "q"}]}`,
			want: `{"evidence":[{"claim":"x","quote":"q"}]}`},
		{name: "prose braces after the answer", shape: Shape{Kind: Object, Keys: []string{"pass"}},
			in:   `{"pass": true, "gaps": []} I used {braces} here.`,
			want: `{"pass":true,"gaps":[]}`},
		{name: "no value holds the keys: coverage decides", shape: Shape{Kind: Object, Keys: []string{"verdicts"}},
			in:   `{"a": 1, "b": 2} {"c": 3}`,
			want: `{"a":1,"b":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := RepairShape(tt.in, tt.shape)
			if err != nil {
				t.Fatalf("RepairShape(%q): %v", tt.in, err)
			}
			var got, want any
			if err := json.Unmarshal([]byte(res.JSON), &got); err != nil {
				t.Fatalf("output is not valid JSON: %s", res.JSON)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatalf("bad test want: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("RepairShape(%q)\n got  %s\n want %s", clip(tt.in), res.JSON, tt.want)
			}
		})
	}
}

// TestRepairShapeRefusesOtherArrays: a bare array stands for the object only when its elements are the
// requested items; otherwise nothing of the expected shape is made up (the schema check then says what is wrong).
func TestRepairShapeRefusesOtherArrays(t *testing.T) {
	ev := Shape{Kind: Object, Keys: []string{"evidence"}, Items: "evidence", ItemKeys: []string{"claim", "quote"}}
	for _, in := range []string{`[1, 2, 3]`, `["a", "b"]`, `[{"claim": "x"}]`, `See [1] and [2].`} {
		res, err := RepairShape(in, ev)
		if err == nil && hasKeys(res.JSON, ev.Keys) {
			t.Errorf("RepairShape(%q) = %s, want no value holding %v", in, res.JSON, ev.Keys)
		}
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
