package corpus

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// An ignore pattern is matched as git's wildmatch matches it (with
// FNM_PATHNAME: "*", "?" and classes never match "/"), but in time linear
// in the path: a pattern is split at its slashes into parts, one per path
// component or a "**" for any number of components; the parts are matched
// against the path's components with one backtracking point (the last
// "**"), and a part against a component by a bit-parallel automaton with
// one bit per token, so that no pattern, however many stars it has, costs
// more than a few machine words per character of the name. A regular
// expression of "a*a*…*b" grew with every star and a hostile .gitignore of
// 200 such patterns cost most of a second per file name.

// globPattern is one ignore pattern, compiled.
type globPattern struct {
	parts []*globPart
	// anchored: the pattern had a slash (other than at its end) and is
	// matched against the whole path relative to its file's folder;
	// otherwise against the path's last component only.
	anchored bool
	never    bool // malformed (an unterminated class, a trailing backslash): matches nothing
}

// globPart is one slash-separated part of a pattern: "**" (any number of
// components, when anchored) or a glob matching exactly one component.
type globPart struct {
	starstar bool
	// Fast paths, most patterns: exact is the part when it is plain text;
	// prefix and suffix when it is "text*", "*text" or "*".
	exact          string
	plain          bool // the part is exact
	anyPrefix      bool // the part is prefix + "*" + suffix, no other token
	prefix, suffix string
	nfa            *globNFA // anything else
}

// globToken kinds.
const (
	tokLit   = iota // one character, as its UTF-8 bytes
	tokAny          // "?": any one character
	tokStar         // "*": any run of characters (within the component)
	tokClass        // "[…]"
	tokSlash        // a separator between parts
)

type globToken struct {
	kind  uint8
	lit   rune
	class *globClass
}

// globClass is a bracket expression: its ranges (pairs lo, hi) and whether
// it is negated.
type globClass struct {
	negate bool
	ranges []rune
}

func (c *globClass) matches(r rune) bool {
	in := false
	for i := 0; i+1 < len(c.ranges); i += 2 {
		if c.ranges[i] <= r && r <= c.ranges[i+1] {
			in = true
			break
		}
	}
	return in != c.negate
}

// compileGlob compiles an ignore pattern's body: its "!" and trailing "/"
// removed, and its leading "/" removed with anchored set.
func compileGlob(body string, anchored bool) *globPattern {
	g := &globPattern{anchored: anchored}
	toks, ok := tokenizeGlob(body)
	if !ok {
		g.never = true
		return g
	}
	var cur []globToken
	flush := func() {
		g.parts = append(g.parts, newGlobPart(cur, anchored))
		cur = nil
	}
	for _, t := range toks {
		if t.kind == tokSlash {
			flush()
			continue
		}
		cur = append(cur, t)
	}
	flush()
	if !anchored {
		return g
	}
	// A trailing "/**" matches everything inside the folder, not the folder
	// itself: one component or more.
	if n := len(g.parts); n > 1 && g.parts[n-1].starstar {
		g.parts = slices.Insert(g.parts, n-1, &globPart{anyPrefix: true})
	}
	for _, p := range g.parts {
		if !p.starstar && p.plain && p.exact == "" {
			g.never = true // "a//b": no path has an empty component
		}
	}
	return g
}

