package extract

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// debianDocs holds the HTML documentation of Debian packages that scripts/install-test-deps installs: real pages
// of four generators (Sphinx: python3.11-doc, DocBook: postgresql-doc-15, Node.js's API docs: nodejs-doc,
// mdBook and rustdoc: rust-doc). Their licences are in /usr/share/doc/<package>/copyright; the tests read them in
// place and copy nothing.
const debianDocs = "/usr/share/doc"

// Real pages of documentation generators keep their content — headings, paragraphs, list items, table rows,
// definitions and code — and lose their chrome: site navigation, search boxes, pagers, permalink marks, footers.
func TestWholeKeepsContentDropsChromeOnGeneratorPages(t *testing.T) {
	tests := []struct {
		generator, page string
		keep, drop      []string
	}{
		{"Sphinx", "python3.11-doc/html/tutorial/errors.html",
			[]string{"# 8. Errors and Exceptions", "statement works as follows.",
				"- First, the *try clause* (the statement(s) between the [`try`]", ">>> while True print('Hello world')"},
			[]string{"### Navigation", "Previous topic", "Report a Bug", "Last updated on", "Created using", "Permalink to this heading", "¶",
				"[modules](../py-modindex.html", "Python Software Foundation is a non-profit"}},
		{"Sphinx glossary (definitions)", "python3.11-doc/html/glossary.html",
			[]string{"global interpreter lock", "only one thread executes Python bytecode at a time"},
			[]string{"Permalink to this term", "### Navigation", "Quick search"}},
		{"Sphinx table", "python3.11-doc/html/howto/logging.html",
			[]string{"`DEBUG`\tDetailed information, typically of interest only when diagnosing problems.", "Level\tWhen it’s used", "The default level is `WARNING`"},
			[]string{"### Navigation", "Table of Contents", "Next topic"}},
		{"Sphinx FAQ (headings linked back to the contents)", "python3.11-doc/html/faq/design.html",
			[]string{"## Why are Python strings immutable?", "There are several advantages."},
			[]string{"(#id6)", "### Navigation"}},
		{"DocBook", "postgresql-doc-15/html/routine-vacuuming.html",
			[]string{"Routine Vacuuming", "1. To recover or reuse disk space occupied by updated or deleted rows.",
				"4. To protect against loss of very old data due to"},
			[]string{"[Prev](maintenance.html", "[Home](index.html", "[25.1.1. Vacuuming Basics](routine-vacuuming.html#VACUUM-BASICS)", "[]()"}},
		{"Node.js API docs", "nodejs/api/events.html",
			[]string{"## Events", "By default, a maximum of `10` listeners can be registered for any single event.", "const myEmitter = new MyEmitter();"},
			[]string{"[Assertion testing](assert.html)", "Table of contents", "View on single page", "Edit on GitHub", "Other versions"}},
		{"mdBook", "rust-doc/html/book/ch04-01-what-is-ownership.html",
			[]string{"## What Is Ownership?", "- Each value in Rust has an *owner*.", "- There can only be one owner at a time.",
				`let s = String::from("hello");`},
			[]string{"# The Rust Programming Language", "Print this book", "Search this book", "Previous chapter", "[1.1. Installation]",
				"(#what-is-ownership)"}},
		{"rustdoc", "rust-doc/html/std/vec/struct.Vec.html",
			[]string{"A contiguous growable array type", "vec.push(1);"},
			[]string{"rust-logo", "Expand description", "Change settings", "Click or press", "[Methods](#implementations)"}},
	}
	for _, tt := range tests {
		t.Run(tt.generator, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(debianDocs, tt.page))
			if err != nil {
				t.Fatalf("%v (scripts/install-test-deps installs the Debian documentation packages)", err)
			}
			res, err := Whole(DecodeText(data, "text/html"), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tt.keep {
				if !strings.Contains(res.Text, k) {
					t.Errorf("%s: content lost: %q", tt.page, k)
				}
			}
			for _, d := range tt.drop {
				if strings.Contains(res.Text, d) {
					t.Errorf("%s: chrome kept: %q", tt.page, d)
				}
			}
			if res.Title == "" {
				t.Errorf("%s: no title", tt.page)
			}
		})
	}
}

