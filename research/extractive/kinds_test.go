package extractive

import "testing"

func TestPassageKind(t *testing.T) {
	tests := []struct {
		text string
		want kind
	}{
		{"A send on a channel is synchronized before the completion of the corresponding receive from that channel.", kindRule},
		{"The closing of a channel is synchronized before a receive that returns a zero value because the channel is closed.", kindRule},
		{"The Go 1.21 release added a new toolchain directive.", kindPlain},
		{"Each send on a particular channel is matched to a corresponding receive from that channel, usually in a different goroutine.", kindRule},
		{"Do not store Contexts inside a struct type; instead, pass a Context explicitly to each function that needs it.", kindRule},
		{"Programs that modify data being simultaneously accessed by multiple goroutines must serialize such access.", kindRule},
		{"The write to `a` is sequenced before the receive on `c`, which is synchronized before the corresponding send on `c` completes.", kindExample},
		{"Multiple threads can execute `once.Do(f)` for a particular `f`, but only one will run `f()`.", kindPlain},
		{"In the previous example, replacing `c <- 0` with `close(c)` yields a program with the same guaranteed behavior.", kindExample},
		{"The set of pseudo-registers is the same for all architectures:\n\n- `FP`: Frame pointer.\n- `SB`: Static base pointer.", kindDefinition},
		{"This program starts a goroutine for every entry in the work list.", kindExample},
		{"For example, a Reader may return a non-zero number of bytes at the end of the input stream.", kindExample},
		{"If you must read the rest of this document to understand the behavior of your program, you are being too clever.", kindMeta},
		{"The memory model is specified more formally in the next section.", kindMeta},
		{"As noted already, programmers are strongly encouraged to use appropriate synchronization to avoid data races.", kindMeta},
		{"A *data race* is defined as a write to a memory location happening concurrently with another read or write.", kindDefinition},
		{"Channel communication is the main method of synchronization between goroutines.", kindDefinition},
		{"A GODEBUG setting is a key=value pair that controls the execution of certain parts of a Go program.", kindDefinition},
		{"Is reports whether any error in err's tree matches target.", kindDefinition},
		{"Copy copies from src to dst until either EOF is reached on src or an error occurs.", kindDefinition},
		{"Go 1.23 changed the channels created by package time to be unbuffered.", kindPlain},
		{"- Each call of `once.Do(f)` runs f at most once.", kindRule},
		{"子 Agent 必须在独立的上下文窗口中工作。", kindRule},
		{"上下文压缩是指在窗口将满时把旧消息替换为摘要。", kindDefinition},
		{"例如，当上下文达到 85% 时触发压缩。", kindExample},
		{"本文介绍两种系统的上下文管理。", kindMeta},
		{"Claude Code 在上下文达到 95% 时触发压缩。", kindPlain},
	}
	for _, tt := range tests {
		if got := passageKind(tt.text); got != tt.want {
			t.Errorf("passageKind(%q) = %s, want %s", tt.text, got, tt.want)
		}
	}
}

func TestKindWeightOrder(t *testing.T) {
	for _, facet := range []string{"", facetDefinition, facetCaveats} {
		if !(kindRule.weight(facet) > kindPlain.weight(facet) && kindPlain.weight(facet) > kindExample.weight(facet) &&
			kindExample.weight(facet) > kindMeta.weight(facet)) {
			t.Errorf("facet %q: want rule > plain > example > meta", facet)
		}
	}
	if kindExample.weight(facetExamples) != kindRule.weight(facetExamples) {
		t.Error("the examples facet asks for examples: they must count in full there")
	}
}

func TestPassageKindIgnoresAsides(t *testing.T) {
	tests := []struct {
		text string
		want kind
	}{
		{"Tuples are immutable, and usually contain a heterogeneous sequence of elements that are accessed via unpacking (see later in this section) or indexing.", kindPlain},
		{"The rest of this section explains (briefly) how the planner works.", kindMeta},
		{"(See the next section.)", kindMeta},
		{"Lists are mutable（详见本节）and homogeneous.", kindPlain},
	}
	for _, tt := range tests {
		if got := passageKind(tt.text); got != tt.want {
			t.Errorf("passageKind(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// A parameter list's item says what one argument is, in API references of Node's and JSDoc's form; prose that
// names a parameter in passing is no item.
func TestParameterKind(t *testing.T) {
	for text, want := range map[string]bool{
		"`callback` {Function} The function to call when the timer elapses.":    true,
		"callback <Function> The function to call when the timer elapses.":      true,
		"...args <any> Optional arguments to pass when the callback is called.": true,
		"- `options` {Object}":                            true,
		"Returns: <Timeout> for use with clearInterval()": true,
		"`callback` [&lt;Function&gt;](https://developer.mozilla.org/) The function to call.": true,
		"* Returns: {boolean}": true,
		"Schedules repeated execution of `callback` every `delay` milliseconds.":      false,
		"The callback is called with <any> value.":                                    false,
		"A `Timeout` object is returned by setInterval() and can be passed to clear.": false,
	} {
		if got := passageKind(text) == kindParameter; got != want {
			t.Errorf("passageKind(%q) = %v, want parameter %v", text, passageKind(text), want)
		}
	}
}
