package chat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/deepresearch/deepresearch/base/termsafe"
)

// MaxMessage bounds one message, in bytes: a longer line (piped, or pasted) is cut there and the user told.
const MaxMessage = 1 << 20

// editorLineLimit is the most runes golang.org/x/term's editor keeps on a typed line (pasted lines have no
// such limit); keys past it are dropped, so a line that long was cut.
const editorLineLimit = 4096

// ContinuePrompt is shown for the second and later lines of a multi-line message.
const ContinuePrompt = "… "

// errInterrupted is Ctrl-C at the prompt: what was typed is dropped and a new prompt shown.
var errInterrupted = errors.New("interrupted at the prompt")

// input gives the chat one message at a time.
type input interface {
	// read shows the prompt (on a terminal after the status line) and returns the next message, whether it was
	// cut at MaxMessage, and io.EOF at the end of input or errInterrupted for Ctrl-C at the prompt.
	read(status string) (msg string, cut bool, err error)
	// record keeps a message in the history, when there is one.
	record(msg string) error
	// close gives the terminal back as it was.
	close()
}

// newInput reads from a terminal with the line editor when in and out are both one, else line by line.
func newInput(in io.Reader, out io.Writer, hist *history, comp completer) input {
	inf, ok1 := in.(*os.File)
	outf, ok2 := termsafe.Unwrap(out).(*os.File)
	if ok1 && ok2 && term.IsTerminal(int(inf.Fd())) && term.IsTerminal(int(outf.Fd())) {
		return newTermInput(inf, outf, hist, comp)
	}
	return &plainInput{br: bufio.NewReaderSize(in, 64<<10), out: out}
}

// plainInput reads a non-terminal input (a pipe, a file) one line per message, with no editing.
type plainInput struct {
	br  *bufio.Reader
	out io.Writer
}

func (p *plainInput) read(string) (string, bool, error) {
	fmt.Fprint(p.out, Prompt)
	return readLine(p.br, MaxMessage)
}

func (p *plainInput) record(string) error { return nil }
func (p *plainInput) close()              {}

// readLine reads one line of at most limit bytes (the rest of a longer one is skipped, and cut reported); a last
// line without a newline is a line too.
func readLine(br *bufio.Reader, limit int) (line string, cut bool, err error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(b)+len(chunk) > limit {
			cut = true
			chunk = chunk[:max(limit-len(b), 0)]
		}
		b = append(b, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && (len(b) > 0 || cut):
			return strings.TrimRight(string(b), "\r\n"), cut, nil
		case err != nil:
			return "", false, err
		}
		return strings.TrimRight(string(b), "\r\n"), cut, nil
	}
}

// termInput reads from a terminal through golang.org/x/term's line editor: cursor keys, Home/End, word moves
// (Alt-Left/Right), Ctrl-A/E/K/U/W/L, Up and Down through the history of this and earlier sessions, Tab to
// complete slash commands and paths, and bracketed paste, so that pasted lines arrive as one message. A line
// ending in a backslash continues on the next one. The terminal is in raw mode only while a message is typed: a
// running turn sees Ctrl-C as the interrupt signal, as before.
type termInput struct {
	in, out *os.File
	io      *ttyIO
	t       *term.Terminal
	hist    *history
	comp    completer
	plain   bool // TERM=dumb: no colour

	mu    sync.Mutex
	saved *term.State // the terminal's mode while a message is typed in raw mode
}

func newTermInput(in, out *os.File, hist *history, comp completer) *termInput {
	ti := &termInput{in: in, out: out, hist: hist, comp: comp, plain: os.Getenv("TERM") == "dumb"}
	ti.io = &ttyIO{in: in, out: out}
	ti.t = term.NewTerminal(ti.io, Prompt)
	ti.t.History = hist
	ti.t.AutoCompleteCallback = ti.key
	ti.t.SetBracketedPasteMode(true)
	return ti
}

func (ti *termInput) close() {
	ti.t.SetBracketedPasteMode(false)
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if ti.saved != nil {
		_ = term.Restore(int(ti.in.Fd()), ti.saved)
		ti.saved = nil
	}
}

func (ti *termInput) record(msg string) error { return ti.hist.push(msg) }

