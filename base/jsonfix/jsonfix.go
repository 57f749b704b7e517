// Package jsonfix recovers a JSON value from what a language model wrote: the value is found inside code fences
// or prose, and the usual defects are repaired — trailing or missing commas, single-quoted or unquoted keys and
// strings, Python literals, comments, raw control characters in strings, mismatched brackets and an answer cut off
// by the output limit. The repair is conservative: it never invents content, it only closes, quotes and drops.
//
// Like every package under base/, it is importable by other modules but carries no compatibility promise.
package jsonfix

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/deepresearch/deepresearch/lexical"
)

// Kind says which JSON value the caller expects at the top level.
type Kind int

// Expected top-level kinds.
const (
	Any    Kind = iota // an object or an array
	Object             // only an object
	Array              // only an array
)

// ErrNoJSON is returned (wrapped) when the text holds nothing that can be read as the expected JSON value.
var ErrNoJSON = errors.New("jsonfix: no JSON value found")

// maxCandidates bounds how many opening brackets are tried at each end of the text, so a long prose answer costs
// linear time.
const maxCandidates = 64

// maxDepth guards the recursive repairer against pathological nesting.
const maxDepth = 512

// Result describes a repair.
type Result struct {
	JSON string
	// Repairs counts the fixes applied; 0 means the value was found intact (possibly inside prose or fences).
	Repairs int
}

// Repair returns the JSON object or array found in text, repaired. See RepairKind.
func Repair(text string) (string, error) {
	r, err := RepairKind(text, Any)
	return r.JSON, err
}

// RepairKind finds the value of the expected kind in text and repairs it. Every opening bracket is a candidate
// start; the winner covers the most text for the fewest repairs, the earliest on a tie.
func RepairKind(text string, kind Kind) (Result, error) {
	return RepairShape(text, Shape{Kind: kind})
}

// Shape is the value a caller expects: its kind and, for an object, the keys its schema requires.
type Shape struct {
	Kind Kind
	// Keys are the keys the expected object holds (its schema's required properties). When set, a value holding
	// them all is preferred to any other, and of those the one that ends last wins: a model that reasons or
	// drafts before answering writes its final answer after the drafts. A value holding none of the shapes
	// falls back to the coverage rule of RepairKind.
	Keys []string
	// Items, when set, names the expected object's one array field: a bare array of the requested items where
	// the object is expected is read as {Items: array}. Its elements must be objects holding ItemKeys.
	Items    string
	ItemKeys []string
}

func (s Shape) shaped() bool { return len(s.Keys) > 0 || s.Items != "" }

// RepairShape finds the value of the expected shape in text and repairs it (see Shape and RepairKind).
func RepairShape(text string, shape Shape) (Result, error) {
	kind := shape.Kind
	trimmed := strings.TrimSpace(strings.TrimPrefix(text, "\ufeff"))
	if trimmed != "" && (kind == Any || (kind == Object) == (trimmed[0] == '{')) && json.Valid([]byte(trimmed)) &&
		(trimmed[0] == '{' || trimmed[0] == '[') && (!shape.shaped() || shape.holds(trimmed)) {
		return Result{JSON: trimmed}, nil
	}
	wrap := shape.Items != "" && kind == Object
	runes := []rune(trimmed)
	// The first and the last maxCandidates opening brackets are tried: an answer follows whatever reasoning or
	// prose came before it, however many brackets that held.
	var starts []int
	for i, r := range runes {
		if (r == '{' && kind != Array) || (r == '[' && (kind != Object || wrap)) {
			starts = append(starts, i)
		}
	}
	if len(starts) > 2*maxCandidates {
		starts = append(starts[:maxCandidates:maxCandidates], starts[len(starts)-maxCandidates:]...)
	}
	var cands []cand
	for _, i := range starts {
		f := &fixer{r: runes[i:]}
		if !f.value(0) {
			continue
		}
		if !json.Valid(f.out) {
			continue
		}
		c := cand{out: string(f.out), repairs: f.repairs, closed: f.closed, consumed: f.i, start: i}
		if runes[i] == '[' && kind == Object {
			// Only as the expected object's array of items.
			if !shape.itemsOf(c.out) {
				continue
			}
			b, _ := json.Marshal(shape.Items) // a Go string always marshals
			c.out, c.shaped = "{"+string(b)+":"+c.out+"}", true
		} else if shape.shaped() {
			c.shaped = shape.holds(c.out)
		}
		cands = append(cands, c)
	}
	if len(cands) == 0 {
		return Result{}, fmt.Errorf("%w in %q", ErrNoJSON, lexical.Clip(trimmed, 120))
	}
	best := -1
	for i, c := range cands {
		if !c.shaped {
			continue
		}
		// The value ending last is the final answer; of values ending together (cut off at the end), the
		// outermost, which starts first.
		if best < 0 || c.end() > cands[best].end() {
			best = i
		}
	}
	if best < 0 {
		// A repair costs as much as a few characters of coverage: the enclosing value beats a cleaner value
		// nested in it, while a short run of prose that needed many repairs loses to the real answer.
		for i, c := range cands {
			if best < 0 || c.score() > cands[best].score() {
				best = i
			}
		}
	}
	return Result{JSON: cands[best].out, Repairs: cands[best].repairs + cands[best].closed}, nil
}

