package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Page chrome: the parts of an HTML page that are there to move around the site, not to say anything — menus,
// sidebars, tables of contents of the whole site, breadcrumbs, search boxes and their hints, version and theme
// pickers, "edit this page" and "previous/next" links, permalink marks, footers and cookie notices. PruneChrome
// removes them from the DOM before it is converted to Markdown, by structure first and by the names documentation
// generators give them second:
//
//  1. elements that are furniture by their kind: script, style, nav, form, button, input, select, textarea,
//     dialog, menu, search, footer (and aside, header and details only when mostly links — they also hold notes
//     and page titles);
//  2. elements whose ARIA role is navigation, search, banner, contentinfo, complementary, menu, menubar, toolbar,
//     tablist, dialog or alertdialog, and elements hidden from every reader (hidden, aria-hidden="true");
//  3. lists, tables, paragraphs and blocks whose text is mostly link text (a site map, a "see also" bar, a pager)
//     — at least three links covering three quarters of the text, or one short block that is nothing but links;
//  4. the class or id names of generators' chrome, listed per generator in chromeNames;
//  5. permalink marks beside headings ("¶", "#", "§", "◆" links to the heading's own anchor, also behind a zero-width
//     space), a footnote's link back to its reference ("↩") and empty links; a link to an anchor of the page
//     itself keeps its text.
//
// Code that a generator lays out in divs rather than pre (Doxygen's div.fragment of div.line) becomes a pre block,
// so it reads as code, not as sentences.
//
// Headings, paragraphs, list items, table rows, definitions and code are kept unless one of the rules names them.

// chromeNames are class and id names (compared case-insensitively, one class token or the whole id) that
// documentation generators and common web pages give to page chrome. A new generator is one more row.
var chromeNames = map[string][]string{
	"Sphinx (classic, Read the Docs, PyData, Book themes)": {"related", "sphinxsidebar", "sphinxsidebarwrapper", "footer",
		"headerlink", "breadcrumbs", "wy-breadcrumbs", "rst-versions", "wy-nav-side", "wy-nav-top", "rst-footer-buttons",
		"searchbox", "mobile-nav", "version_switcher_placeholder", "language_switcher_placeholder", "bd-sidebar",
		"bd-sidebar-primary", "bd-sidebar-secondary", "bd-header", "bd-footer", "prev-next-area", "headerbtn"},
	"MkDocs (default and Material themes)": {"md-header", "md-tabs", "md-sidebar", "md-footer", "md-search", "md-source",
		"md-content__button", "md-top", "md-banner", "md-dialog", "md-source-file", "bs-sidenav", "navbar"},
	"mdBook": {"sidebar", "menu-bar", "menu-bar-hover-placeholder", "nav-wrapper", "nav-wide-wrapper", "mobile-nav-chapters",
		"nav-chapters", "search-wrapper", "searchbar-outer", "searchresults-outer", "theme-popup", "sidebar-resize-handle"},
	"Docusaurus": {"navbar", "navbar-sidebar", "theme-doc-sidebar-container", "theme-doc-breadcrumbs", "theme-doc-version-banner",
		"theme-doc-version-badge", "theme-edit-this-page", "theme-last-updated", "theme-doc-footer", "theme-doc-toc-desktop",
		"theme-doc-toc-mobile", "pagination-nav", "table-of-contents", "theme-announcement-bar"},
	"rustdoc": {"sidebar", "sidebar-elems", "mobile-topbar", "search-form", "search-container", "nav-container", "out-of-band",
		"srclink", "rustdoc-breadcrumbs", "anchor", "settings-menu", "help-button", "sub-logo-container", "hideme"},
	"Javadoc": {"top-nav", "sub-nav", "bottom-nav", "nav-list", "sub-nav-list", "nav-list-search", "skip-nav", "legal-copy",
		"flex-header", "topnav", "subnav", "bottomnav", "navlist", "subnavlist", "skipnav", "legalcopy", "navbarcell1rev"},
	"Doxygen": {"navpath", "navrow1", "navrow2", "tabs", "tabs2", "tabs3", "msearchbox", "msearchselectwindow",
		"msearchresultswindow", "side-nav", "nav-tree", "nav-sync"},
	"Node.js API docs": {"column2", "gtoc", "toc", "picker-header", "picker", "gtoc-picker", "toc-picker", "version-picker",
		"alt-docs", "edit-on-github"},
	"pandoc":  {"toc"},
	"DocBook": {"navheader", "navfooter", "toc"},
	"web pages (breadcrumbs, skip links, cookie and consent notices)": {"breadcrumb", "breadcrumbs", "skip-link", "skip-to-content",
		"skiplink", "cookie-banner", "cookie-consent", "cookie-notice", "cookies", "cc-banner", "cc-window", "gdpr", "consent-banner",
		"site-header", "site-footer", "site-nav", "page-footer", "edit-page", "edit-this-page", "pager", "pagination", "share",
		"social", "newsletter"},
}

