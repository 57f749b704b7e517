package extractive

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/sources"
)

const goSource = `// Package ctxdemo cancels things.
package ctxdemo

// A cancelCtx can be canceled. When canceled, it also cancels any children
// that implement canceler.
type cancelCtx struct {
	children map[canceler]struct{} // set to nil by the first cancel call
	err      error                 // x
}

// propagateCancel arranges for child to be canceled when parent is.
// It sets the parent context of cancelCtx.
//
//	propagateCancel(parent, child)
//
//go:noinline
func (c *cancelCtx) propagateCancel(parent Context, child canceler) {
	// This function walks the tree: every child is
	// canceled before its parent returns.
	for child := range c.children { // walk the children in no particular order
		child.cancel(false, c.err)
	}
	s := "// not a comment"
}
`

// checkViewGrounded asserts the view's rule: every part of it long enough to be a quote (in normal form) is
// grounded, by the one normaliser, on the source lines its bytes came from.
func checkViewGrounded(t *testing.T, src string, cv *codeView) {
	t.Helper()
	off := 0
	for _, part := range strings.Split(cv.text, "\n\n") {
		start := off
		off += len(part) + 2
		if strings.TrimSpace(part) == "" || cv.kind[start] == partHeading || utf8.RuneCountInString(publish.NormalizeQuote(part)) < publish.MinQuoteRunes {
			continue
		}
		first, last := lexical.LineAt(src, cv.source(start, len(src))), lexical.LineAt(src, cv.source(start+len(part)-1, len(src)))
		lines := strings.Split(src, "\n")
		if !publish.Grounded(strings.Join(lines[first-1:last], "\n"), part) {
			t.Errorf("view part %q is not grounded on lines %d-%d:\n%s", part, first, last, strings.Join(lines[first-1:last], "\n"))
		}
	}
}

func TestCodeViewGo(t *testing.T) {
	cv := buildCodeView(goSource, commentSyntaxes["go"])
	checkViewGrounded(t, goSource, cv)
	for _, want := range []string{
		"# package ctxdemo",
		"# type cancelCtx struct cancel ctx",
		"A cancelCtx can be canceled. When canceled, it also cancels any children that implement canceler.",
		"children map[canceler]struct{} // set to nil by the first cancel call",
		"# func (c *cancelCtx) propagateCancel(parent Context, child canceler) cancel ctx propagate cancel",
		"propagateCancel arranges for child to be canceled when parent is. It sets the parent context of cancelCtx.",
		"\n\npropagateCancel(parent, child)\n\n", // a code example stands alone
		"This function walks the tree: every child is canceled before its parent returns.",
	} {
		if !strings.Contains(cv.text, want) {
			t.Errorf("view lacks %q:\n%s", want, cv.text)
		}
	}
	// A trailing comment on a statement in a function body is a note on one step, not a declaration's
	// documentation.
	for _, not := range []string{"// x", "go:noinline", "not a comment", "child.cancel", "walk the children"} {
		if strings.Contains(cv.text, not) {
			t.Errorf("view has %q, which is code or too short to say anything:\n%s", not, cv.text)
		}
	}
}

