package corpus

import (
	"cmp"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/extract"
)

// Copies found at index time. A documentation tree often holds its text twice: a print-all page (the whole book
// on one page, "all APIs" on one page) repeats every page, and a file may be copied whole under another name. Each
// build compares the documents' line marks (lexical.LineMarks, kept in the manifest, so an update reads no
// unchanged file again) and names the redundant ones in info.json:
//
//   - a copy: two documents that hold at least copyShare of each other's marks are one document twice; the one
//     with the fewest bytes (then the shorter, then the first path) is the original, the others copies;
//
//   - an aggregate: a document that holds partShare or more of each of at least aggregateSources smaller
//     documents, which together hold at least aggregateShare of it — a page made of other pages, not a page that
//     quotes a line of each of a few others, nor one of several pages of the same template.
//
//   - a source beside its rendering: a Markdown, reStructuredText, AsciiDoc or plain-text file next to an HTML file
//     of the same name in the same folder (api/events.md beside api/events.html) is the text the page was
//     generated from — the same document, hard-wrapped and in markup, so its lines cannot be compared with the
//     page's paragraphs — and is the copy: the page is what readers are sent to.
//
// A mark found in more than maxMarkOwners documents is site furniture (a footer, a notice on every stub), which
// proves no copying, and a document with fewer than minRedundantMarks marks is too short to judge. Search ranks
// a redundant document's passages at redundantWeight of their score, below the same passage on the specific page,
// and the search-time copy tracker then keeps the specific page's (see copyTracker); a redundant document's own
// passages — what no other document holds — are still found, only ranked lower.
const (
	copyShare         = 0.9
	aggregateShare    = 0.5
	aggregateSources  = 3
	partShare         = 0.8
	minHeldMarks      = 2 // marks of a source an aggregate must be able to hold to judge whether it does
	markSampledMin    = 8 // more marks than this, all divisible by lexical.MarkSample: a sampled document
	maxMarkOwners     = 4
	minRedundantMarks = 8
	redundantWeight   = 0.3
)

