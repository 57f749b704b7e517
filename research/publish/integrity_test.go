package publish

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSplitSentences(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Alpha is fast [e1]. Beta is slow [e2].", []string{"Alpha is fast [e1].", "Beta is slow [e2]."}},
		{"Alpha is fast. [e1] Beta is slow. [e2, e3]", []string{"Alpha is fast. [e1]", "Beta is slow. [e2, e3]"}},
		{"Version 1.5 shipped, e.g. on Linux [e1].", []string{"Version 1.5 shipped, e.g. on Linux [e1]."}},
		{"阿尔法很快[e1]。贝塔很慢[e2]。", []string{"阿尔法很快[e1]。", "贝塔很慢[e2]。"}},
		{"See example.com for more [e4]", []string{"See example.com for more [e4]"}},
		// No sentence ends inside code, a span or a flattened fence; a lone backtick is literal.
		{"然后： ```sh deepresearch run \"删除？\" ``` [e1]。下一句[e2]。", []string{"然后： ```sh deepresearch run \"删除？\" ``` [e1]。", "下一句[e2]。"}},
		{"Call `f(). Then` twice [e1]. Next [e2].", []string{"Call `f(). Then` twice [e1].", "Next [e2]."}},
		{"A ` tick. B ``x`` c. D.", []string{"A ` tick.", "B ``x`` c.", "D."}},
		// A quotation in curly or corner quotes is quoted whole; an unclosed one is text.
		{"Sources disagree: “Files with a .js extension. Otherwise, the file is CommonJS.” [e6]; versus “No.” [e7]. Next [e8].",
			[]string{"Sources disagree: “Files with a .js extension. Otherwise, the file is CommonJS.” [e6]; versus “No.” [e7].", "Next [e8]."}},
		{"说法不一致：「甲。乙。」[e1]。下一句[e2]。", []string{"说法不一致：「甲。乙。」[e1]。", "下一句[e2]。"}},
		{"An “open quote. Then text [e1]. Next [e2].", []string{"An “open quote.", "Then text [e1].", "Next [e2]."}},
		{"He wrote `“x. y` here. Then “z.” [e1]", []string{"He wrote `“x. y` here.", "Then “z.” [e1]"}},
	} {
		if got := SplitSentences(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("SplitSentences(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestIntegrityCheckAndRemoval(t *testing.T) {
	check := func(id string) error {
		switch id {
		case "e1", "e2":
			return nil
		case "e3":
			return errors.New("rejected")
		}
		return errors.New("unknown")
	}
	draft := `# Title

## Findings

Alpha is fast [e1]. The sky is green. Beta is cheap [e2, e3].

The findings are:

- Gamma is old [e2].
- Delta is new [7].

| Item | Value |
|------|-------|
| Alpha | 10 [e1] |
| Beta | 20 |

` + "```\ncode is not checked\n```" + `

## Sources

- some list the model wrote
`
	problems := CheckIntegrity(draft, check)
	var reasons []string
	for _, p := range problems {
		reasons = append(reasons, p.Sentence+" => "+p.Reason)
	}
	if len(problems) != 4 {
		t.Fatalf("problems:\n%s", strings.Join(reasons, "\n"))
	}
	joined := strings.Join(reasons, "\n")
	for _, want := range []string{"The sky is green. => factual sentence without a citation", "cites e3: rejected",
		"cites [7], which is not an evidence id", "| Beta | 20 | => factual sentence without a citation"} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing problem %q in:\n%s", want, joined)
		}
	}
	out, removed := RemoveUnsupported(draft, check)
	if len(removed) != 4 {
		t.Fatalf("removed %q", removed)
	}
	for _, gone := range []string{"green", "Beta is cheap", "Delta", "| Beta", "some list"} {
		if strings.Contains(out, gone) {
			t.Errorf("%q still in:\n%s", gone, out)
		}
	}
	for _, kept := range []string{"# Title", "Alpha is fast [e1].", "- Gamma is old [e2].", "| Alpha | 10 [e1] |", "code is not checked", "The findings are:"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%q lost from:\n%s", kept, out)
		}
	}
	if p := CheckIntegrity(out, check); len(p) != 0 {
		t.Fatalf("cleaned draft still has problems: %v", p)
	}
}

