// Package redact removes secrets from text that is about to be stored or printed: error messages from
// providers that echo the request (a key in a URL, a header, a body), log lines, events. It is the one scrubber
// every surface uses.
//
// Like every package under base/, it is importable by other modules but carries no compatibility promise.
package redact

import (
	"regexp"
	"slices"
	"strings"
)

// Mark replaces a secret.
const Mark = "[redacted]"

// minSecret is the shortest value treated as a secret; shorter ones would scrub ordinary words.
const minSecret = 8

// Scrubber removes known secret values and the shapes secrets take (bearer tokens, sk-… keys, key=… parameters,
// passwords in URLs). The zero value and nil scrub the shapes only.
type Scrubber struct {
	secrets []string
}

// New returns a scrubber for the given secret values; values shorter than 8 characters are ignored.
func New(secrets ...string) *Scrubber {
	s := &Scrubber{}
	for _, v := range secrets {
		v = strings.TrimSpace(v)
		if len(v) >= minSecret && !slices.Contains(s.secrets, v) {
			s.secrets = append(s.secrets, v)
		}
	}
	// Longest first, so a secret containing another is removed whole.
	slices.SortFunc(s.secrets, func(a, b string) int { return len(b) - len(a) })
	return s
}

// FromEnv returns a scrubber for EnvValues.
func FromEnv(getenv func(string) string, names ...string) *Scrubber {
	return New(EnvValues(getenv, names...)...)
}

// EnvValues returns the values of the named environment variables that are set. The names of deepresearch's key
// variables are not known here but in the tables that declare them (config.KeyVars: the model and web search
// provider tables), which is where a caller gets them.
func EnvValues(getenv func(string) string, names ...string) []string {
	var vals []string
	for _, k := range names {
		if k == "" {
			continue
		}
		if v := getenv(k); v != "" {
			vals = append(vals, v)
		}
	}
	return vals
}

var shapes = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}`), "${1}" + Mark},
	{regexp.MustCompile(`\b(sk|pk|rk)-[A-Za-z0-9_-]{12,}`), Mark},
	// key=value and "key": "value" pairs whose value has a digit (a key, not a word of prose).
	{regexp.MustCompile(`(?i)(\b(?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|x-api-key|x-subscription-token)["']?\s*[:=]\s*["']?)([^\s"'&,;}]*[0-9][^\s"'&,;}]*)`), "${1}" + Mark},
	{regexp.MustCompile(`(://[^/@\s:]*:)[^/@\s]+@`), "${1}" + Mark + "@"},
	// A secret given as a URL's query parameter (a PostgreSQL URL's ?password= or ?sslpassword=, a ?key= or
	// ?token= of an API), whatever its value looks like.
	{queryRe, "${1}" + Mark},
}

// queryRe matches the value of a URL query parameter that holds a secret.
var queryRe = regexp.MustCompile(`(?i)([?&](?:password|sslpassword|passwd|pass|key|api[_-]?key|apikey|token|access[_-]?token|auth[_-]?token|secret|client[_-]?secret|sig|signature)=)([^&#\s"'<>]+)`)

// Scrub returns text with every known secret and every secret-shaped token replaced by Mark.
func (s *Scrubber) Scrub(text string) string {
	if s != nil {
		for _, v := range s.secrets {
			text = strings.ReplaceAll(text, v, Mark)
		}
	}
	for _, sh := range shapes {
		text = sh.re.ReplaceAllString(text, sh.repl)
	}
	return text
}

// URL returns rawURL with the password of its user information (https://user:key@host) and the values of its
// secret query parameters (password, sslpassword, key, token, …) replaced by Mark, for printing configuration
// and naming a state or server anywhere it is shown.
func URL(rawURL string) string {
	return queryRe.ReplaceAllString(shapes[3].re.ReplaceAllString(rawURL, "${1}"+Mark+"@"), "${1}"+Mark)
}
