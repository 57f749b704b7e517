package corpus

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/sources"
)

// A print-all page that repeats two specific pages does not take their place: a search for a passage of one
// page cites the page. A notice repeated on three stub pages is boilerplate and is cited from none of them.
func TestSearchPrefersTheSpecificPageOverAggregatesAndDropsBoilerplate(t *testing.T) {
	root := t.TempDir()
	ownership := "# Ownership\n\nEach value in Rust has an owner. There can only be one owner at a time. When the owner goes out of scope, the value will be dropped.\n"
	borrowing := "# Borrowing\n\nAt any given time, you can have either one mutable reference or any number of immutable references. References must always be valid.\n"
	writeFile(t, filepath.Join(root, "ownership.md"), ownership)
	writeFile(t, filepath.Join(root, "borrowing.md"), borrowing)
	writeFile(t, filepath.Join(root, "print.md"), "# The whole book\n\n"+ownership+"\n"+borrowing+"\n# Appendix\n\nThe appendix lists the keywords of the language in one table.\n")
	for _, stub := range []string{"old-a.md", "old-b.md", "old-c.md"} {
		writeFile(t, filepath.Join(root, stub), "# "+strings.TrimSuffix(stub, ".md")+"\n\nThe first edition of the owner book is no longer distributed; read the current version of the owner book instead.\n")
	}
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	for _, d := range []depth{{}, {keep: 2}} { // certified, and falling back to the full query
		ix.depth = d
		got, err := ix.Search(t.Context(), "owner goes out of scope value dropped", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || !strings.Contains(got[0].URL, "ownership.md") {
			t.Fatalf("depth %+v: first result is not the specific page: %v", d, urls(got))
		}
		for _, r := range got {
			if strings.Contains(r.URL, "print.md") && strings.Contains(r.Snippet, "goes out of scope") {
				t.Errorf("depth %+v: the aggregate is cited for the page's passage: %v", d, urls(got))
			}
			if strings.Contains(r.URL, "old-") {
				t.Errorf("depth %+v: boilerplate stub cited: %v", d, urls(got))
			}
		}
		// The aggregate's own passage, which no other page holds, is still found there.
		got, err = ix.Search(t.Context(), "appendix keywords table", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || !strings.Contains(got[0].URL, "print.md") {
			t.Errorf("depth %+v: the aggregate's own passage lost: %v", d, urls(got))
		}
	}
}

// A passage that only an aggregate's hit brings in — the specific page's own chunk holding it was left out for the
// page's share of results, or ranked apart — is cited from the specific page, at the aggregate hit's place.
func TestSearchCitesTheSpecificPageForAnAggregatesPassage(t *testing.T) {
	root := t.TempDir()
	topics := []string{"alpha", "beta", "gamma"}
	var all strings.Builder
	all.WriteString("# Everything on one page\n\n")
	for _, tp := range topics {
		// Three sections a chunk each, every one naming the weak reference.
		var page strings.Builder
		for k := range 3 {
			page.WriteString(pageText(fmt.Sprintf("%s part %d", tp, k), 16))
			if tp == "alpha" {
				fmt.Fprintf(&page, "A weak reference of part %d does not express an ownership relationship.\n\n", k)
			}
		}
		writeFile(t, filepath.Join(root, tp+".md"), page.String())
		all.WriteString(page.String() + "\n")
	}
	aggregate := filepath.Join(root, "print.md")
	writeFile(t, aggregate, all.String())
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	if ix.info().Redundant[aggregate] != sources.RedundantAggregate {
		t.Fatalf("print.md is not an aggregate: %v", ix.info().Redundant)
	}
	for _, d := range []depth{{}, {keep: 2}} { // certified, and falling back to the full query
		ix.depth = d
		got, err := ix.Search(t.Context(), "weak reference ownership relationship", 10)
		if err != nil {
			t.Fatal(err)
		}
		parts := 0
		for _, r := range got {
			if strings.Contains(r.URL, "print.md") {
				t.Errorf("depth %+v: the aggregate is cited: %v", d, urls(got))
			}
			if strings.Contains(r.URL, "alpha.md") {
				parts++
			}
		}
		if parts != 3 {
			t.Errorf("depth %+v: %d chunks of alpha.md, want its three parts: %v", d, parts, urls(got))
		}
	}
}

// pageText is a page of n distinct lines about topic, each long enough to be marked (lexical.MarkWords), in words
// drawn from a vocabulary of made-up words seeded by the topic, so that two pages share no wording by accident.
func pageText(topic string, n int) string {
	seed := uint64(0)
	for _, c := range topic {
		seed = seed*131 + uint64(c)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	syll := []string{"ka", "lo", "mi", "ren", "tu", "vas", "qe", "dor", "pli", "sna", "gru", "fe", "xo", "bri", "zum", "hai"}
	word := func() string {
		var w strings.Builder
		for range 2 + rng.IntN(2) {
			w.WriteString(syll[rng.IntN(len(syll))])
		}
		return w.String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", topic)
	for i := range n {
		fmt.Fprintf(&b, "The %s rule %d:", topic, i)
		for range 8 {
			b.WriteString(" " + word())
		}
		b.WriteString(".\n\n")
	}
	return b.String()
}

// lineOf returns line i (0-based, counting only the rules) of pageText(topic, n).
func lineOf(topic string, n, i int) string {
	var rules []string
	for l := range strings.SplitSeq(pageText(topic, n), "\n") {
		if strings.HasPrefix(l, "The ") {
			rules = append(rules, l)
		}
	}
	return rules[i]
}

// The index names the documents whose text others hold: a print-all page repeating the specific pages is an
// aggregate, of two identical files and of a page copied with one line changed the longer is a copy, while a
// specific page, a page that a larger one includes, and a page sharing a few lines with others are not redundant.
func TestIndexNamesAggregatesAndCopies(t *testing.T) {
	root := t.TempDir()
	topics := []string{"alpha", "beta", "gamma", "delta", "epsilon"}
	var all strings.Builder
	all.WriteString("# Everything on one page\n\n")
	for _, tp := range topics {
		text := pageText(tp, 20)
		writeFile(t, filepath.Join(root, "api", tp+".md"), text)
		all.WriteString(text + "\n")
	}
	writeFile(t, filepath.Join(root, "api", "all.md"), all.String())
	// Two identical files: the one under the longer path is the copy.
	same := pageText("zeta", 15)
	writeFile(t, filepath.Join(root, "zeta.md"), same)
	writeFile(t, filepath.Join(root, "mirror", "zeta.md"), same)
	// A page that is 99% a copy of another (one line in a hundred changed, one added): the larger is the copy.
	long := pageText("eta", 100)
	writeFile(t, filepath.Join(root, "eta.md"), long)
	writeFile(t, filepath.Join(root, "eta-old.md"), strings.Replace(long, lineOf("eta", 100, 7), "The eta rule 7 was rewritten in another edition of this page.", 1)+lineOf("eta extra", 2, 0)+"\n\n"+lineOf("eta extra", 2, 1)+"\n")
	// A page included whole in a larger page of its own (one source): neither is redundant.
	part := pageText("theta", 10)
	writeFile(t, filepath.Join(root, "theta.md"), part)
	writeFile(t, filepath.Join(root, "theta-guide.md"), part+pageText("theta guide", 30))
	// A page quoting one line of each of three others is no aggregate.
	var quoting strings.Builder
	quoting.WriteString(pageText("iota", 20))
	for _, tp := range topics[:3] {
		quoting.WriteString(lineOf(tp, 20, 1) + "\n\n")
	}
	writeFile(t, filepath.Join(root, "iota.md"), quoting.String())

	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	got := ix.info().Redundant
	want := map[string]string{
		filepath.Join(root, "api", "all.md"):     sources.RedundantAggregate,
		filepath.Join(root, "mirror", "zeta.md"): sources.RedundantCopy,
		filepath.Join(root, "eta-old.md"):        sources.RedundantCopy,
	}
	if !maps.Equal(got, want) {
		t.Fatalf("redundant documents:\n got  %v\n want %v", got, want)
	}

	// Search ranks the specific page first for its passage and never cites the aggregate or the copy for it.
	for _, d := range []depth{{}, {keep: 2}} {
		ix.depth = d
		res, err := ix.Search(t.Context(), lineOf("gamma", 20, 3), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 || !strings.Contains(res[0].URL, "/api/gamma.md") {
			t.Fatalf("depth %+v: first result is not the specific page:%s", d, urls(res))
		}
		for _, r := range res {
			if strings.Contains(r.URL, "all.md") {
				t.Errorf("depth %+v: the aggregate is among the results:%s", d, urls(res))
			}
		}
		res, err = ix.Search(t.Context(), lineOf("zeta", 15, 4), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 || strings.Contains(res[0].URL, "mirror") {
			t.Errorf("depth %+v: the copy ranks first:%s", d, urls(res))
		}
	}
	// The aggregate's own heading, which no other page holds, is still found there.
	res, err := ix.Search(t.Context(), "everything on one page", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 || !strings.Contains(res[0].URL, "all.md") {
		t.Errorf("the aggregate's own text is lost:%s", urls(res))
	}

	// An update that changes the aggregate into a page of its own clears it; unchanged files keep their marks.
	writeFile(t, filepath.Join(root, "api", "all.md"), pageText("kappa", 20))
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	if why := ix.info().Redundant[filepath.Join(root, "api", "all.md")]; why != "" {
		t.Errorf("the rewritten page is still %s", why)
	}
	if why := ix.info().Redundant[filepath.Join(root, "mirror", "zeta.md")]; why != sources.RedundantCopy {
		t.Errorf("the unchanged copy is no longer recognised: %q", why)
	}
}

// A large aggregate (150 pages on one page, every line of each page, so that it is sampled) is recognised from
// its sampled marks; lexical's tests check the bound on a document's marks.
func TestIndexNamesALargeAggregate(t *testing.T) {
	root := t.TempDir()
	var all strings.Builder
	for i := range 150 {
		text := pageText(fmt.Sprintf("topic%03d", i), 30)
		writeFile(t, filepath.Join(root, fmt.Sprintf("p%03d.md", i)), text)
		all.WriteString(text)
	}
	writeFile(t, filepath.Join(root, "all.md"), all.String())
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	red := ix.info().Redundant
	if red[filepath.Join(root, "all.md")] != sources.RedundantAggregate || len(red) != 1 {
		t.Fatalf("redundant documents: %v", red)
	}
	_, m, err := ix.loadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.entry(m.find(filepath.Join(root, "all.md"))).Marks); n == 0 || n > lexical.MaxMarks {
		t.Errorf("the aggregate keeps %d marks, want 1..%d", n, lexical.MaxMarks)
	}
}

// redundantDocs on hostile manifests: a document whose every mark every other document holds (furniture) is
// no copy, documents too short to judge are left alone, and duplicated marks (a tampered manifest) count once.
func TestRedundantDocsHostile(t *testing.T) {
	marks := func(lo, hi uint32) []uint32 {
		var m []uint32
		for v := lo; v < hi; v++ {
			m = append(m, v)
		}
		return m
	}
	files := map[string]*fileEntry{}
	for i := range 6 { // six documents of the same 20 marks: furniture, not copies
		files[fmt.Sprintf("/f%d", i)] = &fileEntry{Size: 100, Marks: marks(0, 20)}
	}
	files["/short-a"] = &fileEntry{Size: 10, Marks: marks(100, 104)} // too short to judge
	files["/short-b"] = &fileEntry{Size: 11, Marks: marks(100, 104)}
	dup := append(marks(200, 220), marks(200, 220)...) // duplicated marks
	files["/dup-a"] = &fileEntry{Size: 50, Marks: dup}
	files["/dup-b"] = &fileEntry{Size: 60, Marks: marks(200, 220)}
	files["/notdoc"] = &fileEntry{Outcome: Binary, Marks: marks(200, 220)} // not a document: not compared
	got := redundantDocs(files)
	want := map[string]string{"/dup-b": sources.RedundantCopy}
	if !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := redundantDocs(nil); got != nil {
		t.Errorf("no files: %v", got)
	}
}

// Marks survive the manifest's round trip; a manifest written before marks is read with none, and one whose mark
// columns disagree is refused.
func TestManifestMarks(t *testing.T) {
	files := map[string]*fileEntry{
		"/a": {Size: 1, Chunks: []int32{1, 2}, Marks: []uint32{3, 5, 9}},
		"/b": {Size: 2, Chunks: []int32{1, 4}},
		"/c": {Size: 3, Chunks: []int32{1, 1}, Marks: []uint32{1}},
	}
	m := newManifest([]string{"/"}, files)
	back, err := fromCols(m.cols)
	if err != nil {
		t.Fatal(err)
	}
	for p, e := range files {
		if got := back.entry(back.find(p)); !got.same(e) {
			t.Errorf("%s: %+v after the round trip, want %+v", p, got, e)
		}
	}
	old := m.cols
	old.NMarks, old.Marks = nil, nil
	if back, err := fromCols(old); err != nil || back.entry(0).Marks != nil {
		t.Errorf("a manifest without marks: %v, %v", err, back)
	}
	for name, bad := range map[string]func(c *manifestCols){
		"short count column": func(c *manifestCols) { c.NMarks = c.NMarks[:1] },
		"more counted":       func(c *manifestCols) { c.NMarks = []uint32{9, 0, 1} },
		"trailing marks":     func(c *manifestCols) { c.Marks = append(c.Marks, 7) },
		"marks, no counts":   func(c *manifestCols) { c.NMarks = nil },
	} {
		c := m.cols
		c.NMarks, c.Marks = slices.Clone(c.NMarks), slices.Clone(c.Marks)
		bad(&c)
		if _, err := fromCols(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A Markdown source beside its HTML rendering (api/events.md next to api/events.html, as Node.js ships its docs)
// is the same document hard-wrapped, whose lines match none of the page's paragraphs: the source is named the
// copy, so search answers from the page. A Markdown file with no rendering beside it, or one beside an HTML page
// of another name or folder, is a document of its own.
func TestIndexNamesTheSourceBesideItsRenderingACopy(t *testing.T) {
	root := t.TempDir()
	var wrapped strings.Builder
	wrapped.WriteString("# Events\n\n")
	var html strings.Builder
	html.WriteString("<html><head><title>Events</title></head><body><h1>Events</h1>\n")
	for i := range 12 {
		line := lineOf("events", 12, i)
		words := strings.Fields(line)
		mid := len(words) / 2
		// Hard-wrapped at half the paragraph, as a Markdown source is.
		wrapped.WriteString(strings.Join(words[:mid], " ") + "\n" + strings.Join(words[mid:], " ") + "\n\n")
		html.WriteString("<p>" + line + "</p>\n")
	}
	html.WriteString("</body></html>\n")
	writeFile(t, filepath.Join(root, "api", "events.md"), wrapped.String())
	writeFile(t, filepath.Join(root, "api", "events.html"), html.String())
	writeFile(t, filepath.Join(root, "api", "streams.md"), pageText("streams", 12))
	writeFile(t, filepath.Join(root, "guide", "timers.md"), pageText("timers", 12))
	writeFile(t, filepath.Join(root, "api", "timers.html"), "<html><body><p>"+lineOf("other timers", 12, 0)+"</p></body></html>\n")

	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	got := ix.info().Redundant
	want := map[string]string{filepath.Join(root, "api", "events.md"): sources.RedundantCopy}
	if !maps.Equal(got, want) {
		t.Fatalf("redundant documents:\n got  %v\n want %v", got, want)
	}
	// sources.Redundancy answers the same for a document's URL, with or without its line anchor.
	for u, want := range map[string]string{
		"file://" + filepath.ToSlash(filepath.Join(root, "api", "events.md")) + "#L3-L4": sources.RedundantCopy,
		"file://" + filepath.ToSlash(filepath.Join(root, "api", "events.md")):            sources.RedundantCopy,
		"file://" + filepath.ToSlash(filepath.Join(root, "api", "events.html")):          "",
		"file:///nowhere/else.md":  "",
		"https://example.com/a.md": "",
		"%zz":                      "",
	} {
		got, err := ix.Redundant(t.Context(), u)
		if err != nil || got != want {
			t.Errorf("Redundant(%q) = %q, %v; want %q", u, got, err, want)
		}
	}
	res, err := ix.Search(t.Context(), lineOf("events", 12, 5), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 || !strings.Contains(res[0].URL, "/api/events.html") {
		t.Fatalf("first result is not the rendered page:%s", urls(res))
	}
}

func TestRenderedBeside(t *testing.T) {
	files := map[string]*fileEntry{
		"/d/a.md": {}, "/d/a.html": {}, "/d/b.rst": {}, "/d/b.HTM": {}, "/d/c.md": {}, "/d/c.html": {Outcome: "skipped"},
		"/d/e.html": {}, "/x/e.md": {}, "/d/f.txt": {}, "/d/f.xhtml": {}, "/d/g.pdf": {}, "/d/g.html": {}, "/d/h.go": {}, "/d/h.html": {},
	}
	stems := renderings(files)
	for p, want := range map[string]bool{
		"/d/a.md": true, "/d/a.html": false, "/d/b.rst": true, "/d/c.md": false, "/x/e.md": false, "/d/f.txt": true,
		"/d/g.pdf": false, "/d/h.go": false,
	} {
		if got := renderedBeside(p, stems); got != want {
			t.Errorf("renderedBeside(%q) = %v, want %v", p, got, want)
		}
	}
}

// A page's Markdown source beside its HTML rendering is a copy, and a passage that only the source's hit brings in
// — it runs over two of the page's chunks, cut at other places than the source's — is cited from the page.
func TestSearchCitesThePageForItsSourcesPassageAcrossChunks(t *testing.T) {
	root := t.TempDir()
	filler := func(k, n int) string {
		var lines []string
		for _, l := range strings.Split(pageText(fmt.Sprintf("weak part %d", k), 12), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, " ")[:n]
	}
	// Paragraph sizes that make the page's chunks (cut at the first paragraph past 1,200 characters) end between
	// the passage's two paragraphs, 6 and 7, and the source's, which open with notes, hold both.
	var paras []string
	for k, n := range []int{600, 600, 600, 600, 600, 300, 540, 540, 600, 600, 600, 600} {
		paras = append(paras, filler(k, n))
	}
	paras[6] += " A weak reference does not express an ownership relationship, and a weak reference never keeps the value alive."
	paras[7] = "Zero weak references keep the value alive, and the count of them is kept apart. " + paras[7]
	var html, md strings.Builder
	html.WriteString("<html><head><title>Weak references</title></head><body><h1>Weak references</h1>\n")
	// The source opens with the generator's notes, which the page does not show: its chunks are cut elsewhere.
	md.WriteString("# Weak references\n\n<!--\n" + strings.Repeat("generated from the API description; edit that, not this file\n", 10) + "-->\n\n")
	for _, p := range paras {
		fmt.Fprintf(&html, "<p>%s</p>\n", p)
		// The source is hard-wrapped, as Markdown sources are.
		words := strings.Fields(p)
		for len(words) > 0 {
			n := min(len(words), 9)
			md.WriteString(strings.Join(words[:n], " ") + "\n")
			words = words[n:]
		}
		md.WriteString("\n")
	}
	html.WriteString("</body></html>\n")
	page, source := filepath.Join(root, "weak.html"), filepath.Join(root, "weak.md")
	writeFile(t, page, html.String())
	writeFile(t, source, md.String())
	ix := openIndex(t, t.TempDir())
	if _, err := ix.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	if ix.info().Redundant[source] != sources.RedundantCopy {
		t.Fatalf("weak.md is not a copy of the page: %v", ix.info().Redundant)
	}
	// The set-up: no chunk of the page holds both sentences, a chunk of the source does.
	q := "weak reference ownership relationship zero weak references keep the value alive count kept apart"
	ix.keepCopies, ix.PerFile = true, 20
	all, err := ix.Search(t.Context(), q, 20)
	if err != nil {
		t.Fatal(err)
	}
	ix.keepCopies, ix.PerFile = false, 0
	g, release, err := ix.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	files := map[string]*storedFile{}
	chunk := func(url string) (path, text string) {
		path, start, end, _ := parseChunkID(url)
		f, err := g.cachedFile(files, path)
		if err != nil {
			t.Fatal(err)
		}
		text, _ = f.lines(start, end)
		return path, text
	}
	holds := map[string]bool{} // file → one of its chunks holds both sentences
	var sourceChunk string
	for _, r := range all {
		path, text := chunk(r.URL)
		both := strings.Contains(text, "ownership relationship") && strings.Contains(text, "Zero weak")
		holds[path] = holds[path] || both
		if path == source && both {
			sourceChunk = r.URL
		}
	}
	if holds[page] || !holds[source] {
		t.Fatalf("set-up: a chunk of the page holds the passage: %v, of its source: %v", holds[page], holds[source])
	}
	// A hit on the source's chunk alone — the page's chunks ranked apart or over their share — is cited from the
	// page.
	out, _, _, err := g.results(t.Context(), nil, []hit{{id: sourceChunk, score: 1}}, newRankQuery(q, 10, 2, g.queryAnalyzer()))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || !strings.Contains(out[0].URL, "weak.html#L") {
		t.Errorf("the source's passage alone: %v, want it cited from the page", urls(out))
	}
	// The page's place of a passage that runs over two of its chunks is found.
	passage := "A weak reference does not express an ownership relationship, and a weak reference never keeps the value alive. Zero weak references keep the value alive, and the count of them is kept apart."
	if sp, ok, err := g.specificPage(t.Context(), passage, passage, "weak reference alive", files); err != nil || !ok || sp.path != page {
		t.Errorf("the page's place of a passage over two chunks: %+v, %v, %v", sp.id, ok, err)
	}
	for _, d := range []depth{{}, {keep: 2}} {
		ix.depth = d
		got, err := ix.Search(t.Context(), q, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			// The source's own notes, which the page does not show, are still its own.
			if path, text := chunk(r.URL); path == source && (strings.Contains(text, "ownership relationship") || strings.Contains(text, "Zero weak")) {
				t.Errorf("depth %+v: the source is cited for the page's passage: %v", d, urls(got))
			}
		}
		if len(got) == 0 || !strings.Contains(got[0].URL, "weak.html") {
			t.Errorf("depth %+v: first result is not the page: %v", d, urls(got))
		}
	}
}