// chromeName is chromeNames flattened.
var chromeName = func() map[string]bool {
	m := map[string]bool{}
	for _, names := range chromeNames {
		for _, n := range names {
			m[n] = true
		}
	}
	return m
}()

// furnitureTags never carry document content.
var furnitureTags = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "iframe": true, "svg": true,
	"nav": true, "form": true, "button": true, "input": true, "select": true, "textarea": true, "dialog": true,
	"menu": true, "search": true, "footer": true,
}

// chromeRoles are ARIA roles of chrome.
var chromeRoles = map[string]bool{
	"navigation": true, "search": true, "banner": true, "contentinfo": true, "complementary": true, "menu": true,
	"menubar": true, "toolbar": true, "tablist": true, "dialog": true, "alertdialog": true,
}

// linkDenseTags are the containers judged by their share of link text.
var linkDenseTags = map[string]bool{
	"ul": true, "ol": true, "dl": true, "table": true, "p": true, "div": true, "aside": true, "header": true,
	"details": true, "section": true,
}

// PruneChrome removes page chrome from the parsed document in place (see the rules above). It never removes
// body, main or article, or an element that holds one of them.
func PruneChrome(doc *html.Node) {
	var strip []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.CommentNode {
			strip = append(strip, n)
			return
		}
		if n.Type == html.ElementNode && isChrome(n) {
			strip = append(strip, n)
			return
		}
		if n.Type == html.ElementNode && n.Data == "a" && isPermalink(n) {
			strip = append(strip, n)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, n := range strip {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
	unwrapSelfLinks(doc)
	lineFragments(doc)
	admonitionLabels(doc)
	flattenInlineCode(doc, false)
}

// flattenInlineCode makes each code span outside a pre block (DocBook's code.type holding em.replaceable holding
// code: "character varying(n)") one text node of its text: a Markdown code span holds no markup, and converted
// with its nested elements it would read "character varying( n )", which is not what the page shows.
func flattenInlineCode(n *html.Node, inPre bool) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.Data == "code" && !inPre && c.FirstChild != nil && (c.FirstChild != c.LastChild || c.FirstChild.Type != html.TextNode) {
			text := textOf(c)
			for k := c.FirstChild; k != nil; {
				next := k.NextSibling
				c.RemoveChild(k)
				k = next
			}
			c.AppendChild(&html.Node{Type: html.TextNode, Data: text})
			continue
		}
		flattenInlineCode(c, inPre || c.Data == "pre")
	}
}

// admonitionClasses are the class names generators give a note box (DocBook's div.note > h3.title "Note", Sphinx's
// div.admonition, mdBook's div.warning).
var admonitionClasses = []string{"note", "warning", "tip", "caution", "important", "admonition", "attention", "hint", "danger", "callout"}

// admonitionLabels turns the heading that labels a note box ("### Note" in DocBook) into a bold paragraph: it
// names the box, not a section, and read as a heading it would cut the section around it in two, so the
// section's opening paragraph — where its subject is defined — and the rest of it would be read apart.
func admonitionLabels(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.Data == "div" || c.Data == "aside" || c.Data == "section" {
			box := false
			for _, name := range admonitionClasses {
				box = box || hasClass(c, name)
			}
			if box {
				for h := c.FirstChild; h != nil; h = h.NextSibling {
					if h.Type == html.ElementNode && isHeadingTag(h.Data) {
						label := &html.Node{Type: html.ElementNode, Data: "strong"}
						for k := h.FirstChild; k != nil; {
							next := k.NextSibling
							h.RemoveChild(k)
							label.AppendChild(k)
							k = next
						}
						h.Data, h.DataAtom, h.Attr = "p", atom.P, nil
						h.AppendChild(label)
						break // the label comes first; a heading further down belongs to the content
					}
				}
			}
		}
		admonitionLabels(c)
	}
}

func isHeadingTag(tag string) bool {
	return len(tag) == 2 && tag[0] == 'h' && tag[1] >= '1' && tag[1] <= '6'
}

// lineFragments replaces each Doxygen code fragment (div.fragment holding one div.line per line of code) by a pre
// element holding its lines.
func lineFragments(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && c.Data == "div" && hasClass(c, "fragment") {
			var lines []string
			for l := c.FirstChild; l != nil; l = l.NextSibling {
				if l.Type == html.ElementNode && hasClass(l, "line") {
					lines = append(lines, strings.TrimRight(textOf(l), " \t\r\n"))
				}
			}
			if len(lines) > 0 {
				pre := &html.Node{Type: html.ElementNode, Data: "pre"}
				code := &html.Node{Type: html.ElementNode, Data: "code"}
				code.AppendChild(&html.Node{Type: html.TextNode, Data: strings.Join(lines, "\n")})
				pre.AppendChild(code)
				n.InsertBefore(pre, c)
				n.RemoveChild(c)
				c = next
				continue
			}
		}
		lineFragments(c)
		c = next
	}
}