func (ti *termInput) read(status string) (string, bool, error) {
	if w, h, err := term.GetSize(int(ti.out.Fd())); err == nil && w > 0 && h > 0 {
		_ = ti.t.SetSize(w, h)
	}
	if status != "" {
		if ti.plain {
			fmt.Fprintf(ti.out, "%s\n", termsafe.Line(status))
		} else {
			fmt.Fprintf(ti.out, "%s%s%s\n", ti.t.Escape.Cyan, termsafe.Line(status), ti.t.Escape.Reset)
		}
	}
	st, err := term.MakeRaw(int(ti.in.Fd()))
	if err != nil {
		return "", false, fmt.Errorf("terminal: %w", err)
	}
	ti.mu.Lock()
	ti.saved = st
	ti.mu.Unlock()
	defer func() {
		ti.mu.Lock()
		defer ti.mu.Unlock()
		if ti.saved != nil {
			_ = term.Restore(int(ti.in.Fd()), ti.saved)
			ti.saved = nil
		}
	}()
	defer ti.t.SetPrompt(Prompt)
	var parts []string
	size := 0
	cut := false
	for {
		ti.io.resetCut()
		line, err := ti.t.ReadLine()
		pasted := errors.Is(err, term.ErrPasteIndicator)
		if pasted {
			err = nil
		}
		if ti.io.takeInterrupt() {
			return "", false, errInterrupted
		}
		if ti.io.wasCut() {
			cut = true
		}
		if err != nil {
			if len(parts) > 0 && errors.Is(err, io.EOF) {
				break
			}
			return "", false, err
		}
		if !pasted && utf8.RuneCountInString(line) >= editorLineLimit {
			cut = true // the editor dropped what was typed past its limit
		}
		more := pasted
		if !pasted && strings.HasSuffix(line, `\`) {
			line, more = strings.TrimSuffix(line, `\`), true
		}
		if size+len(line) > MaxMessage {
			line, cut = line[:max(MaxMessage-size, 0)], true
			more = false
		}
		parts = append(parts, line)
		size += len(line) + 1
		if !more {
			break
		}
		ti.t.SetPrompt(ContinuePrompt)
	}
	return strings.TrimRight(strings.Join(parts, "\n"), "\n"), cut, nil
}

// key is the line editor's hook for keys it has no meaning for: Tab completes, the interrupt mark clears the
// line.
func (ti *termInput) key(line string, pos int, key rune) (string, int, bool) {
	switch key {
	case interruptMark:
		ti.io.setInterrupt()
		return "", 0, true
	case '\t':
		return ti.tab(line, pos)
	}
	return "", 0, false
}

func (ti *termInput) tab(line string, pos int) (string, int, bool) {
	before, after := line[:pos], line[pos:]
	cands, start := ti.comp.complete(before)
	if len(cands) == 0 {
		return line, pos, true // a Tab is never typed into a message
	}
	word := before[start:]
	fill := cands[0]
	if len(cands) > 1 {
		fill = commonPrefix(cands)
	}
	if fill == word && len(cands) > 1 {
		// Nothing more to fill in: show the choices above the line, as shells do.
		list, extra := cands, ""
		if len(list) > 40 {
			list, extra = list[:40], fmt.Sprintf("  … %d more", len(cands)-40)
		}
		shown := make([]string, len(list))
		for i, c := range list {
			shown[i] = strings.TrimSpace(c)
		}
		fmt.Fprintf(ti.t, "%s%s\n", strings.Join(shown, "  "), extra)
		return line, pos, true
	}
	if len(cands) == 1 && strings.HasSuffix(fill, " ") && strings.HasPrefix(after, " ") {
		fill = strings.TrimSuffix(fill, " ")
	}
	nl := before[:start] + fill + after
	return nl, start + len(fill), true
}

// interruptMark stands for Ctrl-C in what the line editor reads: the editor ends ReadLine with io.EOF on Ctrl-C,
// as on Ctrl-D, so ttyIO hands it this private-use character followed by Enter instead, which key turns into a
// cleared line and read into errInterrupted.
const interruptMark = '\uF8FF'

// maxKeySequence bounds the bytes after ESC taken as one key sequence.
const maxKeySequence = 32

// ttyIO is the terminal as the line editor sees it: reads from in, with Ctrl-C marked and lines longer than
// MaxMessage cut (the editor bounds typed lines, not pasted ones), writes to out.
type ttyIO struct {
	in, out *os.File

	mu      sync.Mutex
	pending []byte
	err     error
	run     int  // bytes since the last line end
	skip    bool // dropping the rest of an over-long line
	esc     bool // inside a key sequence (after ESC, before its final byte)
	escLen  int  // bytes of the key sequence so far
	cut     bool
	intr    bool
}

func (t *ttyIO) Write(p []byte) (int, error) { return t.out.Write(p) }

func (t *ttyIO) Read(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.pending) == 0 {
		if t.err != nil {
			err := t.err
			t.err = nil
			return 0, err
		}
		buf := make([]byte, len(p))
		t.mu.Unlock()
		n, err := t.in.Read(buf)
		t.mu.Lock()
		t.pending = t.filter(buf[:n])
		t.err = err
		if n == 0 && err == nil {
			return 0, nil
		}
	}
	n := copy(p, t.pending)
	t.pending = t.pending[n:]
	return n, nil
}

func (t *ttyIO) filter(b []byte) []byte {
	var out bytes.Buffer
	for _, c := range b {
		keep := true
		switch {
		case c == 3: // Ctrl-C
			out.WriteRune(interruptMark)
			out.WriteByte('\r')
			t.run, t.skip, t.esc = 0, false, false
			continue
		case c == '\r' || c == '\n':
			t.run, t.skip, t.esc = 0, false, false
		case c == 0x1b:
			t.esc, t.escLen = true, 0
		case t.esc && t.escLen < maxKeySequence:
			// Key sequences (the end of a paste among them) reach the editor even while the over-long line around
			// them is dropped; like the editor, a letter or ~ ends one.
			t.escLen++
			t.esc = !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '~')
		default:
			t.run++
			if t.run > MaxMessage {
				t.skip, t.cut = true, true
			}
			keep = !t.skip
		}
		if keep {
			out.WriteByte(c)
		}
	}
	return out.Bytes()
}

func (t *ttyIO) setInterrupt() {
	t.mu.Lock()
	t.intr = true
	t.mu.Unlock()
}

func (t *ttyIO) takeInterrupt() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := t.intr
	t.intr = false
	return i
}

func (t *ttyIO) resetCut() {
	t.mu.Lock()
	t.cut = false
	t.mu.Unlock()
}

func (t *ttyIO) wasCut() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cut
}

// clean makes a typed or piped message safe to keep and send: control characters other than newline become
// spaces (a tab too), invalid UTF-8 is replaced, and the invisible format characters termsafe escapes are
// dropped.
func clean(msg string) string {
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == interruptMark:
			return -1
		case unicode.IsControl(r):
			return ' '
		case unicode.Is(unicode.Cf, r) && r != '\u200c' && r != '\u200d':
			return -1
		}
		return r
	}, msg)
}