func TestCodeViewLanguages(t *testing.T) {
	for _, tc := range []struct {
		lang, src string
		want      []string
	}{
		{"python", "import os\n\n\ndef add(a, b):\n    \"\"\"Return the sum of a and b.\n\n    Both must be ints.\n    \"\"\"\n    # Add them up, then\n    # return the total.\n    return a + b  # the plain sum of both numbers given\n",
			[]string{"# def add(a, b):", "Return the sum of a and b.", "Both must be ints.", "Add them up, then return the total."}},
		{"python", "class A:\n    timeout = 30  # seconds to wait before giving up\n\n    def f(self):\n        return 1  # the one answer we always give\n",
			[]string{"timeout = 30  # seconds to wait before giving up"}},
		{"python", "def f():\n    '''One line docstring for f.'''\n    pass\n", []string{"One line docstring for f."}},
		{"c", "#include <stdio.h>\n\n/*\n * Returns the larger\n * of a and b.\n */\nint max(int a, int b);\n/* Short note here. */ int y;\n",
			[]string{"# int max(int a, int b);", "Returns the larger of a and b.", "Short note here."}},
		{"java", "/** Documents the\n  class in Javadoc style.*/\nclass A {}\n", []string{"Documents the class in Javadoc style."}},
		{"sql", "-- Rows older than a day\n-- are purged nightly.\nDELETE FROM t;\n", []string{"Rows older than a day are purged nightly."}},
		{"shell", "#!/bin/sh\n# Build the release\n# for every platform.\nmake all\n", []string{"Build the release for every platform."}},
		{"go", "// 当上下文被取消时，\n// 它的所有子上下文也被取消。\nfunc f() {}\n", []string{"当上下文被取消时， 它的所有子上下文也被取消。"}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			cv := buildCodeView(tc.src, commentSyntaxes[tc.lang])
			checkViewGrounded(t, tc.src, cv)
			for _, w := range tc.want {
				if !strings.Contains(cv.text, w) {
					t.Errorf("view lacks %q:\n%s", w, cv.text)
				}
			}
			if strings.Contains(cv.text, "#!/bin/sh") || strings.Contains(cv.text, "#include") {
				t.Errorf("a directive was read as a comment:\n%s", cv.text)
			}
		})
	}
}

func TestCodeSyntax(t *testing.T) {
	for _, tc := range []struct {
		ctype string
		ok    bool
	}{
		{"text/x-go", true}, {"text/x-python", true}, {"TEXT/X-C++", true}, {"text/x-sql", true},
		{"text/x-rst", false}, {"text/x-org", false}, {"text/markdown", false}, {"text/x-json", false}, {"", false},
	} {
		if _, ok := codeSyntax(&sources.Document{ContentType: tc.ctype}); ok != tc.ok {
			t.Errorf("codeSyntax(%q) = %v, want %v", tc.ctype, ok, tc.ok)
		}
	}
}

