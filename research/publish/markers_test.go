package publish

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
		if got := CanonicalMarkers(tc.in); got != tc.want {
			t.Errorf("CanonicalMarkers(%q) = %q, want %q", tc.in, got, tc.want)
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

// UnwrapReport is the one way a draft's wrapping is removed: the synthesizer role's answer and the graph's
// check read drafts through it.
func TestUnwrapReport(t *testing.T) {
	const shortReport = "# Channels\n\n## Guarantees\n\nA send happens before the receive completes [e1]. Closing a channel is seen by receivers [e2].\n"
	withCode := "# Channels\n\n## Code\n\nThe memory model shows this loop [e1].\n\n```go\nfor v := range ch {\n}\n```\n\nIt ends when the channel closes [e1].\n"
	for _, tc := range []struct{ name, in, want string }{
		{"preamble and fence", "Here is the report:\n\n```markdown\n# T\n\nA fact [e1].\n```\nHope it helps.", "# T\n\nA fact [e1]."},
		{"unlabelled fence", "```\n# T\n\nA fact 【e1】.\n```", "# T\n\nA fact 【e1】."},
		{"unclosed fence", "Report:\n~~~md\n# T\n\nA fact [e1].", "# T\n\nA fact [e1]."},
		{"code stays code", "# T\n\nThe spec shows it [e2]:\n\n```go\nch := make(chan int)\n```\n", "# T\n\nThe spec shows it [e2]:\n\n```go\nch := make(chan int)\n```\n"},
		{"a fence without citations stays", "# T\n\nA fact [e1].\n\n```\nplain text\n```", "# T\n\nA fact [e1].\n\n```\nplain text\n```"},
		{"several prose fences lose their fences", "A fact [e1].\n```md\nB fact [e2].\n```\n", "A fact [e1].\nB fact [e2].\n"},
		{"text fence", "Output:\n```text\nA fact [e1].\n```", "A fact [e1]."},
		{"CRLF", "Here:\r\n```markdown\r\n# T\r\n\r\nA fact [e1].\r\n```\r\n", "# T\n\nA fact [e1]."},
		{"inline code is no fence", "# T\n\nRun ```go test``` to check [e1].\n", "# T\n\nRun ```go test``` to check [e1].\n"},
		// What the synthesizer role's models write.
		{"preamble, markdown fence, postscript", "Sure! Here is the report:\n\n```markdown\n" + shortReport + "```\n\nLet me know if you need more.", strings.TrimSpace(shortReport)},
		{"md fence", "Report follows.\n```md\n" + shortReport + "```", strings.TrimSpace(shortReport)},
		{"bare fence", "```\n" + shortReport + "```\n", strings.TrimSpace(shortReport)},
		{"four backticks", "Here:\n````markdown\n" + shortReport + "````\nDone.", strings.TrimSpace(shortReport)},
		{"code block inside the wrapper", "Here it is:\n```markdown\n" + withCode + "```\nHope it helps.", strings.TrimSpace(withCode)},
		{"wrapper never closed (cut off)", "Here is the report:\n```markdown\n" + shortReport, strings.TrimSpace(shortReport)},
		{"report with its own code block is left alone", withCode, withCode},
		{"report quoting a fenced Markdown example is left alone", shortReport + "\n```markdown\n# Example\n```\n", shortReport + "\n```markdown\n# Example\n```\n"},
		{"preamble without a fence", "Here is the report you asked for.\n\n" + shortReport, shortReport},
		{"a preamble that cites stays", "As [e1] shows:\n\n" + shortReport, "As [e1] shows:\n\n" + shortReport},
		{"no report in the fence", "```\nplain text\n```", "```\nplain text\n```"},
		{"plain report", shortReport, shortReport},
		{"empty", "", ""},
	} {
		if got := UnwrapReport(tc.in); got != tc.want {
			t.Errorf("%s: UnwrapReport(%q)\n got %q\nwant %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// FuzzUnwrapReport: whatever a model writes, unwrapping never panics, never grows the draft, and only keeps or
// drops whole lines of it.
func FuzzUnwrapReport(f *testing.F) {
	for _, s := range []string{"Here:\n```markdown\n# T\n\nA [e1].\n```\nBye.", "```md\n```go\nx\n```\n# T [e1]\n```",
		"~~~\nA 【e2】\n~~~\n```\nB [e1]\n```", "# T\n````\n```\n[e1]\n````\n", "pre\r\n# T\r\n[e1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u := UnwrapReport(s)
		if len(u) > len(s) {
			t.Fatalf("UnwrapReport grew %q to %q", s, u)
		}
		in := map[string]bool{}
		for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
			in[strings.TrimSpace(l)] = true
		}
		for _, l := range strings.Split(u, "\n") {
			if !in[strings.TrimSpace(l)] {
				t.Fatalf("UnwrapReport(%q) = %q: line %q is not one of the draft's", s, u, l)
			}
		}
	})
}

// FuzzMarkers: whatever a model writes, normalising markers is idempotent, a checked draft never publishes a
// stray marker, and unwrapping a fenced report never panics or grows the draft.
func FuzzMarkers(f *testing.F) {
	for _, s := range []string{"A 【e3】 B [^e2] C [e1†L1-L2] D 【3†source】 [source].", "```markdown\n# T\n\nA [e1].\n```",
		"[[e1]] [E2] ［e3］ 〔e4〕 〖5〗", "## H 【1】\n\n| a | b |\n|---|---|\n| x 【2】 | y [e1] |\n",
		"Yields `[1, 2, 3]` and `【3】` [e1]. Unclosed ` [2] [e1]."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := CanonicalMarkers(s)
		if CanonicalMarkers(c) != c {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, c, CanonicalMarkers(c))
		}
		if u := UnwrapReport(s); len(u) > len(s)+1 {
			t.Fatalf("UnwrapReport grew %q to %q", s, u)
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