// hasClass reports whether n has the class name (one class token, case-insensitively).
func hasClass(n *html.Node, name string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if strings.EqualFold(c, name) {
			return true
		}
	}
	return false
}

func isChrome(n *html.Node) bool {
	switch n.Data {
	case "html", "head", "body", "main", "article", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "code":
		return false
	}
	if holdsContentRoot(n) {
		return false
	}
	if furnitureTags[n.Data] {
		return true
	}
	if chromeRoles[strings.ToLower(attr(n, "role"))] {
		return true
	}
	if _, ok := attrOK(n, "hidden"); ok || strings.EqualFold(attr(n, "aria-hidden"), "true") {
		return true
	}
	if chromeName[strings.ToLower(attr(n, "id"))] {
		return true
	}
	for _, c := range strings.Fields(strings.ToLower(attr(n, "class"))) {
		if chromeName[c] {
			return true
		}
	}
	return linkDenseTags[n.Data] && linkDense(n)
}

// holdsContentRoot reports an element holding main, article or role="main": the content is inside, so it is
// not chrome as a whole (a layout div named "page" or "sidebar-visible" holds everything).
func holdsContentRoot(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.Data == "main" || c.Data == "article" || strings.EqualFold(attr(c, "role"), "main") || holdsContentRoot(c) {
			return true
		}
	}
	return false
}

// linkDense reports a block whose text is mostly the text of links: at least three links holding three quarters
// of its text, or nothing but links in a block of under 80 characters. Code inside it is never link text.
func linkDense(n *html.Node) bool {
	var all, linked, links int
	var count func(n *html.Node, inLink bool)
	count = func(n *html.Node, inLink bool) {
		switch {
		case n.Type == html.TextNode:
			k := utf8.RuneCountInString(strings.TrimSpace(n.Data))
			all += k
			if inLink {
				linked += k
			}
			return
		case n.Type == html.ElementNode && n.Data == "a" && attr(n, "href") != "":
			links++
			inLink = true
		case n.Type == html.ElementNode && n.Data == "pre":
			all += 1000 // a code block is content
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			count(c, inLink)
		}
	}
	count(n, false)
	if all == 0 || links == 0 {
		return false
	}
	if links >= 3 && 4*linked >= 3*all {
		return true
	}
	return linked == all && all < 80
}

// isPermalink reports a link to an anchor on the same page whose text is only a mark ("¶", "#", "§", "🔗") or
// empty, or whose title says it is a permalink.
func isPermalink(a *html.Node) bool {
	text := strings.TrimFunc(textOf(a), func(r rune) bool { return unicode.IsSpace(r) || r == '\u200b' || r == '\ufeff' || r == '\ufe0f' })
	if text == "" && !hasElement(a, "img") {
		return true // an anchor target or an icon link: nothing to read
	}
	href := attr(a, "href")
	if !strings.HasPrefix(href, "#") {
		return false
	}
	if strings.HasPrefix(strings.ToLower(attr(a, "title")), "permalink") {
		return true
	}
	if strings.EqualFold(attr(a, "role"), "doc-backlink") {
		// A footnote's link back to where it is cited; in a heading it is the heading's text, linked back to the
		// page's table of contents (Sphinx's "toc-backref": "Why are Python strings immutable?").
		return !inHeading(a)
	}
	switch text {
	case "", "¶", "#", "§", "🔗", "¶¶", "◆", "↩":
		return a.FirstChild == nil || !hasElement(a, "img")
	}
	return false
}

// inHeading reports a node within a heading element (h1 to h6).
func inHeading(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && len(p.Data) == 2 && p.Data[0] == 'h' && p.Data[1] >= '1' && p.Data[1] <= '6' {
			return true
		}
	}
	return false
}

// unwrapSelfLinks replaces a link to an anchor of the page itself by its content: a heading reads "What Is
// Ownership?", not "[What Is Ownership?](#what-is-ownership)", and a cross-reference to a term of the same page
// reads as the term.
func unwrapSelfLinks(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && c.Data == "a" && strings.HasPrefix(attr(c, "href"), "#") {
			for g := c.FirstChild; g != nil; {
				gn := g.NextSibling
				c.RemoveChild(g)
				n.InsertBefore(g, c)
				g = gn
			}
			n.RemoveChild(c)
		} else {
			unwrapSelfLinks(c)
		}
		c = next
	}
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val, true
		}
	}
	return "", false
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func hasElement(n *html.Node, tag string) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (c.Data == tag || hasElement(c, tag)) {
			return true
		}
	}
	return false
}
