package research

import (
	"strings"
	"testing"
)

func TestCanonicalAndStrayMarkers(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"A claim 【e3】.", "A claim [e3]."},
		{"A claim 【e3, e5】.", "A claim [e3, e5]."},
		{"A claim ［E12］.", "A claim [e12]."},
		{"A claim [^e3].", "A claim [e3]."},
		{"A claim [e3†L10-L12].", "A claim [e3]."},
		{"A claim 【e4†source】.", "A claim [e4]."},
		{"A claim [[e7]].", "A claim [e7]."},
		{"A claim [source: e2].", "A claim [e2]."},
		{"A claim [e3] and [e4].", "A claim [e3] and [e4]."},
		{"See [the spec](https://go.dev/ref/spec) and ![e3](img.png).", "See [the spec](https://go.dev/ref/spec) and ![e3](img.png)."},
		{"A list [x] item and a bare [3].", "A list [x] item and a bare [3]."},
		{"【注意】 this is prose.", "【注意】 this is prose."},
	} {
		if got := canonicalMarkers(tc.in); got != tc.want {
			t.Errorf("canonicalMarkers(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in    string
		stray []string
	}{
		{"A claim 【3†source】.", []string{"【3†source】"}},
		{"A claim [source].", []string{"[source]"}},
		{"A claim [citation needed].", []string{"[citation needed]"}},
		{"A claim [^2].", []string{"[^2]"}},
		{"A claim 【12】 and [e3].", []string{"【12】"}},
		{"A claim [E3] (not made canonical).", []string{"[E3]"}},
		{"A claim [e3], a list [x], 【注意】 and [the spec](https://go.dev).", nil},
	} {
		got := strayMarkers(tc.in)
		if strings.Join(got, "|") != strings.Join(tc.stray, "|") {
			t.Errorf("strayMarkers(%q) = %q, want %q", tc.in, got, tc.stray)
		}
	}
	if got := stripMarkers("## Results 【3†source】 [e2]"); got != "## Results  " {
		t.Errorf("stripMarkers left %q", got)
	}
}

func TestUnfenceReport(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"preamble and fence", "Here is the report:\n\n```markdown\n# T\n\nA fact [e1].\n```\nHope it helps.", "# T\n\nA fact [e1]."},
		{"unlabelled fence", "```\n# T\n\nA fact 【e1】.\n```", "# T\n\nA fact 【e1】."},
		{"unclosed fence", "Report:\n~~~md\n# T\n\nA fact [e1].", "# T\n\nA fact [e1]."},
		{"code stays code", "# T\n\nThe spec shows it [e2]:\n\n```go\nch := make(chan int)\n```\n", "# T\n\nThe spec shows it [e2]:\n\n```go\nch := make(chan int)\n```\n"},
		{"a fence without citations stays", "# T\n\nA fact [e1].\n\n```\nplain text\n```", "# T\n\nA fact [e1].\n\n```\nplain text\n```"},
		{"several prose fences lose their fences", "A fact [e1].\n```md\nB fact [e2].\n```\n", "A fact [e1].\nB fact [e2].\n"},
	} {
		if got := unfenceReport(tc.in); got != tc.want {
			t.Errorf("%s: unfenceReport(%q)\n got %q\nwant %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// FuzzMarkers: whatever a model writes, normalising markers is idempotent, a checked draft never publishes a
// stray marker, and unwrapping a fenced report never panics or grows the draft.
func FuzzMarkers(f *testing.F) {
	for _, s := range []string{"A 【e3】 B [^e2] C [e1†L1-L2] D 【3†source】 [source].", "```markdown\n# T\n\nA [e1].\n```",
		"[[e1]] [E2] ［e3］ 〔e4〕 〖5〗", "## H 【1】\n\n| a | b |\n|---|---|\n| x 【2】 | y [e1] |\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := canonicalMarkers(s)
		if canonicalMarkers(c) != c {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, c, canonicalMarkers(c))
		}
		if u := unfenceReport(s); len(u) > len(s)+1 {
			t.Fatalf("unfenceReport grew %q to %q", s, u)
		}
		ch := Checker{Evidence: func(string) error { return nil }}
		out, _ := ch.Prune(c)
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") || strings.HasPrefix(strings.TrimSpace(line), "~~~") {
				continue
			}
			if st := strayMarkers(line); len(st) > 0 && !strings.Contains(out, "```") && !strings.Contains(out, "~~~") {
				t.Fatalf("stray %q published from %q:\n%s", st, s, out)
			}
		}
	})
}
