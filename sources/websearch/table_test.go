package websearch

import (
	"slices"
	"strings"
	"testing"
)

// Every provider in the table is built from what it says it needs, and refused, naming the variable, without it.
func TestProviderTable(t *testing.T) {
	if len(Providers()) == 0 || !slices.IsSorted(Names()) {
		t.Fatalf("names %v: want the table in alphabetical order", Names())
	}
	for _, p := range Providers() {
		env := map[string]string{}
		if p.URLEnv != "" {
			env[p.URLEnv] = "http://127.0.0.1:9/"
		}
		if len(p.KeyEnv) > 0 {
			env[p.KeyEnv[len(p.KeyEnv)-1]] = "k" // any of the variables will do
		}
		s, err := New(" "+strings.ToUpper(p.Name)+" ", Config{Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if s.Name() != p.Name {
			t.Errorf("%s builds a searcher named %q", p.Name, s.Name())
		}
		if p.BaseURL == "" && p.URLEnv == "" {
			t.Errorf("%s has neither a public endpoint nor an instance variable", p.Name)
		}
		_, err = New(p.Name, Config{Getenv: func(string) string { return "" }})
		switch {
		case p.NeedsNothing() && err != nil:
			t.Errorf("%s needs nothing but fails without its environment: %v", p.Name, err)
		case !p.NeedsNothing() && (err == nil || !strings.Contains(err.Error(), p.Needs())):
			t.Errorf("%s without its environment: %v, want a message naming %s", p.Name, err, p.Needs())
		}
		if !strings.Contains(Help(), p.Name+" ("+p.Needs()+")") {
			t.Errorf("help %q omits %s", Help(), p.Name)
		}
	}
	for _, k := range []string{"TAVILY_API_KEY", "BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY", "EXA_API_KEY"} {
		if !slices.Contains(KeyEnvs(), k) {
			t.Errorf("KeyEnvs lacks %s", k)
		}
	}
}