// tokenizeGlob splits a pattern into tokens. A backslash makes the next
// character itself; "[" starts a class when a "]" follows it somewhere
// (else it is itself); in a class "!" or "^" first negates it, a "]" first
// is itself and "a-z" is a range. ok is false for what git matches nothing
// with: a trailing backslash, a class that never closes, a pattern that is
// not valid UTF-8.
func tokenizeGlob(p string) (toks []globToken, ok bool) {
	if !utf8.ValidString(p) {
		return nil, false
	}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\\':
			if i+1 == len(p) {
				return nil, false
			}
			r, w := utf8.DecodeRuneInString(p[i+1:])
			if r == '/' { // still a separator, as in git
				toks = append(toks, globToken{kind: tokSlash})
			} else {
				toks = append(toks, globToken{kind: tokLit, lit: r})
			}
			i += 1 + w
		case c == '*': // consecutive stars are kept: a part of "**" alone is told apart
			toks = append(toks, globToken{kind: tokStar})
			i++
		case c == '?':
			toks = append(toks, globToken{kind: tokAny})
			i++
		case c == '/':
			toks = append(toks, globToken{kind: tokSlash})
			i++
		case c == '[' && strings.IndexByte(p[i+1:], ']') >= 0:
			cl, n, ok := parseClass(p[i+1:])
			if !ok {
				return nil, false
			}
			toks = append(toks, globToken{kind: tokClass, class: cl})
			i += 1 + n
		default:
			r, w := utf8.DecodeRuneInString(p[i:])
			toks = append(toks, globToken{kind: tokLit, lit: r})
			i += w
		}
	}
	return toks, true
}

// parseClass parses a class after its "[", returning it and the bytes it
// took, its closing "]" included.
func parseClass(p string) (*globClass, int, bool) {
	cl := &globClass{}
	i := 0
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		cl.negate = true
		i++
	}
	first := true
	var prev rune
	hasPrev := false
	for i < len(p) {
		c := p[i]
		if c == ']' && !first {
			return cl, i + 1, true
		}
		first = false
		if c == '[' && i+1 < len(p) && p[i+1] == ':' {
			// To the first "]": a class name when ":" is before it, else
			// "[" is itself.
			if end := strings.IndexByte(p[i+2:], ']'); end >= 1 && p[i+2+end-1] == ':' {
				rs, ok := posixClasses[p[i+2:i+2+end-1]]
				if !ok {
					return nil, 0, false // git matches nothing with an unknown class
				}
				cl.ranges = append(cl.ranges, rs...)
				i += 2 + end + 1
				hasPrev = false
				continue
			}
		}
		var r rune
		if c == '\\' {
			if i+1 == len(p) {
				return nil, 0, false
			}
			var w int
			r, w = utf8.DecodeRuneInString(p[i+1:])
			i += 1 + w
		} else if c == '-' && hasPrev && i+1 < len(p) && p[i+1] != ']' {
			i++
			hi, w := utf8.DecodeRuneInString(p[i:])
			if p[i] == '\\' {
				if i+1 == len(p) {
					return nil, 0, false
				}
				hi, w = utf8.DecodeRuneInString(p[i+1:])
				w++
			}
			i += w
			// The range replaces its start, added as a one-character range;
			// a range backwards is empty, its start still matching (as in
			// git, which tries the start before it sees the "-").
			if hi >= prev {
				cl.ranges[len(cl.ranges)-1] = hi
			}
			hasPrev = false
			continue
		} else {
			var w int
			r, w = utf8.DecodeRuneInString(p[i:])
			i += w
		}
		cl.ranges = append(cl.ranges, r, r)
		prev, hasPrev = r, true
	}
	return nil, 0, false // never closed
}

// posixClasses are the "[:name:]" classes git knows, over ASCII as in git.
var posixClasses = map[string][]rune{
	"alnum":  {'0', '9', 'A', 'Z', 'a', 'z'},
	"alpha":  {'A', 'Z', 'a', 'z'},
	"blank":  {' ', ' ', '\t', '\t'},
	"cntrl":  {0, 31, 127, 127},
	"digit":  {'0', '9'},
	"graph":  {'!', '~'},
	"lower":  {'a', 'z'},
	"print":  {' ', '~'},
	"punct":  {'!', '/', ':', '@', '[', '`', '{', '~'},
	"space":  {'\t', '\r', ' ', ' '},
	"upper":  {'A', 'Z'},
	"xdigit": {'0', '9', 'A', 'F', 'a', 'f'},
}