// holds reports whether the JSON text is an object holding every key of s.Keys.
func (s Shape) holds(js string) bool {
	return hasKeys(js, s.Keys)
}

// itemsOf reports whether the JSON text is an array whose elements are objects holding s.ItemKeys.
func (s Shape) itemsOf(js string) bool {
	var elems []json.RawMessage
	if json.Unmarshal([]byte(js), &elems) != nil {
		return false
	}
	for _, e := range elems {
		if !hasKeys(string(e), s.ItemKeys) {
			return false
		}
	}
	return true
}

func hasKeys(js string, keys []string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(js), &m) != nil {
		return false
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

type cand struct {
	out      string
	repairs  int
	closed   int
	consumed int
	start    int
	shaped   bool
}

func (c cand) end() int { return c.start + c.consumed }

const repairCost = 8

func (c cand) score() int { return c.consumed - repairCost*c.repairs }

// fixer is a recursive-descent reader that writes valid JSON while it reads lenient JSON.
type fixer struct {
	r       []rune
	i       int
	out     []byte
	repairs int
	// closed counts containers closed because the text ended; every candidate running to the end shares that
	// cause, so it does not count against a candidate's score.
	closed int
	// closers holds the closing bracket of every open container, innermost last, to tell a mismatched bracket
	// that closes an outer container from a stray one.
	closers []rune
}

func (f *fixer) eof() bool  { return f.i >= len(f.r) }
func (f *fixer) peek() rune { return f.r[f.i] }

func (f *fixer) write(s string) { f.out = append(f.out, s...) }

// skipSpace skips whitespace and comments (// … and /* … */), which JSON does not allow.
func (f *fixer) skipSpace() {
	for !f.eof() {
		c := f.peek()
		switch {
		case unicode.IsSpace(c):
			f.i++
		case c == '/' && f.i+1 < len(f.r) && f.r[f.i+1] == '/':
			f.repairs++
			for !f.eof() && f.peek() != '\n' {
				f.i++
			}
		case c == '/' && f.i+1 < len(f.r) && f.r[f.i+1] == '*':
			f.repairs++
			f.i += 2
			for !f.eof() && !(f.peek() == '*' && f.i+1 < len(f.r) && f.r[f.i+1] == '/') {
				f.i++
			}
			f.i = min(f.i+2, len(f.r))
		default:
			return
		}
	}
}

// closesOuter reports whether c is the closing bracket of some enclosing container.
func (f *fixer) closesOuter(c rune) bool {
	for j := len(f.closers) - 2; j >= 0; j-- {
		if f.closers[j] == c {
			return true
		}
	}
	return false
}

// value reads one value and writes it. It returns false, having written nothing, when there is no usable value
// here (the text ended, or a stray character was skipped); the caller then drops the member.
func (f *fixer) value(depth int) bool {
	f.skipSpace()
	if f.eof() {
		return false
	}
	if depth > maxDepth {
		f.i = len(f.r)
		return false
	}
	switch c := f.peek(); {
	case c == '{':
		f.i++
		f.object(depth + 1)
		return true
	case c == '[':
		f.i++
		f.array(depth + 1)
		return true
	case c == '"' || c == '\'' || c == '“':
		f.str()
		return true
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return f.number()
	case isWordStart(c):
		return f.bareword()
	default:
		f.i++
		f.repairs++
		return false
	}
}

func isWordStart(c rune) bool { return unicode.IsLetter(c) || c == '_' || c == '$' }

func (f *fixer) object(depth int) { f.container(depth, '{', '}') }

func (f *fixer) array(depth int) { f.container(depth, '[', ']') }

// container reads the members of an object ('{' … '}') or an array ('[' … ']') after its opening bracket, up to
// its closing one, and writes them: a member that cannot be read is dropped, a missing or doubled comma is
// mended, a closing bracket of the other kind closes the container when it closes an enclosing one (and is
// skipped when it does not), and a container the text ends in is closed.
func (f *fixer) container(depth int, open, closer rune) {
	stray := ']'
	if closer == ']' {
		stray = '}'
	}
	f.write(string(open))
	f.closers = append(f.closers, closer)
	defer func() { f.closers = f.closers[:len(f.closers)-1] }()
	n, sawComma := 0, false
	for {
		f.skipSpace()
		if f.eof() { // cut off: close what is open
			f.closed++
			f.write(string(closer))
			return
		}
		switch c := f.peek(); {
		case c == closer:
			f.i++
			if sawComma {
				f.repairs++ // trailing comma, never written
			}
			f.write(string(closer))
			return
		case c == stray:
			f.repairs++
			if f.closesOuter(c) {
				f.write(string(closer))
				return
			}
			f.i++
			continue
		case c == ',':
			if sawComma || n == 0 {
				f.repairs++
			}
			sawComma = true
			f.i++
			continue
		}
		mark := len(f.out)
		if n > 0 {
			if !sawComma {
				f.repairs++
			}
			f.write(",")
		}
		ok := false
		if closer == '}' {
			ok = f.member(depth)
		} else {
			ok = f.value(depth)
		}
		if !ok {
			f.out = f.out[:mark]
			continue
		}
		n++
		sawComma = false
	}
}

// member reads one member of an object, key and value, and writes it. It returns false when there is no whole
// member here; the container then drops what it wrote.
func (f *fixer) member(depth int) bool {
	if !f.key() {
		return false
	}
	f.skipSpace()
	if f.eof() {
		return false
	}
	switch c := f.peek(); {
	case c == ':' || c == '=':
		if c == '=' {
			f.repairs++
		}
		f.i++
	case c == ',' || c == '}' || c == ']':
		f.repairs++ // a key without a value
		return false
	default:
		f.repairs++ // missing colon
	}
	f.write(":")
	f.skipSpace()
	if f.eof() || strings.ContainsRune(",}]", f.peek()) || !f.value(depth) {
		f.repairs++
		return false
	}
	return true
}

// key reads an object key: a quoted string or a bare identifier. It returns false, having skipped something,
// when there is no complete key.
func (f *fixer) key() bool {
	c := f.peek()
	if c == '"' || c == '\'' || c == '“' {
		return f.str()
	}
	start := f.i
	for !f.eof() {
		c := f.peek()
		if unicode.IsSpace(c) || strings.ContainsRune(`:,{}[]"'=`, c) {
			break
		}
		f.i++
	}
	if f.i == start {
		f.i++ // a stray character where a key belongs
		f.repairs++
		return false
	}
	f.repairs++
	f.writeString(string(f.r[start:f.i]))
	return true
}

// str reads a string delimited by ", ' or “…” and writes it double-quoted. A quote character followed by
// something other than a delimiter is taken as an unescaped quote inside the string. It returns false when the
// text ended inside the string (the string is still closed and written).
func (f *fixer) str() bool {
	open := f.peek()
	closeQ := open
	if open == '“' {
		closeQ = '”'
	}
	if open != '"' {
		f.repairs++
	}
	f.i++
	var b strings.Builder
	for !f.eof() {
		c := f.peek()
		f.i++
		switch {
		case c == '\\':
			if f.eof() {
				f.repairs++
				continue
			}
			e := f.peek()
			f.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				b.WriteRune('\\')
				b.WriteRune(e)
			case 'u':
				if f.i+4 <= len(f.r) && isHex(f.r[f.i:f.i+4]) {
					b.WriteString(`\u`)
					b.WriteString(string(f.r[f.i : f.i+4]))
					f.i += 4
				} else {
					f.repairs++
					b.WriteString(`\\u`)
				}
			case '\'':
				b.WriteRune('\'')
			default:
				f.repairs++
				b.WriteString(`\\`)
				f.i-- // the escaped character is ordinary text
			}
		case c == closeQ || (c == '"' && open == '“'):
			if f.endsString() {
				f.writeRaw(`"` + b.String() + `"`)
				return true
			}
			f.repairs++
			if c == '"' {
				b.WriteString(`\"`)
			} else {
				b.WriteRune(c)
			}
		case c == '"':
			b.WriteString(`\"`)
		case c < 0x20:
			f.repairs++
			switch c {
			case '\n':
				b.WriteString(`\n`)
			case '\t':
				b.WriteString(`\t`)
			case '\r':
				b.WriteString(`\r`)
			default:
				fmt.Fprintf(&b, `\u%04x`, c)
			}
		default:
			b.WriteRune(c)
		}
	}
	f.repairs++ // cut off inside the string
	f.writeRaw(`"` + b.String() + `"`)
	return false
}

