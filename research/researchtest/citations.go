package researchtest

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/deepresearch/deepresearch/research"
)

// Cited is one citation number standing in a published report's body, resolved through the report's citations.
type Cited struct {
	N int
	// EvidenceIDs are the evidence items citation N names.
	EvidenceIDs []string
	// Found says the report has a citation N; a number without one resolves to nothing.
	Found bool
}

// numberMarkerRe is a published citation marker: [3], [3, 7].
var numberMarkerRe = regexp.MustCompile(`\[(\d+(?:, \d+)*)\]`)

// BodyCitations lists the citation numbers of a published report's body — its Markdown above the generated
// "## Sources" list — in the order they stand, each resolved through rep.Citations: what a reader following
// each [n] finds, for tests that check the report's integrity independently of the run.
func BodyCitations(rep *research.Report) []Cited {
	byN := map[int][]string{}
	for _, c := range rep.Citations {
		byN[c.N] = c.EvidenceIDs
	}
	body := rep.Markdown
	if i := strings.Index(body, "\n## Sources"); i >= 0 {
		body = body[:i]
	}
	var out []Cited
	for _, m := range numberMarkerRe.FindAllStringSubmatch(body, -1) {
		for _, s := range strings.Split(m[1], ", ") {
			n, _ := strconv.Atoi(s)
			ids, ok := byN[n]
			out = append(out, Cited{N: n, EvidenceIDs: ids, Found: ok})
		}
	}
	return out
}