// literal returns the longest run of literal characters of one part of the
// pattern: every path it matches holds it.
func (g *globPattern) literal() string {
	best := ""
	for _, p := range g.parts {
		for _, s := range []string{p.exact, p.prefix, p.suffix} {
			if len(s) > len(best) {
				best = s
			}
		}
		if p.nfa != nil && len(p.nfa.longest) > len(best) {
			best = p.nfa.longest
		}
	}
	return best
}

// newGlobPart compiles the tokens of one part.
func newGlobPart(toks []globToken, anchored bool) *globPart {
	stars := 0
	for _, t := range toks {
		if t.kind == tokStar {
			stars++
		}
	}
	if anchored && stars >= 2 && stars == len(toks) {
		return &globPart{starstar: true} // "**" alone between slashes
	}
	// Elsewhere consecutive stars are one star.
	merged := toks[:0:0]
	for _, t := range toks {
		if t.kind == tokStar && len(merged) > 0 && merged[len(merged)-1].kind == tokStar {
			continue
		}
		merged = append(merged, t)
	}
	toks = merged
	if stars == 0 && allLit(toks) {
		return &globPart{plain: true, exact: litString(toks)}
	}
	if i := slices.IndexFunc(toks, func(t globToken) bool { return t.kind == tokStar }); i >= 0 &&
		stars > 0 && allLit(toks[:i]) && allLit(toks[i+1:]) {
		return &globPart{anyPrefix: true, prefix: litString(toks[:i]), suffix: litString(toks[i+1:])}
	}
	return &globPart{nfa: newGlobNFA(toks)}
}

func allLit(toks []globToken) bool {
	for _, t := range toks {
		if t.kind != tokLit {
			return false
		}
	}
	return true
}

func litString(toks []globToken) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteRune(t.lit)
	}
	return b.String()
}

// match reports whether the part matches the component name (no slash).
func (p *globPart) match(name string) bool {
	switch {
	case p.plain:
		return name == p.exact
	case p.anyPrefix:
		return len(name) >= len(p.prefix)+len(p.suffix) && strings.HasPrefix(name, p.prefix) && strings.HasSuffix(name, p.suffix)
	default:
		return p.nfa.match(name)
	}
}

// match reports whether the pattern matches rel, a slash-separated path
// without "." or ".." components.
func (g *globPattern) match(rel string) bool {
	if g.never {
		return false
	}
	if !g.anchored {
		return g.parts[0].match(rel[strings.LastIndexByte(rel, '/')+1:])
	}
	// The parts against the components, "**" matching any number of them.
	// On a mismatch the last "**" seen takes one more component and the
	// parts after it start again there: as for "*" in a glob, that finds a
	// match whenever there is one, in components × parts steps.
	parts, n := g.parts, len(rel)
	pi, pos := 0, 0 // the next part, and where the next component starts (n+1: none left)
	star, starPos := -1, 0
	for pos <= n {
		end := strings.IndexByte(rel[pos:], '/')
		if end < 0 {
			end = n
		} else {
			end += pos
		}
		switch {
		case pi < len(parts) && parts[pi].starstar:
			star, starPos = pi, pos
			pi++
		case pi < len(parts) && parts[pi].match(rel[pos:end]):
			pi++
			pos = end + 1
		case star >= 0:
			if e := strings.IndexByte(rel[starPos:], '/'); e < 0 {
				starPos = n + 1
			} else {
				starPos += e + 1
			}
			pos, pi = starPos, star+1
		default:
			return false
		}
	}
	for pi < len(parts) && parts[pi].starstar {
		pi++
	}
	return pi == len(parts)
}