// endsString decides whether the quote just read closes the string: it does when what follows (after spaces)
// is a delimiter, the end of the text, or another string.
func (f *fixer) endsString() bool {
	j := f.i
	for j < len(f.r) && unicode.IsSpace(f.r[j]) {
		j++
	}
	if j >= len(f.r) {
		return true
	}
	return strings.ContainsRune(`,:=}]"'“`, f.r[j]) || (f.r[j] == '/' && j+1 < len(f.r) && (f.r[j+1] == '/' || f.r[j+1] == '*'))
}

func isHex(rs []rune) bool {
	for _, r := range rs {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

func (f *fixer) writeRaw(s string) { f.out = append(f.out, s...) }

func (f *fixer) writeString(s string) {
	b, _ := json.Marshal(s) // a Go string always marshals
	f.out = append(f.out, b...)
}

func (f *fixer) number() bool {
	start := f.i
	for !f.eof() && strings.ContainsRune("+-.0123456789eE", f.peek()) {
		f.i++
	}
	tok := string(f.r[start:f.i])
	if json.Valid([]byte(tok)) {
		f.write(tok)
		return true
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(tok, "."), 64)
	if err != nil {
		f.repairs++
		if f.eof() {
			return false // "1e" or "-" at the end: cut off
		}
		f.writeString(tok)
		return true
	}
	f.repairs++
	f.write(strconv.FormatFloat(v, 'g', -1, 64))
	return true
}

var literals = map[string]string{
	"true": "true", "false": "false", "null": "null",
	"True": "true", "False": "false", "None": "null", "TRUE": "true", "FALSE": "false", "NULL": "null",
	"nil": "null", "undefined": "null", "NaN": "null", "Infinity": "null",
}

// bareword reads an unquoted value: a literal, or text the model forgot to quote, up to the next delimiter.
func (f *fixer) bareword() bool {
	start := f.i
	for !f.eof() && !strings.ContainsRune(",:{}[]\n", f.peek()) {
		f.i++
	}
	w := strings.TrimSpace(string(f.r[start:f.i]))
	if lit, ok := literals[w]; ok {
		if lit != w {
			f.repairs++
		}
		f.write(lit)
		return true
	}
	if f.eof() {
		for lit := range literals {
			if strings.HasPrefix(lit, w) {
				f.repairs++
				return false // "tru" at the end: a literal cut off
			}
		}
	}
	f.repairs++
	f.writeString(w)
	return true
}