// The rules on small pages, one per rule, each with content that must stay beside the chrome that must go.
func TestPruneChromeRules(t *testing.T) {
	tests := []struct {
		name, html string
		keep, drop []string
	}{
		{"navigation role and search", `<div role="navigation"><a href="/a">Home</a></div><div role="search">Press S or / to search</div><p>The cache holds entries.</p>`,
			[]string{"The cache holds entries."}, []string{"Home", "to search"}},
		{"hidden elements", `<div hidden>Skipped text</div><span aria-hidden="true">Icon label</span><p>Visible prose stays.</p>`,
			[]string{"Visible prose stays."}, []string{"Skipped text", "Icon label"}},
		{"link-dense list", `<ul><li><a href="a.html">Alpha</a></li><li><a href="b.html">Beta</a></li><li><a href="c.html">Gamma</a></li></ul>` +
			`<ul><li>Each value has an owner.</li><li>See <a href="x.html">the owner rules</a> for the details of this case.</li></ul>`,
			[]string{"Each value has an owner.", "the owner rules"}, []string{"Alpha", "Gamma"}},
		{"generator class names", `<div class="related">Previous | Next</div><div class="md-sidebar">Menu</div><div class="theme-doc-version-banner">This is documentation for an old version.</div><p>Body text.</p>`,
			[]string{"Body text."}, []string{"Previous", "Menu", "old version"}},
		{"permalink marks and self-linked headings", `<h2 id="x"><a href="#x">Ownership Rules</a><a class="x" href="#x">¶</a></h2><p>Text under it.</p>`,
			[]string{"## Ownership Rules", "Text under it."}, []string{"¶", "(#x)"}},
		{"a heading linked back to the contents is text; a footnote's backlink goes", `<h2><a class="toc-backref" href="#id6" role="doc-backlink">Why is it so?</a></h2><p>Because<a class="footnote-reference" href="#f1" id="id1">1</a>.</p><aside class="footnote"><span class="label"><a role="doc-backlink" href="#id1">1</a></span><p>A note.</p></aside>`,
			[]string{"## Why is it so?", "A note."}, []string{"(#id6)", "(#id1)"}},
		{"a layout block holding main is kept", `<div class="sidebar"><main><p>Main content sits here.</p></main></div>`,
			[]string{"Main content sits here."}, nil},
		{"footer, form and cookie notice", `<p>Article text.</p><div id="cookie-banner">We use cookies.</div><form><input value="q"></form><footer>© 2026 Someone</footer>`,
			[]string{"Article text."}, []string{"cookies", "©"}},
		{"code is content even among links", `<div><a href="a">a</a> <a href="b">b</a> <a href="c">c</a><pre><code>x := 1</code></pre></div>`,
			[]string{"x := 1"}, nil},
		{"a note box's heading is its label, not a section", `<h3>8.1.4. Serial Types</h3><div class="note"><h3 class="title">Note</h3><p>Another way exists.</p></div><p>Serial types are not true types.</p><div class="admonition warning"><h2>Warning</h2><p>Gaps appear.</p><h4>Inside</h4></div>`,
			[]string{"### 8.1.4. Serial Types", "**Note**", "Serial types are not true types.", "**Warning**", "#### Inside"}, []string{"### Note", "## Warning"}},
		{"a code span's nested markup is its text", `<p>Use <code class="type">character varying(<em class="replaceable"><code>n</code></em>)</code> or <code>a <b>b</b></code>.</p><pre><code>x := <em>y</em></code></pre>`,
			[]string{"Use `character varying(n)` or `a b`.", "x := y"}, []string{"( n )", "*"}},
		{"table rows and definitions stay", `<table><tr><th>Level</th><th>Meaning</th></tr><tr><td>DEBUG</td><td>Detailed information.</td></tr></table><dl><dt>GIL</dt><dd>One thread runs bytecode.</dd></dl>`,
			[]string{"Level\tMeaning\nDEBUG\tDetailed information.\n", "GIL", "One thread runs bytecode."}, nil},
	}
	for _, tt := range tests {
		res, err := Whole("<html><body>"+tt.html+"</body></html>", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range tt.keep {
			if !strings.Contains(res.Text, k) {
				t.Errorf("%s: lost %q:\n%s", tt.name, k, res.Text)
			}
		}
		for _, d := range tt.drop {
			if strings.Contains(res.Text, d) {
				t.Errorf("%s: kept %q:\n%s", tt.name, d, res.Text)
			}
		}
	}
}

// Markdown tables become tab-separated rows, header first, the rule dropped; an escaped pipe stays in its cell;
// pipes in fenced code and lone pipe lines without a rule are left alone.
func TestTableRows(t *testing.T) {
	tests := []struct{ in, want string }{
		{"| a | b |\n|---|:-:|\n| 1 | x \\| y |\n| | 2 |\ntext", "a\tb\n1\tx | y\n\t2\ntext"},
		{"```\n| a | b |\n|---|---|\n```", "```\n| a | b |\n|---|---|\n```"},
		{"| not a table |\nnext", "| not a table |\nnext"},
		{"|\n|", "|\n|"},
	}
	for _, tt := range tests {
		if got := tableRows(tt.in); got != tt.want {
			t.Errorf("tableRows(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Pages in the markup of five more generators (written for this test in each generator's element structure, class
// names and roles; see testdata/generators/README.md) keep their content and lose their chrome.
func TestWholeOnGeneratorMarkup(t *testing.T) {
	tests := []struct {
		page       string
		keep, drop []string
	}{
		{"mkdocs-material.html",
			[]string{"# Configuration\n", "Widgetry reads its settings from `widgetry.yml`", "- `strict` turns every warning into an error.",
				"A setting given on the command line overrides the file.", "`strict`\t`false`", "```\ncache_dir: .widgetry\nstrict: true\n```"},
			[]string{"Skip to content", "Initializing search", "example/widgetry", "Table of contents", "Edit this page", "¶",
				"Last update", "Back to top", "Previous", "Made with", "[Plugins]"}},
		{"docusaurus.html",
			[]string{"# Deploying\n", "any web server can serve.", "## Build\n", "1. Build the site.", "2. Copy the `build` folder to the server.",
				"widgetry build --out build"},
			[]string{"give it a star", "Skip to main content", "[Blog]", "Ctrl", "no longer actively maintained", "latest version",
				"Version: 1.x", "On this page", "Edit this page", "Last updated", "Previous", "Copyright", "\u200b", "[Introduction]", "\nCopy\n"}},
		{"javadoc.html",
			[]string{"# Class Widget", "A widget holds one value and is immutable: every method that changes it returns a new widget.",
				"Returns the number of parts of this widget. A new widget has none.", "the number of parts, never negative"},
			[]string{"JavaScript is disabled", "Skip navigation links", "[Overview]", "[Deprecated]", "SEARCH:", "Summary:", "Copyright",
				"<!--THE END-->"}},
		{"doxygen.html",
			[]string{"widgetry::Widget Class Reference", "Copying a widget is cheap: the value is shared between the copies.",
				"```\nwidgetry::Widget w(3);\nint n = w.size();\n```", "the number of parts, never negative."},
			[]string{"Main Page", "[Classes]", "Loading...", "No Matches", "[widgetry](namespacewidgetry.html)", "◆", "Generated by"}},
		{"pandoc.html",
			[]string{"# Widgetry Handbook", "# Installing", "unpack the archive and put `widgetry` on your path.", "tar xf widgetry.tar.gz",
				"Widget\n\nAn immutable value with parts.", "large\t12", "The first widget was made in 1999."},
			[]string{"[Installing](#installing)", "↩", "[Terms]"}},
	}
	for _, tt := range tests {
		t.Run(tt.page, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "generators", tt.page))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Whole(DecodeText(data, "text/html"), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tt.keep {
				if !strings.Contains(res.Text, k) {
					t.Errorf("content lost: %q\n%s", k, res.Text)
				}
			}
			for _, d := range tt.drop {
				if strings.Contains(res.Text, d) {
					t.Errorf("chrome kept: %q", d)
				}
			}
			if res.Title == "" {
				t.Error("no title")
			}
		})
	}
}