// globNFA matches one component with a pattern of literal characters, "?",
// classes and "*": bit i of the state is set when the first i tokens can
// match what was read so far. A character moves every bit whose token it
// matches one up, and keeps the bits of stars; a star's bit also sets the
// next one (a star matches nothing too). Consecutive stars are merged, so
// that one such step is all a star needs.
type globNFA struct {
	words  int      // uint64 words of state (tokens + 1 bits)
	tokens int      // the final state's bit
	fixed  int      // tokens that are not stars: the fewest characters a match has
	stars  []uint64 // the bits of the stars
	// The tokens matching a character are the same for all characters of
	// an interval between the runes the pattern names (its literals and its
	// classes' bounds): bounds are the intervals' starts, masks the
	// intervals' token bits, words per interval.
	bounds []rune
	masks  []uint64
	// longest is the longest run of literal tokens; head and tail the
	// runs the pattern starts and ends with, which a name must start and
	// end with (checked first: most names fail there).
	longest, head, tail string
}

func newGlobNFA(toks []globToken) *globNFA {
	n := &globNFA{tokens: len(toks), words: (len(toks) + 1 + 63) / 64}
	for i := 0; i < len(toks); {
		j := i
		for j < len(toks) && toks[j].kind == tokLit {
			j++
		}
		if run := litString(toks[i:j]); len(run) > len(n.longest) {
			n.longest = run
		}
		i = j + 1
	}
	h := 0
	for h < len(toks) && toks[h].kind == tokLit {
		h++
	}
	tl := len(toks)
	for tl > h && toks[tl-1].kind == tokLit {
		tl--
	}
	n.head, n.tail = litString(toks[:h]), litString(toks[tl:])
	n.stars = make([]uint64, n.words)
	cuts := []rune{0}
	for i, t := range toks {
		switch t.kind {
		case tokStar:
			n.stars[i/64] |= 1 << (i % 64)
		case tokLit:
			n.fixed++
			cuts = append(cuts, t.lit, t.lit+1)
		case tokClass:
			n.fixed++
			for k := 0; k+1 < len(t.class.ranges); k += 2 {
				cuts = append(cuts, t.class.ranges[k], t.class.ranges[k+1]+1)
			}
		default:
			n.fixed++
		}
	}
	slices.Sort(cuts)
	n.bounds = slices.Compact(cuts)
	n.masks = make([]uint64, len(n.bounds)*n.words)
	for j, r := range n.bounds {
		m := n.masks[j*n.words : (j+1)*n.words]
		for i, t := range toks {
			var ok bool
			switch t.kind {
			case tokLit:
				ok = t.lit == r
			case tokAny:
				ok = true
			case tokClass:
				ok = t.class.matches(r)
			}
			if ok {
				m[i/64] |= 1 << (i % 64)
			}
		}
	}
	return n
}

// mask returns the bits of the tokens that match r.
func (n *globNFA) mask(r rune) []uint64 {
	lo, hi := 0, len(n.bounds) // the last bound <= r
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if n.bounds[mid] <= r {
			lo = mid
		} else {
			hi = mid
		}
	}
	return n.masks[lo*n.words : (lo+1)*n.words]
}

func (n *globNFA) match(name string) bool {
	if n.fixed > len(name) || !strings.HasPrefix(name, n.head) || !strings.HasSuffix(name, n.tail) {
		return false // every token but a star takes one character, of one byte or more
	}
	var buf [8]uint64
	var state []uint64
	if n.words <= len(buf) {
		state = buf[:n.words]
	} else {
		state = make([]uint64, n.words)
	}
	state[0] = 1
	n.closeStars(state)
	for _, r := range name {
		m := n.mask(r)
		var carry, any uint64
		for w := range state {
			moved := state[w] & m[w]
			next := moved<<1 | carry | state[w]&n.stars[w]
			carry = moved >> 63
			state[w] = next
			any |= next
		}
		if any == 0 {
			return false
		}
		n.closeStars(state)
	}
	return state[n.tokens/64]&(1<<(n.tokens%64)) != 0
}

// closeStars sets the bit after every set star bit.
func (n *globNFA) closeStars(state []uint64) {
	var carry uint64
	for w := range state {
		s := state[w] & n.stars[w]
		state[w] |= s<<1 | carry
		carry = s >> 63
	}
}
