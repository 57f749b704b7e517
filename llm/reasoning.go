package llm

import "strings"

// Reasoning models put their thinking in one of several places: a reasoning field beside the answer
// (reasoning_content, reasoning), typed content parts or blocks (Mistral's thinking parts, Anthropic's thinking
// blocks), or the answer text itself, between <think> and </think> (or <thinking> tags) — opened by the model, or
// opened by the chat template so that only the closing tag arrives. The adapters hand what arrived apart to
// SplitAnswer and feed the text through a ThinkSplitter, so that every shape ends the same way: the answer in
// Message.Content, the thinking in Message.Reasoning. Roles only ever read Content.

// answerStarts are the characters an answer opens with and reasoning prose does not: a JSON object or array, a
// Markdown heading, a code fence. Text opening with one is the answer from its first byte.
const answerStarts = "{[#`"

// thinkTags are the block tags models write around their reasoning, open and close.
var thinkTags = [][2]string{{"<think>", "</think>"}, {"<thinking>", "</thinking>"}}

// ThinkSplitter separates think blocks from the answer in text that arrives in pieces (a stream's deltas) or
// whole. Write returns the part of the answer that is certain so far — never reasoning, never a tag split across
// pieces — and Close the rest, so that the pieces returned, joined, are exactly Answer().
//
// The rules: a block opened at the start of the text (after white space, possibly several blocks in a row) is
// reasoning up to its closing tag, or to the end of the text when it never closes (an answer cut while
// thinking). A closing tag with no opening tag — the chat template opened the block — makes everything before it
// reasoning, when it stands at the start or end of a line (as templates and models write it; a tag inside JSON
// text or in the middle of a sentence is the answer's own text). Text that does not open with a tag is therefore
// held back until such a closing tag or the end, unless it opens the way answers do and reasoning does not (a JSON
// object or array, a Markdown heading, a code fence) or Separate was called: a server that sends reasoning in a
// field of its own has already taken it out of the text. A prose answer from a model that does not reason is
// thus shown whole at the end of its stream, never mixed with reasoning. White space between the reasoning and the answer is
// dropped; an answer with no think tags is returned unchanged. The zero value is ready to use.
type ThinkSplitter struct {
	// Eager streams prose at once even while it may still turn out to be reasoning closed by a lone closing tag,
	// for displays that want text as it comes (chat); Answer and Reasoning stay exact either way.
	Eager     bool
	shown     int // bytes of pending already streamed (Eager)
	state     int
	separate  bool
	sawBlock  bool
	closeTag  string
	pending   string          // text not yet classified
	scanned   int             // how far pending has been searched for an orphan closing tag
	block     strings.Builder // the think block being read
	answer    strings.Builder
	reasoning strings.Builder
}

const (
	tsStart     = iota // only white space so far (or a partial open tag)
	tsThink            // inside a think block
	tsUndecided        // text that may still turn out to be reasoning closed by an orphan tag
	tsAnswer           // the answer: everything passes
	tsClosed
)

// Separate tells the splitter that the server delivers reasoning apart from the text, so that a closing tag
// without an opening one is the answer's own text and nothing needs holding back.
func (s *ThinkSplitter) Separate() {
	s.separate = true
	if s.state == tsUndecided {
		s.state = tsAnswer
	}
}

// Write adds a piece of text and returns the answer text it makes certain.
func (s *ThinkSplitter) Write(piece string) string {
	if s.state == tsClosed {
		return ""
	}
	s.pending += piece
	return s.advance(false)
}

// Close ends the text and returns the answer text still held back.
func (s *ThinkSplitter) Close() string {
	if s.state == tsClosed {
		return ""
	}
	out := s.advance(true)
	s.state = tsClosed
	return out
}

// Answer is the answer text so far (all of it after Close).
func (s *ThinkSplitter) Answer() string { return s.answer.String() }

// Reasoning is the reasoning text of the blocks closed so far (all of it after Close), blocks joined by a blank
// line.
func (s *ThinkSplitter) Reasoning() string { return s.reasoning.String() }

func (s *ThinkSplitter) addReasoning(t string) {
	t = strings.TrimSpace(t)
	if t == "" {
		return
	}
	if s.reasoning.Len() > 0 {
		s.reasoning.WriteString("\n\n")
	}
	s.reasoning.WriteString(t)
}

func (s *ThinkSplitter) emit(out *strings.Builder, t string) {
	out.WriteString(t)
	s.answer.WriteString(t)
}