func TestRenumberInOrderOfFirstUse(t *testing.T) {
	out, order := Renumber("A [e7]. B [e3, e7]. C [e3][e9].")
	if out != "A [1]. B [1, 2]. C [2][3]." || !slices.Equal(order, []string{"e7", "e3", "e9"}) {
		t.Fatalf("got %q %v", out, order)
	}
}

func TestGrounded(t *testing.T) {
	text := "The Go memory model specifies the conditions\nunder which reads of a variable in one goroutine.\n内存模型规定了\n条件。"
	for _, tc := range []struct {
		quote string
		want  bool
	}{
		{"specifies the conditions under which reads", true},
		{"specifies  the\tconditions   under", true},
		{"内存模型规定了条件。", true},
		{"specifies the condition under which", false},
		{"Go", false}, // too short to ground anything
	} {
		if got := Grounded(text, tc.quote); got != tc.want {
			t.Errorf("Grounded(%q) = %v, want %v", tc.quote, got, tc.want)
		}
	}
}

// A heading all of whose units were removed goes with them; a heading that stood over nothing in the draft says
// something itself ("— no grounded evidence found") and stays, and so does one over a subsection.
func TestRemovalDropsHeadingsLeftOverNothing(t *testing.T) {
	check := func(id string) error {
		if id == "e1" {
			return nil
		}
		return errors.New("rejected")
	}
	draft := "# Report\n\n## Kept\n\nAlpha is fast [e1]. Beta is slow [e3].\n\n## Emptied\n\nGamma is old [e3].\n\n- Delta is new [e3].\n\n" +
		"## Nothing found in the sources\n\n## Parent\n\n### Child\n\nEpsilon [e1].\n\n## Table\n\n| a | b |\n|---|---|\n| x [e3] | y |\n"
	out, removed := RemoveUnsupported(draft, check)
	if len(removed) != 4 {
		t.Errorf("removed %q", removed)
	}
	for _, gone := range []string{"## Emptied", "Gamma", "Delta"} {
		if strings.Contains(out, gone) {
			t.Errorf("%q left in:\n%s", gone, out)
		}
	}
	for _, kept := range []string{"# Report", "## Kept", "Alpha is fast [e1].", "## Nothing found in the sources", "## Parent", "### Child", "## Table", "| a | b |"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%q lost from:\n%s", kept, out)
		}
	}
}

// A bracketed list in a code span ("`[1, 2, 3]`", "`【3】`") is code, not citations: it is neither refused as a
// bare number nor renumbered, while the same list outside code still is, and a sentence whose only "citation" is in
// code cites nothing.
func TestMarkersInCodeAreCode(t *testing.T) {
	check := func(id string) error {
		if id == "e1" {
			return nil
		}
		return errors.New("unknown")
	}
	for draft, want := range map[string]string{
		"For example, `list((1, 2, 3))` yields `[1, 2, 3]` [e1].": "",
		"Full-width brackets in code: `x【3】` stay [e1].":          "",
		"For example, list((1, 2, 3)) yields [1, 2, 3] [e1].":     "which is not an evidence id",
		"The list `[e1]` is written in code.":                     "factual sentence without a citation",
	} {
		var reasons []string
		for _, p := range CheckIntegrity(draft, check) {
			reasons = append(reasons, p.Reason)
		}
		got := strings.Join(reasons, "; ")
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("CheckIntegrity(%q) = %q, want %q", draft, got, want)
		}
	}
	out, order := Renumber("Yields `[1, 2, 3]` [e4]. Then [e4].")
	if out != "Yields `[1, 2, 3]` [1]. Then [1]." || !slices.Equal(order, []string{"e4"}) {
		t.Errorf("Renumber: %q %v", out, order)
	}
	if got := StripMarkers("Yields `[1, 2]` [e4]."); got != "Yields `[1, 2]` ." {
		t.Errorf("StripMarkers: %q", got)
	}
}

// A backtick left open on one line hides no citation of another: code spans are read line by line.
func TestUnclosedBacktickHidesNoCitation(t *testing.T) {
	md := "It's `x and more [e1].\n\nNext `y` [e2] and `z`.\n"
	out, order := Renumber(md)
	if out != "It's `x and more [1].\n\nNext `y` [2] and `z`.\n" || !slices.Equal(order, []string{"e1", "e2"}) {
		t.Errorf("Renumber(%q) = %q %v", md, out, order)
	}
}
