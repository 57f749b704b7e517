package corpus

import (
	"cmp"
	"slices"
)

// Copies found at index time. A documentation tree often holds its text twice: a print-all page (the whole book
// on one page, "all APIs" on one page) repeats every page, and a file may be copied whole under another name. Each
// build compares the documents' line marks (lexical.LineMarks, kept in the manifest, so an update reads no
// unchanged file again) and names the redundant ones in info.json:
//
//   - a copy: two documents that hold at least copyShare of each other's marks are one document twice; the one
//     with the fewest bytes (then the shorter, then the first path) is the original, the others copies;
//   - an aggregate: a document at least aggregateShare of whose marks are found in other documents, at least
//     aggregateSources of them, none of which holds partShare of it or more — a page made of other pages, not a
//     page that one larger page includes (the specific page that an aggregate repeats).
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
	maxMarkOwners     = 4
	minRedundantMarks = 8
	redundantWeight   = 0.3
)

// Why a document is redundant (genInfo.Redundant).
const (
	redundantCopy      = "copy"
	redundantAggregate = "aggregate"
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
	for d := range paths {
		if content[d] < minRedundantMarks {
			continue
		}
		for o := range shared[d] {
			if content[o] >= minRedundantMarks && holds(int32(d), o) >= copyShare && holds(o, int32(d)) >= copyShare && original(o, int32(d)) {
				copied[d] = true
				out[paths[d]] = redundantCopy
				break
			}
		}
	}
	// held[d]: marks of d that some document other than d and its copies holds, counted once however many do.
	held := make([]int, len(paths))
	runs(func(run []owned) {
		for _, a := range run {
			for _, b := range run {
				if b.doc != a.doc && !copied[b.doc] {
					held[a.doc]++
					break
				}
			}
		}
	})
	for d := range paths {
		if copied[d] || content[d] < minRedundantMarks || float64(held[d]) < aggregateShare*float64(content[d]) {
			continue
		}
		sources, most := 0, 0.0
		for o := range shared[d] {
			if !copied[o] {
				sources++
				most = max(most, holds(int32(d), o))
			}
		}
		if sources >= aggregateSources && most < partShare {
			out[paths[d]] = redundantAggregate
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