// advance classifies as much of pending as can be classified; at the end (final) everything is.
func (s *ThinkSplitter) advance(final bool) string {
	var out strings.Builder
	for {
		switch s.state {
		case tsStart:
			rest := strings.TrimLeft(s.pending, " \t\r\n")
			if rest == "" {
				if final && !s.sawBlock {
					s.emit(&out, s.pending)
				}
				if final || s.sawBlock {
					s.pending = ""
				}
				return out.String()
			}
			opened := false
			for _, tag := range thinkTags {
				if strings.HasPrefix(rest, tag[0]) {
					s.pending, s.closeTag, s.state, opened = rest[len(tag[0]):], tag[1], tsThink, true
					break
				}
			}
			if opened {
				continue
			}
			if !final && partialOpen(rest) {
				return out.String()
			}
			if s.sawBlock {
				s.pending = rest
			}
			s.scanned = 0
			if s.sawBlock || s.separate || strings.ContainsRune(answerStarts, rune(rest[0])) {
				s.state = tsAnswer
			} else {
				s.state = tsUndecided
			}
		case tsThink:
			if i := strings.Index(s.pending, s.closeTag); i >= 0 {
				s.block.WriteString(s.pending[:i])
				s.endBlock()
				s.pending = s.pending[i+len(s.closeTag):]
				s.state, s.sawBlock = tsStart, true
				continue
			}
			if final {
				s.block.WriteString(s.pending)
				s.endBlock()
				s.pending = ""
				return out.String()
			}
			// Keep back a tail that may be the start of the closing tag.
			keep := tagPrefixTail(s.pending, s.closeTag)
			s.block.WriteString(s.pending[:len(s.pending)-keep])
			s.pending = s.pending[len(s.pending)-keep:]
			return out.String()
		case tsUndecided:
			if i, n, ok := s.orphanClose(final); ok {
				s.addReasoning(s.pending[:i])
				s.pending = s.pending[i+n:]
				s.state, s.sawBlock, s.shown = tsStart, true, 0
				continue
			}
			if final {
				out.WriteString(s.pending[min(s.shown, len(s.pending)):])
				s.answer.WriteString(s.pending)
				s.pending, s.shown = "", 0
			} else if s.Eager {
				// Show what cannot be the start of a closing tag; the answer is settled at the end.
				upto := len(s.pending) - tagPrefixTail(s.pending, "</thinking>") // the longer closing tag
				if upto > s.shown {
					out.WriteString(s.pending[s.shown:upto])
					s.shown = upto
				}
			}
			return out.String()
		case tsAnswer:
			s.emit(&out, s.pending)
			s.pending = ""
			return out.String()
		default:
			return out.String()
		}
	}
}

// endBlock moves the think block read so far into the reasoning.
func (s *ThinkSplitter) endBlock() {
	s.addReasoning(s.block.String())
	s.block.Reset()
}

// orphanClose finds a closing tag with no opening tag that stands at a line's start or end. It reports its offset
// and length in pending; final says the text has ended (so a tag at the very end counts).
func (s *ThinkSplitter) orphanClose(final bool) (int, int, bool) {
	for {
		i, n := -1, 0
		for _, tag := range thinkTags {
			if j := strings.Index(s.pending[s.scanned:], tag[1]); j >= 0 && (i < 0 || s.scanned+j < i) {
				i, n = s.scanned+j, len(tag[1])
			}
		}
		if i < 0 {
			// Nothing to find before the last few bytes, which may hold the start of a tag.
			s.scanned = max(0, len(s.pending)-len("</thinking>"))
			return 0, 0, false
		}
		before := strings.TrimRight(s.pending[:i], " \t")
		lineStart := before == "" || strings.HasSuffix(before, "\n")
		after := s.pending[i+n:]
		trimmed := strings.TrimLeft(after, " \t")
		switch {
		case lineStart, strings.HasPrefix(trimmed, "\n"), strings.HasPrefix(trimmed, "\r\n"):
			return i, n, true
		case trimmed == "" && final:
			return i, n, true
		case trimmed == "" && !final:
			// Whether the line ends here is not known yet.
			s.scanned = i
			return 0, 0, false
		}
		s.scanned = i + n
	}
}

// partialOpen reports whether s is a proper prefix of an open tag (more text may complete it).
func partialOpen(s string) bool {
	for _, tag := range thinkTags {
		if len(s) < len(tag[0]) && strings.HasPrefix(tag[0], s) {
			return true
		}
	}
	return false
}

// tagPrefixTail is the length of the longest suffix of s that is a proper prefix of tag.
func tagPrefixTail(s, tag string) int {
	for n := min(len(tag)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}

// SplitThinking separates think blocks from a whole answer text (see ThinkSplitter for the rules); separate says
// the server delivered reasoning apart, so that an orphan closing tag is the answer's own text.
func SplitThinking(text string, separate bool) (answer, reasoning string) {
	var s ThinkSplitter
	if separate {
		s.Separate()
	}
	s.Write(text)
	s.Close()
	return s.Answer(), s.Reasoning()
}

// SplitAnswer is where every adapter's answer ends: text is the answer as the server sent it (think blocks and
// all) and apart the reasoning it sent separately (reasoning fields, thinking parts, thinking blocks). It returns
// the answer with think blocks taken out and the reasoning, apart first, the blocks found in the text after.
func SplitAnswer(text string, apart []Reasoning) (string, []Reasoning) {
	var s ThinkSplitter
	if len(apart) > 0 {
		s.Separate()
	}
	s.Write(text)
	s.Close()
	return s.Result(apart)
}

// Result is SplitAnswer for streamed text, after Close: the answer, and the reasoning apart followed by the think
// blocks found in the text.
func (s *ThinkSplitter) Result(apart []Reasoning) (string, []Reasoning) {
	out := apart
	if r := s.Reasoning(); r != "" {
		out = append(append([]Reasoning(nil), apart...), Reasoning{Text: r})
	}
	return s.Answer(), out
}
