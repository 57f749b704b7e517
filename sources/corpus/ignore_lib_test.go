package corpus

import (
	"regexp"
	"strings"
	"sync/atomic"

	gitignore "github.com/sabhiram/go-gitignore"
)

// The matcher the corpus used before glob.go, kept as the fuzz tests'
// reference: a pattern rewritten for the go-gitignore library, which turns
// it into a regular expression. Where the two differ the library departs
// from git (see libAgrees).

// libRule is one pattern of an ignore file, compiled on its own so that
// its order and negation are ours to apply.
type libRule struct {
	gi      *gitignore.GitIgnore // the pattern without its leading "!"
	negate  bool
	dirOnly bool // ends with "/": matches folders only
	// below: ends with "/**": matches what is below the folder, not the folder
	below bool
	// literal is the longest run of plain characters of the pattern: a
	// path without it cannot match, which spares most regular expressions
	// (a scan tries every pattern on every entry).
	literal string
	// exact is the library's regular expression without its "or anything
	// below" ending, made the first time the pattern matches: git matches
	// a pattern against the path itself (what is below an excluded folder
	// is excluded by not walking it), so that "!*/" re-includes folders,
	// not every file in them.
	exact atomic.Pointer[regexp.Regexp]
}

// matches reports whether the pattern matches rel, a slash-separated path
// relative to the folder of its file (a folder when dir).
func (r *libRule) matches(rel string, dir bool) bool {
	if r.dirOnly && !dir || !strings.Contains(rel, r.literal) {
		return false
	}
	if r.dirOnly {
		rel += "/"
	}
	ok, ip := r.gi.MatchesPathHow(rel)
	if !ok || ip == nil {
		return ok
	}
	re := r.exact.Load()
	if re == nil {
		expr := ip.Pattern.String()
		for _, end := range []string{"/(|.*)$", "(|/.*)$"} {
			if e, cut := strings.CutSuffix(expr, end); cut {
				if end[0] == '/' {
					e += "/"
				}
				expr = e + "$"
				if r.below {
					expr = strings.TrimSuffix(e, "(|/.*)") + "/.+$"
				}
				break
			}
		}
		var err error
		if re, err = regexp.Compile(expr); err != nil {
			return true // as the library matched it
		}
		r.exact.Store(re)
	}
	return re.MatchString(rel)
}

// compileLib compiles one line of an ignore file as the corpus used to; nil
// for a line it skipped.
func compileLib(line string) *libRule {
	line = strings.Trim(strings.TrimRight(line, "\r"), " ")
	if line == "" || line[0] == '#' {
		return nil
	}
	r := &libRule{}
	if line[0] == '!' {
		r.negate, line = true, line[1:]
	}
	body := strings.TrimSuffix(line, "/")
	r.dirOnly = len(body) < len(line)
	r.literal = longestLiteral(body)
	r.below = strings.HasSuffix(body, "/**")
	if body == "" || body == "/" {
		return nil
	}
	if strings.Contains(body, "/") && line[0] != '/' {
		line = "/" + line
	}
	line, ok := globToLib(line)
	if !ok {
		return nil
	}
	r.gi = gitignore.CompileIgnoreLines(line)
	return r
}

// globToLib rewrites the glob syntax of a pattern that the library would
// take for regular expression syntax (it turns only "*", "**" and "." into
// their regular expressions and keeps the rest): "?" is any one character
// but "/", "[!…]" is a negated class, "+", "(", "|" and the like are
// themselves, and a backslash makes the next character itself. ok is false
// for a pattern git matches nothing with (a trailing backslash).
func globToLib(p string) (string, bool) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			if i+1 == len(p) {
				return "", false
			}
			i++
			switch n := p[i]; {
			case n == '*':
				b.WriteString(`\*`) // kept literal by the library
			case n == '.':
				b.WriteByte('.') // escaped by the library
			case n == '?':
				b.WriteString("[?]")
			case n < 0x80 && (n >= 'a' && n <= 'z' || n >= 'A' && n <= 'Z' || n >= '0' && n <= '9' || n == ' ' || n == '/'):
				b.WriteByte(n)
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
		case inClass:
			switch c {
			case ']':
				inClass = false
				b.WriteByte(c)
			case '*', '[':
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		case c == '[' && strings.IndexByte(p[i+1:], ']') >= 0:
			inClass = true
			b.WriteByte('[')
			if i+1 < len(p) && (p[i+1] == '!' || p[i+1] == '^') {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' { // a "]" first is itself
				b.WriteString(`\]`)
				i++
			}
		case c == '?':
			b.WriteString("[^/]")
		case strings.IndexByte("+(){}|^$[]", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// libAgrees reports whether the library follows git for this pattern and
// path: its regular expressions read some glob syntax otherwise.
func libAgrees(pattern, path string) bool {
	if strings.Contains(path, "\n") {
		return false // "." in the library's expressions is no newline
	}
	line := strings.Trim(pattern, " ")
	if strings.HasPrefix(line, "! ") || strings.HasSuffix(line, "/ ") {
		return false // the library trims the spaces after a "!" or before a "/" again
	}
	body := strings.TrimSuffix(strings.TrimPrefix(line, "!"), "/")
	if strings.Contains(body, "**/**") {
		return false // the library's expressions for the two overlap
	}
	if strings.HasSuffix(line, "/**/") {
		return false // the library's expression for "dir/**/" matches no folder in dir
	}
	if strings.Contains(body, "[") && strings.Contains(body, `\`) {
		return false // the old literal ended a class at an escaped "]"
	}
	if strings.Contains(body, "[:") {
		return false // a class "[:alpha:]" is a set of characters to the library
	}
	// Runs of stars: git reads "**" as any number of folders only between
	// slashes (or the ends), and any other run as one "*"; the library
	// reads "**/" and "/**" as folders wherever they are, and "***" oddly.
	for i := 0; i < len(body); i++ {
		if body[i] == '\\' {
			i++
			continue
		}
		if body[i] != '*' {
			continue
		}
		j := i
		for j < len(body) && body[j] == '*' {
			j++
		}
		if j-i >= 2 {
			left := i == 0 || body[i-1] == '/'
			right := j == len(body) || body[j] == '/'
			if j-i > 2 || left != right || (left && i == 1 && j == len(body)) {
				return false
			}
		}
		i = j - 1
	}
	return true
}

// longestLiteral returns the longest run of a pattern's characters that
// any path it matches contains as they are: no wildcard, class or escape,
// and no slash at its ends (which "**/" may match as nothing).
func longestLiteral(p string) string {
	best, start := "", 0
	end := func(i int) {
		if run := strings.Trim(p[start:i], "/"); len(run) > len(best) {
			best = run
		}
	}
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?', '\\':
			end(i)
			start = i + 1
		case '[': // a class, to its closing "]", is no literal
			end(i)
			if i+2 <= len(p) {
				if j := strings.IndexByte(p[i+2:], ']'); j >= 0 {
					i += 2 + j
				}
			}
			start = i + 1
		}
	}
	end(len(p))
	return best
}
