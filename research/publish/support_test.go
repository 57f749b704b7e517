package publish

import (
	"errors"
	"strings"
	"testing"
)

const chanQuote = "A send on a channel is synchronized before the completion of the corresponding receive from that channel."

func TestSupportProblem(t *testing.T) {
	base := supportBase{quotes: []string{chanQuote, "The Go memory model specifies the conditions under which reads of a variable in one goroutine can be guaranteed to observe values produced by writes to the same variable in a different goroutine. See https://go.dev/ref/mem for version 1.19 of it."},
		titles: "The Go Memory Model", question: "What does the Go memory model guarantee about channels?"}
	for _, tc := range []struct {
		name, sentence string
		want           string // a fragment of the problem; "" means supported
	}{
		{"paraphrase", "A send on a channel is synchronized before the corresponding receive completes [e1].", ""},
		{"name from the title", "In Go, a send on a channel is synchronized before the receive from that channel completes [e1].", ""},
		{"number in the quote", "The memory model document is version 1.19 [e2].", ""},
		{"URL in the quote", "The model is published at https://go.dev/ref/mem [e2].", ""},
		{"invented URL", "The design note at https://go.dev/design/channel-guarantees-2019 confirms this [e1].", `URL "https://go.dev/design/channel-guarantees-2019"`},
		{"invented URL as a link", "See [the design note](https://go.dev/design/x) for this [e1].", "URL"},
		{"invented number", "A send completes within 3 microseconds of the receive [e1].", "number 3"},
		{"invented name", "Russ Cox wrote that a send on a channel is synchronized before the receive [e1].", `name "Cox"`},
		{"invented code", "The `chan.Lock()` call synchronizes a send with its receive [e1].", "code"},
		{"invented quoted text", `The document says "channels never block" about sends [e1].`, "quoted text"},
		{"unsupported generalisation", "Every channel operation is therefore lock-free and wait-free on all platforms [e1].", "do not say this"},
		{"dotted identifier", "Use sync.Mutex for a send on a channel [e1].", `name "sync.Mutex"`},
		{"other script is left to the judge", "通道上的发送在相应的接收完成之前同步 [e1]。", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := supportProblem(tc.sentence, base)
			if tc.want == "" && got != "" {
				t.Fatalf("supported sentence refused: %s", got)
			}
			if tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("problem %q, want one mentioning %q", got, tc.want)
			}
		})
	}
}

func TestCheckerRemovesUnsupportedEverywhere(t *testing.T) {
	quotes := map[string]string{"e1": chanQuote, "e2": "ch := make(chan int)\nch <- 1"}
	c := Checker{
		Evidence: func(id string) error {
			if _, ok := quotes[id]; !ok {
				return errors.New("unknown")
			}
			return nil
		},
		Quote: func(id string) (string, string, bool) { q, ok := quotes[id]; return q, "The Go Memory Model", ok },
	}
	draft := "# Channels\n\n" +
		"A send on a channel is synchronized before the corresponding receive completes [e1]. " +
		"Every channel operation is therefore lock-free [e1].\n\n" +
		"- A send on a channel is synchronized before the receive [e1].\n" +
		"- Channels were designed in 2019 by the runtime team [e1].\n\n" +
		"| Operation | Guarantee |\n|---|---|\n| send | synchronized before the corresponding receive from that channel [e1] |\n| close | takes 5 ns [e1] |\n\n" +
		"The spec shows it [e2]:\n\n```go\nch := make(chan int)\nch <- 1\n```\n\n" +
		"```go\n// channels are lock-free\nch.Lock()\n```\n"
	problems := c.Check(draft)
	var got []string
	for _, p := range problems {
		got = append(got, p.Sentence)
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{"lock-free [e1]", "designed in 2019", "takes 5 ns", "ch.Lock()"} {
		if !strings.Contains(joined, want) {
			t.Errorf("unsupported %q not refused; refused:\n%s", want, joined)
		}
	}
	out, removed := c.Remove(draft)
	if len(removed) != 4 {
		t.Errorf("removed %d units: %q", len(removed), removed)
	}
	for _, kept := range []string{"completes [e1].", "- A send on a channel", "| send |", "ch <- 1", "| Operation |"} {
		if !strings.Contains(out, kept) {
			t.Errorf("supported %q lost from:\n%s", kept, out)
		}
	}
	for _, gone := range []string{"lock-free", "2019", "5 ns", "Lock()"} {
		if strings.Contains(out, gone) {
			t.Errorf("%q published:\n%s", gone, out)
		}
	}
	claims := c.SupportClaims(out)
	if len(claims) == 0 || len(claims[0].Quotes) != 1 || claims[0].Quotes[0] != chanQuote {
		t.Fatalf("claims %+v", claims)
	}
	c.Judged = map[string]string{claims[1].Sentence: "the quote says the opposite"}
	if p := c.Check(out); len(p) != 1 || !strings.Contains(p[0].Reason, "the quote says the opposite") {
		t.Errorf("judged problems %+v", p)
	}
}

// A sentence that repeats its quote word for word is verbatim however the quote marks up its words: a link's text
// is what a reader sees, and an ellipsis the source itself writes ("a try…except that catches exceptions") is
// no elision: the sentence is not a splice of two fragments. A sentence that joins two real fragments is still
// refused.
func TestVerbatimSentenceOfALinkedQuote(t *testing.T) {
	quotes := map[string]string{
		"e1": "The callable is called inside a [`try`](../reference/compound_stmts.html#try)…[`except`](../reference/compound_stmts.html#except) that catches exceptions, restores the state of the terminal, and then re-raises the exception.",
		"e2": "The absorber is fitted to every unit … the replacement part cost 2,400 euros in 2023.",
		"e3": "The file does not have a `.cjs` extension, and the nearest parent `package.json` file contains a top-level [`\"type\"`](packages.html#type) field with a value of `\"module\"`. Otherwise, the file is loaded using the CommonJS module loader.",
		"e4": "Files with a `.js` extension when the nearest parent `package.json` file contains a top-level [`\"type\"`](packages.html#type) field with a value of `\"module\"`.",
	}
	c := Checker{
		Evidence: func(id string) error {
			if _, ok := quotes[id]; !ok {
				return errors.New("unknown")
			}
			return nil
		},
		Quote: func(id string) (string, string, bool) { q, ok := quotes[id]; return q, "Curses Programming", ok },
	}
	draft := "# Curses\n\n" +
		"The callable is called inside a try…except that catches exceptions, restores the state of the terminal, and then re-raises the exception [e1].\n\n" +
		"The absorber fitted to every unit cost 2,400 euros [e2].\n\n" +
		// A line quoting two claims whole, each with a sentence end inside its quotation marks and a link in its
		// quote: one sentence, both quotations found as their plain text.
		"- Two sources disagree: “Files with a .js extension when the nearest parent package.json file contains a top-level \"type\" field with a value of \"module\"” [e4]; versus “The file does not have a .cjs extension, and the nearest parent package.json file contains a top-level \"type\" field with a value of \"module\". Otherwise, the file is loaded using the CommonJS module loader” [e3].\n"
	problems := c.Check(draft)
	if len(problems) != 1 || !strings.Contains(problems[0].Sentence, "absorber") {
		t.Errorf("problems %+v; want only the splice of e2's fragments", problems)
	}
}