// redundantDocs finds the copies and aggregates among the indexed documents of files (see above). It takes
// O(m log m) for m marks in all, at most lexical.MaxMarks a document.
func redundantDocs(files map[string]*fileEntry) map[string]string {
	paths := make([]string, 0, len(files))
	n := 0
	for p, e := range files {
		if e.doc() && len(e.Marks) > 0 {
			paths = append(paths, p)
			n += len(e.Marks)
		}
	}
	if len(paths) < 2 {
		return nil
	}
	slices.Sort(paths)
	type owned struct {
		mark uint32
		doc  int32
	}
	all := make([]owned, 0, n)
	for d, p := range paths {
		for _, m := range files[p].Marks {
			all = append(all, owned{m, int32(d)})
		}
	}
	slices.SortFunc(all, func(a, b owned) int {
		if c := cmp.Compare(a.mark, b.mark); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
	all = slices.Compact(all) // a document's marks are distinct, unless a manifest was tampered with
	// runs calls fn with the owners of each mark that is not furniture.
	runs := func(fn func(run []owned)) {
		for i := 0; i < len(all); {
			j := i + 1
			for j < len(all) && all[j].mark == all[i].mark {
				j++
			}
			run := all[i:j]
			i = j
			if len(run) <= maxMarkOwners {
				fn(run)
			}
		}
	}
	content := make([]int, len(paths))          // marks that are not furniture
	shared := make([]map[int32]int, len(paths)) // shared[d][o]: marks of d that o holds too
	runs(func(run []owned) {
		for _, a := range run {
			content[a.doc]++
			for _, b := range run {
				if a.doc == b.doc {
					continue
				}
				if shared[a.doc] == nil {
					shared[a.doc] = map[int32]int{}
				}
				shared[a.doc][b.doc]++
			}
		}
	})
	holds := func(d, o int32) float64 { // the share of d's marks that o holds
		if content[d] == 0 {
			return 0
		}
		return float64(shared[d][o]) / float64(content[d])
	}
	original := func(a, b int32) bool { // a is kept over b
		ea, eb := files[paths[a]], files[paths[b]]
		if ea.Size != eb.Size {
			return ea.Size < eb.Size
		}
		if len(paths[a]) != len(paths[b]) {
			return len(paths[a]) < len(paths[b])
		}
		return paths[a] < paths[b]
	}
	out := map[string]string{}
	copied := make([]bool, len(paths))
	htmlStems := renderings(files)
	for d, p := range paths {
		if renderedBeside(p, htmlStems) {
			copied[d] = true
			out[p] = sources.RedundantCopy
		}
	}
	for d := range paths {
		if copied[d] || content[d] < minRedundantMarks {
			continue
		}
		for o := range shared[d] {
			if content[o] >= minRedundantMarks && holds(int32(d), o) >= copyShare && holds(o, int32(d)) >= copyShare && original(o, int32(d)) {
				copied[d] = true
				out[paths[d]] = sources.RedundantCopy
				break
			}
		}
	}
	// An aggregate holds most of each of its sources. A document's marks are a subset chosen by value (every
	// markSample-th when it was sampled, the smallest lexical.MaxMarks), so how much of o document d holds is
	// measured on o's marks that d would have kept.
	furniture := map[uint32]bool{}
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].mark == all[i].mark {
			j++
		}
		if j-i > maxMarkOwners {
			furniture[all[i].mark] = true
		}
		i = j
	}
	keeps := func(d int32) func(uint32) bool {
		m := files[paths[d]].Marks
		limit := uint32(math.MaxUint32)
		if len(m) >= lexical.MaxMarks {
			limit = m[len(m)-1]
		}
		sampled := len(m) > markSampledMin && !slices.ContainsFunc(m, func(v uint32) bool { return v%lexical.MarkSample != 0 })
		return func(v uint32) bool { return v <= limit && (!sampled || v%lexical.MarkSample == 0) }
	}
	contained := make([]map[int32]bool, len(paths)) // contained[d]: the documents d holds most of
	for d := range paths {
		if copied[d] || content[d] < minRedundantMarks {
			continue
		}
		keep := keeps(int32(d))
		for o := range shared[d] {
			if copied[o] || files[paths[o]].Size >= files[paths[d]].Size {
				continue
			}
			eligible := 0
			for _, v := range files[paths[o]].Marks {
				if !furniture[v] && keep(v) {
					eligible++
				}
			}
			if eligible >= minHeldMarks && float64(shared[o][int32(d)]) >= partShare*float64(eligible) {
				if contained[d] == nil {
					contained[d] = map[int32]bool{}
				}
				contained[d][o] = true
			}
		}
	}
	// held[d]: marks of d that a document it contains holds, counted once however many do.
	held := make([]int, len(paths))
	runs(func(run []owned) {
		for _, a := range run {
			if len(contained[a.doc]) < aggregateSources {
				continue
			}
			for _, b := range run {
				if contained[a.doc][b.doc] {
					held[a.doc]++
					break
				}
			}
		}
	})
	for d := range paths {
		if len(contained[d]) >= aggregateSources && float64(held[d]) >= aggregateShare*float64(content[d]) {
			out[paths[d]] = sources.RedundantAggregate
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// renderings are the stems (path without extension) of the indexed HTML documents of files.
func renderings(files map[string]*fileEntry) map[string]bool {
	out := map[string]bool{}
	for p, e := range files {
		if f, ok := extract.Builtin().ByPath(p); ok && e.doc() && f.Layout == extract.LayoutHTML {
			out[strings.TrimSuffix(p, filepath.Ext(p))] = true
		}
	}
	return out
}

// renderedBeside reports a markup source file — Markdown, reStructuredText, AsciiDoc, Org or plain text as the
// format registry reads it, not a converted format such as PDF — with an indexed HTML rendering of the same name
// in the same folder (its stem among htmlStems, see renderings).
func renderedBeside(p string, htmlStems map[string]bool) bool {
	f, ok := extract.Builtin().ByPath(p)
	if !ok || f.Convert != nil {
		return false
	}
	switch f.Layout {
	case extract.LayoutMarkdown, extract.LayoutRST, extract.LayoutAsciiDoc, extract.LayoutOrg, extract.LayoutText:
		return htmlStems[strings.TrimSuffix(p, filepath.Ext(p))]
	}
	return false
}