func TestIdentifierWords(t *testing.T) {
	for in, want := range map[string]string{
		"func propagateCancel(parent Context, child canceler)": "propagate cancel",
		"type cancelCtx struct":                                "cancel ctx",
		"func (p *Pool) pinSlow() (*poolLocal, int)":           "pin slow pool local",
		"var x = 1":        "",
		"class HTTPServer": "http server",
		"const MaxInt64":   "max int64",
	} {
		if got := identifierWords(in); got != want {
			t.Errorf("identifierWords(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAnalyzeSourceCode: the analyst quotes a doc comment as prose, cites the lines it spans, and the quote passes
// the integrity rule on exactly those lines; a trailing comment is cited with its code; code is not quoted.
func TestAnalyzeSourceCode(t *testing.T) {
	a := &Analyst{cfg: Config{}.withDefaults()}
	doc := &sources.Document{URL: "file:///src/ctxdemo/ctx.go#L1-L24", Title: "ctx.go (package ctxdemo)", Text: goSource, ContentType: "text/x-go"}
	for _, tc := range []struct {
		question, quote, lines string
	}{
		{"What happens to the children when a cancelCtx is canceled?",
			"A cancelCtx can be canceled. When canceled, it also cancels any children that implement canceler.", "#L4-L5"},
		{"What does propagateCancel arrange for the child?", "propagateCancel arranges for child to be canceled when parent is.", "#L11-L11"},
		{"When are the children of a cancelCtx set to nil?", "children map[canceler]struct{} // set to nil by the first cancel call", "#L7-L7"},
	} {
		ev, err := a.Analyze(context.Background(), research.SubQuestion{ID: "q1", Question: tc.question}, doc)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range ev {
			if strings.Contains(e.Quote, "child.cancel(") || strings.Contains(e.Quote, "s := ") {
				t.Errorf("%q: code quoted as evidence: %q", tc.question, e.Quote)
			}
			if !strings.HasPrefix(e.Quote, tc.quote) {
				continue
			}
			found = found || strings.HasSuffix(e.Source, tc.lines)
			var a, b int
			if _, err := fmt.Sscanf(e.Source[strings.LastIndexByte(e.Source, '#'):], "#L%d-L%d", &a, &b); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(goSource, "\n")
			if !publish.Grounded(strings.Join(lines[a-1:b], "\n"), e.Quote) {
				t.Errorf("quote %q is not grounded on %s", e.Quote, e.Source)
			}
		}
		if !found {
			t.Errorf("%q: no evidence quotes %q on lines %s; got %+v", tc.question, tc.quote, tc.lines, ev)
		}
	}
}

// FuzzCodeView: whatever the source, every part of its view is grounded on the lines it came from, and the view
// is built without panicking or running away.
func FuzzCodeView(f *testing.F) {
	f.Add(goSource, "go")
	f.Add("def f():\n    \"\"\"Doc.\n    more\"\"\"\n    x = 1  # note about x here\n", "python")
	f.Add("/* a\n * b */ c /* d */\n-- e f g\n", "sql")
	f.Add("/*\nStub at the margin.\n\nMore.\n*/\nstatic void\nx_cgo_yield()\n{\n\t/* note */\n}\n", "c")
	f.Add("(() => {\n\tGo = class {\n\t\t/** Doc. */\n\t\tasync run(i) {\n\t\t\tthis.v = [ // values held by Go here\n\t\t}\n\t}\n})();\n", "javascript")
	f.Add("# Entry points:\n#\n# \tfunc Syscall(a)\n#\n# The first is standard.\nmake\n", "shell")
	f.Fuzz(func(t *testing.T, src, lang string) {
		syn, ok := commentSyntaxes[lang]
		if !ok || !utf8.ValidString(src) || len(src) > 1<<16 {
			return
		}
		cv := buildCodeView(src, syn)
		if len(cv.offs) != len(cv.text) || len(cv.kind) != len(cv.text) {
			t.Fatalf("%d offsets and %d kinds for %d bytes", len(cv.offs), len(cv.kind), len(cv.text))
		}
		for _, o := range cv.offs {
			if o < 0 || int(o) > len(src) {
				t.Fatalf("offset %d outside the source (%d bytes)", o, len(src))
			}
		}
		checkViewGrounded(t, src, cv)
	})
}

func TestCodeIdentifier(t *testing.T) {
	for w, want := range map[string]bool{
		"propagateCancel": true, "run_once": true, "sync.Pool": true, "poolCleanup": true,
		"parent": false, "the": false, "end.": false, "Mutex": false, "": false,
	} {
		if got := codeIdentifier(w); got != want {
			t.Errorf("codeIdentifier(%q) = %v, want %v", w, got, want)
		}
	}
}

// TestCodeViewUsable: a comment sentence may start in lower case only with the name of a declaration.
func TestCodeViewUsable(t *testing.T) {
	src := "// propagateCancel arranges for child to be canceled when parent is.\nfunc propagateCancel() {\n\t// parent is already canceled at this point in time\n\treturn\n}\n"
	cv := buildCodeView(src, commentSyntaxes["go"])
	for _, sp := range lexical.Passages(cv.text, maxPassage) {
		plain := plainText(sp.Text)
		got := cv.usable(sp, plain, lexical.Tokenize(plain))
		want := strings.HasPrefix(sp.Text, "propagateCancel arranges")
		if got != want {
			t.Errorf("usable(%q) = %v, want %v", sp.Text, got, want)
		}
	}
}

func TestIsDiagram(t *testing.T) {
	for s, want := range map[string]bool{
		"Context tree: parent -> cancelChild parent -> valueChild -> timerChild":                           true,
		"Stages run scope => search => read.":                                                              true,
		"In the previous example, replacing c <- 0 with close(c) yields a program with the same behavior.": false,
		"Keys returns a key -> value mapping of the headers.":                                              false,
		"A send on a channel is synchronized before the corresponding receive.":                            false,
	} {
		if got := isDiagram(s); got != want {
			t.Errorf("isDiagram(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestCodeViewHeadings checks which declaration heads the comments of a code view, by rule: a comment at the left
// margin belongs to the code right below it, with a C return type written on the line above the name put together
// with it; the lines of a block comment are never that code; an indented doc comment belongs to the member below
// it; a comment in a body belongs to the innermost function, method or class around it, else to the outermost
// block.
func TestCodeViewHeadings(t *testing.T) {
	for _, tc := range []struct {
		name, lang, src string
		want            []string // in this order; no heading but these
	}{
		{"C return type on its own line", "c",
			"/* Stub for creating a new thread. */\nvoid\nx_cgo_thread_start(ThreadStart *arg)\n{\n\t/* Make our own copy that can persist. */\n\tts = malloc(sizeof *ts);\n}\n",
			[]string{"# void x_cgo_thread_start(ThreadStart *arg)", "Stub for creating a new thread.", "Make our own copy that can persist."}},
		{"block comment lines at the margin are not code", "c",
			"/*\nStub for allowing libc interceptors to execute.\n\nIt is set to NULL when none exist.\n*/\nstatic void\nx_cgo_yield()\n{\n\t/*\n\tThe libc functions we call here must form a no-op.\n\t*/\n\tstrncpy(a, b, 0);\n}\n",
			[]string{"# static void x_cgo_yield()", "Stub for allowing libc interceptors to execute.", "The libc functions we call here must form a no-op."}},
		{"brace line is not a declaration", "c",
			"int\nf(void)\n{\n\t// The answer is computed once at start.\n\treturn 42;\n}\n",
			[]string{"# int f(void)", "The answer is computed once at start."}},
		{"JavaScript members in a module wrapper", "javascript",
			"(() => {\n\tglobalThis.Go = class {\n\t\tconstructor() {\n\t\t\tthis.importObject = {\n\t\t\t\tgojs: {\n\t\t\t\t\t// func wasmExit(code int32) ends the program.\n\t\t\t\t\t\"runtime.wasmExit\": (sp) => {\n\t\t\t\t\t\tthis.exited = true;\n\t\t\t\t\t},\n\t\t\t\t},\n\t\t\t};\n\t\t}\n\n\t\t/** Runs the instance until the program exits. */\n\t\tasync run(instance) {\n\t\t\t// Pass the arguments by writing them to the linear memory.\n\t\t\tlet offset = 4096;\n\t\t}\n\t}\n})();\n",
			[]string{"# \"runtime.wasmExit\": (sp) =>", "func wasmExit(code int32) ends the program.", "# async run(instance)", "Runs the instance until the program exits.", "Pass the arguments by writing them to the linear memory."}},
		{"Python method inside a class", "python",
			"class GoroutineCmd(gdb.Command):\n    \"\"\"Execute a command in the context of a goroutine.\"\"\"\n\n    def invoke(self, arg):\n        # In GDB, assignments to sp must be done from the top-most frame.\n        pass\n",
			[]string{"# class GoroutineCmd(gdb.Command):", "Execute a command in the context of a goroutine.", "# def invoke(self, arg):", "In GDB, assignments to sp must be done from the top-most frame."}},
		{"shell function", "shell",
			"#!/bin/sh\nset -e\n\nbuild() {\n\tif [ -n \"$1\" ]; then\n\t\t# Cross-compile for the platform given as the first argument.\n\t\tmake \"$1\"\n\tfi\n}\n",
			[]string{"# build()", "Cross-compile for the platform given as the first argument."}},
		{"Rust method in an impl block", "rust",
			"impl Pool {\n    /// Takes an object from the pool, or makes a new one.\n    pub fn get(&self) -> T {\n        // The victim cache is tried before allocating.\n        self.victim.pop()\n    }\n}\n",
			[]string{"# pub fn get(&self) -> T", "Takes an object from the pool, or makes a new one.", "The victim cache is tried before allocating."}},
		{"Go statements in a body are not declarations", "go",
			"package p\n\nfunc f() {\n\tfor i := range n {\n\t\tif i > 0 {\n\t\t\t// Every later item waits for the first one.\n\t\t\twait()\n\t\t}\n\t}\n}\n",
			[]string{"# func f()", "Every later item waits for the first one."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cv := buildCodeView(tc.src, commentSyntaxes[tc.lang])
			checkViewGrounded(t, tc.src, cv)
			rest := cv.text
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("view lacks %q after the part before it:\n%s", w, cv.text)
				}
				rest = rest[i+len(w):]
			}
			for _, part := range strings.Split(cv.text, "\n\n") {
				if strings.HasPrefix(part, "# ") && !slicesContainsPrefix(tc.want, part) {
					t.Errorf("unexpected heading %q:\n%s", part, cv.text)
				}
			}
		})
	}
}

// slicesContainsPrefix reports whether some element of want is a prefix of heading (a heading may go on with its
// identifiers spelled as words).
func slicesContainsPrefix(want []string, heading string) bool {
	for _, w := range want {
		if strings.HasPrefix(w, "# ") && strings.HasPrefix(heading, w) {
			return true
		}
	}
	return false
}

func TestDeclarationLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"func (c *cancelCtx) cancel(removeFromParent bool, err error) {", true},
		{"def invoke(self, arg, _from_tty):", true},
		{"async def fetch(url):", true},
		{"class GoroutineCmd(gdb.Command):", true},
		{"export default async function handler(req, res) {", true},
		{"pub fn new() -> Self {", true},
		{"public static void main(String[] args) {", true},
		{"async run(instance) {", true},
		{"constructor() {", true},
		{"const loadValue = (addr) => {", true},
		{`"runtime.wasmExit": (sp) => {`, true},
		{"onload: function (e) {", true},
		{"globalThis.Go = class {", true},
		{"if (offset >= wasmMinDataAddr) {", false},
		{"for (let i = 0; i < len; i++) {", false},
		{"} else if (x) {", false},
		{"switch (typeof v) {", false},
		{"while (true) {", false},
		{"this.importObject = {", false},
		{"gojs: {", false},
		{"for child := range c.children {", false},
		{"go func() {", false},
		{"return f(x) {", false},
		{"x = compute(a, b);", false},
		{"catch (err) {", false},
		{"foreach (var x in xs) {", false},
		{"synchronized (lock) {", false},
		{"", false},
	} {
		if got := declarationLine(tc.line); got != tc.want {
			t.Errorf("declarationLine(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// TestExampleContext checks the code-example rule: the passages of the comment paragraph right after code examples
// carry the examples' terms (and show them as their context); the paragraph after that, and prose before any
// example, do not.
func TestExampleContext(t *testing.T) {
	const src = "#!/bin/sh\n# Dispatch has three entry points:\n#\n# \tfunc Syscall(trap, a1 uintptr)\n# \tfunc RawSyscall(trap, a1 uintptr)\n#\n" +
		"# The first is the standard one. The second is for low-level use by the fork wrapper.\n#\n" +
		"# Generated files have names beginning with z.\nmake all\n"
	a := &Analyst{cfg: Config{}.withDefaults()}
	ix := a.index(&sources.Document{URL: "file:///src/mkall.sh", Title: "mkall.sh", Text: src, ContentType: "text/x-shell"})
	has := func(i int, term string) bool {
		for _, t := range ix.tokens[i] {
			if t == term {
				return true
			}
		}
		return false
	}
	want := map[string]bool{
		"The first is the standard one.":                       true,
		"The second is for low-level use by the fork wrapper.": true,
		"Generated files have names beginning with z.":         false,
		"Dispatch has three entry points:":                     false,
	}
	seen := 0
	for i, sp := range ix.spans {
		w, ok := want[strings.TrimSpace(sp.Text)]
		if !ok {
			continue
		}
		seen++
		rawsyscall := lexical.Tokenize("RawSyscall")[0]
		if got := has(i, rawsyscall); got != w {
			t.Errorf("%q carries the examples' terms: %v, want %v (tokens %v)", sp.Text, got, w, ix.tokens[i])
		}
		if got := strings.Contains(ix.within[i], "func RawSyscall"); got != w {
			t.Errorf("%q has the examples as context: %v, want %v (%q)", sp.Text, got, w, ix.within[i])
		}
	}
	if seen != len(want) {
		t.Fatalf("found %d of the %d passages in the view:\n%s", seen, len(want), ix.text)
	}
}
